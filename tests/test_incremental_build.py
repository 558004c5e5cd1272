"""Incremental builds: a rebuild renders only the pages whose key changed, keeps the swap atomic,
and always gives byte for byte the site a build from nothing gives."""

from __future__ import annotations

import csv
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

import pytest

from sitegen.commands import build
from sitegen.records.model import Record
from sitegen.site import output
from sitegen.site.keys import Keys
from sitegen.site.output import MANIFEST, SITE_MARKER, Page, write_site
from sitegen.site.pages import Site, site_pages
from sitegen.workspace import open_review
from tests.conftest import EXAMPLE, tree_bytes

NOW = "2023-05-01T00:00:00Z"


def never() -> bytes:
    raise AssertionError("a page whose key did not change was rendered again")


def site_bytes(root: Path) -> dict[str, bytes]:
    """The site as a reader gets it: every file but the manifest (it records file times)."""
    return {path: content for path, content in tree_bytes(root).items() if path != MANIFEST}


def spares(out: Path) -> list[Path]:
    return [p for p in out.parent.iterdir() if p.name.startswith(f".{out.name}.spare-")]


# --------------------------------------------------------------------------- the writer


def test_a_page_whose_key_did_not_change_is_not_rendered_again(tmp_path):
    out = tmp_path / "site"
    first = write_site(out, [Page("a.html", lambda: b"A", "k1"), Page("b.html", lambda: b"B", "k2")])
    assert (first.rendered, first.changed) == (2, True)
    again = write_site(out, [Page("a.html", never, "k1"), Page("b.html", lambda: b"B2", "k3")])
    assert (again.rendered, again.changed) == (1, True)
    assert site_bytes(out) == {"a.html": b"A", "b.html": b"B2", SITE_MARKER: (out / SITE_MARKER).read_bytes()}
    assert len(spares(out)) == 1  # the site before is kept, whole, for the next build to start from



def _forked_from(pid: int) -> set[int]:
    """The processes `pid` has forked that are still there."""
    children = set()
    for stat in Path("/proc").glob("[0-9]*/stat"):
        try:
            if stat.read_text().rsplit(")", 1)[1].split()[1] == str(pid):
                children.add(int(stat.parent.name))
        except OSError:  # ended meanwhile
            pass
    return children


@pytest.mark.skipif(sys.platform != "linux", reason="renderers are forked on Linux only")
def test_a_page_that_reads_every_record_is_rendered_with_no_renderer_alive(tmp_path, monkeypatch):
    # A forked renderer shares the build's memory until either process writes to it, and Python writes to every
    # object it reads: a page reading every record beside a renderer had them all copied (500 MB at 100,000).
    monkeypatch.setattr(output, "render_processes", lambda: 2)
    builder = os.getpid()
    before = _forked_from(builder)  # other tests' processes, not the build's
    def shown(path: str) -> str:
        renderers = len(_forked_from(builder) - before) if os.getpid() == builder else "-"
        time.sleep(0.002)  # each page takes a moment, so the renderer surely takes some
        return f"{path} {os.getpid()} {renderers}"
    pages = [Page(f"{n}.html", lambda n=n: shown(f"{n}.html"), alone=n % 50 == 0) for n in range(300)]
    write_site(tmp_path / "site", pages)
    said = {path: (tmp_path / "site" / path).read_text().split() for path in (page.path for page in pages)}
    alone = [words for path, words in said.items() if int(path.split(".")[0]) % 50 == 0]
    assert len(alone) == 6 and all(words[1:] == [str(builder), "0"] for words in alone)
    assert len({words[1] for words in said.values()}) == 2  # the others were shared out
    assert any(words[2] != "-" and int(words[2]) > 0 for words in said.values())  # beside a renderer


def test_the_pages_that_read_every_record_are_rendered_alone():
    # The records lists (together) and the downloads of every record: nothing else.
    example = open_review(EXAMPLE)
    alone = {page.path for page in site_pages(example.review, example.facts, None) if page.alone}
    lists = {path for path in alone if path == "records.html" or path.startswith("records/list/")}
    assert "records/list/all/2.html" in lists and any(path.startswith("records/list/batch-") for path in lists)
    assert alone - lists == {f"downloads/{name}.{extension}" for name in ("records", "included")
                             for extension in ("csv", "ris", "bib", "json")}

def test_an_unchanged_site_is_not_swapped_and_says_so(tmp_path):
    out = tmp_path / "site"
    write_site(out, [Page("a.html", lambda: b"A", "k1"), Page("b.html", lambda: b"B")])
    inode = (out / "a.html").stat().st_ino
    result = write_site(out, [Page("a.html", never, "k1"), Page("b.html", lambda: b"B")])
    assert not result.changed and result.rendered == 1  # the unkeyed page is rendered, and found the same
    assert (out / "a.html").stat().st_ino == inode


