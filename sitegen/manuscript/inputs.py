"""A LaTeX draft with the files it includes (`\\input{file}`, `\\include{file}`, `\\subfile{file}`, and the import
package's `\\import{dir/}{file}`, `\\subimport{dir/}{file}` and their kin) put where LaTeX puts them, so the claim
check reads every sentence and citation of the document, and each offset of the whole text traced back to its file
and line. Paths are relative to the draft's folder, with or without `.tex`, as LaTeX finds them, then to the folders
of the imports being read (see `Place`); a file that is missing, outside the draft's folder, including itself again
or too deep is refused, naming the file and line of its `\\input`."""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

from sitegen.errors import SitegenError, shown_path
from sitegen.manuscript.claims import latex_uncommented

# \input{file} and \include{file} (not \includegraphics, \inputencoding: the name ends at the brace or space); the
# subfiles package's \subfile{file} and \subfileinclude{file}; the import package's \import{dir/}{file}, \subimport,
# \inputfrom, \subinputfrom, \includefrom and \subincludefrom, starred or not, with the folder first (`dir`).
LATEX_INPUT = re.compile(r"\\(?:(?:input|include)(?![A-Za-z@])|(?P<subfile>subfile(?:include)?)(?![A-Za-z@])|"
                         r"(?P<sub>sub)?(?:import|inputfrom|includefrom)(?![A-Za-z@])\*?[ \t]*\{(?P<dir>[^{}\n]*)\})"
                         r"[ \t]*\{(?P<name>[^{}\n]*)\}")
BEGIN_DOCUMENT, END_DOCUMENT = "\\begin{document}", "\\end{document}"
MAX_DEPTH = 8  # files including files: deeper is a mistake (or a cycle through links), never a real manuscript


@dataclass(frozen=True)
class Place:
    """Where the file being read finds the files it includes, as the import package sets it: its `\\import@path`
    (`path`: the folder of the import being read, relative to the draft's folder; a `\\subimport`'s folder is
    relative to it, an `\\import`'s is not) and its `\\input@path` (`search`: every import's folder being read,
    the innermost first). LaTeX looks for a file in the draft's folder, then in each of `search`."""

    path: str = ""
    search: tuple[str, ...] = ()


@dataclass(frozen=True)
class Piece:
    start: int  # where the piece begins in the whole text
    path: Path  # the file it is from
    line: int  # the line of that file it begins on
    text: str
    offset: int = 0  # where it begins in that file


@dataclass(frozen=True)
class Document:
    """The whole text of a draft and the files it includes, and where each piece of it is from."""

    text: str
    pieces: tuple[Piece, ...]

    @property
    def included(self) -> tuple[Path, ...]:
        """The files the draft includes (at any depth), each once, in order: not the draft itself."""
        files = dict.fromkeys(piece.path for piece in self.pieces)
        return tuple(files)[1:]

    def origin(self, offset: int) -> tuple[Path, int]:
        """The file and line of the character at `offset` of the whole text."""
        piece = self._piece(offset)
        return piece.path, piece.line + piece.text.count("\n", 0, max(0, offset - piece.start))

    def span_in(self, path: Path, span: tuple[int, int]) -> tuple[int, int] | None:
        """Where a span of the whole text is in the file `path`: None unless it lies in one piece of that file."""
        piece = self._piece(span[0])
        if piece.path != path or span[1] > piece.start + len(piece.text):
            return None
        return piece.offset + span[0] - piece.start, piece.offset + span[1] - piece.start

    def crossing(self, span: tuple[int, int]) -> tuple[Path, int] | None:
        """Where a span of the whole text runs across an include's boundary, when it does not lie in one piece: the
        file of the next piece (the one included there, or, at an included file's end, the one including it) and the
        line its first piece ends on (the `\\input`'s, when the span begins in the including file); None otherwise."""
        index = self.pieces.index(self._piece(span[0]))
        first = self.pieces[index]
        if span[1] <= first.start + len(first.text) or index + 1 == len(self.pieces):
            return None
        return self.pieces[index + 1].path, first.line + first.text.count("\n")

    def _piece(self, offset: int) -> Piece:
        return next((p for p in reversed(self.pieces) if p.start <= offset and (p.text or p is self.pieces[0])),
                    self.pieces[0])


