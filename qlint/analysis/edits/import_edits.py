"""Minimal text edits to import statements, computed from exact `ast` positions.

Codemods that move names between modules (QL401) must keep the user's formatting:
parenthesized multi-line imports, trailing comments, aliases. Rewriting a statement
from the AST would lose all of that, so these helpers edit only the characters that
change: the module path, one alias, the lines of removed names, one inserted statement.
Each returns None when the layout is too unusual to edit with confidence; the caller
then offers a display-only fix.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable
from typing import TYPE_CHECKING

from qlint.analysis.caught_errors import catches
from qlint.analysis.flow.dead_branches import literal_truth
from qlint.analysis.names.modules import resolve_relative
from qlint.analysis.removed_capture_apis import TARGET_RELEASE
from qlint.analysis.version_gates import Lookup, branch_runs
from qlint.diagnostic import Edit, Position, Range
from qlint.lazy_patterns import lazy
from qlint.source import line_ending

if TYPE_CHECKING:
    from qlint.analysis.context import FileContext

_ALIAS_TAIL = lazy(r"\s*,?\s*(#.*)?$")
_LINE_TAIL = lazy(r"\s*(#.*)?$")
_FROM_MODULE = lazy(r"from\s+([\w.]+)\s")
_COMMENT = lazy(r"#.*$")
_NOQA = lazy(r"#\s*noqa\b", re.IGNORECASE)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.Module)
_TRY = (ast.Try, getattr(ast, "TryStar", ast.Try))
_GUARD_ERRORS = frozenset({"ImportError", "ModuleNotFoundError", "AttributeError", "Exception", "BaseException"})
MAX_LINE = 88


def import_base(ctx: FileContext, stmt: ast.ImportFrom) -> str | None:
    return resolve_relative(ctx.module, ctx.path, stmt.level, stmt.module)


# -- where an old import is deliberate ----------------------------------------------------
def guarded(
    node: ast.AST,
    parents: dict,
    names: set[str],
    lookup: Lookup | None = None,
    fails: Callable[[ast.stmt], bool] | None = None,
) -> bool:
    """Is `node` a compatibility path: one branch of a fallback, or under a version check?

    Quiet when it sits in a `try` (body or handler catching ImportError/AttributeError/
    Exception) whose other part imports the same `names` from elsewhere, in an `if`/`else`
    whose other branch does, under an `if` (or conditional expression) that tests `hasattr`,
    or in a branch of a torch-version check that torch 2.13 does not take (or that qlint
    cannot read). The branch 2.13 does take is judged like any other code. `lookup` resolves
    names bound to version checks (`if _IS_TORCH_OLDER_THAN_2_4:`). With no `names` (an
    attribute use), any `try` catching those errors counts: it is a probe. `fails` tells an
    import statement that raises with the packages the target release comes with: a `try`
    body holding one always hands over to its handler, whose imports then run there too.
    """
    child, parent = node, parents.get(id(node))
    while parent is not None and not isinstance(parent, _SCOPES):
        if isinstance(parent, _TRY):
            catching = [h for h in parent.handlers if catches_import_failure(h)]
            if (
                catching
                and child in parent.body
                and (not names or any(_imports_names(h.body, names) for h in catching))
            ):
                return True
            alternative = child in catching and (_imports_names(parent.body, names) or _imports_torchao(parent.body))
            if alternative and not (fails and any(fails(s) for s in parent.body)):
                return True  # the handler runs where torchao (the PT2E stack's new home) is missing
        elif isinstance(parent, (ast.If, ast.IfExp)):
            if child is parent.test:
                return False
            in_body = child in parent.body if isinstance(parent, ast.If) else child is parent.body
            if (literal := literal_truth(parent.test)) is not None and literal != in_body:
                return True  # `if False:`: a block no run reaches imports nothing
            runs = branch_runs(parent.test, in_body, TARGET_RELEASE, lookup)
            if runs is False or (runs is None and probes_attribute(parent.test)):
                return True
            if runs is None and isinstance(parent, ast.If):
                other = parent.orelse if in_body else parent.body
                if names and _imports_names(other, names):
                    return True
        child, parent = parent, parents.get(id(parent))
    return False


def catches_import_failure(handler: ast.ExceptHandler) -> bool:
    """Does `handler` catch what a missing module or name raises (a guard for older torch)?"""
    return catches(handler, _GUARD_ERRORS)


def _imports_torchao(stmts: Iterable[ast.stmt]) -> bool:
    """Does a statement of a `try` body import torchao itself (`import torchao`,
    `from torchao.quantization.pt2e import ...`)? TI's edgeai-tensorlab probes it so."""
    for stmt in stmts:
        if isinstance(stmt, ast.Import) and any(a.name.split(".")[0] == "torchao" for a in stmt.names):
            return True
        if isinstance(stmt, ast.ImportFrom) and not stmt.level and (stmt.module or "").split(".")[0] == "torchao":
            return True
    return False