def test_a_file_given_in_parts_is_written_as_they_come_and_known_like_any_other(tmp_path):
    out = tmp_path / "site"
    parts = ['<main id="main" data-pagefi', "nd-body>", "é" * 5000]  # the search mark split across two parts
    write_site(out, [Page("big.html", lambda: iter(parts)), Page("small.html", lambda: "<p>x</p>")])
    assert (out / "big.html").read_text(encoding="utf-8") == "".join(parts)
    files = json.loads((out / MANIFEST).read_text())["files"]
    assert files["big.html"]["sha256"] == hashlib.sha256("".join(parts).encode()).hexdigest()
    assert files["big.html"]["indexed"] and not files["small.html"]["indexed"]
    again = write_site(out, [Page("big.html", lambda: iter(parts)), Page("small.html", lambda: "<p>x</p>")])
    assert not again.changed  # the same bytes, in parts or whole, are the same site


def test_a_page_edited_in_the_built_site_is_rendered_again_not_reused(tmp_path):
    out = tmp_path / "site"
    write_site(out, [Page("a.html", lambda: b"A", "k1")])
    (out / "a.html").write_bytes(b"tampered")
    write_site(out, [Page("a.html", lambda: b"A", "k1")])
    assert (out / "a.html").read_bytes() == b"A"


def test_pages_no_longer_built_leave_the_site_and_the_spare(tmp_path):
    out = tmp_path / "site"
    write_site(out, {"a.html": b"A", "x/b.html": b"B", "x/y/c.html": b"C"})
    write_site(out, {"a.html": b"A2"})
    write_site(out, {"a.html": b"A3"})  # the spare held all three; it must drop b and c
    assert sorted(site_bytes(out)) == [SITE_MARKER, "a.html"]
    assert not (out / "x").exists()


@pytest.mark.parametrize("damage", ["marker", "manifest"])
def test_a_spare_that_is_not_whole_is_discarded_not_reused(tmp_path, damage):
    out = tmp_path / "site"
    write_site(out, {"a.html": b"A", "b.html": b"B"})
    write_site(out, {"a.html": b"A2", "b.html": b"B"})
    [spare] = spares(out)
    (spare / "a.html").write_bytes(b"left by a killed build")
    (spare / (SITE_MARKER if damage == "marker" else MANIFEST)).unlink()
    write_site(out, [Page("a.html", lambda: b"A3", "k"), Page("b.html", lambda: b"B")])
    assert site_bytes(out)["a.html"] == b"A3"
    assert all((folder / "a.html").read_bytes() != b"left by a killed build" for folder in spares(out))


def test_a_spare_with_a_folder_where_a_page_was_is_discarded_not_reused(tmp_path):
    # Writing the page into the spare met the folder ("Is a directory") and the build failed.
    out = tmp_path / "site"
    write_site(out, {"a.html": b"A", "b.html": b"B"})
    write_site(out, {"a.html": b"A2", "b.html": b"B"})
    [spare] = spares(out)
    (spare / "a.html").unlink()
    (spare / "a.html").mkdir()
    write_site(out, [Page("a.html", lambda: b"A3", "k"), Page("b.html", lambda: b"B")])
    assert site_bytes(out)["a.html"] == b"A3"


@pytest.mark.parametrize("name", ["volume", "vol\nume"])
def test_a_mount_point_is_refused_before_anything_is_rendered(tmp_path, monkeypatch, name):
    # It cannot be renamed: every build into it rendered everything, then failed with "Device or resource busy".
    # The message is one line, the folder it suggests shown as the mount point is (errors.shown_path).
    import os

    from sitegen.errors import OutputRefused, shown_path
    from sitegen.site.output import refuse_unsafe_output

    out = tmp_path / name
    out.mkdir()
    real = os.path.ismount
    monkeypatch.setattr(os.path, "ismount", lambda path: os.fspath(path) == os.fspath(out) or real(path))
    with pytest.raises(OutputRefused, match=r"it is a mount point .* build into a folder inside it") as refused:
        refuse_unsafe_output(tmp_path / "review", out)
    assert str(refused.value).endswith(f"(--out {shown_path(out / 'site')})") and "\n" not in str(refused.value)


def test_a_folder_of_the_site_replaced_by_a_link_is_never_written_through(tmp_path):
    """A link put in the site in place of one of its folders goes, with the old site, into the spare the
    next build fills: that spare is discarded, and nothing the link points to is unlinked or written."""
    out, mine = tmp_path / "site", tmp_path / "mine"
    mine.mkdir()
    (mine / "style.css").write_bytes(b"my own")
    pages = {"a.html": b"A", "assets/style.css": b"theirs", "assets/x.js": b"X"}
    write_site(out, pages)
    shutil.rmtree(out / "assets")
    (out / "assets").symlink_to(mine, target_is_directory=True)
    write_site(out, {**pages, "a.html": b"A2"})  # the site with the link becomes the spare
    write_site(out, [Page("a.html", lambda: b"A3"), Page("assets/style.css", lambda: b"theirs", "k"),
                     Page("assets/x.js", lambda: b"X")])
    assert sorted(path.name for path in mine.iterdir()) == ["style.css"]
    assert (mine / "style.css").read_bytes() == b"my own"
    assert not (out / "assets").is_symlink() and site_bytes(out)["assets/style.css"] == b"theirs"


