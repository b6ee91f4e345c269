"""Jupyter notebooks: lint and fix the code cells of an `.ipynb`, as ruff does.

The code cells are joined into one Python text (so a model built in one cell and captured in
another is followed like in a script), with IPython syntax masked so it parses: a `%%` cell
magic blanks its cell, a line magic, shell escape or help line (`%time`, `!pip`, `obj?`)
becomes `pass` at its indentation, and `x = !ls` / `x = %env` keep their target. Findings
come back as (cell, row in cell); cells are numbered from 1 over every cell of the notebook,
markdown included, as a reader counts them.

Fixes are applied cell by cell: a fix whose edits span cells or touch a masked line is not
applied. The notebook is written back as JSON with its own indentation, key order, ASCII
escaping and final newline, so a fix changes the cell sources and nothing else.
"""

from __future__ import annotations

import ast
import json
import re
from typing import TYPE_CHECKING

from qlint import lfs_pointer
from qlint.diagnostic import Diagnostic, Edit, Range
from qlint.results import FileResult
from qlint.settings import Settings
from qlint.value_classes import field, replace, value_class

if TYPE_CHECKING:
    from qlint.analysis.names.project import ProjectIndex

SUFFIX = ".ipynb"
MAX_ROUNDS = 10

_HELP = re.compile(r"^(?:\?{1,2}[\w.*]+|[\w.*]+\?{1,2})\s*$")  # `obj?`, `??obj`, `torch.*?`
_ASSIGN_MAGIC = re.compile(r"^(\s*[A-Za-z_][\w.]*(?:\s*,\s*[A-Za-z_][\w.]*)*\s*=\s*)[!%].*$")


def is_notebook(path: str) -> bool:
    return path.endswith(SUFFIX)


class NotebookError(ValueError):
    def __init__(self, message: str, row: int = 1, col: int = 0):
        super().__init__(message)
        self.row, self.col = row, col


@value_class
class Notebook:
    data: dict
    cells: list[int]  # indices (into data["cells"]) of the code cells
    sources: list[str]  # each code cell's text, unmasked
    style: dict = field(default_factory=dict)  # how the JSON was written

    @classmethod
    def parse(cls, raw: bytes) -> Notebook:
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            raise NotebookError(f"notebook is not UTF-8: {exc.reason}") from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise NotebookError(f"notebook is not valid JSON: {exc.msg}", exc.lineno, exc.colno - 1) from None
        if not isinstance(data, dict) or not isinstance(data.get("cells"), list):
            raise NotebookError("not a Jupyter notebook (nbformat 4): no `cells` list")
        cells, sources = [], []
        for i, cell in enumerate(data["cells"]):
            if isinstance(cell, dict) and cell.get("cell_type") == "code":
                source = cell.get("source", "")
                cells.append(i)
                sources.append("".join(source) if isinstance(source, list) else str(source))
        return cls(data, cells, sources, _style(text))

    @property
    def python(self) -> bool:
        meta = self.data.get("metadata") or {}
        language = (meta.get("kernelspec") or {}).get("language") or (meta.get("language_info") or {}).get("name")
        return language in (None, "python", "python3")

    def dump(self, sources: list[str]) -> str:
        """The notebook with these code cell sources, written the way it was read."""
        data = json.loads(json.dumps(self.data))
        for index, text in zip(self.cells, sources, strict=True):
            cell = data["cells"][index]
            if isinstance(cell.get("source"), list):
                cell["source"] = text.splitlines(keepends=True)
            else:
                cell["source"] = text
        out = json.dumps(data, indent=self.style["indent"], ensure_ascii=self.style["ascii"])
        return out + ("\n" if self.style["newline"] else "")


def _style(text: str) -> dict:
    match = re.search(r"\n([ \t]+)\S", text)
    indent: int | str | None = None
    if match:
        ws = match.group(1)
        indent = len(ws) if set(ws) == {" "} else ws
    ascii_only = text.isascii() and "\\u" in text
    return {"indent": indent, "ascii": ascii_only, "newline": text.endswith("\n")}


