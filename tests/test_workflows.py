"""The review repository's workflows: the names, triggers and pins issue 14 asks for, and the README's
adoption steps naming what the workflows read. (actionlint itself runs in test_project.py.)"""

from __future__ import annotations

import fnmatch
import re

import pytest
import yaml
from conftest import ROOT

from sitegen.sources.settings import ENVIRONMENT, SourceSettings

WORKFLOWS = ROOT / ".github" / "workflows"
# A full commit SHA, the release it is named beside: a tag (even v4.2.2) can be moved to other code, and the
# update workflow holds the API keys and a token that can push.
PINNED = re.compile(r"^\s*(- )?uses: [\w.-]+/[\w./-]+@[0-9a-f]{40}  # v\d+\.\d+\.\d+$")


def _workflow(name: str) -> dict:
    workflow = yaml.safe_load((WORKFLOWS / name).read_text())
    # YAML 1.1 reads the bare key `on` as True.
    workflow["on"] = workflow.pop(True, workflow.get("on"))
    return workflow


def test_update_runs_on_a_schedule_and_on_demand_one_run_at_a_time():
    workflow = _workflow("update.yml")
    assert workflow["on"]["schedule"][0]["cron"]
    assert "workflow_dispatch" in workflow["on"]
    assert workflow["concurrency"]["cancel-in-progress"] is False


def test_check_runs_on_every_pull_request_so_it_can_be_required():
    # A path filter leaves a required check pending for ever on a pull request it skips.
    assert _workflow("check.yml")["on"]["pull_request"] is None


def test_only_the_deploy_job_may_write_pages():
    workflow = _workflow("publish.yml")
    assert workflow["permissions"] == {"contents": "read"}
    assert workflow["jobs"]["deploy"]["permissions"] == {"pages": "write", "id-token": "write"}
    assert workflow["jobs"]["build"]["permissions"] == {"contents": "read", "pages": "read"}


def test_publish_deploys_pushes_to_main_with_the_official_pages_actions():
    workflow = _workflow("publish.yml")
    assert workflow["on"]["push"]["branches"] == ["main"]
    used = {step["uses"].split("@")[0] for job in workflow["jobs"].values() for step in job["steps"] if "uses" in step}
    assert {"actions/configure-pages", "actions/upload-pages-artifact", "actions/deploy-pages"} <= used


@pytest.mark.parametrize("name", ["update.yml", "check.yml", "publish.yml", "ci.yml"])
def test_every_action_is_pinned_to_a_commit(name):
    uses = [step["uses"] for job in _workflow(name)["jobs"].values() for step in job["steps"] if "uses" in step]
    lines = [line for line in (WORKFLOWS / name).read_text().splitlines() if re.match(r"^\s*(- )?uses:", line)]
    assert uses and len(lines) == len(uses)
    assert [line for line in lines if not PINNED.match(line)] == []


def test_each_action_is_pinned_to_one_release_in_every_workflow():
    # A review repository copies the three together: one action at two releases would be two sets of behaviour.
    pins: dict[str, set[str]] = {}
    for path in sorted(WORKFLOWS.glob("*.yml")):
        for action, pin in re.findall(r"uses: ([\w.-]+/[\w./-]+)@(\w+  # \S+)", path.read_text()):
            pins.setdefault(action, set()).add(pin)
    assert pins and {action: pin for action, pin in pins.items() if len(pin) > 1} == {}


def test_the_readme_adoption_steps_name_the_workflows_and_what_update_reads():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Adopt sitegen in your review repository"):]
    section = section[:section.index("\n## ", 1)]
    for name in ("update.yml", "check.yml", "publish.yml", "SITEGEN_PACKAGE"):
        assert name in section
    read = set(re.findall(r"\$\{\{\s*(?:secrets|vars)\.(\w+)", (WORKFLOWS / "update.yml").read_text()))
    assert read == set(ENVIRONMENT.values())
    assert [name for name in sorted(read) if f"`{name}`" not in section] == []


