"""A LaTeX draft's `\\input{file}` and `\\include{file}` are followed (relative to the draft, with or without .tex):
citations and claims in the files it includes are read, each at its own file and line, and an include that cannot
be followed (missing, outside the draft's folder, a cycle, too deep) is refused naming the file and line."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
import test_loop
from test_loop import FIXTURES, problems, round_dir, run
from test_loop_fixes import accept, suggestions

from sitegen.errors import SitegenError
from sitegen.manuscript import claims, inputs

no_waiting = test_loop.no_waiting

MAIN = r"""\documentclass{article}
\input{macros}
\begin{document}
\section{Introduction}
Literature reviews take a large share of researchers' time \cite{wagner2021ai}.

\input{sections/background}
% \input{sections/missing}
\include{sections/typology.tex}
\end{document}
"""
BACKGROUND = r"""Surveys asked people about teleconsultation \cite{grenier2020teleconsultation}.

Automated screening tools reduce the workload of screening by more than half.
"""
TYPOLOGY = "A typology of review types helps \\citep[p.~3]{schryen2021knowledge}.\n"


@pytest.fixture
def paper(tmp_path: Path) -> Path:
    folder = tmp_path / "paper"
    (folder / "sections").mkdir(parents=True)
    shutil.copy(FIXTURES / "manuscript" / "references.bib", folder / "references.bib")
    (folder / "paper.tex").write_text(MAIN)
    (folder / "macros.tex").write_text("\\newcommand{\\etal}{et al.}\n")
    (folder / "sections" / "background.tex").write_text(BACKGROUND)
    (folder / "sections" / "typology.tex").write_text(TYPOLOGY)
    return folder


def test_citations_and_claims_in_included_files_are_read_at_their_own_file_and_line(paper):
    run(paper, draft=Path("paper.tex"))
    found = {(p["type"], p.get("key"), p["location"]) for p in problems(paper, 1)}
    # cited only in the included files: not uncited; the claim there is found, at its own file's line
    assert not any(kind == "uncited entry" for kind, *_ in found), found
    assert ("unsupported claim", None, "Introduction / paragraph 3 / sentence 1 (sections/background.tex, line 3)") \
        in found
    review = json.loads((round_dir(paper, 1) / "claim-review.json").read_text())
    assert {(s["file"] if "file" in s else None, s["line"]) for s in review["citing"]} == {
        (None, 5), ("sections/background.tex", 1), ("sections/typology.tex", 1)}


def test_a_suggestion_for_a_sentence_of_an_included_file_is_refused_at_apply_naming_it(paper):
    run(paper, draft=Path("paper.tex"))
    cite = next(s for s in suggestions(paper) if s["action"] == "cite-candidate")
    accept(paper, [cite["id"]])
    before = {path: path.read_bytes() for path in paper.rglob("*.tex")}
    with pytest.raises(SitegenError, match=r"confirm.yaml:1: S\d+: its sentence is in sections/background.tex "
                                           r"\(sections/background.tex, line 3\).*by hand"):
        run(paper, draft=Path("paper.tex"), apply=True)
    assert {path: path.read_bytes() for path in paper.rglob("*.tex")} == before


def test_removing_an_entry_an_included_file_cites_is_refused_naming_that_file(paper):
    (paper / "sections" / "typology.tex").write_text(TYPOLOGY + "Language models draft summaries "
                                                     "\\cite{smith2022fabricated}.\n")
    run(paper, draft=Path("paper.tex"))
    remove = next(s for s in suggestions(paper) if s["action"] == "remove-entry" and s["key"] == "smith2022fabricated")
    accept(paper, [remove["id"]])
    with pytest.raises(SitegenError, match=r"typology.tex still cites @smith2022fabricated on line 2"):
        run(paper, draft=Path("paper.tex"), apply=True)


@pytest.mark.parametrize(("change", "message"), [
    (lambda folder: (folder / "sections" / "typology.tex").unlink(),
     r"paper.tex:9: the file 'sections/typology.tex' it includes is not there"),
    (lambda folder: (folder / "sections" / "background.tex").write_text("Text.\n\\input{../outside}\n"),
     r"background.tex:2: the file '../outside' it includes is outside the draft's folder"),
    (lambda folder: (folder / "sections" / "background.tex").write_text("Text.\n\n\\input{paper}\n"),
     r"background.tex:3: 'paper' includes itself again \(paper.tex → background.tex → paper.tex\)"),
    (lambda folder: (folder / "sections" / "background.tex").write_bytes(b"Caf\xe9 \\cite{wagner2021ai}.\n"),
     r"background.tex:1: byte 3 \(0xe9\) is not UTF-8"),
    (lambda folder: [(folder / f"d{n}.tex").write_text(f"Level {n}.\n\\input{{d{n + 1}}}\n") for n in range(20)]
     and (folder / "macros.tex").write_text("\\input{d0}\n"),
     r"d\d+.tex:2: \\input\{d\d+\} includes files more than 8 deep"),
])
def test_an_include_that_cannot_be_followed_is_refused_naming_file_and_line_before_any_request(paper, change,
                                                                                              message):
    (paper.parent / "outside.tex").write_text("Outside \\cite{wagner2021ai}.\n")
    change(paper)
    providers = test_loop.Providers()
    with pytest.raises(SitegenError, match=message):
        run(paper, providers, draft=Path("paper.tex"))
    assert not providers.requests and not (paper / "output").exists()


# --------------------------------------------------------------------------- how LaTeX cites and comments


@pytest.mark.parametrize(("text", "keys"), [
    # a line break (\\) before % leaves it a comment; an escaped \% is text, and the citation after it counts
    ("Tools help reviewers\\\\% \\cite{gone}\nin practice \\cite{b}.", ("b",)),
    ("Costs fell by 50\\% in trials \\cite{a}.", ("a",)),
    ("Costs fell by 50\\\\\\% in trials \\cite{a}.", ("a",)),
    # TeX lets spaces and one line break come before an argument, and a note hold a bracket inside braces
    ("As shown \\cite {h} and \\citep[see] [p.~3]\n{i}.", ("h", "i")),
    ("As shown \\textcite[{see [3], p. 4}]{d}.", ("d",)),
    # text LaTeX never typesets cites nothing: the comment environment, \iffalse to its \fi (not \figure's "\fi")
    ("A \\cite{a}.\n\\begin{comment}\nB \\cite{gone}.\n\\end{comment}\nC \\cite{b}.", ("a", "b")),
    ("A \\cite{a}. \\iffalse B \\figureref \\cite{gone}. \\fi C \\cite{b}.", ("a", "b")),
    ("A \\iffalse never closed \\cite{a}.", ("a",)),
    ("A \\cite{a}.\\begin{comment}B \\cite{gone}.\\end{comment}Then \\cite{b}.", ("a", "b")),
    # code shown verbatim cites nothing
    ("A \\cite{a}. Write \\verb|\\cite{gone}| or \\verb+50% \\cite{x}+ \\cite{b}.\n\\begin{verbatim}\n"
     "\\cite{gone2}\n\\end{verbatim}\nC \\cite{c}.", ("a", "b", "c")),
    # natbib's capitalised commands
    ("\\Citet{k} showed it, as \\Citep[p. 2]{l} and \\Cites{m}{n} did.", ("k", "l", "m", "n")),
])
def test_latex_citations_are_read_as_tex_reads_them(text, keys):
    assert claims.cited_keys(claims.latex_citing(text)) == keys


def test_a_claim_or_an_include_in_a_comment_environment_is_not_read(paper):
    (paper / "paper.tex").write_text(MAIN.replace("\\end{document}", "\\begin{comment}\nTools are associated with "
                                                  "bias in most reviews.\n\\input{sections/missing}\n\\end{comment}\n"
                                                  "\\end{document}"))
    run(paper, draft=Path("paper.tex"))
    assert not any("bias" in p["evidence"] for p in problems(paper, 1))


def test_an_input_shown_as_code_is_not_followed(paper):
    (paper / "paper.tex").write_text(MAIN.replace("\\end{document}", "Write \\verb|\\input{chapter}| to include a "
                                                  "chapter.\n\\begin{verbatim}\n\\input{chapter}\n\\end{verbatim}\n"
                                                  "\\end{document}"))
    run(paper, draft=Path("paper.tex"))  # no "the file 'chapter' it includes is not there"
    assert (round_dir(paper, 1) / "problems.md").is_file()


def test_a_spaced_latex_citation_is_removed_and_renamed_whole():
    assert claims.remove_key("As shown~\\cite [p. 3] {i}.", "i") == "As shown."
    assert claims.rename_key("As \\Citet [p. 3] {k, j} showed.", "k", "z") == "As \\Citet [p. 3] {z, j} showed."


def test_a_subfile_is_read_as_its_body_and_the_draft_goes_on_after_it(paper):
    # a file with a document of its own (the subfiles package's): its \end{document} ended the draft's there
    (paper / "sections" / "typology.tex").write_text(
        "\\documentclass[../paper.tex]{subfiles}\n\\begin{document}\n" + TYPOLOGY + "\\end{document}\n")
    (paper / "paper.tex").write_text(MAIN.replace("\\include{sections/typology.tex}", "\\subfile{sections/typology}\n"
                                                  "Screening tools are associated with fewer errors."))
    run(paper, draft=Path("paper.tex"))
    review = json.loads((round_dir(paper, 1) / "claim-review.json").read_text())
    assert ("sections/typology.tex", 3) in {(s.get("file"), s["line"]) for s in review["citing"]}
    assert any("fewer errors" in p["evidence"] and "(line 10)" in p["location"] for p in problems(paper, 1))


def test_a_suggestion_for_a_sentence_of_the_draft_after_an_include_is_applied_there(paper):
    (paper / "sections" / "background.tex").write_text(BACKGROUND.replace(
        "Automated screening tools reduce the workload of screening by more than half.", "Nothing to add here."))
    (paper / "paper.tex").write_text(MAIN.replace("\\end{document}", "Automated screening tools reduce the workload "
                                                  "of screening by more than half.\n\\end{document}"))
    run(paper, draft=Path("paper.tex"))
    cite = next(s for s in suggestions(paper) if s["action"] == "cite-candidate")
    assert cite["sentence"]["line"] == 10 and "file" not in cite["sentence"]
    accept(paper, [cite["id"]])
    run(paper, draft=Path("paper.tex"), apply=True)
    assert (paper / "paper.tex").read_text().splitlines()[9].endswith(f"half~\\cite{{{cite['new_key']}}}.")


# --------------------------------------------------------------------------- the import package


def imports_paper(paper: Path) -> None:
    r"""paper.tex \subimport's chapters/intro.tex, which \input's its own part (found from its folder), \subimport's
    sub/deep.tex (from its folder) and \import's figures/note.tex (from the draft's: an \import's path is not the
    importing file's)."""
    (paper / "chapters" / "sub").mkdir(parents=True)
    (paper / "figures").mkdir()
    (paper / "paper.tex").write_text(MAIN.replace("\\include{sections/typology.tex}",
                                                  "\\subimport{chapters/}{intro}\n\\import*{sections/}{typology}"))
    (paper / "chapters" / "intro.tex").write_text("Intro text.\n\\input{part}\n\\subimport{sub/}{deep.tex}\n"
                                                  "\\import{figures/}{note}\n")
    (paper / "chapters" / "part.tex").write_text("Reviews cite \\cite{smith2022fabricated}.\n")
    (paper / "chapters" / "sub" / "deep.tex").write_text("\nTools are associated with fewer errors in screening.\n")
    (paper / "figures" / "note.tex").write_text("A note \\cite{wagner2021ai}.\n")


