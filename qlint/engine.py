"""The per-file pipeline every face shares: decode → trigger prefilter → parse → rules → noqa.

`check_source` is the one in-memory entry point: the CLI feeds it file bytes, the language
server feeds it unsaved buffers under their real path, the fixer feeds it its own output.
"""

from __future__ import annotations

import ast
import hashlib
import os
import re
import sys
import traceback
from dataclasses import dataclass, field

from qlint.analysis.names.project import ProjectIndex, module_name_for
from qlint.diagnostic import Diagnostic, Range
from qlint.optable import OpTable, load_op_table
from qlint.rules import RULES, FileContext
from qlint.settings import Settings
from qlint.source import DecodeError, LineIndex, decode_source
from qlint.suppressions import Suppressions, parse_suppressions, unused_noqa

# ast.parse recurses per nesting level; a generated file with thousands of nested
# brackets must become a QL001, not a crash of the whole run.
_PARSE_RECURSION_LIMIT = 20_000
_QL_NOQA = re.compile(r"noqa\s*:[^\n]*\bQL\d", re.IGNORECASE)


@dataclass
class FileResult:
    path: str
    diagnostics: list[Diagnostic] = field(default_factory=list)
    text: str | None = None
    # Other project files whose content this result depends on (path -> sha256), for the cache.
    dependencies: dict[str, str] = field(default_factory=dict)
    # Problems that are not findings: unreadable file, internal rule error. Exit code 2.
    errors: list[str] = field(default_factory=list)
    parsed: bool = False


def content_hash(data: bytes | str) -> str:
    if isinstance(data, str):
        data = data.encode("utf-8", "surrogatepass")
    return hashlib.sha256(data).hexdigest()


def syntax_error(path: str, message: str, row: int = 1, col: int = 0) -> Diagnostic:
    rule = RULES["QL001"]
    return Diagnostic(rule.code, rule.name, message, path, Range.of(row, col, row, col), noqa_row=row)


def parse_module(text: str, path: str) -> ast.Module:
    """`ast.parse` with a deeper recursion budget; raises SyntaxError/ValueError/RecursionError."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, _PARSE_RECURSION_LIMIT))
    try:
        return ast.parse(text, filename=path)
    finally:
        sys.setrecursionlimit(old)


def check_source(
    source: str | bytes,
    path: str,
    settings: Settings,
    project: ProjectIndex | None = None,
    optable: OpTable | None = None,
) -> FileResult:
    result = FileResult(path=path)
    if isinstance(source, bytes):
        try:
            text = decode_source(source)
        except DecodeError as exc:
            if "QL001" in settings.enabled_codes:
                result.diagnostics.append(syntax_error(path, f"SyntaxError: {exc}", exc.row, exc.col))
            return result
    else:
        text = source
    result.text = text

    rules = settings.rules_for(path)
    module = module_name_for(path)
    codes = frozenset(r.code for r in rules)
    active = [r for r in rules if r.triggered_by(text) and not r.skips_module(module)]
    if not active and codes == {"QL001"}:
        # `--select QL001` alone asks for every file to be parsed, trigger or not.
        active = rules
    wants_noqa_check = "QL002" in codes and _QL_NOQA.search(text) is not None
    if not active and not wants_noqa_check:
        return result

    lines = LineIndex(text)
    diagnostics: list[Diagnostic] = []
    failed: set[str] = set()  # rules that crashed: their noqa comments cannot be judged
    if active:
        try:
            tree = parse_module(text, path)
        except SyntaxError as exc:
            if "QL001" in settings.enabled_codes:
                row = exc.lineno or 1
                col = max((exc.offset or 1) - 1, 0)
                col = min(col, len(lines.line(row)))
                result.diagnostics.append(syntax_error(path, f"SyntaxError: {exc.msg}", row, col))
            return result
        except (ValueError, RecursionError, MemoryError) as exc:
            # ValueError: NUL bytes; RecursionError/MemoryError: absurdly deep nesting.
            if "QL001" in settings.enabled_codes:
                what = "source contains NUL bytes" if "null" in str(exc) else "too deeply nested to parse"
                result.diagnostics.append(syntax_error(path, f"SyntaxError: {what}"))
            return result
        result.parsed = True
        project = project or ProjectIndex.for_path(path)
        ctx = FileContext(
            path=path,
            text=text,
            tree=tree,
            lines=lines,
            optable=optable or load_op_table(),
            project=project,
            module=module,
        )
        for rule in active:
            try:
                diagnostics.extend(rule.check(ctx))
            except RecursionError:
                failed.add(rule.code)
                result.errors.append(f"{path}: {rule.code} gave up: expression too deeply nested")
            except Exception:  # a rule bug must not lose the other files' findings
                failed.add(rule.code)
                detail = traceback.format_exc(limit=-3)
                result.errors.append(f"{path}: internal error in {rule.code}:\n{detail}")
        result.dependencies = project.dependencies_of(path)

    # Tokenizing for comments is the slowest step on big files: only when it can matter.
    sup = (
        parse_suppressions(text, tree if result.parsed else None) if diagnostics or wants_noqa_check else Suppressions()
    )
    kept = sorted({d for d in diagnostics if not sup.suppresses(d)}, key=Diagnostic.sort_key)
    if wants_noqa_check:
        # Every enabled rule counts as judged: one whose triggers are absent has no findings.
        judged = codes - failed
        kept += unused_noqa(path, sup, judged, RULES["QL002"], lines)
    result.diagnostics.extend(kept)
    return result


def check_file(path: str, settings: Settings, project: ProjectIndex | None = None) -> FileResult:
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError as exc:
        result = FileResult(path=path)
        result.errors.append(f"{path}: cannot read: {exc.strerror or exc}")
        return result
    return check_source(data, path, settings, project)


def display_path(path: str) -> str:
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return path
    return path if rel.startswith("..") else rel