def _imports_names(stmts: Iterable[ast.stmt], names: set[str]) -> bool:
    """Do `stmts` import any of `names` from somewhere other than `torch.ao`?"""
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.ImportFrom) and not (node.module or "").startswith("torch.ao"):
                if any((a.asname or a.name) in names for a in node.names):
                    return True
            elif isinstance(node, ast.Import):
                for a in node.names:
                    if not a.name.startswith("torch.ao") and (a.asname or a.name.split(".")[0]) in names:
                        return True
    return False


def probes_attribute(test: ast.expr) -> bool:
    return any(isinstance(n, ast.Name) and n.id == "hasattr" for n in ast.walk(test))


# -- small edits ---------------------------------------------------------------------------
def _offset(ctx: FileContext, row: int, byte_col: int) -> int:
    return ctx.lines.offset(Position(row, ctx.lines.char_col(row, byte_col)))


def _span(ctx: FileContext, node: ast.AST) -> tuple[int, int]:
    return _offset(ctx, node.lineno, node.col_offset), _offset(ctx, node.end_lineno, node.end_col_offset)


def _edit(ctx: FileContext, start: int, end: int, text: str) -> Edit:
    return Edit(Range(ctx.lines.position(start), ctx.lines.position(end)), text)


def alias_name_edit(ctx: FileContext, alias: ast.alias, text: str) -> Edit | None:
    """Replace the dotted name of an alias (`x.y` in `import x.y as z`), nothing else."""
    start, _ = _span(ctx, alias)
    if ctx.text[start : start + len(alias.name)] != alias.name:
        return None  # `x . y` or a line continuation inside the name
    return _edit(ctx, start, start + len(alias.name), text)


def chain_head(node: ast.AST) -> ast.AST:
    while isinstance(node, ast.Attribute):
        node = node.value
    return node


def name_still_needed(ctx: FileContext, name: str, rewritten: set[int]) -> bool:
    return any(
        isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load) and id(n) not in rewritten
        for n in ast.walk(ctx.tree)
    )


