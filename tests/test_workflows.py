"""The review repository's workflows: the names, triggers and pins issue 14 asks for, and the README's
adoption steps naming what the workflows read. (actionlint itself runs in test_project.py.)"""

from __future__ import annotations

import re

import pytest
import yaml
from conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
# A release tag with at least a minor version (v4.2 or v4.2.2), or a full commit SHA: never a moving
# major tag (v4) or a branch.
PINNED = re.compile(r"^[\w.-]+/[\w./-]+@(v\d+\.\d+(\.\d+)?|[0-9a-f]{40})$")


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


def test_check_runs_on_pull_requests_touching_reviews():
    assert _workflow("check.yml")["on"]["pull_request"]["paths"] == ["reviews/**"]


def test_publish_deploys_pushes_to_main_with_the_official_pages_actions():
    workflow = _workflow("publish.yml")
    assert workflow["on"]["push"]["branches"] == ["main"]
    used = {step["uses"].split("@")[0] for job in workflow["jobs"].values() for step in job["steps"] if "uses" in step}
    assert {"actions/configure-pages", "actions/upload-pages-artifact", "actions/deploy-pages"} <= used


@pytest.mark.parametrize("name", ["update.yml", "check.yml", "publish.yml"])
def test_every_action_is_pinned_to_a_version(name):
    uses = [step["uses"] for job in _workflow(name)["jobs"].values() for step in job["steps"] if "uses" in step]
    assert uses
    assert [use for use in uses if not PINNED.match(use)] == []


def test_the_readme_adoption_steps_name_the_workflows_and_what_update_reads():
    readme = (ROOT / "README.md").read_text()
    section = readme[readme.index("## Adopt sitegen in your review repository"):]
    section = section[:section.index("\n## ", 1)]
    for name in ("update.yml", "check.yml", "publish.yml", "SITEGEN_PACKAGE"):
        assert name in section
    read = set(re.findall(r"\$\{\{\s*(?:secrets|vars)\.(\w+)", (WORKFLOWS / "update.yml").read_text()))
    assert read == {"OPENALEX_API_KEY", "NCBI_API_KEY", "CROSSREF_PLUS_TOKEN", "SITEGEN_CONTACT_EMAIL"}
    assert [name for name in sorted(read) if f"`{name}`" not in section] == []


def test_the_published_site_has_a_page_at_its_root_that_leads_to_each_review(tmp_path, monkeypatch):
    # publish.yml builds each review under its folder's name; its root page leads there (at once when there is
    # one review), names escaped, so the site's own address is no 404.
    steps = yaml.safe_load((WORKFLOWS / "publish.yml").read_text())["jobs"]["build"]["steps"]
    script = next(step["run"] for step in steps if step.get("name", "").startswith("A page at the site's root"))
    program = script.split("<<'PY'\n", 1)[1].rsplit("PY", 1)[0]
    monkeypatch.chdir(tmp_path)
    (tmp_path / "public" / "object-in-context").mkdir(parents=True)
    exec(compile(program, "publish.yml", "exec"), {})
    page = (tmp_path / "public" / "index.html").read_text()
    assert 'http-equiv="refresh" content="0; url=object-in-context/index.html"' in page
    (tmp_path / "public" / "a <b>&c").mkdir()
    exec(compile(program, "publish.yml", "exec"), {})
    page = (tmp_path / "public" / "index.html").read_text()
    assert "refresh" not in page and '<a href="a%20%3Cb%3E%26c/index.html">a &lt;b&gt;&amp;c</a>' in page