def test_update_passes_every_provider_setting_from_a_secret_or_a_variable_as_the_variable_sitegen_reads():
    # Each setting sitegen reads from the environment (README: "Sources") can be set as a repository secret or
    # variable without editing the workflow; it was four of seven. Keys and tokens come from secrets only (a
    # variable is shown in the run's log), the others from variables (a secret's value is masked wherever it is
    # printed: a page size of 100 would hide every "100" of the log).
    steps = _workflow("update.yml")["jobs"]["update"]["steps"]
    environment = next(step["env"] for step in steps if step.get("id") == "update")
    credentials = {"OPENALEX_API_KEY", "NCBI_API_KEY", "CROSSREF_PLUS_TOKEN"}
    assert credentials <= set(ENVIRONMENT.values())
    for variable in ENVIRONMENT.values():
        read = re.findall(r"\b(secrets|vars)\.(\w+)", environment[variable])
        assert {name for _, name in read} == {variable}, environment[variable]
        assert {kind for kind, _ in read} == ({"secrets"} if variable in credentials else
                                              {"secrets", "vars"} if variable == "SITEGEN_CONTACT_EMAIL" else {"vars"})


def test_a_setting_left_unset_in_the_repository_is_passed_empty_and_read_as_unset():
    # GitHub gives an unset secret or variable as "": sitegen reads an empty variable as unset, its default kept.
    assert SourceSettings.from_environment(dict.fromkeys(ENVIRONMENT.values(), "")) == SourceSettings()


def test_the_published_site_has_a_page_at_its_root_that_leads_to_each_review(tmp_path, monkeypatch):
    # publish.yml builds each review under its folder's name; its root page leads there (at once when there is
    # one review), names escaped, so the site's own address is no 404.
    steps = yaml.safe_load((WORKFLOWS / "publish.yml").read_text())["jobs"]["build"]["steps"]
    script = next(step["run"] for step in steps if step.get("name", "").startswith("Pages at the site's root"))
    program = script.split("<<'PY'\n", 1)[1].rsplit("PY", 1)[0]
    assert script.startswith('python3 - "$RUNNER_TEMP/public" "$PAGES_BASE_URL" <<')  # the site the build step writes
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["-", "public", ""])
    (tmp_path / "public" / "object-in-context").mkdir(parents=True)
    exec(compile(program, "publish.yml", "exec"), {})
    page = (tmp_path / "public" / "index.html").read_text()
    assert 'http-equiv="refresh" content="0; url=object-in-context/index.html"' in page
    (tmp_path / "public" / "a <b>&c").mkdir()
    exec(compile(program, "publish.yml", "exec"), {})
    page = (tmp_path / "public" / "index.html").read_text()
    assert "refresh" not in page and '<a href="a%20%3Cb%3E%26c/index.html">a &lt;b&gt;&amp;c</a>' in page


def _root_pages(tmp_path, monkeypatch, base_url: str, names: dict[str, str | None]) -> str:
    """publish.yml's root-pages step run on built sites of reviews `names` (each with its `site.base_url`), the
    site's address `base_url` as configure-pages gives it; what it printed."""
    import contextlib
    import io

    steps = _workflow("publish.yml")["jobs"]["build"]["steps"]
    step = next(step for step in steps if step.get("name", "").startswith("Pages at the site's root"))
    assert step["env"]["PAGES_BASE_URL"] == "${{ steps.pages.outputs.base_url }}"
    assert [s.get("id") for s in steps].index("pages") < steps.index(step)
    program = step["run"].split("<<'PY'\n", 1)[1].rsplit("PY", 1)[0]
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr("sys.argv", ["-", "public", base_url])
    for name, said in names.items():
        (tmp_path / "public" / name).mkdir(parents=True)
        (tmp_path / "reviews" / name).mkdir(parents=True)
        (tmp_path / "reviews" / name / "review.yaml").write_text(yaml.safe_dump({"site": {"base_url": said}}))
    printed = io.StringIO()
    with contextlib.redirect_stdout(printed):
        exec(compile(program, "publish.yml", "exec"), {})
    return printed.getvalue()


def test_the_published_site_has_a_not_found_page_at_its_root_that_leads_to_each_review(tmp_path, monkeypatch):
    # GitHub Pages serves the root's 404.html alone for an address the site does not hold: each review's own, one
    # folder down, was never served. Its links start from the site's address, so they lead there from any depth.
    _root_pages(tmp_path, monkeypatch, "https://owner.github.io/repo", {"my-review": None, "b c": None})
    page = (tmp_path / "public" / "404.html").read_text()
    assert '<a href="https://owner.github.io/repo/my-review/index.html">my-review</a>' in page
    assert '<a href="https://owner.github.io/repo/b%20c/index.html">b c</a>' in page
    assert "refresh" not in page and "noindex" in page