def test_a_file_added_to_the_site_by_hand_does_not_come_back_with_the_spare(tmp_path):
    """Every build gives the site a build from nothing gives: a file the manifest does not list, moved into
    the spare with the old site, is not carried into a later site."""
    out = tmp_path / "site"
    write_site(out, {"a.html": b"A"})
    (out / "NOTES.txt").write_bytes(b"notes")
    (out / "sub").mkdir()
    (out / "sub" / "b.html").write_bytes(b"mine")
    write_site(out, {"a.html": b"A2"})
    write_site(out, {"a.html": b"A3"})  # starts from the spare, which holds the two files
    assert sorted(site_bytes(out)) == [SITE_MARKER, "a.html"]
    assert site_bytes(out)["a.html"] == b"A3"


def test_a_page_may_not_be_the_marker_or_the_manifest_or_leave_the_folder(tmp_path):
    from sitegen.errors import BuildError

    for path in (SITE_MARKER, MANIFEST, f"./{MANIFEST}", f"x/../{SITE_MARKER}", "../x.html", "/etc/x", ".", ""):
        with pytest.raises(BuildError):
            write_site(tmp_path / "site", [Page(path, lambda: b"x")])
        assert not (tmp_path / "site").exists()


def test_keys_refuse_a_value_they_cannot_account_for():
    keys = Keys({}, {}, "shared")
    assert keys.of("t", {"a": [1, "b", None]}) == keys.of("t", {"a": [1, "b", None]})
    assert keys.of("t", {"a": 1}) != keys.of("t", {"a": "1"})
    assert keys.of("t", {"a": 1}) != keys.of("t", {"a": True}) != keys.of("t", {"a": 1.0})
    assert keys.of(Counter(a=1)) == keys.of(Counter(a=1)) != keys.of({"a": 1})  # a dict of another kind
    assert keys.of(Pair(1, 2)) != keys.of((1, 2)) and keys.of(Pair(1, 2)) != keys.of(Pair(1, 3))
    for value in (object(), Path("x"), lambda: 1):
        with pytest.raises(TypeError):
            keys.of({"a": value})


class Pair(NamedTuple):
    first: int
    second: int


@dataclass(frozen=True)
class Shown:
    label: str
    model: Record | None = None


@dataclass(frozen=True, slots=True)
class Slotted:
    label: str
    value: object = None


@dataclass(frozen=True, slots=True)
class One:
    value: object


@dataclass(frozen=True)
class Empty:
    pass


def test_keys_see_every_field_of_dataclasses_and_models_however_deep():
    keys = Keys({}, {}, "shared")
    record = Record(id="10.1000/x", title="A title", DOI="10.1000/x")
    assert keys.of(Slotted("a", [1])) == keys.of(Slotted("a", [1])) != keys.of(Slotted("a", [2]))
    assert keys.of(Slotted("a", Slotted("b"))) != keys.of(Slotted("a", Slotted("c")))  # however deep
    assert keys.of(One((1, 2))) != keys.of(Slotted(1, 2)) and keys.of(One((1, 2))) != keys.of(One((1, 3)))
    assert keys.of(Empty()) == keys.of(Empty()) != keys.of(One(()))
    assert keys.of([Shown("a", record)]) == Keys({}, {}, "shared").of([Shown("a", record.model_copy())])
    assert keys.of([Shown("a", record)]) != keys.of([Shown("b", record)])
    assert keys.of([Shown("a", record)]) != keys.of([Shown("a", record.model_copy(update={"volume": "2"}))])
    assert keys.of([Shown("a")]) != Keys({}, {}, "other").of([Shown("a")])  # the shared context is in every key


def test_a_key_depends_on_its_value_alone_not_on_the_keys_made_before_it():
    """Keys are written by picklers made once and used again: no value, nor a value that failed, is seen in the next."""
    record = Record(id="10.1000/x", title="A title", DOI="10.1000/x")
    value = ["t", Slotted("a", [record, Slotted("b")]), Counter(a=1), {"x": "shared"}]
    keys = Keys({record.id: record}, {record.id: b"digest"}, "shared")
    first = keys.of(*value)
    keys.of(*value[1:], "other", value[0])  # the same objects, met in another order
    with pytest.raises(TypeError):
        keys.of(Slotted("a", object()))  # fails while a value is written
    assert keys.of(*value) == first == Keys({record.id: record}, {record.id: b"digest"}, "shared").of(*value)


def test_a_list_page_holding_entries_digests_sees_every_change_of_an_entry():
    """The records lists' keys hold their entries' digests (`Keys.digest`), made once a build: a digest is
    the entry's every field, as the entry itself stood in a key, and only values digested once have one."""
    from sitegen.site.keys import digested_once

    @digested_once
    @dataclass(frozen=True, slots=True)
    class Listed:
        title: str
        sources: list

    keys = Keys({}, {}, "shared")
    entry = Listed("a", ["x"])
    assert keys.digest(entry) == keys.digest(entry) == Keys({}, {}, "shared").digest(Listed("a", ["x"]))
    assert keys.digest(entry) not in {keys.digest(Listed("b", ["x"])), keys.digest(Listed("a", ["y"]))}
    assert keys.of([keys.digest(entry)]) != keys.of([keys.digest(Listed("a", ["y"]))])
    with pytest.raises(TypeError):
        keys.digest(Slotted("a"))


