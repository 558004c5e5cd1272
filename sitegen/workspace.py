"""Open a review the way a command needs it: checked, read-only, or locked for writing.

Every command enters a review here. `inspect` loads the folder and applies
every domain's rules (screening, the living review's ledger and searches,
evidence passages), so `sitegen check` and every other command see exactly the
same problems. `open_review` gives a valid review with its derived facts;
`writable` also holds the review's lock and first finishes any write an
earlier process was interrupted in.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

from sitegen import process
from sitegen.errors import ReviewInvalid, SitegenError
from sitegen.living.checks import living_problems
from sitegen.living.duplicates import duplicate_problems
from sitegen.living.facts import ReviewFacts
from sitegen.review.folder import Review, cycle_collection_paused, load_review
from sitegen.review.problems import Problem
from sitegen.review.transaction import recover, refuse_non_review, review_lock
from sitegen.screening.checks import screening_problems
from sitegen.verify.passages import evidence_problems


@dataclass
class Workspace:
    """A loaded review and the facts derived from it, for one command."""

    review: Review
    facts: ReviewFacts

    @property
    def root(self) -> Path:
        return self.review.root


def inspect(root: Path) -> tuple[Workspace | None, list[Problem]]:
    """The review with every problem found, sorted by file and line. Never writes."""
    process.hold_to_exit(None)  # a command reading its review again must not hold two
    with cycle_collection_paused():
        review, problems = load_review(root)
        if review is None:
            return None, problems
        facts = ReviewFacts(review)
        unread = sorted({problem.path for problem in problems if problem.code in UNREAD})
        if unread:  # checked against files read as empty, the other rules would only report what is missing
            problems.append(Problem(".", None, None, "not-checked",
                                    f"the files were not checked against each other, as {', '.join(unread)} "
                                    "could not be read: fix that, then check again"))
        else:
            problems += (screening_problems(review, facts.outcomes, facts.duplicates) + living_problems(review)
                         + duplicate_problems(review) + evidence_problems(review, facts.outcomes))
        workspace = Workspace(review, facts)
        process.hold_to_exit(workspace)
        return workspace, sorted(set(problems), key=_order)


# Problems that mean a file could not be read (to its end): its content is not known, not empty.
# (not-a-file: a folder where the file belongs, too; unreadable: one the system would not let sitegen read)
UNREAD = frozenset({"encoding", "too-large", "symlink", "not-a-file", "unreadable"})


def open_review(root: Path, tolerate: frozenset[str] = frozenset()) -> Workspace:
    """The valid review, or ReviewInvalid listing every problem (nothing is ever half-used).

    `tolerate` names problem codes the calling command exists to resolve (an amendment
    resolves "protocol-locked"); every other problem still refuses.
    """
    workspace, problems = inspect(root)
    problems = [problem for problem in problems if problem.code not in tolerate]
    if problems or workspace is None:
        raise ReviewInvalid(problems)
    return workspace


def read_review(root: Path) -> Workspace:
    """The valid review for a command that only reads it, read under the review's shared lock (as `check` reads
    it): a writer in the middle of its write is refused with exit 5, not read half-written (its staged files
    were reported as an interrupted write, with advice to recover)."""
    refuse_non_review(root)  # as every command says it, not as a list of problems
    with review_lock(root, shared=True):
        return open_review(root)


@contextmanager
def writable(root: Path, tolerate: frozenset[str] = frozenset()) -> Iterator[Workspace]:
    """The valid review for a command that writes it, held under the review's lock, with any
    interrupted write finished first."""
    refuse_non_review(root)
    with review_lock(root):
        finished = recover(root)
        try:
            workspace = open_review(root, tolerate)
        except (SitegenError, KeyboardInterrupt) as exc:
            exc.done = tuple(finished)
            raise
        yield workspace


def _order(problem: Problem) -> tuple:
    return (problem.path, problem.line or 0, problem.column or 0, problem.code, problem.message)