def test_publish_warns_of_a_review_whose_base_url_is_not_where_it_is_published(tmp_path, monkeypatch):
    # Each review is published under its folder's name: a base_url of the repository's address (the project
    # site's) gives canonical links, a sitemap and 404 links to pages that are not the review's.
    printed = _root_pages(tmp_path, monkeypatch, "https://owner.github.io/repo/",
                          {"right": "https://owner.github.io/repo/right/", "unset": None,
                           "wrong": "https://owner.github.io/repo/"})
    assert printed.splitlines() == [
        "::warning file=reviews/wrong/review.yaml::site.base_url is https://owner.github.io/repo/, but the review is "
        "published at https://owner.github.io/repo/wrong/: set it to that address (README: Adopt sitegen)"]


# --------------------------------------------------------------------------- update.yml's pull-request step, run


FAKE_GH = r'''#!/usr/bin/env python3
"""gh as the pull-request step uses it, over a JSON file of open pull requests; --jq filters run by jq."""
import json, os, subprocess, sys
args = sys.argv[1:]
state = json.load(open(os.environ["FAKE_GH_STATE"]))
with open(os.environ["FAKE_GH_LOG"], "a") as log:
    log.write(json.dumps(args) + "\n")
def option(name):
    return args[args.index(name) + 1] if name in args else None
def answer(data):
    filter = option("--jq")
    text = json.dumps(data)
    if filter:
        text = subprocess.run(["jq", "-r", filter], input=text, capture_output=True, text=True, check=True).stdout
    sys.stdout.write(text)
body = option("--body-file")
if body and len(open(body, encoding="utf-8").read()) > 65536:
    sys.exit("GraphQL: Body is too long (maximum is 65536 characters)")
if args[:2] == ["pr", "list"]:
    answer([{field: pr[field] for field in option("--json").split(",")} for pr in state["prs"]])
elif args[:2] == ["pr", "view"]:
    if state.get("view_fails"):
        sys.exit("HTTP 502: Bad Gateway")
    pr = next(pr for pr in state["prs"] if str(pr["number"]) == args[2])
    data = {"headRefOid": pr["head"], "labels": [{"name": name} for name in pr.get("labels", [])],
            "commits": [{"authors": [{"email": email}]} for email in pr["emails"]]}
    answer({field: data[field] for field in option("--json").split(",")})
elif args[:2] == ["pr", "create"]:
    print("https://github.com/owner/review/pull/9")
'''

FAKE_SITEGEN = r'''#!/usr/bin/env python3
"""`sitegen update` as the update step calls it: the review's name says how its run ends."""
import json, sys
args = sys.argv[1:]
review = args[1].rstrip("/").rsplit("/", 1)[-1]
status = {"down": 3, "broken": 4}.get(review, 0)
if status == 4:
    print("error: schema mismatch", file=sys.stderr)
    sys.exit(4)
open(args[args.index("--report") + 1], "w").write(f"## sitegen update of {review}\n")
print(json.dumps({"complete": status == 0, "searches": [{"new_ids": ["a", "b"] if review == "two" else []}]}))
sys.exit(status)
'''
BOT = "41898282+github-actions[bot]@users.noreply.github.com"


