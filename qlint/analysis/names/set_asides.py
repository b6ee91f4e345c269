"""A command-line index's bookkeeping of the module entries it sets aside: an entry no check
used for a while is dropped, its summary kept to rebuild it from if a check asks again.

A worker checks neighbouring files (`check_chunks.chunk_parts`): the modules they import are
used by a run of checks, then seldom again. Kept for the whole run, every module's text, the
statements parsed from it and the flows analysed on its scope made most of what a worker holds
(ExecuTorch: ~30 of 52 MiB traced at the end of each worker), and its heap does not shrink
back. A module used again is rebuilt from its summary, which is all that was computed from its
whole tree; its statements are parsed again as they are asked for. An editor's index keeps
its entries (it has none of this).
"""

from __future__ import annotations

from qlint.analysis.names.module_entries import drop_entry
from qlint.analysis.names.summary import ModuleSummary

__all__ = ["EVERY", "UNUSED_CHECKS", "SetAsides"]

# Entries no check used for this many checks are set aside, looked for every `EVERY` checks.
UNUSED_CHECKS = 64
EVERY = 16


class SetAsides:
    def __init__(self, entries: dict[str, tuple]):
        self._entries = entries  # the index's own table of module entries, by path
        # path -> the check that last used its entry (`module_entries.module_entry` notes it).
        self.last_use: dict[str, int] = {}
        self.summaries: dict[str, ModuleSummary] = {}  # of the entries set aside, by path
        self.count = 0  # how many times entries were set aside: what was kept of them may go

    def after(self, checks: int) -> None:
        """`checks` checks began: every `EVERY`, the entries unused for `UNUSED_CHECKS` go."""
        if checks % EVERY:
            return
        last_use, oldest = self.last_use, checks - UNUSED_CHECKS
        unused = [p for p, used in last_use.items() if used < oldest]
        for path in unused:
            del last_use[path]
            entry = drop_entry(self._entries, path)
            if entry is not None:
                self.summaries[path] = entry[2].summary
        if unused:
            self.count += 1