def test_import_and_subimport_are_followed_as_the_import_package_resolves_them(paper):
    imports_paper(paper)
    run(paper, draft=Path("paper.tex"))
    review = json.loads((round_dir(paper, 1) / "claim-review.json").read_text())
    assert {(s.get("file"), s["line"]) for s in review["citing"]} >= {
        ("chapters/part.tex", 1), ("figures/note.tex", 1), ("sections/typology.tex", 1)}
    assert any("fewer errors" in p["evidence"] and "chapters/sub/deep.tex, line 2" in p["location"]
               for p in problems(paper, 1))
    assert not any(p["type"] == "uncited entry" for p in problems(paper, 1))


@pytest.mark.parametrize(("change", "message"), [
    (lambda folder: (folder / "chapters" / "sub" / "deep.tex").unlink(),
     r"intro.tex:3: the file 'deep.tex' it includes is not there \(.*chapters/sub/deep.tex\); a path is read from the "
     r"draft's folder, then from the folders of the imports being read \(chapters/sub/, chapters/\)"),
    # an \import's path is the draft folder's, not the importing file's: chapters/figures/ is not looked in
    (lambda folder: [(folder / "chapters" / "figures").mkdir(),
                     (folder / "figures" / "note.tex").rename(folder / "chapters" / "figures" / "note.tex"),
                     (folder / "chapters" / "intro.tex").write_text("Intro.\n\\import{figures/}{note}\n")],
     r"intro.tex:2: the file 'note' it includes is not there \(.*paper/figures/note.tex\)"),
    (lambda folder: (folder / "chapters" / "intro.tex").write_text("Intro.\n\\subimport{../../}{outside}\n"),
     r"intro.tex:2: the file 'chapters/../../outside' it includes is outside the draft's folder"),
    (lambda folder: (folder / "chapters" / "intro.tex").write_text("Intro.\n\\import{/etc/}{passwd}\n"),
     r"intro.tex:2: the file '/etc/passwd' it includes is outside the draft's folder"),
    (lambda folder: (folder / "chapters" / "part.tex").write_text("Part.\n\\subimport{./}{intro}\n"),
     r"part.tex:2: 'intro' includes itself again \(intro.tex → part.tex → intro.tex\)"),
    (lambda folder: (folder / "chapters" / "intro.tex").write_text("\\import{figures}{note}\n"),
     r"intro.tex:1: the file 'note' it includes is not there .*end it with `/`"),
])
def test_an_import_that_cannot_be_followed_is_refused_naming_file_and_line_before_any_request(paper, change, message):
    (paper.parent / "outside.tex").write_text("Outside \\cite{wagner2021ai}.\n")
    imports_paper(paper)
    change(paper)
    providers = test_loop.Providers()
    with pytest.raises(SitegenError, match=message):
        run(paper, providers, draft=Path("paper.tex"))
    assert not providers.requests and not (paper / "output").exists()