@pytest.fixture
def pull_request_step(tmp_path):
    """Run update.yml's pull-request step in a clone of a review repository whose `origin` is a local bare
    one, after a run that changed the review, with gh faked over `prs` (the open pull requests). The update step
    runs first with `update=True` (sitegen faked); else what it would leave in the runner's scratch folder is
    written there."""
    import json
    import os
    import shutil
    import subprocess

    if shutil.which("jq") is None:
        pytest.skip("jq is not installed (.ci/run installs it with apt-get): gh's --jq filters need it")
    steps = _workflow("update.yml")["jobs"]["update"]["steps"]
    script = next(step["run"] for step in steps if step.get("name", "").startswith("Open or update the pull request"))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org"]
    update_script = next(step["run"] for step in steps if step.get("id") == "update")
    origin, work, bin_dir = tmp_path / "origin.git", tmp_path / "work", tmp_path / "bin"
    scratch = tmp_path / "runner-temp"
    subprocess.run(["git", "init", "-q", "--bare", "-b", "main", origin], check=True)
    subprocess.run(["git", "clone", "-q", origin, work], check=True, capture_output=True)
    (work / "reviews" / "r").mkdir(parents=True)
    (work / "reviews" / "r" / "ledger.jsonl").write_text("{}\n")
    (work / "reviews" / "r" / "searches").mkdir()
    (work / "reviews" / "r" / "searches" / "s.json").write_text("{}\n")
    subprocess.run([*git, "-C", work, "add", "."], check=True)
    subprocess.run([*git, "-C", work, "commit", "-qm", "review"], check=True)
    subprocess.run([*git, "-C", work, "push", "-q", "origin", "HEAD:main"], check=True)
    scratch.mkdir()
    bin_dir.mkdir()
    for name, program in (("gh", FAKE_GH), ("sitegen", FAKE_SITEGEN)):
        (bin_dir / name).write_text(program)
        (bin_dir / name).chmod(0o755)

    def branch_head() -> str | None:
        found = subprocess.run(["git", "-C", origin, "rev-parse", "--verify", "-q", "refs/heads/sitegen-update/main"],
                               capture_output=True, text=True)
        return found.stdout.strip() or None

    def open_pull_request(emails: list[str]) -> str:
        """An earlier run's branch on origin (one commit by `emails[0]`); its head."""
        subprocess.run(["git", "-C", work, "switch", "-qc", "earlier"], check=True)
        (work / "reviews" / "r" / "earlier.txt").write_text("earlier batch\n")
        subprocess.run([*git, "-c", f"user.email={emails[0]}", "-C", work, "add", "."], check=True)
        subprocess.run([*git, "-c", f"user.email={emails[0]}", "-C", work, "commit", "-qm", "earlier"], check=True)
        subprocess.run(["git", "-C", work, "push", "-q", "origin", "HEAD:refs/heads/sitegen-update/main"], check=True)
        subprocess.run(["git", "-C", work, "switch", "-q", "main"], check=True)
        return branch_head()

    def run(prs: list[dict], *, new: int = 3, incomplete: bool = False, report: str = "## sitegen update\n",
            view_fails: bool = False, update: bool = False) -> tuple[int, str, list[list[str]]]:
        (work / "reviews" / "r" / "ledger.jsonl").write_text("{}\n{}\n")  # what the run wrote
        (tmp_path / "state.json").write_text(json.dumps({"prs": prs, "view_fails": view_fails}))
        environment = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "GH_TOKEN": "t0ken",
                       "AT": "2026-06-01T06:17:00Z", "INCOMPLETE": "1" if incomplete else "0", "NEW": str(new),
                       "BASE": "main", "GITHUB_SERVER_URL": "https://github.com", "GITHUB_REPOSITORY": "owner/review",
                       "GITHUB_RUN_ID": "42", "FAKE_GH_STATE": str(tmp_path / "state.json"),
                       "FAKE_GH_LOG": str(tmp_path / "gh.log"), "RUNNER_TEMP": str(scratch),
                       "GITHUB_OUTPUT": str(tmp_path / "github-output")}
        if update:
            (tmp_path / "github-output").write_text("")
            done = subprocess.run(["bash", "-e", "-c", update_script], cwd=work, env=environment, capture_output=True,
                                  text=True, timeout=60)
            assert done.returncode == 0, done.stdout + done.stderr
            said = dict(line.split("=", 1) for line in (tmp_path / "github-output").read_text().splitlines())
            environment.update(AT=said["at"], INCOMPLETE=said["incomplete"], NEW=said["new"])
        else:
            (scratch / "update-report.md").write_text(report)
        (tmp_path / "gh.log").write_text("")
        done = subprocess.run(["bash", "-e", "-c", script], cwd=work, env=environment, capture_output=True, text=True,
                              timeout=60)
        calls = [json.loads(line) for line in (tmp_path / "gh.log").read_text().splitlines()]
        return done.returncode, done.stdout + done.stderr, calls

    run.branch_head, run.open_pull_request, run.work, run.scratch = branch_head, open_pull_request, work, scratch
    return run


def test_the_update_opens_a_pull_request_with_a_body_github_takes(pull_request_step):
    code, out, calls = pull_request_step([], report="- a new record, at length\n" * 4000)  # 104,000 characters
    assert code == 0, out
    [create] = [call for call in calls if call[:2] == ["pr", "create"]]
    assert create[create.index("--title") + 1] == "Living update at 2026-06-01T06:17:00Z"
    assert pull_request_step.branch_head() is not None
    body = (pull_request_step.scratch / "pull-request-body.md").read_text()
    assert 60000 - 30 < len(body) < 65536 and "update-report` artifact" in body and "actions/runs/42" in body


def test_a_run_with_no_new_record_says_so_in_the_title(pull_request_step):
    code, out, calls = pull_request_step([], new=0)
    assert code == 0, out
    [create] = [call for call in calls if call[:2] == ["pr", "create"]]
    assert create[create.index("--title") + 1].endswith(": no new records")


