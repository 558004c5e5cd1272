"""Site search: a static pagefind index, built from the rendered pages before anything is written.

pagefind (from PyPI; its binary ships inside the wheel) reads HTML and writes a
folder of small index files that the search page fetches as the reader types, so
search needs no server-side code and no network beyond the site itself. Only the
parts of pages marked `data-pagefind-body` are indexed (the current review's
pages; not old versions, not lists that repeat what record pages say).

The index is built in a private temporary folder from the pages as the build
wrote them and handed back as more pages, keyed by the pages it indexes: when
none of those changed, the index is not built again.

pagefind indexes all its pages at once (about 1.5 ms each), and a review may
include thousands of studies. So the studies' pages, once there are more than
`PART_PAGES`, are indexed in parts of about that many (a page's part is told by
its path's digest, so it stays in it), each its own bundle under `pagefind/`,
which the search page merges into the main one (pagefind's `mergeIndex`,
listed in `pagefind/parts.json`). A decision that changes one study's page
builds its part again and keeps the others.
"""

from __future__ import annotations

import functools
import hashlib
import json
import math
import os
import shutil
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from sitegen.errors import BuildError
from sitegen.review.write import named_as
from sitegen.site.keys import code_digest
from sitegen.site.output import INDEXED_MARK, Page, Written, render_processes
from sitegen.site.templates import templates_dir

INDEX_FOLDER = "pagefind"
PARTS_LIST = f"{INDEX_FOLDER}/parts.json"  # the parts' folders, relative to the main bundle's, for the search page
PART_PAGES = 250  # about as many study pages in each part (pagefind takes about 0.4 s over them)
STUDY_PAGES = "studies/"
TIMEOUT_SECONDS = 900


TEMPORARY_PREFIX = "sitegen-search-"
# A build's own folder is never older than this: pagefind is stopped after TIMEOUT_SECONDS.
STALE_SECONDS = 2 * TIMEOUT_SECONDS


def search_index(files: Mapping[str, bytes], folder: str = INDEX_FOLDER) -> dict[str, bytes]:
    """The pagefind index files for `files` (path in the site -> content), under `folder`."""
    _remove_stale_folders()
    with tempfile.TemporaryDirectory(prefix=TEMPORARY_PREFIX) as temporary:
        root = Path(temporary)
        for path, content in files.items():
            if path.endswith(".html") and INDEXED_MARK in content:
                target = root / path
                with named_as(str(target)):  # a full temporary folder says so, and where
                    target.parent.mkdir(parents=True, exist_ok=True)
                    target.write_bytes(content)
        return _pagefind(root, folder)


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
    """The index of the pages written into `tree` (described by `files`): its bundles (`bundles`), each as pages
    keyed by what it indexes, and the list of its parts. A bundle the current site has with that key is kept
    by the writer, and pagefind does not run for it; the others are built side by side, one per processor."""
    indexed = sorted(path for path, written in files.items() if written.indexed and path.endswith(".html"))
    bundles = {folder: (_bundle_key(folder, pages, files), pages) for folder, pages in bundle_pages(indexed).items()}
    held: dict[str, list[str]] = {}
    for path, written in current.items():
        folder = _bundle_of(path)
        if folder in bundles and written.key == bundles[folder][0]:
            held.setdefault(folder, []).append(path)

    def build(folder: str) -> dict[str, bytes]:
        return search_index({path: (tree / path).read_bytes() for path in bundles[folder][1]}, folder)

    stale = [folder for folder in bundles if folder not in held]
    with ThreadPoolExecutor(max_workers=render_processes()) as pool:  # each waits on its own pagefind
        built = dict(zip(stale, pool.map(build, stale), strict=True))
    for folder, (key, _) in bundles.items():
        # A kept bundle's file the current site no longer holds as built (edited since) is rendered: then built.
        again = functools.cache(lambda folder=folder: built.get(folder) or build(folder))
        for path in sorted(held.get(folder) or built[folder]):
            yield Page(path, lambda path=path, again=again: again()[path], key)
    parts = [folder.removeprefix(f"{INDEX_FOLDER}/") + "/" for folder in bundles if folder != INDEX_FOLDER]
    listed = json.dumps(parts).encode()
    digest = hashlib.blake2b(code_digest(templates_dir()).encode(), digest_size=20)
    digest.update(listed)
    yield Page(PARTS_LIST, lambda: listed, digest.hexdigest())


def bundle_pages(indexed: list[str]) -> dict[str, list[str]]:
    """The index's bundles (their folders, the main one first) and the pages each indexes. The studies' pages are
    shared out among parts of about PART_PAGES each, by their paths' digests, once they are more than one part's;
    the main bundle holds the other pages (and the studies' while they are few)."""
    studies = [path for path in indexed if path.startswith(STUDY_PAGES)]
    count = math.ceil(len(studies) / PART_PAGES)
    if count < 2:
        return {INDEX_FOLDER: indexed}
    parts: list[list[str]] = [[] for _ in range(count)]
    for path in studies:
        parts[int.from_bytes(hashlib.blake2b(path.encode(), digest_size=8).digest(), "big") % count].append(path)
    return {INDEX_FOLDER: [path for path in indexed if not path.startswith(STUDY_PAGES)],
            **{f"{INDEX_FOLDER}/part-{number}": part for number, part in enumerate(parts, start=1) if part}}


def _bundle_of(path: str) -> str | None:
    """The folder of the bundle an index file is in; None for a file outside the index (or its list of parts)."""
    if not path.startswith(f"{INDEX_FOLDER}/") or path == PARTS_LIST:
        return None
    part = path.split("/")[1]
    return f"{INDEX_FOLDER}/{part}" if part.startswith("part-") else INDEX_FOLDER


def _bundle_key(folder: str, pages: list[str], files: Mapping[str, Written]) -> str:
    """A bundle's key: the code that builds it, its folder, and each page it indexes, by path and content."""
    digest = hashlib.blake2b(code_digest(templates_dir()).encode(), digest_size=20)
    digest.update(folder.encode() + b"\n")
    for path in pages:
        digest.update(f"{path}\0{files[path].sha256}\n".encode())
    return digest.hexdigest()


def _pagefind(root: Path, folder: str) -> dict[str, bytes]:
    """Run pagefind over the pages in `root`; the files of the index it writes into `folder`."""
    command = [sys.executable, "-m", "pagefind", "--site", ".", "--output-subdir", folder,
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
    index = root / folder
    return {f"{folder}/{path.relative_to(index).as_posix()}": path.read_bytes()
            for path in sorted(index.rglob("*")) if path.is_file()}
