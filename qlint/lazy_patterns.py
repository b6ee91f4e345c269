"""Regular expressions compiled when first used, not when their module is imported.

Compiling a pattern runs `re`'s parser and compiler in Python (50-300 thousand instructions
each), and Python does not keep compiled patterns between processes: a module-level
`re.compile` is paid by every `qlint check FILE` that imports the module, whether or not the
check reaches the code that matches. `lazy(pattern, flags)` stands in for `re.compile(pattern,
flags)` where a one-file check seldom reaches the match: its first use compiles it and keeps
the compiled pattern's methods on the instance, so later calls find them as plain attributes.
"""

from __future__ import annotations

import re
from typing import Any

_METHODS = ("match", "search", "fullmatch", "finditer", "findall", "sub", "subn", "split")


class LazyPattern:
    def __init__(self, pattern: str | bytes, flags: int = 0):
        self._source = (pattern, flags)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__"):
            raise AttributeError(name)
        compiled = re.compile(*self._source)
        for method in _METHODS:
            setattr(self, method, getattr(compiled, method))
        return getattr(compiled, name)


def lazy(pattern: str | bytes, flags: int = 0) -> Any:
    """`re.compile(pattern, flags)`, compiled at its first use (typed as a pattern for callers)."""
    return LazyPattern(pattern, flags)
