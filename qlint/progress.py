"""Progress on stderr for long runs on a terminal: files done / total, the repository at work.

Drawn with `tqdm` (the optional `progress` extra): a maintained, dependency-free bar that
sizes itself to the terminal, rate-limits redraws and clears itself; it imports in about
25 ms, against ~100 ms for `rich.progress` (and rich would be a heavier install in every
pre-commit environment). It is imported only when a bar will be drawn: stderr and
stdout are terminals, `CI` is not set, `--quiet` is not given, and the run is long enough to matter.
A pre-commit call over a few files never pays for the import. Without tqdm installed, no
bar is drawn and nothing else changes.
"""

from __future__ import annotations

import os
import sys
from typing import Any

# Runs below this many files finish before a bar would be worth reading.
MIN_FILES = 200


def wanted(quiet: bool, stream: Any = None, output: Any = None) -> bool:
    """Only for a person watching: the bar's stream (stderr) and the report's (stdout) both
    on a terminal. `qlint check | less` or `> report.txt` gets no bar in the pager or log."""
    stream = stream if stream is not None else sys.stderr
    output = output if output is not None else sys.stdout
    if quiet or os.environ.get("CI", "").lower() in ("1", "true", "yes"):
        return False
    try:
        return bool(stream.isatty()) and bool(output.isatty())
    except (AttributeError, ValueError):
        return False


class Progress:
    """`start(total)` per repository, `advance(n)` per file; a no-op unless enabled."""

    def __init__(self, enabled: bool, stream: Any = None, min_files: int = MIN_FILES):
        self.enabled = enabled
        self.stream = stream if stream is not None else sys.stderr
        self.min_files = min_files
        self.label = ""
        self._bar = None

    def repository(self, name: str) -> None:
        self.label = name

    def start(self, total: int) -> None:
        self._close_bar()
        if not self.enabled or total < self.min_files:
            return
        try:
            from tqdm import tqdm
        except ImportError:  # the `progress` extra is not installed
            self.enabled = False
            return
        self._bar = tqdm(total=total, desc=self.label or "qlint", unit="file", file=self.stream, leave=False)

    def advance(self, n: int = 1) -> None:
        if self._bar is not None and n:
            self._bar.update(n)

    def close(self) -> None:
        self._close_bar()

    def _close_bar(self) -> None:
        if self._bar is not None:
            self._bar.close()
            self._bar = None
