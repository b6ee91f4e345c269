"""Where a path leads now: its real path and what kind of thing is there.

A walk that follows symbolic links depends on more than the stats of the directories it
listed: a link's target can change while the directory holding the link keeps its stat (a
missing target created, a directory on the way to it renamed and another put in its place),
and which of two paths to one directory the walk enters first depends on their real paths.
What the walk saw of each link, and of each directory it started from, is this pair; a
record of the walk holds while every pair is the same again (`qlint.run_record`).
"""

from __future__ import annotations

import os
import stat

Resolution = tuple[str, str]  # (real path, kind)


def kind(path: str) -> str:
    """What is at `path`, links followed: "d" a directory, "f" a regular file, "?" another
    kind, "" nothing."""
    try:
        mode = os.stat(path).st_mode
    except OSError:
        return ""
    return "d" if stat.S_ISDIR(mode) else "f" if stat.S_ISREG(mode) else "?"


def resolution(path: str) -> Resolution:
    return (os.path.realpath(path), kind(path))