def test_an_incomplete_run_with_nothing_new_is_never_titled_no_new_records(pull_request_step):
    code, out, calls = pull_request_step([], new=0, incomplete=True)
    assert code == 0, out
    [create] = [call for call in calls if call[:2] == ["pr", "create"]]
    title = create[create.index("--title") + 1]
    assert title == "Living update at 2026-06-01T06:17:00Z (incomplete: a source was not reached)"


def test_a_forks_pull_request_from_a_branch_of_the_same_name_is_never_taken_for_the_update(pull_request_step):
    code, out, calls = pull_request_step([{"number": 5, "isCrossRepository": True, "head": "f" * 40,
                                           "emails": [BOT]}])
    assert code == 0, out
    assert ["pr", "create"] == [call[:2] for call in calls if call[:2] in (["pr", "create"], ["pr", "edit"])][0]
    assert not [call for call in calls if "5" in call]


def test_a_branch_a_reviewer_pushed_to_is_never_replaced(pull_request_step):
    head = pull_request_step.open_pull_request(["reviewer@example.org"])
    code, out, _ = pull_request_step([{"number": 7, "isCrossRepository": False, "head": head,
                                       "emails": ["reviewer@example.org"]}])
    assert code == 1 and "carries reviewers' commits" in out
    assert pull_request_step.branch_head() == head


def test_when_github_cannot_say_who_pushed_nothing_is_pushed(pull_request_step):
    head = pull_request_step.open_pull_request([BOT])
    code, out, _ = pull_request_step([{"number": 7, "isCrossRepository": False, "head": head, "emails": [BOT]}],
                                     view_fails=True)
    assert code != 0 and pull_request_step.branch_head() == head


def test_a_push_after_the_check_is_not_overwritten(pull_request_step):
    head = pull_request_step.open_pull_request([BOT])
    # GitHub saw an older head than origin now has: a reviewer pushed in between.
    code, out, _ = pull_request_step([{"number": 7, "isCrossRepository": False, "head": "0" * 40, "emails": [BOT]}])
    assert code != 0 and pull_request_step.branch_head() == head


def test_the_bots_own_pull_request_is_updated(pull_request_step):
    head = pull_request_step.open_pull_request([BOT])
    code, out, calls = pull_request_step([{"number": 7, "isCrossRepository": False, "head": head, "emails": [BOT]}])
    assert code == 0, out
    assert pull_request_step.branch_head() != head
    assert any(call[:3] == ["pr", "edit", "7"] and "--body-file" in call for call in calls)


def test_an_incomplete_run_keeps_the_open_pull_requests_batch(pull_request_step):
    head = pull_request_step.open_pull_request([BOT])
    code, out, calls = pull_request_step([{"number": 7, "isCrossRepository": False, "head": head, "emails": [BOT]}],
                                         incomplete=True, new=0)
    assert code == 0, out
    assert pull_request_step.branch_head() == head  # last week's batch stays for its reviewers
    assert [call[:3] for call in calls if call[:2] in (["pr", "comment"], ["pr", "edit"])] == [["pr", "comment", "7"]]
    assert "keeps its batch" in out


@pytest.mark.parametrize(("reviews", "code", "outputs"), [
    (["two", "down"], 0, {"incomplete": "1", "new": "2"}),
    (["two", "none"], 0, {"incomplete": "0", "new": "2"}),
    (["broken", "two"], 4, {}),
])
def test_the_update_step_reports_each_review_and_adds_up_its_new_records(tmp_path, reviews, code, outputs):
    import os
    import subprocess

    steps = _workflow("update.yml")["jobs"]["update"]["steps"]
    script = next(step["run"] for step in steps if step.get("id") == "update")
    for name in reviews:
        (tmp_path / "reviews" / name / "searches").mkdir(parents=True)
        (tmp_path / "reviews" / name / "searches" / "s.json").write_text("{}")
    (tmp_path / "bin").mkdir()
    (tmp_path / "bin" / "sitegen").write_text(FAKE_SITEGEN)
    (tmp_path / "bin" / "sitegen").chmod(0o755)
    output, scratch = tmp_path / "github-output", tmp_path / "runner-temp"
    output.write_text("")
    scratch.mkdir()
    environment = {**os.environ, "PATH": f"{tmp_path / 'bin'}{os.pathsep}{os.environ['PATH']}",
                   "GITHUB_OUTPUT": str(output), "RUNNER_TEMP": str(scratch)}
    done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path, env=environment, capture_output=True, text=True)
    assert done.returncode == code, done.stdout + done.stderr
    if code:
        assert "schema mismatch" in done.stderr and "No such file" not in done.stderr  # sitegen's own word, alone
        return
    said = dict(line.split("=", 1) for line in output.read_text().splitlines())
    assert {key: said[key] for key in outputs} == outputs
    report = (scratch / "update-report.md").read_text()
    assert [line for line in report.splitlines() if line.startswith("#")] == [
        line for name in sorted(reviews) for line in (f"# Review `{name}`", f"## sitegen update of {name}")]
    if said["incomplete"] == "1":
        assert "::warning::Review down: a source was not reached" in done.stdout