def expand(draft: Path, read: Callable[[Path], str]) -> Document:
    """The draft with every file it includes put in place of its `\\input`/`\\include` (a commented-out one is
    left); SitegenError naming the file and line of one that cannot be followed."""
    folder = draft.resolve().parent
    pieces: list[Piece] = []
    _expand(draft, read(draft), folder, read, pieces, (draft.resolve(),), Place())
    start, placed = 0, []
    for piece in pieces:
        placed.append(Piece(start, piece.path, piece.line, piece.text, piece.offset))
        start += len(piece.text)
    text = "".join(piece.text for piece in pieces)
    return Document(text, tuple(placed))


def _expand(path: Path, text: str, folder: Path, read: Callable[[Path], str], pieces: list[Piece],
            chain: tuple[Path, ...], place: Place) -> None:
    uncommented = latex_uncommented(text)
    kept_from, until = 0, len(text)
    if len(chain) > 1 and (begin := uncommented.find(BEGIN_DOCUMENT)) >= 0:
        # a document of its own (a `\subfile`'s): its body alone, as the subfiles package reads it; its
        # \end{document} in the whole text would end the draft's document there
        kept_from, end = begin + len(BEGIN_DOCUMENT), uncommented.find(END_DOCUMENT, begin)
        until = end if end >= 0 else until
    for match in LATEX_INPUT.finditer(uncommented, kept_from, until):
        where = f"{shown_path(path)}:{text.count(chr(10), 0, match.start()) + 1}"
        pieces.append(Piece(0, path, text.count("\n", 0, kept_from) + 1, text[kept_from:match.start()], kept_from))
        name, inner = match.group("name").strip(), place
        if match["subfile"]:  # subfiles >= 1.3: \subfile{dir/name} is \subimport{dir/}{name}, so a subfile finds its own
            directory, name = name[:name.rfind("/") + 1], name[name.rfind("/") + 1:]  # files from its folder
            inner = _imported(place, directory, True) if directory else place
        elif match.group("dir") is not None:
            inner = _imported(place, match.group("dir").strip(), bool(match["sub"]))
        included = _included(name, folder, inner.search, where, chain)
        if len(chain) > MAX_DEPTH:
            raise SitegenError(f"{where}: {match.group(0)} includes files more than {MAX_DEPTH} deep; put the text in "
                               "fewer files")
        _expand(included, read(included), folder, read, pieces, (*chain, included.resolve()), inner)
        kept_from = match.end()
    pieces.append(Piece(0, path, text.count("\n", 0, kept_from) + 1, text[kept_from:until], kept_from))


def _imported(place: Place, directory: str, sub: bool) -> Place:
    """Where a file `\\import{directory}{…}` (`\\subimport` when `sub`) reads, and the files it includes find theirs:
    as import.sty does it, a `\\subimport`'s folder is the import path's, extended; an `\\import`'s replaces it; both
    go first on the search path, which keeps the folders of the imports around it."""
    path = place.path + directory if sub else directory
    return Place(path, (path, *place.search))


def _included(name: str, folder: Path, search: tuple[str, ...], where: str, chain: tuple[Path, ...]) -> Path:
    """The file `\\input{name}` reads: `name`, or `name.tex` when that is not there, in the draft's folder, then in
    each folder of the `search` path (`Place`)."""
    if not name:
        raise SitegenError(f"{where}: an \\input, \\include or \\import names no file")
    # import.sty puts a folder before the name as it is written (`dir/`, with its slash)
    written = [directory + base for directory in ("", *search)
               for base in [name] + ([f"{name}.tex"] if not name.endswith(".tex") else [])]
    candidates = [folder / path for path in written]
    # `..`, an absolute path or a link out of the draft's folder: refused before anything there is looked at
    outside = next((path for path in written if not (folder / path).resolve().is_relative_to(folder)), None)
    if outside is not None:
        raise SitegenError(f"{where}: the file {outside!r} it includes is outside the draft's folder "
                           f"({shown_path(folder)}); the loop reads only the manuscript's own files")
    found = next((path for path in candidates if path.is_file()), None)
    if found is None:
        imports = f", then from the folders of the imports being read ({', '.join(search)})" if search else ""
        slash = " (a folder is put before the name as it is written: end it with `/`)" \
            if any(not directory.endswith("/") for directory in search) else ""
        innermost = folder / f"{search[0] if search else ''}{name}{'' if name.endswith('.tex') else '.tex'}"
        raise SitegenError(f"{where}: the file {name!r} it includes is not there ({shown_path(innermost)}); "
                           f"a path is read from the draft's folder{imports}{slash}")
    resolved = found.resolve()
    if resolved in chain:
        cycle = " → ".join(path.name for path in (*chain[chain.index(resolved):], resolved))
        raise SitegenError(f"{where}: {name!r} includes itself again ({cycle}); LaTeX would never end")
    return found
