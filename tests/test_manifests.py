"""Search-run manifests: one per run, written in the run's transaction, named by its ledger events,
free of credentials, and checked against the ledger by `sitegen check`."""

from __future__ import annotations

import hashlib
import json
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import httpx
import pytest
from conftest import EXAMPLE, ROOT, tree_bytes
from http_mocks import fetcher
from test_update import CORE, SETTINGS, STRATEGIES, SYNERGY, Providers, ledger, new_review

from sitegen.commands import add_monitor, update
from sitegen.errors import ReviewInvalid, SitegenError
from sitegen.living.ledger import ledger_text, next_event
from sitegen.review.folder import manifest_path
from sitegen.review.models import QUERY_MAX_LENGTH, RunManifest, RunSource, Strategy
from sitegen.sources.search import run_strategy
from sitegen.sources.settings import SourceSettings
from sitegen.workspace import inspect

FIRST, SECOND = "2026-01-05T06:00:00Z", "2026-01-12T06:00:00.25+01:00"
FIRST_FILE, SECOND_FILE = "runs/20260105T060000Z-watch.json", "runs/20260112T050000.25Z-watch.json"
SECRETS = SourceSettings(max_records=1000, contact_email="curator@example.org", openalex_api_key="openalex-secret-1",
                         ncbi_api_key="ncbi-secret-12")


@pytest.fixture(autouse=True)
def no_waiting(monkeypatch):
    monkeypatch.setattr("sitegen.sources.http.pause", lambda seconds: None)


class Seen(Providers):
    """The providers, remembering every request as it reached them (credentials included)."""

    def __init__(self, works, results):
        super().__init__(works, results)
        self.requests: list[str] = []

    def __call__(self, request: httpx.Request) -> httpx.Response:
        self.requests.append(str(request.url))
        return super().__call__(request)


def two_runs(sitegen, tmp_path: Path, europepmc_status=200) -> tuple[Path, Seen]:
    """A saved search on OpenAlex and Europe PMC (one strategy in sitegen's grammar) run twice, the
    second time finding two new works, with Europe PMC answering `europepmc_status`."""
    review = new_review(sitegen, tmp_path)
    providers = Seen(SYNERGY[:5], CORE[:3])
    strategies = [STRATEGIES[0], Strategy(source="europepmc", query="cancer AND mouse", syntax="sitegen")]
    add_monitor(review, "watch", strategies, FIRST, "record", settings=SECRETS, transport=httpx.MockTransport(providers))
    providers.works = [SYNERGY[7], *SYNERGY[:5], SYNERGY[6]]
    providers.europepmc_status = europepmc_status
    update(review, SECOND, "record", settings=SECRETS, transport=httpx.MockTransport(providers))
    return review, providers


def without_manifests(review: Path, times: set[str]) -> None:
    """The review as a sitegen before manifests would have left it: the runs at `times` name no manifest
    and have none. The ledger is chained anew, and the anchors naming its events (state.json, the saved
    search) follow it."""
    rechained, previous = [], None
    for event in ledger(review):
        if event["type"] == "retrieval" and event["ts"] in times:
            event["payload"].pop("manifest")
        previous = next_event(previous, event["type"], event["ts"], event["payload"])
        rechained.append(previous)
    (review / "ledger.jsonl").write_text(ledger_text(rechained))
    for rel, key in (("state.json", "ledger_head"), ("searches/watch.json", "last_event")):
        data = json.loads((review / rel).read_text())
        data[key]["hash"] = rechained[data[key]["seq"] - 1].hash
        (review / rel).write_text(json.dumps(data, indent=2) + "\n")
    for at in times:
        (review / manifest_path(at, "watch")).unlink()


def manifest(review: Path, rel: str) -> dict:
    return json.loads((review / rel).read_text())


def problems(review: Path) -> list[str]:
    return [f"{p.where()} [{p.code}] {p.message}" for p in inspect(review)[1]]


def line_of(review: Path, rel: str, text: str, occurrence: int = 0) -> int:
    lines = [n for n, line in enumerate((review / rel).read_text().splitlines(), start=1) if text in line]
    return lines[occurrence]


# --------------------------------------------------------------------------- written by the run