@dataclass(frozen=True)
class Tally:
    contents: dict


Tally.__qualname__ = "Counter"  # named as collections.Counter is


def test_a_dataclass_of_one_field_is_not_written_as_a_container_of_its_name():
    keys = Keys({}, {}, "shared")
    assert keys.of(Tally({"a": 1})) != keys.of(Counter(a=1))
    assert keys.of(Tally({"a": 1})) == keys.of(Tally({"a": 1})) != keys.of(Tally({"a": 2}))


def test_a_tuple_digested_once_is_its_kind_and_contents():
    """A tuple kind digested once (a record's `Sightings`) stands as the digest of its kind's name and contents:
    alike in another object, another with any item changed, and never a dataclass of one field and the same name."""
    from sitegen.site.keys import digested_once

    @digested_once
    class Held(tuple):
        __slots__ = ()

    @digested_once
    @dataclass(frozen=True, slots=True)
    class Single:
        items: list

    Single.__qualname__ = Held.__qualname__
    keys = Keys({}, {}, "shared")
    held = Held([Slotted("a"), Slotted("b")])
    assert keys.digest(held) == keys.digest(Held([Slotted("a"), Slotted("b")]))
    assert len({keys.digest(held), keys.digest(Held([Slotted("a"), Slotted("c")])), keys.digest(Held([Slotted("a")])),
                keys.digest(Single([Slotted("a"), Slotted("b")]))}) == 4
    assert keys.of([held]) != keys.of([Held([Slotted("b"), Slotted("a")])])


def test_shared_sightings_and_stage_histories_stand_as_digests_that_see_every_field():
    """A record's sightings and its stage histories are values shared by the records alike (`shared_sightings`,
    `screening_histories`) and digested once: a key holding them still changes with any field of any of them."""
    from dataclasses import fields, replace

    from sitegen.living.sightings import Sighting
    from sitegen.screening.outcomes import Outcome
    from sitegen.screening.standing import ShownDecision, StageHistory
    from sitegen.site.records import Sightings, shared_sightings

    first = Sighting("2024-01-01T00:00:00Z", "pubmed", "m", "label", None, True)
    later = Sighting("2024-02-01T00:00:00Z", "embase", None, None, "export", False)
    shared = shared_sightings({"a": [first, later], "b": [first, later], "c": [first]})
    assert shared["a"] is shared["b"] == Sightings([first, later]) and shared["c"] == Sightings([first])
    decision = ShownDecision("reviewer-a", "exclude", "", "")
    history = StageHistory("title-abstract", [decision], None, Outcome("exclude", "", ("reviewer-a",)))
    other = {"at": "2024-03-01T00:00:00Z", "source": "openalex", "monitor_id": "n", "label": "other",
             "imported": "file", "first": False, "reviewer": "reviewer-b", "decision": "include", "reason": "r",
             "note": "a note", "stage": "full-text", "decisions": [], "adjudication": decision,
             "outcome": Outcome("include", "", ("reviewer-a",))}

    def key(sightings: Sightings, histories: list[StageHistory]) -> str:
        return Keys({}, {}, "shared").of("record", {"entry": sightings, "histories": histories})

    keys = {key(shared["a"], [history])}
    for field in fields(Sighting):
        keys.add(key(Sightings([replace(first, **{field.name: other[field.name]}), later]), [history]))
    for field in fields(ShownDecision):
        keys.add(key(shared["a"], [replace(history, decisions=[replace(decision, **{field.name: other[field.name]})])]))
    for field in fields(StageHistory):
        keys.add(key(shared["a"], [replace(history, **{field.name: other[field.name]})]))
    assert len(keys) == 1 + len(fields(Sighting)) + len(fields(ShownDecision)) + len(fields(StageHistory))
    assert key(shared["a"], [history]) == key(Sightings([replace(first), replace(later)]), [replace(history)])


def test_records_decided_alike_share_their_stage_histories(example_copy):
    """`screening_histories` makes each stage history once for the records decided alike there (as their pages show
    it), and another for any record decided otherwise: values alike are one object, and objects one value."""
    histories = [history for stages in open_review(example_copy).facts.histories.values() for history in stages]
    alike: dict[str, set[int]] = {}
    for history in histories:
        alike.setdefault(repr(history), set()).add(id(history))  # a dataclass's repr: its every field, however deep
    assert all(len(ids) == 1 for ids in alike.values())
    assert len(alike) < len(histories)