def binds_elsewhere(ctx: FileContext, name: str, skip: Callable[[ast.alias], bool]) -> bool:
    """Does another import bind `name` (ignoring aliases `skip` says are being rewritten)?"""
    for node in ast.walk(ctx.tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            for a in node.names:
                bound = a.asname or (a.name.split(".")[0] if isinstance(node, ast.Import) else a.name)
                if bound == name and not skip(a):
                    return True
    return False


def owns_lines(ctx: FileContext, stmt: ast.stmt) -> bool:
    """The statement starts its line and only a comment follows it: safe to add lines around it."""
    first = ctx.lines.line(stmt.lineno)
    start_col = ctx.lines.char_col(stmt.lineno, stmt.col_offset)
    end_col = ctx.lines.char_col(stmt.end_lineno, stmt.end_col_offset)
    return not first[:start_col].strip() and bool(_LINE_TAIL.match(ctx.lines.line(stmt.end_lineno)[end_col:]))


def _indent(ctx: FileContext, stmt: ast.stmt) -> str:
    return ctx.lines.line(stmt.lineno)[: ctx.lines.char_col(stmt.lineno, stmt.col_offset)]


def _line_end(ctx: FileContext, row: int) -> int:
    return ctx.lines.offset(Position(row, len(ctx.lines.line(row))))


def insert_before(ctx: FileContext, stmt: ast.stmt, text: str) -> Edit:
    start, _ = _span(ctx, stmt)
    return _edit(ctx, start, start, f"{text}{line_ending(ctx.text)}{_indent(ctx, stmt)}")


def format_from(
    module: str,
    parts: list[str],
    indent: str,
    newline: str = "\n",
    comments: dict[str, str] | None = None,
    noqa: tuple[str | None, str | None] = (None, None),
) -> str:
    """`from module import parts`, on one line when it fits and nothing forces the layout.

    `comments` (part -> comment) came after a name on its own line: the name keeps it, so
    the parenthesized form is used. `noqa` is the statement's suppression on its first and
    on its last line: it goes where the user had it, and a statement that had one on a
    single line stays on one line (a linter reports an import's names on their own line).
    """
    comments = comments or {}
    first, last = noqa
    line = f"from {module} import {', '.join(parts)}"
    if not any(comments.get(p) for p in parts) and (first or last or len(indent) + len(line) <= MAX_LINE):
        tail = first or last
        return line + (f"  {tail}" if tail else "")
    inner = "".join(f"{indent}    {p},{'  ' + comments[p] if comments.get(p) else ''}{newline}" for p in parts)
    head = f"  {first}" if first else ""
    close = f"  {last}" if last else ""
    return f"from {module} import ({head}{newline}{inner}{indent}){close}"


# -- moving names out of `from <module> import ...` ------------------------------------------
def regroup_from_import(
    ctx: FileContext, stmt: ast.ImportFrom, moved: list[tuple[ast.alias, str, str]]
) -> list[Edit] | None:
    """Edits that import each moved alias `(alias, module, name)` from its new module.

    Names that stay (eager API torch still ships, or names without a successor) keep the
    statement; otherwise the statement keeps its largest group and only its module path
    changes. Other groups become new statements on the following lines, bound to the same
    local names (`new_name as old_local` where the successor is spelled differently).
    """
    if stmt.level or not owns_lines(ctx, stmt):
        return None
    seg_start, _ = _span(ctx, stmt)
    match = _FROM_MODULE.match(ctx.source_of(stmt))
    if match is None or match.group(1) != stmt.module:
        return None
    groups: dict[str, list[tuple[ast.alias, str]]] = {}
    for alias, module, name in moved:
        groups.setdefault(module, []).append((alias, name))
    moved_ids = {id(alias) for alias, _, _ in moved}
    edits: list[Edit] = []
    if all(id(a) in moved_ids for a in stmt.names):
        keep = max(groups, key=lambda m: len(groups[m]))
        edits.append(_edit(ctx, seg_start + match.start(1), seg_start + match.end(1), keep))
        for alias, name in groups.pop(keep):
            if name != alias.name:
                edit = alias_name_edit(ctx, alias, name if alias.asname else f"{name} as {alias.name}")
                if edit is None:
                    return None
                edits.append(edit)
    removed = [alias for items in groups.values() for alias, _ in items]
    if removed:
        removal = _removal_edits(ctx, stmt, {id(a) for a in removed})
        if removal is None:
            return None
        edits.extend(removal)
    if groups:
        indent = _indent(ctx, stmt)
        newline = line_ending(ctx.text)
        noqa = _statement_noqa(ctx, stmt)
        added = ""
        for module, items in groups.items():
            parts = [_part(a, n) for a, n in items]
            comments = {_part(a, n): _alias_comment(ctx, a) for a, n in items}
            added += newline + indent + format_from(module, parts, indent, newline, comments, noqa)
        end = _line_end(ctx, stmt.end_lineno)
        edits.append(_edit(ctx, end, end, added))
    return edits


def _statement_noqa(ctx: FileContext, stmt: ast.stmt) -> tuple[str | None, str | None]:
    """A `# noqa` comment at the end of the statement's first line and of its last line:
    it was meant for every name imported, so each new statement carries it too."""

    def noqa_on(row: int, after: int) -> str | None:
        match = _COMMENT.search(ctx.lines.line(row), after)
        return match.group().rstrip() if match and _NOQA.match(match.group()) else None

    first = noqa_on(stmt.lineno, ctx.lines.char_col(stmt.lineno, stmt.col_offset))
    if stmt.end_lineno == stmt.lineno:
        return first, None
    return first, noqa_on(stmt.end_lineno, ctx.lines.char_col(stmt.end_lineno, stmt.end_col_offset))


def _alias_comment(ctx: FileContext, alias: ast.alias) -> str | None:
    """The comment after a name that has its line to itself (`    b,  # why`)."""
    if not _own_line(ctx, alias):
        return None
    tail = ctx.lines.line(alias.lineno)[ctx.lines.char_col(alias.lineno, alias.end_col_offset) :]
    match = _ALIAS_TAIL.match(tail)
    return match.group(1).rstrip() if match and match.group(1) else None


def _part(alias: ast.alias, name: str) -> str:
    local = alias.asname or alias.name
    return name if name == local else f"{name} as {local}"


def _removal_edits(ctx: FileContext, stmt: ast.ImportFrom, removed: set[int]) -> list[Edit] | None:
    aliases = stmt.names
    spans = [_span(ctx, a) for a in aliases]
    if all(_own_line(ctx, a) for a in aliases) and aliases[0].lineno != stmt.lineno:
        # One name per line in parentheses: drop whole lines, comments and all.
        out = []
        for a in aliases:
            if id(a) in removed:
                start = ctx.lines.offset(Position(a.lineno, 0))
                end = ctx.lines.offset(Position(a.lineno + 1, 0))
                out.append(_edit(ctx, start, end, ""))
        return out
    out, i = [], 0
    while i < len(aliases):
        if id(aliases[i]) not in removed:
            i += 1
            continue
        j = i
        while j < len(aliases) and id(aliases[j]) in removed:
            j += 1
        if j < len(aliases):  # a kept name follows: delete "a, b, " up to it
            out.append(_edit(ctx, spans[i][0], spans[j][0], ""))
        elif i > 0:  # the run ends the list: delete ", a, b" after the last kept name
            out.append(_edit(ctx, spans[i - 1][1], spans[j - 1][1], ""))
        else:
            return None
        i = j
    return out


def _own_line(ctx: FileContext, alias: ast.alias) -> bool:
    if alias.lineno != alias.end_lineno:
        return False
    line = ctx.lines.line(alias.lineno)
    start = ctx.lines.char_col(alias.lineno, alias.col_offset)
    end = ctx.lines.char_col(alias.lineno, alias.end_col_offset)
    return not line[:start].strip() and bool(_ALIAS_TAIL.match(line[end:]))


# -- adding `import <module>` once per file -------------------------------------------------
def ensure_import(ctx: FileContext, module: str) -> Edit | None:
    """An insertion of `import <module>` after the file's leading imports, unless present."""
    for node in _module_level(ctx.tree.body):
        if isinstance(node, ast.Import):
            for a in node.names:
                if a.asname is None and (a.name == module or a.name.startswith(module + ".")):
                    return None
    last = None
    newline = line_ending(ctx.text)
    body = ctx.tree.body
    start = 1 if body and _is_docstring(body[0]) else 0
    for stmt in body[start:]:
        if not _only_imports(stmt):
            break
        last = stmt
    if last is None:
        if len(body) <= start:
            end = len(ctx.text)
            ended = not ctx.text or ctx.text.endswith(("\n", "\r"))
            return _edit(ctx, end, end, ("" if ended else newline) + f"import {module}{newline}")
        first, _ = _span(ctx, body[start])
        return _edit(ctx, first, first, f"import {module}{newline}")
    end = _line_end(ctx, last.end_lineno)
    return _edit(ctx, end, end, f"{newline}import {module}")


def _module_level(stmts: list[ast.stmt]) -> Iterable[ast.stmt]:
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, (ast.If, *_TRY)):
            for block in (
                stmt.body,
                stmt.orelse,
                getattr(stmt, "finalbody", []),
                *[h.body for h in getattr(stmt, "handlers", [])],
            ):
                yield from _module_level(block)


def _only_imports(stmt: ast.stmt) -> bool:
    if isinstance(stmt, (ast.Import, ast.ImportFrom)):
        return True
    if isinstance(stmt, (ast.If, *_TRY)):
        inner = list(_module_level([stmt]))[1:]
        return bool(inner) and all(isinstance(s, (ast.Import, ast.ImportFrom, ast.Pass, ast.Assign)) for s in inner)
    return False


def _is_docstring(stmt: ast.stmt) -> bool:
    return isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Constant) and isinstance(stmt.value.value, str)
