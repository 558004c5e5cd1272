"""JSON Schema for every file of the review folder, for editors and other tools."""

from __future__ import annotations

import json
from pathlib import Path

from pydantic import TypeAdapter

from sitegen.errors import OutputRefused, SitegenError, shown_path, symbolic_link
from sitegen.records.model import Record
from sitegen.review.models import (
    Decision,
    DuplicateDecision,
    Evidence,
    LedgerEvent,
    ProtocolMeta,
    ReviewConfig,
    ReviewState,
    RunManifest,
    SavedSearch,
    SnapshotEntry,
    ValidationStudy,
    VersionRecord,
)
from sitegen.review.write import atomic_write_all

SCHEMAS: dict[str, type] = {  # models, and dataclasses of pydantic's
    "review.schema.json": ReviewConfig,
    "protocol-front-matter.schema.json": ProtocolMeta,
    "saved-search.schema.json": SavedSearch,
    "record.schema.json": Record,
    "ledger-event.schema.json": LedgerEvent,
    "decision-row.schema.json": Decision,
    "duplicate-decision-row.schema.json": DuplicateDecision,
    "validation-row.schema.json": ValidationStudy,
    "evidence.schema.json": Evidence,
    "snapshot-entry.schema.json": SnapshotEntry,
    "state.schema.json": ReviewState,
    "run-manifest.schema.json": RunManifest,
    "version.schema.json": VersionRecord,
}


def json_schemas() -> dict[str, str]:
    return {name: json.dumps(TypeAdapter(model).json_schema(by_alias=True), indent=2, ensure_ascii=False) + "\n"
            for name, model in SCHEMAS.items()}


def write_schemas(directory: Path) -> list[Path]:
    """Every schema written into `directory` (made when its folder exists), all of them or none; SitegenError
    for a folder inside a review (whose files only sitegen's own writes may change) or a missing parent."""
    if not directory.absolute().parent.is_dir():
        raise SitegenError(f"--out {shown_path(directory)}: its folder {shown_path(directory.absolute().parent)} does not exist")
    if directory.is_symlink():  # as `build --out`: a link to a review's folder took the schemas into the review
        raise OutputRefused(f"refusing to write the schemas into {shown_path(directory)}: it is {symbolic_link(directory)}; "
                            "give the real folder")
    # where the folder really is: a folder reached through a link (--out linked/x) may be inside a review
    if review := next((folder for folder in (directory.resolve(), *directory.resolve().parents)
                       if (folder / "review.yaml").is_file()), None):
        raise SitegenError(f"--out {shown_path(directory)} is inside the review folder {shown_path(review)}; write the schemas elsewhere")
    directory.mkdir(exist_ok=True)
    files = {directory / name: text for name, text in json_schemas().items()}
    atomic_write_all(files)  # a file that cannot be written leaves none written
    return list(files)