def test_subimports_deeper_than_the_limit_are_refused(paper):
    folder = paper
    for _ in range(12):  # each file \subimport's the next from a folder below its own
        folder = folder / "a"
        folder.mkdir()
        (folder / "f.tex").write_text("Level.\n\\subimport{a/}{f}\n")
    (paper / "macros.tex").write_text("\\subimport{a/}{f}\n")
    with pytest.raises(SitegenError, match=r"a/f.tex:2: \\subimport\{a/\}\{f\} includes files more than 8 deep"):
        run(paper, draft=Path("paper.tex"))


def test_a_sentence_running_across_an_include_is_refused_at_apply_saying_so(paper):
    # it was refused as "changed since the round was run": the draft had not changed; the sentence lies in two files
    (paper / "sections" / "tail.tex").write_text("in most screening studies.\n")
    (paper / "paper.tex").write_text(MAIN.replace("\\end{document}", "Automated tools are associated with fewer "
                                                  "errors\n\\input{sections/tail}\n\\end{document}"))
    run(paper, draft=Path("paper.tex"))
    cite = next(s for s in suggestions(paper) if s["action"] == "cite-candidate" and "fewer" in s["sentence"]["text"])
    assert cite["sentence"]["line"] == 10 and "file" not in cite["sentence"]
    accept(paper, [cite["id"]])
    before = {path: path.read_bytes() for path in paper.rglob("*.tex")}
    with pytest.raises(SitegenError, match=r"confirm.yaml:1: S\d+: the sentence on line 10 of paper.tex runs on "
                                           r"across the boundary of sections/tail.tex, which line 11 of paper.tex "
                                           r"includes in the middle of it; .*by hand.*nothing was changed") as error:
        run(paper, draft=Path("paper.tex"), apply=True)
    assert "changed since the round" not in str(error.value)
    assert {path: path.read_bytes() for path in paper.rglob("*.tex")} == before


