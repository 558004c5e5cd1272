"""What the command line refuses, and how: a problem of the review's files is exit 1 at its file and line, and
nothing is written."""

from __future__ import annotations

from conftest import tree_bytes

from sitegen.errors import EXIT_INVALID


def test_an_amendment_refused_for_the_protocols_version_names_its_line(sitegen, example_copy):
    """The example's protocol is at version 2: an edit that says version 5 is refused at protocol.md's version line
    (the refusal named no line), and one whose version cannot be raised (written over two lines) likewise."""
    protocol = example_copy / "protocol.md"
    text = protocol.read_text()
    assert text.splitlines()[1] == "version: 2"
    protocol.write_text(text.replace("version: 2\n", "version: 5\n", 1) + "\nOne more sentence.\n")
    before = tree_bytes(example_copy)
    code, _, err = sitegen("protocol", "amend", example_copy, "--at", "2026-01-20T00:00:00Z", "--reason", "clarified")
    assert code == EXIT_INVALID
    assert err.splitlines() == [f"{example_copy}/protocol.md:2:1: error: version 5: the amendment of version 2 must "
                                "be version 3 [protocol-version]", "1 problem found",
                                "error: fix the problems above; nothing was written"]
    assert tree_bytes(example_copy) == before
    protocol.write_text(text.replace("version: 2\n", "version:\n  2\n", 1) + "\nOne more sentence.\n")
    code, _, err = sitegen("protocol", "amend", example_copy, "--at", "2026-01-20T00:00:00Z", "--reason", "clarified")
    assert code == EXIT_INVALID
    assert err.startswith(f"{example_copy}/protocol.md:2:1: error: could not raise the version line; set `version: 3` "
                          "yourself, then amend")