def test_page_keys_are_the_same_in_another_process(example_copy):
    """A key depends on values alone, not on a process's string hashing or which objects it shares, so a
    rebuild in a new process (every `sitegen build`) renders only what changed."""
    script = ("import json, sys; from pathlib import Path; from sitegen.workspace import open_review; "
              "from sitegen.site.pages import site_pages; ws = open_review(Path(sys.argv[1])); "
              "print(json.dumps({page.path: page.key for page in site_pages(ws.review, ws.facts, None)}))")
    keys = [json.loads(subprocess.run([sys.executable, "-c", script, str(example_copy)], capture_output=True, text=True,
                                      check=True, env={**os.environ, "PYTHONHASHSEED": seed}).stdout)
            for seed in ("1", "2")]
    assert keys[0] == keys[1]
    assert sum(key is not None for key in keys[0].values()) > 200


def test_a_record_counts_as_its_line_only_when_it_is_the_reviews_own():
    record = Record(id="10.1000/x", title="A title", DOI="10.1000/x")
    own = Keys({"10.1000/x": record}, {"10.1000/x": b"digest"}, "s")
    other = record.model_copy(update={"title": "Another title"})
    assert own.of(record) != own.of(other)  # a changed copy is walked field by field, not taken for the line


def test_a_ranking_stands_in_keys_as_its_digest_and_every_score_in_it_counts(example_copy):
    """A batch's ranking is on its batch page and on both pages of its week's digest: it is digested once in a build
    (pages.py), and each key still changes with any score or rationale in it, and not with which copy it is."""
    ws = open_review(example_copy)
    site = Site(ws.review, ws.facts, None)
    ranking = next(ranking for ranking in site.rankings.values() if ranking.decisions)
    key = site.keys.of("batch.html", ranking)
    assert site.keys.of("batch.html", ranking) == key == site.keys.of("batch.html", ranking.model_copy(deep=True))
    rescored, reworded = ranking.model_copy(deep=True), ranking.model_copy(deep=True)
    rescored.decisions[-1].score += 1
    reworded.decisions[-1].rationale += " (reworded)"
    assert len({key, site.keys.of("batch.html", rescored), site.keys.of("batch.html", reworded)}) == 3


def test_an_entrys_digest_changes_with_its_standing_and_outcomes_which_stand_as_their_own_digests(example_copy):
    """Standings and outcomes are shared by the records alike (`standing._standing`, `outcomes._outcome`) and digested
    once (records.py): an entry's digest holds theirs, and still changes with any field of either, and not with
    which copy of an alike value the entry holds."""
    from dataclasses import replace

    from sitegen.screening.outcomes import Outcome
    from sitegen.screening.standing import Standing
    from sitegen.site.records import entries

    ws = open_review(example_copy)
    site = Site(ws.review, ws.facts, None)
    listed = entries(site)
    assert len({id(entry.standing) for entry in listed}) == len({entry.standing for entry in listed})  # shared
    entry = next(entry for entry in listed if entry.view.title_abstract is not None)
    outcome, standing = entry.view.title_abstract, entry.standing
    digest = site.keys.digest(entry)

    def digest_of(changed: object) -> bytes:
        return Site(ws.review, ws.facts, None).keys.digest(changed)

    alike = replace(entry, standing=Standing(standing.kind, standing.stage, standing.reason),
                    view=replace(entry.view, title_abstract=replace(outcome)))
    assert digest_of(alike) == digest
    changed = [replace(entry, standing=replace(standing, kind="conflict" if standing.kind != "conflict" else "awaiting")),
               replace(entry, standing=replace(standing, stage=standing.stage + "x")),
               replace(entry, standing=replace(standing, reason=standing.reason + "x"))]
    changed += [replace(entry, view=replace(entry.view, title_abstract=replace(outcome, **{name: value})))
                for name, value in (("decision", outcome.decision + "x"), ("reason", outcome.reason + "x"),
                                    ("reviewers", (*outcome.reviewers, "another")),
                                    ("adjudicated", not outcome.adjudicated),
                                    ("reasons_differ", not outcome.reasons_differ))]
    changed.append(replace(entry, view=replace(entry.view, full_text=Outcome("exclude", "x", ("a",)))
                           if entry.view.full_text is None else replace(entry.view, full_text=None)))
    assert len({digest, *map(digest_of, changed)}) == len(changed) + 1


def test_a_record_page_reads_the_reasons_labels_from_the_shared_context_its_key_holds(example_copy):
    """A record's page names its exclusion reason by the protocol's label, read from the context every page shares
    (`Site.common`), which every key holds: relabelled, the pages that name it get new keys, and show the new label."""
    from sitegen.site.records import record_pages

    flip_full_text_decision(example_copy)  # a study excluded at full text as "non-rodent"
    ws = open_review(example_copy)

    def record_page_list() -> dict[str, tuple[str | None, str]]:
        return {page.path: (page.key, page.render()) for page in record_pages(Site(ws.review, ws.facts, None))
                if page.path.startswith("records/") and "/list/" not in page.path}

    before = record_page_list()
    ws.facts.reason_labels["non-rodent"] = "Not a rodent"  # as the protocol would name it
    after = record_page_list()
    relabelled = [path for path, (_, html) in after.items() if "Not a rodent" in html]
    assert relabelled and all(before[path][0] != after[path][0] for path in relabelled)
    assert not any("Not a rodent" in html for _, html in before.values())


