"""The Atom feed (RFC 4287) of a living review: one entry per published version, and one per study
in the version that first included it, so readers can subscribe to what changes. It holds the latest
`FEED_VERSIONS` versions: a reader polls it for what is new, and `versions.html` keeps every version.

Ids are `urn:uuid:` names derived from the review's first ledger event (which an append-only
ledger never changes) and the version or study, so an entry keeps its id across rebuilds,
clones and a change of address. Times are the versions' recorded publication times. Links
are absolute when the review names its `site.base_url`, else relative to the feed (`xml:base`).
"""

from __future__ import annotations

import uuid
import xml.etree.ElementTree as ET
from typing import TYPE_CHECKING

import sitegen
from sitegen.living.versions import VersionHistory
from sitegen.review.models import ReviewConfig
from sitegen.site.templates import markdown_plain
from sitegen.text import counted, xml_safe

if TYPE_CHECKING:  # pages.py lists the versions page group, which writes the feed
    from sitegen.site.pages import RecordView

ATOM = "http://www.w3.org/2005/Atom"
XML_BASE = "{http://www.w3.org/XML/1998/namespace}base"
FEED_PATH = "feed.xml"
# A review published weekly for years would otherwise hand every poll all its history, growing without bound.
FEED_VERSIONS = 20


def entry_id(review_key: str, *parts: str | int) -> str:
    """A stable IRI for the review (no parts), one of its versions or one of its studies."""
    name = "/".join(["sitegen-review", review_key, *map(str, parts)])
    return f"urn:uuid:{uuid.uuid5(uuid.NAMESPACE_URL, name)}"


def atom_feed(history: VersionHistory, config: ReviewConfig, views: dict[str, RecordView]) -> bytes:
    """The feed of a review with at least one published version (`views`: each record's view, by id)."""
    review_key = history.current.review.ledger[0].hash
    base = config.site.base_url

    def href(path: str) -> str:
        return f"{base}{path}" if base else path

    def element(parent: ET.Element, tag: str, text: str | None = None, **attributes: str) -> ET.Element:
        child = ET.SubElement(parent, f"{{{ATOM}}}{tag}", attributes)
        if text is not None:
            child.text = xml_safe(text)
        return child

    ET.register_namespace("", ATOM)
    feed = ET.Element(f"{{{ATOM}}}feed", {} if base else {XML_BASE: "./"})
    element(feed, "id", entry_id(review_key))
    element(feed, "title", markdown_plain(config.title))  # a feed title is text: "*Mus musculus*" reads "Mus musculus"
    latest = "" if len(history.versions) <= FEED_VERSIONS else f" (the latest {FEED_VERSIONS}: versions.html lists them all)"
    element(feed, "subtitle", f"Published versions of this living review{latest} and the studies each newly included")
    element(feed, "updated", history.versions[-1].published_at)
    for author in config.authors:
        element(element(feed, "author"), "name", author.name)
    element(feed, "link", rel="self", type="application/atom+xml", href=href(FEED_PATH))
    element(feed, "link", rel="alternate", type="text/html", href=href("index.html"))
    element(feed, "rights", f"Content licence: {config.licence}, for the review's own text; bibliographic data stays "
                            "under its owners' copyright and its sources' terms")
    element(feed, "generator", "sitegen", version=sitegen.__version__)
    still_included = set(history.current.included)
    for version, log in list(zip(history.versions, history.changelogs, strict=True))[::-1][:FEED_VERSIONS]:
        entry = element(feed, "entry")
        element(entry, "id", entry_id(review_key, "v", version.number))
        element(entry, "title", f"Version {version.number}")
        element(entry, "updated", version.published_at)
        element(entry, "published", version.published_at)
        element(entry, "link", rel="alternate", type="text/html", href=href(f"v/{version.number}/index.html"))
        element(entry, "summary", f"{log.summary()} {counted(version.counts.studies_included, 'study', 'studies')} "
                                  f"included of {counted(version.counts.records, 'record')}.")
        added = sorted((views[rid] for rid in log.studies_added), key=lambda v: (v.record.title.casefold(), v.record.id))
        for view in added:
            if history.first_included[view.record.id] != version.number:
                continue  # included before, removed, and included again: announced the first time only
            study = element(feed, "entry")
            element(study, "id", entry_id(review_key, "study", view.record.id))
            element(study, "title", view.record.title)
            element(study, "updated", version.published_at)
            element(study, "published", version.published_at)
            # the study's page while it is still included (only then does the site have one), else its record's
            folder = "studies" if view.record.id in still_included else "records"
            element(study, "link", rel="alternate", type="text/html", href=href(f"{folder}/{view.slug}.html"))
            element(study, "summary", f"Newly included in version {version.number}: {_reference(view)}")
    ET.indent(feed)
    return ET.tostring(feed, encoding="utf-8", xml_declaration=True) + b"\n"


def _reference(view: RecordView) -> str:
    where = ", ".join(str(part) for part in (view.record.container_title, view.record.year) if part)
    return ". ".join(part.rstrip(".") for part in (view.authors_short, where) if part) + "."