@value_class
class VirtualText:
    """The code cells as one Python text, and the way back to (cell, row)."""

    text: str
    rows: list[tuple[int, int]]  # virtual row (0-based index) -> (code cell, row in cell)
    masked: set[tuple[int, int]]

    @classmethod
    def build(cls, sources: list[str]) -> VirtualText:
        lines, rows, masked = [], [], set()
        for c, source in enumerate(sources):
            cell_lines = source.split("\n")
            if cell_lines and cell_lines[-1] == "":
                cell_lines.pop()
            cell_magic = bool(cell_lines) and cell_lines[0].lstrip().startswith("%%")
            for r, line in enumerate(cell_lines, start=1):
                shown = mask_line(line, cell_magic)
                if shown != line:
                    masked.add((c, r))
                lines.append(shown)
                rows.append((c, r))
        return cls("".join(line + "\n" for line in lines), rows, masked)

    def locate(self, row: int) -> tuple[int, int]:
        """Virtual 1-based row -> (code cell, 1-based row in the cell)."""
        if not self.rows:
            return 0, row
        return self.rows[min(max(row, 1), len(self.rows)) - 1]


def mask_line(line: str, in_cell_magic: bool) -> str:
    if in_cell_magic:
        return ""
    stripped = line.lstrip()
    indent = line[: len(line) - len(stripped)]
    if stripped.startswith(("%", "!")) or _HELP.match(stripped):
        return indent + "pass"
    match = _ASSIGN_MAGIC.match(line)
    if match:
        return match.group(1) + "None"
    return line


# ----------------------------------------------------------------- checking


def check_notebook(raw: bytes | str, path: str, settings: Settings, project: ProjectIndex | None = None) -> FileResult:
    """Findings of the code cells, positioned by cell (`Diagnostic.cell`) and row in the cell."""
    # Imported here: reporters read notebooks' cells (`cell_texts`) for runs that check nothing.
    from qlint.engine import check_source, syntax_error

    data = raw.encode("utf-8") if isinstance(raw, str) else raw
    try:
        nb = Notebook.parse(data)
    except NotebookError as exc:
        result = FileResult(path=path)
        if lfs_pointer.is_lfs_pointer(data):
            # Not a broken notebook: a checkout without Git LFS left the pointer in its place.
            result.diagnostics.append(syntax_error(path, lfs_pointer.message("notebook"), 1, 0, lfs_pointer.HELP))
        else:
            result.diagnostics.append(syntax_error(path, exc.args[0], exc.row, exc.col))
        return result
    if not nb.python:
        return FileResult(path=path)
    virtual = VirtualText.build(nb.sources)
    result = check_source(virtual.text, path, settings, project)
    result.diagnostics = [localize(d, virtual, nb) for d in result.diagnostics]
    return result


def localize(d: Diagnostic, virtual: VirtualText, nb: Notebook) -> Diagnostic:
    cell, row = virtual.locate(d.range.start.row)
    end_cell, end_row = virtual.locate(d.range.end.row)
    end = Range.of(row, d.range.start.col, end_row if end_cell == cell else row, d.range.end.col)
    fix = d.fix
    if fix is not None:
        edits = []
        for e in fix.edits:
            if e.path is not None and e.path != d.path:  # another file's coordinates: keep them
                edits.append(e)
                continue
            _, r1 = _local(virtual, e.range.start.row)
            _, r2 = _local(virtual, e.range.end.row)
            edits.append(replace(e, range=Range.of(r1, e.range.start.col, r2, e.range.end.col)))
        fix = replace(fix, edits=tuple(edits))
    noqa_row = virtual.locate(d.noqa_row)[1] if d.noqa_row else None
    return replace(d, range=end, fix=fix, noqa_row=noqa_row, cell=nb.cells[cell] + 1)


def cell_texts(raw: bytes) -> dict[int, str]:
    """1-based notebook cell number -> code cell source, for showing source lines."""
    try:
        nb = Notebook.parse(raw)
    except NotebookError:
        return {}
    return {index + 1: source for index, source in zip(nb.cells, nb.sources, strict=True)}


# ----------------------------------------------------------------- fixing


