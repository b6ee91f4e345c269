"""ruff-style text: `path:row:col: CODE [*] message`, a runtime line, a summary; in the
`full` format (the default) each finding also shows its source line with a caret and its help.

The summary tells people what `qlint fix` would do and, like ruff, how many fixes stay
hidden until `--unsafe-fixes`, so nobody has to guess why a `[*]` is missing.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Sequence

from qlint.diagnostic import Diagnostic
from qlint.reporters import ReportOptions
from qlint.reporters.snippet import Paint, Sources, snippet, use_color
from qlint.results import display_path


def render(diagnostics: list[Diagnostic], options: ReportOptions) -> str:
    lines = statistics(diagnostics, options) if options.statistics else _lines(diagnostics, options)
    if not options.quiet:
        lines += summary(diagnostics, options)
    return "".join(line + "\n" for line in lines)


def _lines(diagnostics: Sequence[Diagnostic], options: ReportOptions) -> list[str]:
    paint = Paint(use_color(sys.stdout) if options.color is None else options.color)
    sources = Sources(options.sources) if options.full else None
    out = []
    for d in diagnostics:
        fixable = d.fix is not None and d.fix.applies(options.unsafe_fixes)
        marker = " " + paint.fixable("[*]") if fixable else ""
        start = d.range.start
        cell = f"cell {d.cell}:" if d.cell is not None else ""
        where = paint.bold(f"{display_path(d.path)}:{cell}{start.row}:{start.col + 1}:")
        out.append(f"{where} {paint.code(d.code)}{marker} {d.message}")
        if d.runtime is not None:
            out.append("  " + runtime_line(d))
        if sources is not None:
            out += snippet(d, sources.line(d.path, start.row, d.cell), paint)
            out.append("")
    return out


def runtime_line(d: Diagnostic) -> str:
    rt = d.runtime
    assert rt is not None
    text = f"runtime: {rt.verdict}"
    if rt.evidence:
        text += f" — {rt.evidence}"
    if rt.fix_verified is not None:
        text += "; fix verified" if rt.fix_verified else "; fix NOT verified"
    return text + f" ({rt.seconds:.1f}s)"


def statistics(diagnostics: Sequence[Diagnostic], options: ReportOptions) -> list[str]:
    """One row per code, most frequent first: count, code, fixability, name (like ruff)."""
    counts = Counter(d.code for d in diagnostics)
    fixable = Counter(d.code for d in diagnostics if d.fix is not None and d.fix.applies(options.unsafe_fixes))
    names = {d.code: d.name for d in diagnostics}
    rows = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    if not rows:
        return []
    count_w = max(len(str(n)) for _, n in rows)
    code_w = max(len(code) for code, _ in rows)
    out = []
    for code, n in rows:
        mark = "[*]" if fixable[code] == n else "[-]" if fixable[code] else "[ ]"
        out.append(f"{n:>{count_w}}\t{code:<{code_w}}\t{mark} {names[code]}")
    return out


def summary(diagnostics: Sequence[Diagnostic], options: ReportOptions) -> list[str]:
    remaining = len(diagnostics)
    fixable = sum(1 for d in diagnostics if d.fix is not None and d.fix.applies(options.unsafe_fixes))
    hidden = sum(
        1 for d in diagnostics if d.fix is not None and d.fix.applies(True) and not d.fix.applies(options.unsafe_fixes)
    )
    out = []
    if options.mode == "fix":
        total = remaining + options.fixed
        if total == 0:
            return [_clean(options)]
        out.append(f"Found {_errors(total)} ({options.fixed} fixed, {remaining} remaining).")
    else:
        if remaining == 0:
            return [_clean(options)]
        out.append(f"Found {_errors(remaining)}.")
    hint = hidden_hint(hidden)
    if fixable and options.mode != "fix":
        command = "qlint fix --unsafe-fixes" if options.unsafe_fixes and _needs_unsafe(diagnostics) else "qlint fix"
        out.append(f"[*] {fixable} fixable with `{command}`" + (f" ({hint})." if hint else "."))
    elif hint:
        out.append(f"No fixes available ({hint}).")
    return out


def _clean(options: ReportOptions) -> str:
    """No findings: a pass only when everything asked for was checked."""
    if not options.errors:
        return "All checks passed!"
    problems = "1 problem" if options.errors == 1 else f"{options.errors} problems"
    return f"No findings in the files that could be checked, but not everything was checked ({problems}, see below)."


def hidden_hint(hidden: int) -> str:
    if not hidden:
        return ""
    noun = "fix" if hidden == 1 else "fixes"
    return f"{hidden} hidden {noun} can be enabled with the `--unsafe-fixes` option"


def diff_summary(would_fix: int, hidden: int) -> str:
    """`qlint fix --diff`'s last line, printed to stderr so stdout stays a clean patch."""
    if would_fix == 0 and not hidden:
        return "No errors would be fixed."
    text = f"Would fix {_errors(would_fix)}"
    if hidden:
        text += f" ({hidden} additional {'fix' if hidden == 1 else 'fixes'} available with `--unsafe-fixes`)"
    return text + "."


def _needs_unsafe(diagnostics: Sequence[Diagnostic]) -> bool:
    return any(d.fix is not None and d.fix.applies(True) and not d.fix.applies(False) for d in diagnostics)


def _errors(n: int) -> str:
    return f"{n} error" if n == 1 else f"{n} errors"