# --------------------------------------------------------------------------- the build, end to end


def flip_full_text_decision(review: Path) -> None:
    path = review / "screening" / "full-text" / "reviewer-a.csv"
    rows = list(csv.reader(path.open(encoding="utf-8", newline="")))
    row = next(row for row in rows if row[1] == "include")
    row[1:3] = ["exclude", "non-rodent"]
    with path.open("w", encoding="utf-8", newline="") as file:
        csv.writer(file, lineterminator="\n").writerows(rows)
    for evidence in (review / "evidence").glob("*.yaml"):
        if f"record_id: {row[0]}\n" in evidence.read_text(encoding="utf-8"):
            evidence.unlink()


def retitle_a_record(review: Path) -> None:
    path = review / "records.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    lines[5] = re.sub(r'"title":"', '"title":"Revised: ', lines[5], count=1)
    path.write_text("".join(lines), encoding="utf-8")


def rename_an_author(review: Path) -> None:
    """A record's first author renamed: the lists show each record's first authors, which its view writes when a page
    asks (`RecordView.authors_short`), not a field of it; a list page's key sees them in the record's line."""
    path = review / "records.jsonl"
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    index = next(index for index, line in enumerate(lines) if '"family":"' in line)
    lines[index] = lines[index].replace('"family":"', '"family":"Renamed-', 1)
    path.write_text("".join(lines), encoding="utf-8")


def relabel_a_reason(review: Path) -> None:
    path = review / "review.yaml"
    path.write_text(path.read_text(encoding="utf-8").replace("title: \"The rodent", "title: \"A rodent"),
                    encoding="utf-8")


def reword_a_finding(review: Path) -> None:
    path = sorted((review / "evidence").glob("*.yaml"))[0]
    text = path.read_text(encoding="utf-8")
    path.write_text(re.sub(r"finding: >-\n(\s+)", r"finding: >-\n\1Reworded: ", text, count=1), encoding="utf-8")


CHANGES = [flip_full_text_decision, retitle_a_record, rename_an_author, relabel_a_reason, reword_a_finding]


def test_every_rebuild_equals_a_build_from_nothing(example_copy, tmp_path):
    """The property incremental builds rest on: whatever changed, the site kept and re-rendered is
    byte for byte the site a build from nothing gives."""
    out = tmp_path / "site"
    first = build(example_copy, out, NOW, {})
    assert first.changed and first.rendered == first.files
    for change in CHANGES:
        change(example_copy)
        result = build(example_copy, out, NOW, {})
        fresh = tmp_path / f"fresh-{change.__name__}"
        build(example_copy, fresh, NOW, {})
        assert site_bytes(out) == site_bytes(fresh), change.__name__
        assert result.changed
    flip_full_text_decision(example_copy)  # the review already differs from its latest version: few pages change
    result = build(example_copy, out, NOW, {})
    assert result.rendered < result.files / 2
    fresh = tmp_path / "fresh-last"
    build(example_copy, fresh, NOW, {})
    assert site_bytes(out) == site_bytes(fresh)


def test_a_full_text_decision_leaves_the_batch_pages_and_digests_as_they_were(example_copy, tmp_path):
    """A batch page shows its records' title-and-abstract outcomes and a digest their titles: a full-text decision
    changes neither, so neither is rendered again (a batch page is 20,000 rows at review scale)."""
    out = tmp_path / "site"
    flip_full_text_decision(example_copy)  # the review differs from its latest version, which every page says
    build(example_copy, out, NOW, {})
    before = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    flip_full_text_decision(example_copy)
    build(example_copy, out, NOW, {})
    after = json.loads((out / MANIFEST).read_text(encoding="utf-8"))["files"]
    unchanged = [path for path in before if path.startswith(("batches/", "digests/", "downloads/digest-"))]
    assert len(unchanged) > 4 and all(before[path]["key"] for path in unchanged)
    assert {path: after[path]["key"] for path in unchanged} == {path: before[path]["key"] for path in unchanged}
    assert after["records.html"]["key"] != before["records.html"]["key"]  # what the decision changes, does


def test_a_rebuild_with_nothing_changed_touches_nothing(example_copy, tmp_path, sitegen):
    out = tmp_path / "site"
    code, said, _ = sitegen("build", example_copy, "--out", out, "--now", NOW)
    assert code == 0 and "rendered" in said
    before = {path: os.stat(out / path).st_mtime_ns for path in site_bytes(out)}
    code, said, _ = sitegen("build", example_copy, "--out", out, "--now", NOW)
    assert code == 0 and "is up to date" in said
    assert before == {path: os.stat(out / path).st_mtime_ns for path in site_bytes(out)}
    # Another build time, or any byte of any file of the review, is another site.
    code, said, _ = sitegen("build", example_copy, "--out", out, "--now", "2023-05-02T00:00:00Z")
    assert "is up to date" not in said
    (example_copy / "protocol.md").write_text((example_copy / "protocol.md").read_text(encoding="utf-8") + "\n",
                                             encoding="utf-8")
    code, said, _ = sitegen("build", example_copy, "--out", out, "--now", "2023-05-02T00:00:00Z")
    assert "is up to date" not in said