def test_each_run_writes_one_manifest_its_events_name(sitegen, tmp_path):
    review, providers = two_runs(sitegen, tmp_path)
    assert sorted(p.relative_to(review).as_posix() for p in (review / "runs").iterdir()) == [FIRST_FILE, SECOND_FILE]
    events = ledger(review)
    for rel, at in ((FIRST_FILE, FIRST), (SECOND_FILE, SECOND)):
        digest = canonical_sha256(review / rel)
        retrievals = [e for e in events if e["type"] == "retrieval" and e["ts"] == at]
        assert len(retrievals) == 2 and all(e["payload"]["manifest"] == digest for e in retrievals)
    second = manifest(review, SECOND_FILE)
    assert (second["origin"], second["monitor_id"], second["at"], second["snapshots"]) == \
        ("run", "watch", SECOND, "record")
    assert second["sitegen_version"] == sitegen_version()
    openalex, europepmc = second["sources"]
    assert openalex["strategy"] == "object context" and openalex["syntax"] == "native"
    assert openalex["provider_query"] == {"search": "object context"}
    assert europepmc["strategy"] == "cancer AND mouse" and europepmc["syntax"] == "sitegen"
    assert europepmc["provider_query"] == '"cancer" AND "mouse"'  # compiled, as Europe PMC received it
    assert europepmc["requests"][0].startswith("GET https://www.ebi.ac.uk/europepmc/webservices/rest/search?query=")
    # Outcomes and counts agree with the ledger's events for the run.
    by_source = {e["payload"]["source"]: e["payload"] for e in events if e["type"] == "retrieval" and e["ts"] == SECOND}
    batch = next(e["payload"] for e in events if e["type"] == "screening" and e["ts"] == SECOND)
    for source in (openalex, europepmc):
        payload = by_source[source["source"]]
        assert source["retrieved"] == len(payload["record_ids"]) and source["total"] == payload["total"]
        assert source["snapshot_hashes"] == payload["snapshot_hashes"] and source["status"] == "ok"
        assert source["new"] == len(set(payload["record_ids"]) & set(batch["record_ids"]))
    assert (openalex["retrieved"], openalex["new"], europepmc["retrieved"], europepmc["new"]) == (7, 2, 3, 0)
    assert second["counts"] == {"retrieved": 10, "distinct": 10, "duplicates": 0, "new": 2}
    assert second["complete"] is True and second["batch"] == batch["batch"] == 2
    assert problems(review) == []


def canonical_sha256(path: Path) -> str:
    """The SHA-256 of a JSON file's canonical form (sorted keys, no whitespace), as the ledger names manifests."""
    canonical = json.dumps(json.loads(path.read_bytes()), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def retrieval_line(review: Path, at: str) -> int:
    """The ledger line of the first retrieval event of the run at `at`."""
    return next(n for n, e in enumerate(ledger(review), start=1) if e["type"] == "retrieval" and e["ts"] == at)


def ledger_manifest(review: Path, at: str) -> str:
    return ledger(review)[retrieval_line(review, at) - 1]["payload"]["manifest"]


def sitegen_version() -> str:
    from sitegen import __version__

    return __version__


def test_a_manifest_holds_no_credential_or_contact_address(sitegen, tmp_path):
    review, providers = two_runs(sitegen, tmp_path)
    sent = " ".join(providers.requests)
    assert "openalex-secret-1" in sent and "curator%40example.org" in sent  # the providers did get them
    for path in (review / "runs").iterdir():
        data = path.read_text()
        assert json.loads(data)["sources"][0]["requests"]
        for secret in ("openalex-secret-1", "curator", "example.org", "api_key", "mailto", "email"):
            assert secret not in data, (path.name, secret)


def test_an_incomplete_run_says_which_source_and_why(sitegen, tmp_path):
    review, _ = two_runs(sitegen, tmp_path, europepmc_status=503)
    second = manifest(review, SECOND_FILE)
    openalex, europepmc = second["sources"]
    assert second["complete"] is False and openalex["complete"] is True
    assert (europepmc["status"], europepmc["complete"], europepmc["retrieved"]) == ("unavailable", False, 0)
    assert "503" in europepmc["note"]
    assert len(europepmc["requests"]) == 1  # retried, but one request as executed
    assert problems(review) == []


def test_every_saved_search_run_at_one_time_gets_its_own_manifest(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:2])
    transport = httpx.MockTransport(providers)
    add_monitor(review, "watch", STRATEGIES[:1], FIRST, "live", settings=SETTINGS, transport=transport)
    add_monitor(review, "other", STRATEGIES[1:], "2026-01-06T00:00:00Z", "live", settings=SETTINGS, transport=transport)
    result = update(review, "2026-01-07T00:00:00Z", "live", settings=SETTINGS, transport=transport)
    assert sorted(s.manifest for s in result.searches) == ["runs/20260107T000000Z-other.json",
                                                           "runs/20260107T000000Z-watch.json"]
    assert len(list((review / "runs").iterdir())) == 4
    assert manifest(review, result.searches[0].manifest)["snapshots"] == "live"
    assert manifest(review, result.searches[0].manifest)["sources"][0]["snapshot_hashes"] == []
    assert problems(review) == []