@pytest.mark.parametrize("earlier", [None, ["reviewer@example.org"], [BOT]])
def test_the_update_changes_nothing_in_the_checkout_but_the_review_folder(pull_request_step, earlier):
    # Its report, each review's part of it, sitegen's JSON and the pull-request body were written at the checkout's
    # root: over (and, for two, deleting) a file of the same name the review repository commits there. Whether the
    # run opens a pull request, updates the bot's own or stops at a reviewer's, only reviews/ is changed.
    import subprocess

    work = pull_request_step.work
    names = ["update-report.md", "report-part.md", "run.json", "pull-request-body.md"]
    for name in names:
        (work / name).write_text("the review repository's own\n")
    subprocess.run(["git", "-C", work, "add", "."], check=True)
    subprocess.run(["git", "-c", "user.name=t", "-c", "user.email=t@example.org", "-C", work, "commit", "-qm", "own"],
                   check=True)
    prs = []
    if earlier:
        prs = [{"number": 7, "isCrossRepository": False, "head": pull_request_step.open_pull_request(earlier),
                "emails": earlier}]
    code, out, _ = pull_request_step(prs, update=True)
    assert code == (1 if earlier == ["reviewer@example.org"] else 0), out
    status = subprocess.run(["git", "-C", work, "status", "--porcelain", "--untracked-files=all", "--ignored"],
                            capture_output=True, text=True, check=True).stdout.splitlines()
    changed = subprocess.run(["git", "-C", work, "diff", "--name-only", "main", "HEAD"], capture_output=True,
                             text=True, check=True).stdout.splitlines()
    assert [line for line in status if not line[3:].startswith("reviews/")] == []
    assert [path for path in changed if not path.startswith("reviews/")] == []
    assert [(work / name).read_text() for name in names] == ["the review repository's own\n"] * len(names)
    assert (pull_request_step.scratch / "pull-request-body.md").read_text().startswith("# Review `r`")


CHECKING_SITEGEN = r'''#!/usr/bin/env python3
"""`sitegen verify`, `check` and `build` as check.yml and publish.yml call them: verify warns, check passes,
build writes its --out."""
import pathlib, sys
args = sys.argv[1:]
if args[0] == "verify":
    print("warning: a study the recorded run did not verify", file=sys.stderr)
elif args[0] == "build":
    pathlib.Path(args[args.index("--out") + 1]).mkdir(parents=True)
'''


def _checkout(tmp_path, ledger: str) -> tuple:
    """A review repository's checkout with one review whose ledger is `ledger`, the runner's scratch folder, and an
    environment whose `sitegen` is CHECKING_SITEGEN: what a workflow's shell steps run in."""
    import os

    work, scratch, bin_dir = tmp_path / "work", tmp_path / "runner-temp", tmp_path / "bin"
    (work / "reviews" / "r").mkdir(parents=True)
    (work / "reviews" / "r" / "ledger.jsonl").write_text(ledger)
    scratch.mkdir()
    bin_dir.mkdir()
    (bin_dir / "sitegen").write_text(CHECKING_SITEGEN)
    (bin_dir / "sitegen").chmod(0o755)
    return work, scratch, {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}",
                           "RUNNER_TEMP": str(scratch)}


