"""The caller searches of a cold run, by the helper asked about (`cold_split.py --caller-searches`).

A search for a helper's callers in the other modules (`project_callers.each_project_call`:
QL201's and QL202's verdicts on a helper's callers, the call paths of QL201's branch verdicts;
`used_elsewhere`: whether another module uses a function at all) does three things, charged
apart here: finding the callers (the candidate modules' words, references and the parses
behind them), analysing the bodies holding the calls (`_calls_in`: the caller module's parse
and model flow), and the asking rule's judging of each call found, between two of them.
"""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable
from typing import Any

_clock = time.process_time

_FINDING, _BODIES, _JUDGING = 0, 1, 2


class Searches:
    """Caller searches by the helper asked about: for each, [finding, callers' bodies, judging]
    CPU seconds, the caller modules whose calls were read and the calls handed to the asking rule.
    Each stretch is charged its own time: a stretch opened inside another (the bodies inside the
    finding, a search started while another's calls are judged) is taken out of it."""

    def __init__(self) -> None:
        self.rows: dict[tuple[str, str, str], list] = {}  # (path, helper, rule) -> [f, b, j, modules, calls]
        self.rule = "?"  # the rule whose check is under way
        self._open: list[list] = []  # per open stretch: [row, slot, start, time of the stretches inside]

    def row(self, path: str, helper: str) -> list:
        return self.rows.setdefault((path, helper, self.rule), [0.0, 0.0, 0.0, 0, 0])

    def timed(self, row: list, slot: int, func: Callable[..., Any], *args, **kwargs) -> Any:
        stretch = self._opened(row, slot)
        try:
            return func(*args, **kwargs)
        finally:
            self._close(stretch)

    def _opened(self, row: list, slot: int) -> list:
        stretch = [row, slot, _clock(), 0.0]
        self._open.append(stretch)
        return stretch

    def _close(self, stretch: list) -> None:
        # The innermost one but for a generator dropped unfinished and freed later: taken out
        # wherever it is, its time charged to the one open above it.
        at = next(i for i in range(len(self._open) - 1, -1, -1) if self._open[i] is stretch)
        row, slot, start, inner = self._open.pop(at)
        elapsed = _clock() - start
        row[slot] += elapsed - inner
        if at > 0:
            self._open[at - 1][3] += elapsed

    def search(self, real, ctx, func, index, *args, **kwargs):
        """`project_callers.each_project_call`, its work charged to the helper's row: each step
        of the generator to finding (and the bodies `_calls_in` analyses inside it to those), the
        asking rule's work between two steps to judging."""
        row = self.row(str(getattr(ctx, "path", "?")), f"{getattr(func, 'name', '?')}#{index}")
        found = real(ctx, func, index, *args, **kwargs)
        try:
            while True:
                try:
                    item = self.timed(row, _FINDING, next, found)
                except StopIteration:
                    return
                row[4] += 1
                judging = self._opened(row, _JUDGING)
                try:
                    yield item
                finally:  # also when the rule stops at a caller that decides its verdict
                    self._close(judging)
        finally:
            close = getattr(found, "close", None)  # what the search lets go of, as it would unwrapped
            if close is not None:
                self.timed(row, _FINDING, close)

    def calls_in(self, real, ctx, path, *args, **kwargs):
        """`project_callers._calls_in`: charged to the search whose step asked for it."""
        row = self._open[-1][0] if self._open else self.row(str(getattr(ctx, "path", "?")), "?")
        row[3] += 1
        return self.timed(row, _BODIES, real, ctx, path, *args, **kwargs)

    def used(self, real, ctx, func):
        """`project_callers.used_elsewhere`: a search that asks only whether any module uses it."""
        row = self.row(str(getattr(ctx, "path", "?")), f"{getattr(func, 'name', '?')} used elsewhere?")
        return self.timed(row, _FINDING, real, ctx, func)

    def lines(self, top: int, total: float, relative: Callable[[str], str]) -> list[str]:
        out = []
        ranked = sorted(self.rows.items(), key=lambda kv: -sum(kv[1][:3]))[:top]
        for (path, helper, rule), (finding, bodies, judging, modules, calls) in ranked:
            text = f"{relative(path)}  {helper} ({rule}): {modules} modules, {calls} calls; finding {finding:.2f} s,"
            text += f" callers' bodies {bodies:.2f} s, judging {judging:.2f} s"
            seconds = finding + bodies + judging
            out.append(f"{seconds:8.2f} s {100 * seconds / total:5.1f}%  {text}")
        return out


# The modules that call `each_project_call` by the name they imported it under.
_SEARCHERS = (
    "qlint.analysis.flow.project_callers",
    "qlint.analysis.flow.call_sites",
    "qlint.rules.caller_verdicts",
    "qlint.rules.returned_qat_graphs",
)


@contextlib.contextmanager
def searched(searches: Searches | None):
    """The caller searches timed into `searches` (nothing patched without one); put back on leaving.
    The rule modules calling a search are imported first (a run imports them when a finding
    needs them): their import is then charged outside the checks."""
    if searches is None:
        yield
        return
    import importlib

    from qlint.analysis.flow import call_sites, project_callers

    real_each, real_in, real_used = (
        project_callers.each_project_call,
        project_callers._calls_in,
        project_callers.used_elsewhere,
    )
    modules = [importlib.import_module(name) for name in _SEARCHERS]
    each = lambda ctx, func, index, *a, **k: searches.search(real_each, ctx, func, index, *a, **k)  # noqa: E731
    for module in modules:
        module.each_project_call = each
    project_callers._calls_in = lambda ctx, path, *a, **k: searches.calls_in(real_in, ctx, path, *a, **k)
    project_callers.used_elsewhere = call_sites.used_elsewhere = lambda ctx, func: searches.used(real_used, ctx, func)
    try:
        yield
    finally:
        for module in modules:
            module.each_project_call = real_each
        project_callers._calls_in = real_in
        project_callers.used_elsewhere = call_sites.used_elsewhere = real_used


__all__ = ["Searches", "searched"]
