"""qlint's own rules: one module per rule, registered in `builtin.py` in code order, one line each.

Nothing else imports the rule modules: settings, config, the CLI, the reporters, the
language server and the runtime client ask `qlint.registry`, which loads these and the
rules of installed plugins (the `qlint.rules` entry-point group) once.
"""

from __future__ import annotations

from typing import Any

from qlint.rules.base import Rule
from qlint.rules.builtin import BUILTIN


def __getattr__(name: str) -> Any:
    # `qlint.rules.RULES`: the registry's code -> class table (plugins included), for callers
    # written before the registry existed.
    if name == "RULES":
        from qlint.registry import rules

        return rules()
    if name == "FileContext":  # on first use: a run the cache answers needs no analysis
        from qlint.analysis.context import FileContext

        return FileContext
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = ["BUILTIN", "FileContext", "Rule"]
