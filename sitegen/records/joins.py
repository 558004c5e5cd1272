"""Joining things that share a key, directly or through others: the one union-find every join of records, notices
and identifiers uses. A module of its own, importing nothing of sitegen's, so that the record model uses it too."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Hashable, Iterable, Sequence
from typing import TypeVar

Item = TypeVar("Item")


class UnionFind:
    """Disjoint sets of 0..size-1; each set's root is its least member."""

    def __init__(self, size: int):
        self.parent = list(range(size))

    def find(self, item: int) -> int:
        while self.parent[item] != item:
            self.parent[item] = self.parent[self.parent[item]]
            item = self.parent[item]
        return item

    def union(self, a: int, b: int) -> None:
        ra, rb = self.find(a), self.find(b)
        if ra != rb:
            self.parent[max(ra, rb)] = min(ra, rb)


def joined(items: Sequence[Item], keys: Callable[[Item], Iterable[Hashable]]) -> list[list[Item]]:
    """`items` in groups, those sharing a key one group, directly or through others (A shares a key with B, B
    another with C: A, B and C are one), in the order each group's first item came, its items in their order."""
    forest = UnionFind(len(items))
    holder: dict[Hashable, int] = {}
    for n, item in enumerate(items):
        for key in keys(item):
            forest.union(holder.setdefault(key, n), n)
    groups: dict[int, list[Item]] = defaultdict(list)
    for n, item in enumerate(items):
        groups[forest.find(n)].append(item)
    return list(groups.values())