@pytest.mark.parametrize("tamper", ["edit", "remove", "add"])
def test_a_site_changed_by_hand_is_not_up_to_date(example_copy, tmp_path, tamper):
    out = tmp_path / "site"
    build(example_copy, out, NOW, {})
    expected = site_bytes(out)
    page = out / "protocol.html"
    if tamper == "edit":
        page.write_text("edited by hand")
    elif tamper == "remove":
        page.unlink()
    else:
        (out / "CNAME").write_text("example.org")
    result = build(example_copy, out, NOW, {})
    assert result.changed and site_bytes(out) == expected


def test_a_site_built_by_an_older_sitegen_is_rebuilt_whole(example_copy, tmp_path):
    out = tmp_path / "site"
    out.mkdir()
    (out / SITE_MARKER).write_text("built by sitegen\n")
    (out / "old-page.html").write_text("from before manifests")
    result = build(example_copy, out, NOW, {})
    assert result.rendered == result.files and not (out / "old-page.html").exists()
    shutil.rmtree(out)


def test_a_build_hashes_the_reviews_files_once_under_one_lock(example_copy, tmp_path, monkeypatch):
    from sitegen.site import build as site_build

    calls = []
    real = site_build.inputs_digest
    monkeypatch.setattr(site_build, "inputs_digest", lambda *args: calls.append(args) or real(*args))
    build(example_copy, tmp_path / "site", NOW, {})
    assert len(calls) == 1
    assert not build(example_copy, tmp_path / "site", NOW, {}).changed and len(calls) == 2


@pytest.mark.parametrize("kind", ["pipe", "device", "folder"])
def test_a_manifest_that_is_no_file_is_no_manifest_read_at_once(tmp_path, kind):
    """The site folder is anyone's to change: a named pipe in the manifest's place was waited on for ever, a
    link to /dev/zero read until memory ran out. Either is a site sitegen knows nothing of, built afresh."""
    out = tmp_path / "site"
    write_site(out, {"a.html": b"A"})
    (out / MANIFEST).unlink()
    if kind == "pipe":
        os.mkfifo(out / MANIFEST)
    elif kind == "device":
        (out / MANIFEST).symlink_to("/dev/zero")
    else:
        (out / MANIFEST).mkdir()
    result = write_site(out, [Page("a.html", lambda: b"A2", "k")])
    assert result.rendered == 1 and site_bytes(out)["a.html"] == b"A2"
    assert json.loads((out / MANIFEST).read_text())["files"]["a.html"]["key"] == "k"


def test_a_failed_rebuild_at_another_time_and_umask_leaves_the_served_site_as_it_was(tmp_path):
    # A kept page is a link to the served site's file: nothing of that file (bytes, time, mode) may change
    # before the swap, or a failed build would leave the served site other than it was.
    from sitegen.site.output import _manifest, site_is_intact

    site = tmp_path / "site"
    first, later = 1_700_000_000 * 10**9, 1_700_086_400 * 10**9
    pages = [Page(f"p{n}.html", lambda n=n: f"<p>{n}</p>", key=f"k{n}") for n in range(5)]
    write_site(site, pages, dated=first)
    before = {path: (path.read_bytes(), path.stat().st_mode, path.stat().st_mtime_ns) for path in site.rglob("*")
              if path.is_file()}

    def broken() -> str:
        raise RuntimeError("render failed")
    old = os.umask(0o077)
    try:
        with pytest.raises(Exception, match="render failed"):
            write_site(site, [*pages, Page("bad.html", broken)], dated=later)
    finally:
        os.umask(old)
    after = {path: (path.read_bytes(), path.stat().st_mode, path.stat().st_mtime_ns) for path in site.rglob("*")
             if path.is_file()}
    assert after == before and site_is_intact(site, _manifest(site))


def test_a_sites_stamp_is_read_alone_as_the_whole_manifest_gives_it(tmp_path, monkeypatch):
    from sitegen.site.output import Stamp, site_manifest, site_stamp

    out = tmp_path / "site"
    assert site_stamp(out) is None  # no site
    write_site(out, {"a.html": b"A"})
    assert site_stamp(out) is None  # a site without a stamp
    stamp = Stamp(inputs="i" * 64, records=3, built_at=None, title="T \u00e9 " + "x" * 500)
    write_site(out, [Page("a.html", lambda: b"A", "k")], stamp=stamp)
    assert site_stamp(out) == site_manifest(out).stamp == stamp
    monkeypatch.setattr(output, "STAMP_READ", 100)  # a stamp longer than is read at once: read from the whole
    assert site_stamp(out) == stamp
    manifest = json.loads((out / MANIFEST).read_text())
    (out / MANIFEST).write_text(json.dumps({"files": manifest["files"], "stamp": manifest["stamp"]}))  # other order
    assert site_stamp(out) == stamp
    (out / MANIFEST).write_text('{"format":1,"stamp":{"inputs": 3}')  # damaged: none, as the whole manifest says
    assert site_stamp(out) is None and site_manifest(out).stamp is None


