"""Atomic, deterministic writes."""

from __future__ import annotations

import os

import pytest

from sitegen.review import write


def test_atomic_write_replaces_whole_file(tmp_path):
    target = tmp_path / "state.json"
    write.atomic_write(target, write.pretty_json({"b": 1, "a": [1, 2]}))
    assert target.read_text() == '{\n  "b": 1,\n  "a": [\n    1,\n    2\n  ]\n}\n'
    assert [p.name for p in tmp_path.iterdir()] == ["state.json"]


def test_interrupted_write_keeps_the_old_file(tmp_path, monkeypatch):
    target = tmp_path / "ledger.jsonl"
    target.write_text("old\n")

    def crash(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(os, "replace", crash)
    with pytest.raises(OSError):
        write.atomic_write(target, "new\n")
    assert target.read_text() == "old\n"
    assert [p.name for p in tmp_path.iterdir()] == ["ledger.jsonl"]  # no temporary file left


def test_canonical_json_is_stable():
    assert write.canonical_json({"b": "é", "a": 1}) == '{"a":1,"b":"é"}'
    assert write.jsonl([{"z": 1}, {"y": 2}]) == '{"z":1}\n{"y":2}\n'
