"""Time sitegen as an installed sitegen runs: from its compiled bytecode.

`pip install .` compiles every module as it installs; a checkout run in place compiles each module the first time
it is imported and keeps the bytecode beside it, unless PYTHONDONTWRITEBYTECODE is set (as some shells and CI images
set it), when every command compiles the modules it imports again: some 2 s of CPU at each command, which no user of an
installed sitegen pays. So the benches compile sitegen first and run their commands without that variable.
"""

from __future__ import annotations

import compileall
import os
from pathlib import Path

import sitegen


def as_installed() -> None:
    """Compile sitegen's modules where its commands will find them, and let the commands this process starts keep
    bytecode as an installed Python does."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    compileall.compile_dir(Path(sitegen.__file__).parent, quiet=1)