def test_a_site_whose_stamp_differs_is_built_again_and_one_whose_stamp_matches_is_checked_whole(example_copy, tmp_path):
    out = tmp_path / "site"
    build(example_copy, out, NOW, {})
    assert not build(example_copy, out, NOW, {}).changed
    first_page = next((out / "records").glob("*.html"))
    first_page.write_bytes(b"edited")  # the stamp matches: the whole manifest shows the edit, and it is built again
    assert build(example_copy, out, NOW, {}).changed and first_page.read_bytes() != b"edited"


def test_a_failure_keeping_a_page_names_the_sites_file(tmp_path, monkeypatch):
    out = tmp_path / "site"
    write_site(out, [Page("a/b.html", lambda: b"B", "k")])

    def failing_link(source, target):
        raise OSError(28, "No space left on device")  # no file named, as some errors name none

    monkeypatch.setattr(output.os, "link", failing_link)
    with pytest.raises(OSError) as raised:
        write_site(out, [Page("a/b.html", never, "k")])
    assert raised.value.filename == f"{out}/a/b.html"
    assert site_bytes(out)["a/b.html"] == b"B"


def _parted(keys: list[str], rendered: list[str]) -> Page:
    """A page of keyed parts, each part's text its key's (noting each part rendered), its whole key their keys'."""
    def part(key: str) -> output.Part:
        return output.Part(key, lambda: rendered.append(key) or f"<{key}>" * 1000)
    return Page("downloads/big.csv", lambda: ["head\n", *map(part, keys), "tail\n"], "|".join(keys))


def test_a_file_in_keyed_parts_renders_only_the_parts_whose_keys_changed(tmp_path):
    out, rendered = tmp_path / "site", []
    write_site(out, [_parted(["a", "b", "c", "d"], rendered)])
    assert rendered == ["a", "b", "c", "d"]
    rendered.clear()
    write_site(out, [_parted(["a", "B", "c", "e", "d"], rendered)])
    assert rendered == ["B", "e"]  # the others are read from the current site's file, wherever they were in it
    assert site_bytes(out)["downloads/big.csv"] == ("head\n" + "".join(f"<{key}>" * 1000 for key in "aBced")
                                                    + "tail\n").encode()
    layout = json.loads((out / MANIFEST).read_text())["parts"]["downloads/big.csv"]
    assert [entry[:2] for entry in layout] == [[None, 5], *([key, len(key) * 1000 + 2000] for key in "aBced"), [None, 5]]
    assert [entry[2] is None for entry in layout] == [True, False, False, False, False, False, True]
    rendered.clear()
    write_site(out, [_parted(["a", "B", "c", "e", "d"], rendered)])  # nothing changed: the file is kept whole
    assert rendered == [] and "downloads/big.csv" in json.loads((out / MANIFEST).read_text())["parts"]


@pytest.mark.parametrize("damage", ["edited", "layout"])
def test_parts_are_not_read_from_a_file_edited_since_or_laid_out_otherwise(tmp_path, damage):
    out, rendered = tmp_path / "site", []
    write_site(out, [_parted(["a", "b"], rendered)])
    big = out / "downloads" / "big.csv"
    if damage == "edited":
        big.write_bytes(big.read_bytes().replace(b"<a>", b"<x>"))
    else:
        manifest = json.loads((out / MANIFEST).read_text())
        manifest["parts"]["downloads/big.csv"][1][1] += 1  # the lengths no longer add up to the file's
        (out / MANIFEST).write_text(json.dumps(manifest))
    rendered.clear()
    write_site(out, [_parted(["a", "b", "c"], rendered)])
    assert rendered == ["a", "b", "c"]
    assert b"<x>" not in big.read_bytes() and big.read_bytes().count(b"<a>") == 1000


def test_a_part_edited_by_hand_keeping_the_files_size_and_time_is_rendered_again(tmp_path):
    # The files of a site are known by their size and time; a part copied from one is known by its own bytes too: an
    # older copy put back (`cp -p`; a build dates its files by the ledger, so two builds' times are often one) or an
    # edit of the same length was carried into every build after it.
    out, rendered = tmp_path / "site", []
    write_site(out, [_parted(["a", "b"], rendered)], dated=1_700_000_000 * 10**9)
    big = out / "downloads" / "big.csv"
    status = big.stat()
    big.write_bytes(big.read_bytes().replace(b"<a>", b"<x>", 1))
    os.utime(big, ns=(status.st_atime_ns, status.st_mtime_ns))
    rendered.clear()
    write_site(out, [_parted(["a", "b", "c"], rendered)], dated=1_700_000_000 * 10**9)
    assert rendered == ["a", "c"]  # "a" is no longer as written: rendered, not copied; "b" is copied
    assert big.read_bytes() == ("head\n" + "".join(f"<{key}>" * 1000 for key in "abc") + "tail\n").encode()
