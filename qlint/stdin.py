"""`qlint check -` and `qlint fix -`: one buffer from standard input, as editors and
formatters pipe it (ruff's convention).

`--stdin-filename PATH` names the buffer: that path decides the configuration, the
per-file-ignores, module resolution (the buffer stands in for the file on disk) and what the
output shows; it is never read or written. `qlint fix -` writes the fixed text to standard
output and the report to standard error, so `qlint fix - < a.py > b.py` is a filter.
"""

from __future__ import annotations

import io
import os
import sys
from collections.abc import Sequence

from qlint.diagnostic import Diagnostic
from qlint.settings import Settings
from qlint.source import DecodeError, decode_source
from qlint.value_classes import field, value_class

STDIN = "-"


class StdinUsageError(ValueError):
    """`-` mixed with other paths, and the like."""


def requested(paths: Sequence[str], stdin_filename: str | None) -> bool:
    """`-` alone, or no path but a `--stdin-filename` (as ruff): read standard input."""
    if STDIN in paths:
        if len(paths) > 1:
            raise StdinUsageError("`-` (standard input) cannot be combined with other paths")
        return True
    return not paths and stdin_filename is not None


def config_paths(stdin_filename: str | None) -> list[str]:
    """Where to look for the configuration: next to the file the buffer stands for."""
    return [stdin_filename] if stdin_filename else []


def buffer_path(stdin_filename: str | None) -> str:
    return os.path.abspath(stdin_filename) if stdin_filename else os.path.abspath(STDIN)


@value_class
class StdinOutcome:
    diagnostics: list[Diagnostic] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    output: bytes | None = None  # `fix -`: what goes to standard output
    diff: str | None = None
    applied: int = 0
    sources: dict[str, str] = field(default_factory=dict)  # the buffer's text, for source lines


def excluded(settings: Settings, path: str) -> bool:
    """With `--force-exclude`, a buffer named like an excluded file is passed through."""
    if not settings.force_exclude:
        return False
    from qlint.discovery import ExcludeMatcher

    matcher = ExcludeMatcher((*settings.exclude, *settings.extend_exclude), str(settings.root))
    return matcher.excluded_or_below_excluded(path)


def check(data: bytes, stdin_filename: str | None, settings: Settings) -> StdinOutcome:
    # Imported here: the CLI imports this module for `requested` on every run.
    from qlint.analysis.names.project import ProjectIndex
    from qlint.engine import check_source

    path = buffer_path(stdin_filename)
    if excluded(settings, path):
        return StdinOutcome()
    if _notebook(path):
        from qlint.notebook import check_notebook

        result = check_notebook(data, path, settings)
        text = data.decode("utf-8", "replace")
        return StdinOutcome(sorted(result.diagnostics, key=Diagnostic.sort_key), result.errors, sources={path: text})
    try:
        text = decode_source(data)
    except DecodeError:
        text, project = None, None
    else:
        project = ProjectIndex({path: text})
    # What a buffer's check read is recorded nowhere (its result is never cached): the scans
    # of the whole project need not hash its modules for it (torch's observer.py: 2,284 digests
    # looked up, a fifth of the instructions of its packet-consumer scan). No file changes while
    # the one check runs, as in a run over a tree: each module's content key is taken once.
    with ProjectIndex.dependencies_unwanted(), ProjectIndex.contents_fixed():
        result = check_source(data, path, settings, project)
    sources = {path: text} if text is not None else {}
    return StdinOutcome(sorted(result.diagnostics, key=Diagnostic.sort_key), list(result.errors), sources=sources)


def _notebook(path: str) -> bool:
    """`qlint.notebook.is_notebook`, without importing the notebook support for a module."""
    if not path.endswith(".ipynb"):
        return False
    from qlint.notebook import is_notebook

    return is_notebook(path)


def fix(data: bytes, stdin_filename: str | None, settings: Settings, unsafe: bool, diff_only: bool) -> StdinOutcome:
    from qlint.analysis.names.project import ProjectIndex
    from qlint.notebook import is_notebook

    """The fixed buffer (or, on any problem, the buffer unchanged: a filter never loses text)."""
    from qlint.fixes import fix_text, unified_diff

    path = buffer_path(stdin_filename)
    if excluded(settings, path):
        return StdinOutcome(output=b"" if diff_only else data)
    if is_notebook(path):
        return _fix_notebook(data, path, stdin_filename, settings, unsafe, diff_only)
    try:
        text = decode_source(data)
    except DecodeError:
        outcome = check(data, stdin_filename, settings)
        outcome.output = b"" if diff_only else data
        return outcome
    fixed = fix_text(text, path, settings, unsafe, ProjectIndex({path: text}))
    errors = list(fixed.remaining.errors)
    if fixed.error is not None:
        errors.append(f"{stdin_filename or STDIN}: {fixed.error}")
    changed = fixed.changed and fixed.error is None
    out = StdinOutcome(
        diagnostics=sorted(fixed.remaining.diagnostics, key=Diagnostic.sort_key),
        errors=errors,
        applied=fixed.applied if changed else 0,
        sources={path: fixed.fixed},
    )
    if diff_only:
        out.output = b""
        if changed:
            shown = os.path.relpath(path) if stdin_filename else STDIN
            out.diff = unified_diff(_renamed(fixed, shown))
    else:
        out.output = encode_like(fixed.fixed, data) if changed else data
    return out


def _fix_notebook(
    data: bytes, path: str, stdin_filename: str | None, settings: Settings, unsafe: bool, diff_only: bool
) -> StdinOutcome:
    from qlint.notebook import fix_notebook

    nb = fix_notebook(data, path, settings, unsafe)
    changed = nb.changed and nb.error is None
    errors = list(nb.remaining.errors) + ([f"{stdin_filename}: {nb.error}"] if nb.error else [])
    out = StdinOutcome(
        diagnostics=sorted(nb.remaining.diagnostics, key=Diagnostic.sort_key),
        errors=errors,
        applied=nb.applied if changed else 0,
        sources={path: nb.fixed if changed else nb.original},
    )
    if diff_only:
        out.output, out.diff = b"", nb.diff(os.path.relpath(path)) if changed else None
    else:
        out.output = nb.fixed.encode("utf-8") if changed else data
    return out


def _renamed(outcome, shown: str):
    from dataclasses import replace

    return replace(outcome, path=shown)


def encode_like(text: str, original: bytes) -> bytes:
    """`text` in the encoding (and BOM) the original bytes had, as the fixer writes files."""
    import tokenize  # here: only a fix writes the buffer back; every `qlint check -` imported it

    encoding, _ = tokenize.detect_encoding(io.BytesIO(original).readline)
    data = text.encode("utf-8" if encoding == "utf-8-sig" else encoding)
    return b"\xef\xbb\xbf" + data if original.startswith(b"\xef\xbb\xbf") else data


def read() -> bytes:
    return sys.stdin.buffer.read()