@value_class
class NotebookFix:
    original: str
    fixed: str
    applied: int
    remaining: FileResult
    error: str | None = None
    # (1-based cell number, source before, source after) of every code cell.
    cells: list[tuple[int, str, str]] = field(default_factory=list)

    @property
    def changed(self) -> bool:
        return self.fixed != self.original

    def diff(self, shown: str) -> str:
        """One unified diff per changed cell, named `path:cell N` (as ruff shows notebooks)."""
        import difflib

        out = []
        for number, before, after in self.cells:
            if before != after:
                out += difflib.unified_diff(
                    before.splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    fromfile=f"a/{shown}:cell {number}",
                    tofile=f"b/{shown}:cell {number}",
                )
        return "".join(line if line.endswith("\n") else line + "\n" for line in out)


def fix_notebook(raw: bytes, path: str, settings: Settings, unsafe: bool) -> NotebookFix:
    """Apply fixes cell by cell to a fixpoint; the result re-parses and is valid JSON."""
    from qlint.analysis.names.project import ProjectIndex
    from qlint.engine import check_source
    from qlint.fixes import apply_edits

    original = raw.decode("utf-8-sig", errors="replace")
    try:
        nb = Notebook.parse(raw)
    except NotebookError:
        return NotebookFix(original, original, 0, check_notebook(raw, path, settings))
    if not nb.python:
        return NotebookFix(original, original, 0, FileResult(path=path))
    sources, applied = list(nb.sources), 0
    for _ in range(MAX_ROUNDS):
        virtual = VirtualText.build(sources)
        result = check_source(virtual.text, path, settings, ProjectIndex({path: virtual.text}))
        per_cell = _fixes_by_cell(result.diagnostics, virtual, unsafe)
        if not per_cell:
            break
        candidate, count = list(sources), 0
        for cell, diagnostics in per_cell.items():
            candidate[cell], n = apply_edits(sources[cell], diagnostics, unsafe)
            count += n
        if count == 0:
            break
        try:
            ast.parse(VirtualText.build(candidate).text, filename=path)
        except (SyntaxError, ValueError, RecursionError) as exc:
            remaining = check_notebook(nb.dump(sources), path, settings)
            return NotebookFix(original, nb.dump(sources), applied, remaining, f"a fix would not re-parse ({exc})")
        sources, applied = candidate, applied + count
    fixed = nb.dump(sources) if applied else original
    json.loads(fixed)  # never write what is not JSON
    cells = [(i + 1, before, after) for i, before, after in zip(nb.cells, nb.sources, sources, strict=True)]
    return NotebookFix(original, fixed, applied, check_notebook(fixed, path, settings), cells=cells)


def _local(virtual: VirtualText, row: int) -> tuple[int, int]:
    """Like `locate`, and the row after the last one (the end of the text) stays in the last cell."""
    if virtual.rows and row > len(virtual.rows):
        cell, last = virtual.rows[-1]
        return cell, last + row - len(virtual.rows)
    return virtual.locate(row)


def _fixes_by_cell(diagnostics: list[Diagnostic], virtual: VirtualText, unsafe: bool) -> dict[int, list[Diagnostic]]:
    """Fixes rewritten to their cell's coordinates; those spanning cells or touching masked
    lines are left out."""
    out: dict[int, list[Diagnostic]] = {}
    for d in diagnostics:
        fix = d.fix
        if fix is None or not fix.applies(unsafe) or fix.foreign(d.path):
            continue
        cells, edits = set(), []
        for e in fix.edits:
            c1, r1 = _local(virtual, e.range.start.row)
            c2, r2 = _local(virtual, e.range.end.row)
            cells.update((c1, c2))
            if (c1, r1) in virtual.masked or (c2, r2) in virtual.masked:
                cells.add(-1)
            edits.append(Edit(Range.of(r1, e.range.start.col, r2, e.range.end.col), e.content))
        if len(cells) != 1:
            continue
        (cell,) = cells
        local = replace(d, fix=replace(fix, edits=tuple(edits)), range=Range.of(1, 0, 1, 0))
        out.setdefault(cell, []).append(local)
    return out


__all__ = ["NotebookFix", "check_notebook", "fix_notebook", "is_notebook"]