# --------------------------------------------------------------------------- all or nothing

KILLED_UPDATE = textwrap.dedent('''
    import json, os, signal, sys
    from pathlib import Path
    import httpx
    from sitegen import commands
    from sitegen.review import transaction
    from sitegen.sources.settings import SourceSettings

    review, when = Path(sys.argv[1]), sys.argv[2]
    works = json.loads(Path(sys.argv[3]).read_text())[:6]
    real_write, real_replace = transaction.atomic_write, os.replace

    def write(path, data, **kwargs):
        if path.name == transaction.JOURNAL and when == "before-commit":
            os.kill(os.getpid(), signal.SIGKILL)
        return real_write(path, data, **kwargs)

    def replace(src, dst):
        if when == "after-commit" and str(src).endswith(".json" + transaction.STAGED) and "/runs/" in str(src):
            os.kill(os.getpid(), signal.SIGKILL)
        return real_replace(src, dst)

    transaction.atomic_write, os.replace = write, replace
    answer = lambda request: httpx.Response(200, json={"meta": {"count": 6, "next_cursor": None}, "results": works})
    commands.update(review, "2026-01-12T06:00:00Z", "live", settings=SourceSettings(max_records=1000),
                    transport=httpx.MockTransport(answer))
''')


@pytest.mark.parametrize("when", ["before-commit", "after-commit"])
def test_a_killed_run_leaves_its_manifest_only_if_it_committed(sitegen, tmp_path, when):
    """Killed before the journal (the commit point), the run leaves nothing, manifest included; killed
    after it, recovery finishes the run and its manifest with it."""
    review = new_review(sitegen, tmp_path)
    add_monitor(review, "watch", STRATEGIES[:1], FIRST, "live", settings=SETTINGS,
                transport=httpx.MockTransport(Providers(SYNERGY[:3], CORE[:2])))
    before = tree_bytes(review)
    child = subprocess.run([sys.executable, "-c", KILLED_UPDATE, str(review), when,
                            str(ROOT / "tests" / "fixtures" / "openalex" / "synergy_sep2021_works_0_25.json")],
                           capture_output=True, text=True, timeout=60)
    assert child.returncode == -9, child.stderr
    assert any(p.name.endswith(".sitegen-new") for p in (review / "runs").rglob("*"))  # killed mid-write
    assert sitegen("recover", review)[0] == 0
    manifests = sorted(p.name for p in (review / "runs").iterdir())
    if when == "before-commit":
        assert tree_bytes(review) == before and manifests == ["20260105T060000Z-watch.json"]
    else:
        assert manifests == ["20260105T060000Z-watch.json", "20260112T060000Z-watch.json"]
        assert manifest(review, "runs/20260112T060000Z-watch.json")["counts"]["new"] == 3
        assert problems(review) == []


