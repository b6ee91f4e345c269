"""`@FILE` path arguments: a file that lists paths, one per line.

lintrunner calls a linter with `@{{PATHSFILE}}` (a temporary file of absolute paths),
as do other drivers that work around command-line length limits. Only positional paths
are expanded, never flags, so a listed path that starts with `-` stays a path. A real
path whose name starts with `@` is taken as itself.
"""

from __future__ import annotations

import os
from collections.abc import Sequence


class ArgfileError(ValueError):
    """An `@FILE` that cannot be read (exit code 2)."""


def expand(paths: Sequence[str]) -> list[str]:
    out: list[str] = []
    for arg in paths:
        if not arg.startswith("@") or len(arg) == 1 or os.path.exists(arg):
            out.append(arg)
            continue
        listing = arg[1:]
        try:
            with open(listing, encoding="utf-8") as fh:
                lines = fh.read().splitlines()
        except OSError as exc:
            raise ArgfileError(f"{listing}: cannot read the path list: {exc.strerror or exc}") from None
        except UnicodeDecodeError as exc:
            raise ArgfileError(f"{listing}: path list is not UTF-8: {exc.reason}") from None
        out.extend(line for line in lines if line.strip())
    return out


def expanded_to_nothing(given: Sequence[str], expanded: Sequence[str]) -> bool:
    """An empty path list must check nothing, not fall back to `.` (the whole tree)."""
    return bool(given) and not expanded
