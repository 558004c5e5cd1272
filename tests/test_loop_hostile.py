"""`sitegen loop` on hostile drafts: keys that are nearly an entry's."""

from __future__ import annotations

import test_loop
from test_loop import FIXTURES, problems, run

no_waiting, manuscript = test_loop.no_waiting, test_loop.manuscript


def test_a_key_cited_in_another_case_names_its_entry_which_is_never_called_uncited(manuscript):
    # "@Wagner2021AI" for the entry wagner2021ai: the entry was called uncited, with "remove it" offered, though the
    # draft cites it (BibTeX matches keys whatever their case)
    draft = (FIXTURES / "manuscript" / "draft.md").read_text().replace("@wagner2021ai", "@Wagner2021AI")
    (manuscript / "draft.md").write_text(draft)
    run(manuscript)
    found = {(p["type"], p.get("key")): p for p in problems(manuscript, 1)}
    assert ("uncited entry", "wagner2021ai") not in found
    assert "the .bib has wagner2021ai, which differs only in case" in \
        found[("citation with no entry", "Wagner2021AI")]["evidence"]