def test_the_check_writes_nothing_into_the_checkout(tmp_path):
    # The verify step left verify-said.txt in the checkout (and the build its preview/): what a step keeps for a
    # later one goes in the runner's scratch folder, and the checkout is left as the pull request has it.
    import subprocess

    work, scratch, environment = _checkout(tmp_path, '{"type":"verification"}\n')
    steps = _workflow("check.yml")["jobs"]["check"]["steps"]
    said = {}
    for name in ("sitegen verify", "sitegen build"):
        script = next(step["run"] for step in steps if step.get("name", "").startswith(name))
        done = subprocess.run(["bash", "-e", "-c", script], cwd=work, env=environment, capture_output=True, text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        assert sorted(path.relative_to(work).as_posix() for path in work.rglob("*")) == [
            "reviews", "reviews/r", "reviews/r/ledger.jsonl"], name
        said[name] = done.stderr
    assert said["sitegen verify"] == "::warning::a study the recorded run did not verify\n"
    upload = next(step for step in steps if "upload-artifact" in step.get("uses", ""))
    assert (scratch / "preview" / "r").is_dir() and upload["with"]["path"] == "${{ runner.temp }}/preview/"


def test_publish_builds_the_site_outside_the_checkout(tmp_path):
    # The site was built into public/ in the checkout: over a folder of that name the review repository commits.
    import subprocess

    work, scratch, environment = _checkout(tmp_path, "{}\n")
    steps = _workflow("publish.yml")["jobs"]["build"]["steps"]
    for step in steps:
        if "run" not in step or step["run"].startswith("pip install"):
            continue
        done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=work, env=environment, capture_output=True,
                              text=True)
        assert done.returncode == 0, done.stdout + done.stderr
        assert sorted(path.relative_to(work).as_posix() for path in work.rglob("*")) == [
            "reviews", "reviews/r", "reviews/r/ledger.jsonl"], step.get("name")
    upload = next(step for step in steps if "upload-pages-artifact" in step.get("uses", ""))
    assert (scratch / "public" / "r").is_dir() and (scratch / "public" / "index.html").is_file()
    assert upload["with"]["path"] == "${{ runner.temp }}/public"


