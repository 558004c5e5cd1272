"""The PRISMA 2020 counts as the CSV that the PRISMA2020 R package and its Shiny app read.

The file is the package's own template (`templates/prisma2020.csv`, from
prisma-flowdiagram/PRISMA2020, MIT): the same columns and rows, with only the
`n` column filled from the derived counts, so a reader can load it there and
restyle the diagram. "NA" is how the package leaves a box out: the previous
studies of a new review, the other-methods arm of a review that used none, and
the meta-analysis boxes (sitegen records no meta-analysis). Lists are written
"Name, n; Name, n", the package's format, which it splits at ";" and then at the
first ",": a label's own commas and semicolons become " / " so they cannot split
it. Records identified by other methods count under `website_results`,
`organisation_results` or `citations_results` as their source's name, or failing
that its imports' descriptions, says (`sitegen.living.prisma.other_method`); a box
no source of the arm counts in is NA. The template has no box for other methods of
a kind nobody recorded: those count in the last box of the arm, `citations_results`,
whose text then says so ("Other methods, kind not recorded"), never as citation
searching alone.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Mapping, Sequence

from sitegen.living.prisma import PrismaCounts, arm_flow, arm_runs, not_in_full, other_method, previous_labels
from sitegen.records.providers import kind, label
from sitegen.site.exports import one_line, write_csv
from sitegen.site.templates import templates_dir

TEMPLATE = "prisma2020.csv"
NA = "NA"
_LIST_SEPARATORS = re.compile(r"\s*[,;]+\s*")
UNSAID = "unsaid"  # other methods whose kind neither the source's name nor its imports' descriptions say
# The citation-searching box's text when it also holds records of other methods of no recorded kind.
_UNSAID_TEXTS = {False: "Other methods, kind not recorded",
                 True: "Citation searching, and other methods of kind not recorded"}


def template_rows() -> tuple[list[str], list[list[str]]]:
    """The template's header and rows, as the package ships them."""
    text = (templates_dir() / TEMPLATE).read_text(encoding="utf-8")
    header, *rows = csv.reader(io.StringIO(text, newline=""))
    return header, rows


def listed(items: dict[str, int]) -> str:
    """'Name, n; Name, n' with each name made safe for the package's splitting; "0" for no items."""
    if not items:
        return "0"
    return "; ".join(f"{_LIST_SEPARATORS.sub(' / ', one_line(name)).strip(' /') or 'unnamed'}, {n}"
                     for name, n in items.items())


def other_methods(counts: PrismaCounts, descriptions: Mapping[str, Sequence[str]]) -> dict[str, int]:
    """Records the arm's other methods identified, by box (`UNSAID` for those of no recorded kind); a source the
    arm used counts, as 0 when it found nothing new."""
    by_method: dict[str, int] = {}
    for source, n in arm_flow(counts).identified_other_by_source.items():
        method = other_method(source, descriptions.get(source, ())) or UNSAID
        by_method[method] = by_method.get(method, 0) + n
    return by_method


def values(counts: PrismaCounts, labels: dict[str, str],
           descriptions: Mapping[str, Sequence[str]] | None = None) -> dict[str, str]:
    """The `n` of each data row of the template; `descriptions`: what the imports under each other-methods source
    say they were (`sitegen.living.prisma.other_descriptions`)."""
    updated = counts.template == "updated"
    # The identification of new studies: for an updated review, the new searches' boxes (the earlier runs
    # identified the previous studies, so the whole review's flow would count them twice).
    whole, counts = counts, arm_flow(counts)
    other = bool(counts.identified_other_by_source)

    # Databases and registers only: a citation search not reached in full is an other method, no database.
    unreached = set(not_in_full(whole, "databases", arm_runs(whole)))

    def by_kind(wanted: str) -> dict[str, int]:
        """A source not reached in full in these runs is listed, and says so, whatever it identified."""
        found = {**dict.fromkeys(sorted(unreached), 0), **counts.identified_by_source}
        return {label(source) + (" (not reached in full)" if source in unreached else ""): n
                for source, n in found.items() if kind(source) == wanted}

    by_method = other_methods(whole, descriptions or {})
    cited = {"citations", UNSAID} & set(by_method)

    def reasons(by_reason: dict[str, int]) -> dict[str, int]:
        return {labels.get(code, code): n for code, n in by_reason.items()}

    def when(condition: bool, value: object) -> str:
        return str(value) if condition else NA

    return {
        "previous_studies": when(updated, whole.previous_studies),
        "previous_reports": when(updated, whole.previous_reports),
        "database_results": str(counts.identified_databases),
        "database_specific_results": listed(by_kind("database")),
        "register_results": str(counts.identified_registers),
        "register_specific_results": listed(by_kind("register")),
        "website_results": when("websites" in by_method, by_method.get("websites")),
        "organisation_results": when("organisations" in by_method, by_method.get("organisations")),
        "citations_results": when(bool(cited), sum(by_method[method] for method in cited)),
        "duplicates": str(counts.duplicates_removed),
        "excluded_automatic": str(counts.excluded_automation),
        "excluded_other": str(counts.removed_other_reasons),
        "records_screened": str(counts.screened),
        "records_excluded": str(counts.excluded_screening),
        "dbr_sought_reports": str(counts.reports_sought),
        "dbr_notretrieved_reports": str(counts.reports_not_retrieved),
        "other_sought_reports": when(other, counts.other_reports_sought),
        "other_notretrieved_reports": when(other, counts.other_reports_not_retrieved),
        "dbr_assessed": str(counts.reports_assessed),
        "dbr_excluded": listed(reasons(counts.excluded_by_reason)),
        "other_assessed": when(other, counts.other_reports_assessed),
        "other_excluded": listed(reasons(counts.other_excluded_by_reason)) if other else NA,
        "new_studies": str(whole.new_studies),
        "new_reports": str(whole.new_reports),
        "total_studies": str(whole.studies_included),
        "total_reports": str(whole.reports_included),
        "total_studies_ma": NA,
        "total_reports_ma": NA,
    }


def prisma2020_csv(counts: PrismaCounts, labels: dict[str, str],
                   descriptions: Mapping[str, Sequence[str]] | None = None) -> str:
    """The template with its `n` column filled; rows that are titles or phase bars keep the template's n."""
    header, rows = template_rows()
    data, n = header.index("data"), header.index("n")
    filled = values(counts, labels, descriptions)
    studies_label, reports_label, _ = previous_labels(counts)
    texts = {"previous_studies": studies_label, "previous_reports": reports_label}
    by_method = other_methods(counts, descriptions or {})
    if UNSAID in by_method:
        texts["citations_results"] = _UNSAID_TEXTS["citations" in by_method]
    wording = [header.index(column) for column in ("description", "boxtext", "tooltips")]
    boxtext = header.index("boxtext")

    def worded(row: list[str]) -> list[str]:
        """The previous-studies rows say what the previous studies are, and the citation-searching row what it
        holds (the package's text otherwise), in each column where the package has the box's text."""
        if row[data] not in texts:
            return row
        return [value.replace(row[boxtext], texts[row[data]]) if i in wording and value != NA else value
                for i, value in enumerate(row)]

    return write_csv(header, [[*row[:n], filled.get(row[data], row[n]), *row[n + 1:]] for row in map(worded, rows)])