def test_a_subfile_reads_its_own_files_from_its_folder_as_the_subfiles_package_does(paper):
    # subfiles >= 1.3 loads \subfile{dir1/subfile1} as \subimport{dir1/}{subfile1} (its manual's "Hierarchy of
    # directories"): an \input or \subfile inside a subfile is read from the subfile's folder; it was the draft's
    (paper / "dir1" / "dir2").mkdir(parents=True)
    (paper / "paper.tex").write_text(MAIN.replace("\\include{sections/typology.tex}", "\\subfile{dir1/subfile1}"))
    (paper / "dir1" / "subfile1.tex").write_text("\\documentclass[../paper]{subfiles}\n\\begin{document}\n"
                                                 "\\input{text1}\n\\subfile{dir2/subfile2}\n\\end{document}\n")
    (paper / "dir1" / "text1.tex").write_text("One \\cite{wagner2021ai}.\n")
    (paper / "dir1" / "dir2" / "subfile2.tex").write_text("\\documentclass[../../paper]{subfiles}\n"
                                                          "\\begin{document}\n\\input{text2}\n\\end{document}\n")
    (paper / "dir1" / "dir2" / "text2.tex").write_text("Two \\cite{schryen2021knowledge}.\n")
    document = inputs.expand(paper / "paper.tex", lambda path: path.read_text())
    assert [path.relative_to(paper).as_posix() for path in document.included] == [
        "macros.tex", "sections/background.tex", "dir1/subfile1.tex", "dir1/text1.tex", "dir1/dir2/subfile2.tex",
        "dir1/dir2/text2.tex"]
    assert document.origin(document.text.index("Two")) == (paper / "dir1" / "dir2" / "text2.tex", 1)
    (paper / "dir1" / "dir2" / "text2.tex").unlink()
    with pytest.raises(SitegenError, match=r"subfile2.tex:3: the file 'text2' it includes is not there "
                                           r"\(.*paper/dir1/dir2/text2.tex\)"):
        inputs.expand(paper / "paper.tex", lambda path: path.read_text())