@pytest.mark.parametrize(("size", "warned"), [(8_000_000, False), (1_100_000_000, True)])
def test_publish_warns_of_a_site_larger_than_github_pages_takes(tmp_path, size, warned):
    # GitHub Pages supports sites up to 1 GB; a review of 100,000 records builds 1.8 GB. (A sparse file: its
    # size costs no disk.)
    import os
    import subprocess

    steps = _workflow("publish.yml")["jobs"]["build"]["steps"]
    script = next(step["run"] for step in steps if step.get("name", "").startswith("The site's size"))
    (tmp_path / "public" / "review").mkdir(parents=True)
    with (tmp_path / "public" / "review" / "records.csv").open("wb") as file:
        file.truncate(size)
    (tmp_path / "work").mkdir()
    done = subprocess.run(["bash", "-e", "-c", script], cwd=tmp_path / "work", capture_output=True, text=True,
                          env={**os.environ, "RUNNER_TEMP": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert ("::warning::The site is 1100 MB: GitHub Pages supports sites up to 1 GB" in done.stdout) == warned


def test_the_gitignore_step_covers_what_a_build_leaves_beside_any_output(sitegen, example_copy, tmp_path):
    # Step 6 named `.site.*/`, which misses the spare folder of a build into another folder (`public/.x.spare-…`).
    step = (ROOT / "README.md").read_text().split("\n6. Keep local builds out of Git", 1)[1].split("\n\n")[0]
    patterns = [pattern.rstrip("/") for pattern in re.findall(r"`([^`]+)`", step) if "*" in pattern]
    assert patterns
    out = tmp_path / "public" / "x"
    for title in ("First", "Second"):  # a second build that changes a page exchanges the sites, keeping a spare
        (example_copy / "review.yaml").write_text(
            re.sub(r"(?m)^title: .*$", f"title: {title}", (example_copy / "review.yaml").read_text()))
        assert sitegen("build", example_copy, "--out", out)[0] == 0
    beside = [path.name for path in out.parent.iterdir() if path != out]
    assert beside and all(any(fnmatch.fnmatch(name, pattern) for pattern in patterns) for name in beside), beside


@pytest.mark.parametrize("name", sorted(path.name for path in WORKFLOWS.glob("*.yml")))
def test_no_script_interpolates_an_expression_every_value_reaches_it_through_env(name):
    # A variable's, secret's or event's value written into a script by ${{ }} is run as shell: "a; curl ... $KEY".
    # Passed in env: it is only ever a value, quoted by the script that uses it.
    for job in _workflow(name)["jobs"].values():
        for step in job.get("steps", []):
            assert "${{" not in step.get("run", ""), (name, step.get("name") or step["run"][:60])
            assert "${{" not in str((step.get("with") or {}).get("script", "")), (name, step.get("name"))


# --------------------------------------------------------------------------- the README's adoption steps, followed


def _adoption_step(number: int) -> str:
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Adopt sitegen in your review repository"):]
    section = section[:section.index("\n## ", 1)]
    return section.split(f"\n{number}. ", 1)[1].split(f"\n{number + 1}. ", 1)[0]


def test_the_readmes_example_package_set_in_each_workflow_is_what_pip_installs():
    # Step 2: the value is set in the `env:` block at the top of each of the three (a job's or a step's own would
    # hide it from the `pip install` step), and the README's example is a requirement pip reads as sitegen's.
    from packaging.requirements import Requirement

    example = re.search(r"`(sitegen @ [^`]+)`", _adoption_step(2)).group(1)
    assert Requirement(example).name == "sitegen" and Requirement(example).url.startswith("git+https://")
    for name in ("update.yml", "check.yml", "publish.yml"):
        text = (WORKFLOWS / name).read_text()
        assert text.count("SITEGEN_PACKAGE: .\n") == 1
        adopted = yaml.safe_load(text.replace("SITEGEN_PACKAGE: .\n", f"SITEGEN_PACKAGE: {example}\n"))
        assert adopted["env"]["SITEGEN_PACKAGE"] == example
        assert [step["run"] for job in adopted["jobs"].values() for step in job["steps"]
                if "pip install" in step.get("run", "")] == ['pip install "$SITEGEN_PACKAGE"']


def test_the_readmes_step_7_commands_run_as_written_and_the_workflows_check_and_build_the_review(
        tmp_path, monkeypatch):
    # A new user follows step 7 in a fresh review repository (without the network: `monitor add` keeps the search
    # and exits 3, as the step says), then the pull-request check and the publishing build run on what it made.
    import os
    import shlex
    import subprocess
    import sys

    import httpx
    from click.testing import CliRunner

    from sitegen.cli import cli
    from sitegen.sources import http

    def refuse(request: httpx.Request) -> httpx.Response:
        raise httpx.ConnectError("no network in the tests", request=request)

    client = httpx.Client
    monkeypatch.setattr(httpx, "Client", lambda **options: client(**{**options, "transport": httpx.MockTransport(refuse)}))
    monkeypatch.setattr(http, "pause", lambda seconds: None)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "embase.ris").write_text(  # the user's export from a database sitegen cannot search
        "TY  - JOUR\nTI  - Object-in-context memory in rats\nAU  - Smith, Jane\nPY  - 2019\nER  - \n")
    block = _adoption_step(7).split("```sh\n", 1)[1].split("```", 1)[0]
    commands = [shlex.split(line, comments=True) for line in block.splitlines()]
    commands = [words for words in commands if words]
    assert commands and all(words[0] == "sitegen" for words in commands)
    for words in commands:
        result = CliRunner().invoke(cli, words[1:], catch_exceptions=False)
        expected = 3 if words[1:3] == ["monitor", "add"] else 0
        assert result.exit_code == expected, (words, result.stdout, result.stderr)
    review = tmp_path / "reviews" / "my-review"
    assert (review / "searches" / "main.json").is_file()
    shown = CliRunner().invoke(cli, ["state", "show", str(review)], catch_exceptions=False)
    assert shown.stdout.startswith("phase: screening")  # the two `state advance` steps were taken

    bin_dir, scratch = tmp_path / "bin", tmp_path / "runner-temp"
    bin_dir.mkdir()
    scratch.mkdir()
    (bin_dir / "sitegen").write_text(f'#!/bin/sh\nPYTHONPATH="{ROOT}" exec "{sys.executable}" -m sitegen "$@"\n')
    (bin_dir / "sitegen").chmod(0o755)
    environment = {**os.environ, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}", "RUNNER_TEMP": str(scratch)}
    ran = {}
    for name, job in (("check.yml", "check"), ("publish.yml", "build")):
        for step in _workflow(name)["jobs"][job]["steps"]:
            if "run" not in step or step["run"].startswith("pip install"):
                continue
            done = subprocess.run(["bash", "-e", "-o", "pipefail", "-c", step["run"]], cwd=tmp_path, env=environment,
                                  capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, (name, step.get("name"), done.stdout + done.stderr)
            ran[name, step.get("name")] = done.stdout + done.stderr
    assert "reviews/my-review: no problems found" in ran["check.yml", "sitegen check"]
    for site in (scratch / "preview" / "my-review", scratch / "public" / "my-review"):
        assert (site / "index.html").is_file() and "My living review" in (site / "index.html").read_text()
    assert "my-review/index.html" in (scratch / "public" / "index.html").read_text()

