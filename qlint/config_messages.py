"""The messages of a config problem: `ConfigError`, the file and table a message names
(`Where`: `pyproject.toml: [tool.qlint] unknown key "selekt"`), values quoted as TOML writes
them, and a suggestion for a misspelt key or code.

Apart from `config` because the validation of rule options (`rule_option_values`) words its
errors the same way.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any


class ConfigError(ValueError):
    """A config file or command-line selection that qlint refuses to guess about."""


class Where:
    """Builds messages like `pyproject.toml: [tool.qlint] unknown key "selekt"`."""

    def __init__(self, shown: str, table: str):
        self.shown, self.table = shown, table

    def __call__(self, detail: str) -> str:
        header = f"[{self.table}] " if self.table else ""
        return f"{self.shown}: {header}{detail}"

    def key(self, key: str, detail: str = "") -> str:
        return self(f"{quoted(key)}: {detail}" if detail else quoted(key))

    def sub(self, name: str) -> Where:
        return Where(self.shown, f"{self.table}.{name}" if self.table else name)


def suggestion(word: str, known) -> str:
    import difflib  # only for a misspelt key: its import is most of a millisecond

    close = difflib.get_close_matches(word, list(known), n=1)
    return f" (did you mean {quoted(close[0])}?)" if close else ""


def quoted(value: Any) -> str:
    """TOML-ish quoting for messages: `"selekt"`, `true`, `3`, `["a"]`."""
    import json  # only for a message: a run's start-up never needs it (`plain_json`)

    return json.dumps(value, default=str)


def shown(path: Path) -> str:
    """The config's path as the user would type it: relative below the cwd, else absolute."""
    try:
        rel = os.path.relpath(path)
    except ValueError:
        return str(path)
    return str(path) if rel.startswith("..") else rel
