"""Site search: a static pagefind index, built from the rendered pages before anything is written.

pagefind (from PyPI; its binary ships inside the wheel) reads HTML and writes a
folder of small index files that the search page fetches as the reader types, so
search needs no server-side code and no network beyond the site itself. Only the
parts of pages marked `data-pagefind-body` are indexed (the current review's
pages; not old versions, not lists that repeat what record pages say).

The index is built in a private temporary folder from the rendered files and
returned as more files, so the build stays gather-then-write: the site's output
folder is still written once, whole, by `sitegen.site.output`.
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

from sitegen.errors import BuildError

INDEX_FOLDER = "pagefind"
INDEXED_MARK = b"data-pagefind-body"
TIMEOUT_SECONDS = 900


def search_index(files: dict[str, bytes]) -> dict[str, bytes]:
    """The pagefind index files for `files` (path in the site -> content), under `pagefind/`."""
    with tempfile.TemporaryDirectory(prefix="sitegen-search-") as folder:
        root = Path(folder)
        for path, content in files.items():
            if path.endswith(".html") and INDEXED_MARK in content:
                target = root / path
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
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
