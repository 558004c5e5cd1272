"""Shared fixtures: the example review, small review folders, the CLI, a served site."""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from click.testing import CliRunner

from sitegen.cli import cli

ROOT = Path(__file__).resolve().parent.parent
EXAMPLE = ROOT / "reviews" / "object-in-context"
FIXTURES = Path(__file__).resolve().parent / "fixtures"
CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(autouse=True)
def no_kept_parses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Tests keep no values between commands (`sitegen.review.kept`, tested in test_kept.py), in the user's
    cache folder least of all: each reads its files afresh, in this process and in the ones it starts.
    SITEGEN_TEST_CACHE_DIR names a folder to keep them in instead, shared by every test of the run: the
    whole suite then runs on values kept by the tests before it."""
    monkeypatch.setenv("SITEGEN_CACHE_DIR", os.environ.get("SITEGEN_TEST_CACHE_DIR", ""))


@pytest.fixture
def example_copy(tmp_path: Path) -> Path:
    """A private copy of the example review that a test may break."""
    target = tmp_path / "review"
    shutil.copytree(EXAMPLE, target)
    return target


def review_of_ris(folder: Path, ris: str) -> tuple[Path, tuple[int, str, str]]:
    """A new review (its protocol locked) into which the RIS text `ris` was imported, and the import's result."""
    review = folder / "review"
    run_cli("init", review)
    run_cli("protocol", "lock", review, "--at", "2026-01-01T00:00:00Z")
    (folder / "references.ris").write_text(ris, encoding="utf-8")
    return review, run_cli("import", review, folder / "references.ris", "--at", "2026-01-02T00:00:00Z")


def run_cli(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(cli, [str(a) for a in args], catch_exceptions=False)
    return result.exit_code, result.stdout, result.stderr


@pytest.fixture
def sitegen():
    return run_cli


def tree_bytes(root: Path) -> dict[str, bytes]:
    """Every file under root with its content: compare two of these to prove nothing changed."""
    if not root.exists():
        return {}
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


# --------------------------------------------------------------------------- browser


@pytest.fixture(scope="session")
def browser_type_launch_args(browser_type_launch_args):
    if not CHROMIUM.exists():
        pytest.skip("Chromium is not installed (apt-get install chromium); browser tests skipped")
    return {**browser_type_launch_args, "executable_path": str(CHROMIUM),
            "args": ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                     "--disable-component-update", "--disable-sync", "--no-first-run"]}


def serve(directory: Path):
    """Serve a folder on 127.0.0.1 with a free port; returns (base URL, process)."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    process = subprocess.Popen([sys.executable, "-m", "http.server", str(port), "--bind", "127.0.0.1",
                                "--directory", str(directory)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/"
    for _ in range(100):
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.1):
                return base, process
        except OSError:
            time.sleep(0.05)
    process.kill()
    raise RuntimeError("the test web server did not start")


@pytest.fixture(scope="session")
def example_site(tmp_path_factory) -> Path:
    from sitegen.commands import build

    out = tmp_path_factory.mktemp("example") / "site"
    build(EXAMPLE, out, environ={})
    return out


@pytest.fixture(scope="session")
def served_example(example_site):
    """The example site served under a path, as GitHub Pages serves a project site (/repo/): a link from the
    server's root would break here."""
    base, process = serve(example_site.parent)
    yield f"{base}{example_site.name}/"
    process.terminate()
    process.wait(timeout=5)


def rendered(files) -> dict:
    """A page group's files (sitegen.site.pages.Files) rendered, by path, as the build would write them."""
    from sitegen.site.output import Page

    pages = [item if isinstance(item, Page) else Page(item[0], lambda content=item[1]: content) for item in files]
    rendered_pages = {page.path: page.render() for page in pages}
    return {path: content if isinstance(content, str | bytes) else "".join(content)  # a file written in parts
            for path, content in rendered_pages.items()}
