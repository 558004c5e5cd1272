"""Site search: a static pagefind index, built from the rendered pages before anything is written.

pagefind (from PyPI; its binary ships inside the wheel) reads HTML and writes a
folder of small index files that the search page fetches as the reader types, so
search needs no server-side code and no network beyond the site itself. Only the
parts of pages marked `data-pagefind-body` are indexed (the current review's
pages; not old versions, not lists that repeat what record pages say).

The index is built in a private temporary folder from the pages as the build
wrote them and handed back as more pages, keyed by the pages it indexes: when
none of those changed, the index is not built again.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from pathlib import Path

from sitegen.errors import BuildError
from sitegen.review.write import named_as
from sitegen.site.keys import code_digest
from sitegen.site.output import INDEXED_MARK, Page, Written
from sitegen.site.templates import templates_dir

INDEX_FOLDER = "pagefind"
TIMEOUT_SECONDS = 900


TEMPORARY_PREFIX = "sitegen-search-"
# A build's own folder is never older than this: pagefind is stopped after TIMEOUT_SECONDS.
STALE_SECONDS = 2 * TIMEOUT_SECONDS


def search_index(files: Mapping[str, bytes]) -> dict[str, bytes]:
    """The pagefind index files for `files` (path in the site -> content), under `pagefind/`."""
    _remove_stale_folders()
    with tempfile.TemporaryDirectory(prefix=TEMPORARY_PREFIX) as folder:
        root = Path(folder)
        for path, content in files.items():
            if path.endswith(".html") and INDEXED_MARK in content:
                target = root / path
                with named_as(str(target)):  # a full temporary folder says so, and where
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(content)
        return _pagefind(root)


def _remove_stale_folders() -> None:
    """Remove the folders of this user's builds killed while pagefind ran (a copy of every indexed page,
    which nothing else would ever remove); a folder a build is using now is younger than STALE_SECONDS."""
    cutoff = time.time() - STALE_SECONDS
    for folder in Path(tempfile.gettempdir()).glob(f"{TEMPORARY_PREFIX}*"):
        try:
            status = folder.lstat()
        except OSError:
            continue
        if stat.S_ISDIR(status.st_mode) and status.st_uid == os.getuid() and status.st_mtime < cutoff:
            shutil.rmtree(folder, ignore_errors=True)


def index_pages(tree: Path, files: Mapping[str, Written], current: Mapping[str, Written]) -> Iterator[Page]:
    """The index of the pages written into `tree` (described by `files`), as pages keyed by what they
    index; when the current site's index has that key, the writer keeps it and pagefind does not run."""
    indexed = sorted(path for path, written in files.items() if written.indexed and path.endswith(".html"))
    digest = hashlib.blake2b(code_digest(templates_dir()).encode(), digest_size=20)
    for path in indexed:
        digest.update(f"{path}\0{files[path].sha256}\n".encode())
    key = digest.hexdigest()

    @functools.cache
    def built() -> dict[str, bytes]:
        return search_index({path: (tree / path).read_bytes() for path in indexed})

    previous = sorted(path for path, written in current.items()
                      if path.startswith(f"{INDEX_FOLDER}/") and written.key == key)
    for path in previous or sorted(built()):
        yield Page(path, lambda path=path: built()[path], key)


def _pagefind(root: Path) -> dict[str, bytes]:
    """Run pagefind over the pages in `root`; the files of the index it writes."""
    command = [sys.executable, "-m", "pagefind", "--site", ".", "--output-subdir", INDEX_FOLDER,
               "--keep-index-url", "--quiet"]
    # pagefind also reads a pagefind.yml in its working folder and PAGEFIND_* variables: run it
    # where there is neither, so the index depends on the pages alone.
    environ = {name: value for name, value in os.environ.items() if not name.upper().startswith("PAGEFIND")}
    try:
        finished = subprocess.run(command, cwd=root, env=environ, capture_output=True, text=True,
                                  timeout=TIMEOUT_SECONDS, check=False)
    except subprocess.TimeoutExpired:
        raise BuildError(f"building the site search index took over {TIMEOUT_SECONDS} s; "
                         "set `site.search: false` in review.yaml to build without it") from None
    if finished.returncode != 0:
        detail = (finished.stderr or finished.stdout).strip().splitlines()[-3:]
        raise BuildError("could not build the site search index with pagefind ("
                         + (" / ".join(detail) or f"exit status {finished.returncode}")
                         + "); install it with `pip install 'pagefind[extended]'`, or set "
                         "`site.search: false` in review.yaml to build without search")
    index = root / INDEX_FOLDER
    return {f"{INDEX_FOLDER}/{path.relative_to(index).as_posix()}": path.read_bytes()
            for path in sorted(index.rglob("*")) if path.is_file()}