def test_a_run_that_fails_before_writing_leaves_no_manifest(sitegen, tmp_path, monkeypatch):
    import sitegen.living.update as update_module

    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:2])
    add_monitor(review, "watch", STRATEGIES, FIRST, "live", settings=SETTINGS, transport=httpx.MockTransport(providers))
    before = tree_bytes(review)

    def failing(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(update_module, "append", failing)
    with pytest.raises(OSError):
        update(review, "2026-01-12T06:00:00Z", "live", settings=SETTINGS, transport=httpx.MockTransport(providers))
    assert tree_bytes(review) == before


# --------------------------------------------------------------------------- check


def test_check_refuses_an_edited_manifest_at_the_line_that_disagrees(sitegen, tmp_path):
    review, _ = two_runs(sitegen, tmp_path)
    path = review / SECOND_FILE
    text = path.read_text()
    assert text.count('"total": 7,') == 1
    path.write_text(text.replace('"total": 7,', '"total": 70,'))
    found = problems(review)
    line = line_of(review, SECOND_FILE, '"total": 70,')
    assert found == [
        f"{SECOND_FILE}:{line} [manifest-edited] the manifest was changed after its run wrote it: the run's events "
        f"(ledger.jsonl line {retrieval_line(review, SECOND)}) name sha256 {ledger_manifest(review, SECOND)[:12]}…, "
        f"the file's is {canonical_sha256(path)[:12]}…; a manifest is never rewritten: restore "
        "it from Git",
        f"{SECOND_FILE}:{line} [manifest-mismatch] sources[0].total is 70 but the ledger records 7 for this run "
        f"(ledger.jsonl line {retrieval_line(review, SECOND)})"]
    code, out, _ = sitegen("check", review)
    assert code == 1 and f"{SECOND_FILE}:{line}" in out
    # Writing commands refuse the review, writing nothing.
    before = tree_bytes(review)
    with pytest.raises(ReviewInvalid):
        update(review, "2026-01-19T06:00:00Z", "live", settings=SETTINGS,
               transport=httpx.MockTransport(Providers(SYNERGY[:3], CORE[:2])))
    assert tree_bytes(review) == before


def test_check_refuses_a_manifest_edited_where_the_ledger_cannot_tell(sitegen, tmp_path):
    """Fields only the run knew (the requests sent, the version) are vouched for by the hash the run's
    events name."""
    review, _ = two_runs(sitegen, tmp_path)
    path = review / FIRST_FILE
    path.write_text(path.read_text().replace("per_page=100", "per_page=200"))
    [problem] = problems(review)
    assert problem.startswith(f"{FIRST_FILE} [manifest-edited] the manifest was changed after its run wrote it")
    path.write_text(manifest_text := path.read_text().replace("per_page=200", "per_page=100"))
    assert problems(review) == [] and manifest_text.endswith("}\n")


def test_line_endings_and_indentation_are_no_edit_but_a_value_is(sitegen, tmp_path):
    """A CRLF checkout (Git for Windows, core.autocrlf) of runs/ and versions/ still checks clean."""
    review = tmp_path / "review"
    shutil.copytree(EXAMPLE, review)
    converted = [*(review / "runs").glob("*.json"), *(review / "versions").glob("*.json")]
    assert {path.parent.name for path in converted} == {"runs", "versions"}
    for path in converted:
        path.write_bytes(path.read_bytes().replace(b"\n", b"\r\n"))
    assert problems(review) == []
    code, out, _ = sitegen("check", review)
    assert code == 0, out
    # Re-indented, too, it is the same manifest; a changed value is not.
    path = sorted((review / "runs").glob("*.json"))[0]
    path.write_text(json.dumps(json.loads(path.read_text()), indent=4))
    assert problems(review) == []
    data = json.loads(path.read_text())
    data["sources"][0]["requests"][0] += "&page=2"
    path.write_text(json.dumps(data, indent=2).replace("\n", "\r\n"))
    [problem] = problems(review)
    assert f"runs/{path.name} [manifest-edited]" in problem


def test_a_request_retried_after_failures_is_listed_once_as_the_docs_say(sitegen, tmp_path):
    review = new_review(sitegen, tmp_path)
    providers = Providers(SYNERGY[:3], CORE[:2])
    answers = iter([503, 503, 200])

    def flaky(request: httpx.Request) -> httpx.Response:
        if request.url.host == "api.openalex.org" and (status := next(answers)) != 200:
            return httpx.Response(status, headers={"retry-after": "1"})
        return providers(request)

    add_monitor(review, "watch", STRATEGIES[:1], FIRST, "live", settings=SETTINGS, transport=httpx.MockTransport(flaky))
    [source] = manifest(review, FIRST_FILE)["sources"]
    assert source["status"] == "ok" and source["complete"] is True
    assert len(source["requests"]) == 1 and next(answers, None) is None  # three attempts, one request listed
    documented = RunSource.model_fields["requests"].description
    assert "retried" in documented and "listed once" in documented
    assert "retried after a failure" in (ROOT / "docs" / "review-folder.md").read_text()
    assert problems(review) == []


def test_a_maximal_cjk_strategy_is_recorded(sitegen, tmp_path):
    """The longest query a saved strategy may hold, in 4-byte characters (12 when percent-encoded), for every
    provider: the run records it, and check accepts what it wrote."""
    review = new_review(sitegen, tmp_path)
    query = "\U00020000" * QUERY_MAX_LENGTH
    # Europe PMC takes a long query by POST; OpenAlex, whose address holds 4,094 bytes, refuses it unsent
    strategies = [Strategy(source="europepmc", query=query), Strategy(source="openalex", query=query)]
    add_monitor(review, "watch", strategies, FIRST, "live", settings=SETTINGS,
                transport=httpx.MockTransport(Providers(SYNERGY[:3], CORE[:2])))
    [sent, refused] = manifest(review, FIRST_FILE)["sources"]
    assert sent["strategy"] == refused["strategy"] == query and len(sent["requests"][0]) > 12 * QUERY_MAX_LENGTH
    assert refused["status"] == "unsupported" and refused["requests"] == []
    assert problems(review) == []
    for provider in ("openalex", "europepmc", "pubmed", "crossref", "arxiv"):
        for native, text in ((True, query), (False, " OR ".join(["title:" + "\U00020000" * 30] * 100))):
            strategy = Strategy(source=provider, query=text, syntax="native" if native else "sitegen")
            with fetcher(lambda request: httpx.Response(400))[0] as client:
                outcome = run_strategy(client, SETTINGS, provider, text, native=native)
            for request in outcome.executed_query:  # what a manifest records for it validates
                RunSource(source=provider, strategy=strategy.query, requests=[request], complete=False,
                          retrieved=0, new=0)


def test_a_manifest_that_cannot_be_built_is_a_clear_error_and_nothing_is_written(sitegen, tmp_path, monkeypatch):
    import sitegen.living.update as update_module

    review = new_review(sitegen, tmp_path)
    before = tree_bytes(review)

    def invalid(*args, **kwargs):
        return RunManifest.model_validate({"schema_version": 1})

    monkeypatch.setattr(update_module, "run_manifest", invalid)
    with pytest.raises(SitegenError) as raised:
        add_monitor(review, "watch", STRATEGIES[:1], FIRST, "live", settings=SETTINGS,
                    transport=httpx.MockTransport(Providers(SYNERGY[:3], CORE[:2])))
    assert "saved search 'watch'" in str(raised.value) and "nothing was written" in str(raised.value)
    assert tree_bytes(review) == before


def test_check_names_a_missing_manifest_at_its_runs_ledger_line(sitegen, tmp_path):
    review, _ = two_runs(sitegen, tmp_path)
    (review / SECOND_FILE).unlink()
    line = retrieval_line(review, SECOND)
    [problem] = problems(review)
    assert problem.startswith(f"ledger.jsonl:{line} [manifest-missing] {SECOND_FILE}, the manifest of the run of "
                              f"saved search 'watch' at {SECOND}, is missing")


def test_check_refuses_an_orphan_manifest(sitegen, tmp_path):
    """A manifest of a run the ledger does not record: copied in, or left when the run's events were lost."""
    review, _ = two_runs(sitegen, tmp_path)
    orphan = manifest(review, SECOND_FILE)
    orphan["at"] = "2026-01-19T06:00:00Z"
    (review / "runs" / "20260119T060000Z-watch.json").write_text(json.dumps(orphan, indent=2) + "\n")
    [problem] = problems(review)
    line = line_of(review, "runs/20260119T060000Z-watch.json", '"at"')
    assert problem.startswith(f"runs/20260119T060000Z-watch.json:{line} [manifest-orphan] the ledger records no run "
                              "of saved search 'watch' at 2026-01-19T06:00:00Z")


def test_a_run_at_the_time_of_a_file_already_in_runs_never_replaces_it(sitegen, tmp_path):
    """A manifest is never rewritten: not even a file of runs/ at the very name the run would write (a copied
    or orphaned manifest) is replaced; the run is refused, naming the file, and nothing is written."""
    review, providers = two_runs(sitegen, tmp_path)
    orphan = manifest(review, SECOND_FILE)
    orphan["at"] = "2026-01-19T06:00:00Z"
    path = review / "runs" / "20260119T060000Z-watch.json"
    path.write_text(json.dumps(orphan, indent=2) + "\n")
    before = tree_bytes(review)
    with pytest.raises(ReviewInvalid) as refused:
        update(review, "2026-01-19T06:00:00Z", "record", settings=SECRETS, transport=httpx.MockTransport(providers))
    assert [p.path for p in refused.value.problems] == ["runs/20260119T060000Z-watch.json"]
    assert tree_bytes(review) == before


def test_runs_recorded_before_manifests_need_none_and_take_no_file(sitegen, tmp_path):
    """A ledger written before manifests (no `manifest` on its events) still loads and checks clean; a
    manifest put there afterwards is refused, since no run wrote it."""
    review, _ = two_runs(sitegen, tmp_path)
    written = (review / SECOND_FILE).read_bytes()
    without_manifests(review, {FIRST, SECOND})
    assert not any((review / "runs").iterdir()) and problems(review) == []
    (review / SECOND_FILE).write_bytes(written)
    [problem] = problems(review)
    line = line_of(review, SECOND_FILE, '"at"')
    assert problem.startswith(f"{SECOND_FILE}:{line} [manifest-unanchored] the ledger's events for the run of saved "
                              f"search 'watch' at {SECOND} (line {retrieval_line(review, SECOND)}) name no manifest")


def test_a_run_without_a_manifest_after_runs_with_one_is_named(sitegen, tmp_path):
    """Only an older sitegen, or a rewritten ledger, leaves a later run without a manifest."""
    review, _ = two_runs(sitegen, tmp_path)
    without_manifests(review, {SECOND})
    assert problems(review) == [
        f"ledger.jsonl:{retrieval_line(review, SECOND)} [manifest-unrecorded] the run of saved search 'watch' at "
        f"{SECOND} names no manifest, though earlier runs do: it was not written by this sitegen, or its events were "
        "rewritten"]


@pytest.mark.parametrize(("name", "change", "code"), [
    ("20260105T060000Z-other.json", None, "manifest-name"),
    ("notes.txt", None, "unexpected-file"),
    (FIRST_FILE.removeprefix("runs/"), ("origin", "ledger"), "manifest-origin"),
    (FIRST_FILE.removeprefix("runs/"), ("schema_version", 2), "schema-version"),
])
def test_check_refuses_files_that_are_no_runs_manifest(sitegen, tmp_path, name, change, code):
    review, _ = two_runs(sitegen, tmp_path)
    data = manifest(review, FIRST_FILE)
    if change:
        data[change[0]] = change[1]
    (review / "runs" / name).write_text(json.dumps(data, indent=2) + "\n")
    code_seen, out, err = sitegen("check", review)
    assert code_seen in (1, 4) and f"[{code}]" in out + err and f"runs/{name}" in out + err


def test_a_manifest_naming_a_credential_is_refused(sitegen, tmp_path):
    review, _ = two_runs(sitegen, tmp_path)
    data = manifest(review, FIRST_FILE)
    data["sources"][0]["requests"][0] += "&mailto=someone%40example.org"
    (review / FIRST_FILE).write_text(json.dumps(data, indent=2) + "\n")
    found = problems(review)
    assert any(p.startswith(f"{FIRST_FILE}:") and "[schema]" in p and "credential" in p for p in found), found


def test_the_manifest_is_named_in_the_update_report(sitegen, tmp_path, monkeypatch):
    review = new_review(sitegen, tmp_path)
    shutil.rmtree(review / "snapshots")
    shutil.copytree(EXAMPLE / "snapshots", review / "snapshots")
    code, out, err = sitegen("monitor", "add", review, "--id", "object-in-context", "--strategy",
                             "openalex:openalex-main",
                             '"object-in-context" OR "object in context" OR "object-context recognition"',
                             "--at", "2023-04-10T00:00:00Z", "--snapshots", "replay", "--json",
                             "--report", tmp_path / "report.md")
    assert code == 0, err
    assert json.loads(out)["searches"][0]["manifest"] == "runs/20230410T000000Z-object-in-context.json"
    assert "Run manifest: `runs/20230410T000000Z-object-in-context.json`" in (tmp_path / "report.md").read_text()
    replayed = manifest(review, "runs/20230410T000000Z-object-in-context.json")
    assert replayed["snapshots"] == "replay" and replayed["counts"]["retrieved"] == 260
