"""`json.dumps` and `json.loads` for the plain values qlint spells its keys in, without the
`json` package unless a value is not plain.

The results cache names some dependencies by JSON text (the wrapper names' root, a listing's
root and needles) and reads them back on every warm run; the settings' fingerprint is the
digest of a JSON text. Importing `json` (its decoder, scanner and encoder) cost every warm
`qlint check` ~5 M instructions, as much as the rest of its cache lookup on ao, to read and
write strings such as `["/work/ao", true]`.

Plain: strings of printable ASCII without `"` or a backslash (which `json.dumps` writes
between quotes as they are), `true`, `false`, and lists (and dicts of plain keys, for
`dumps`) of those, in `json.dumps`'s default spelling (`, ` and `: ` between items). Both
functions give exactly what `json` gives: anything else (an escape, other spacing, a number,
`null`) goes to `json` itself, imported then. A process that imported `json` already (a
check: the analyses use it) goes to it directly, whose C encoder and scanner are faster.
"""

from __future__ import annotations

import sys
from typing import Any


class _NotPlain(Exception):
    pass


def _plain(text: str) -> bool:
    return text.isascii() and text.isprintable() and '"' not in text and "\\" not in text


def dumps(value: Any, sort_keys: bool = False) -> str:
    """`json.dumps(value, sort_keys=sort_keys)`, the same text."""
    json = sys.modules.get("json")
    if json is not None:
        return json.dumps(value, sort_keys=sort_keys)
    return _dumps(value, sort_keys)


def _dumps(value: Any, sort_keys: bool = False) -> str:
    """`dumps` without a look at what was imported (what it does in a run without `json`)."""
    parts: list[str] = []
    try:
        _dump(value, sort_keys, parts)
    except _NotPlain:
        import json

        return json.dumps(value, sort_keys=sort_keys)
    return "".join(parts)


def _dump(value: Any, sort_keys: bool, parts: list[str]) -> None:
    if type(value) is str:
        if not _plain(value):
            raise _NotPlain
        parts.append(f'"{value}"')
    elif value is True:
        parts.append("true")
    elif value is False:
        parts.append("false")
    elif type(value) is list or type(value) is tuple:
        parts.append("[")
        for i, item in enumerate(value):
            if i:
                parts.append(", ")
            _dump(item, sort_keys, parts)
        parts.append("]")
    elif type(value) is dict:
        if not all(type(key) is str for key in value):
            raise _NotPlain  # `json` turns other keys into strings (and may sort them otherwise)
        parts.append("{")
        for i, (key, item) in enumerate(sorted(value.items()) if sort_keys else value.items()):
            if i:
                parts.append(", ")
            _dump(key, sort_keys, parts)
            parts.append(": ")
            _dump(item, sort_keys, parts)
        parts.append("}")
    else:
        raise _NotPlain


def loads(text: str) -> Any:
    """`json.loads(text)`, the same value (and the same error for text that is no JSON)."""
    json = sys.modules.get("json")
    if json is not None:
        return json.loads(text)
    return _loads(text)


def _loads(text: str) -> Any:
    """`loads` without a look at what was imported (what it does in a run without `json`)."""
    try:
        value, end = _value(text, 0)
        if end != len(text):
            raise _NotPlain
    except _NotPlain:
        import json

        return json.loads(text)
    return value


def _value(text: str, i: int) -> tuple[Any, int]:
    """The plain value starting at `i` and where it ends; `_NotPlain` for anything else."""
    if text.startswith('"', i):
        end = text.find('"', i + 1)
        if end < 0:
            raise _NotPlain
        found = text[i + 1 : end]
        if "\\" in found or not (found.isascii() and found.isprintable()):
            raise _NotPlain
        return found, end + 1
    if text.startswith("true", i):
        return True, i + 4
    if text.startswith("false", i):
        return False, i + 5
    if text.startswith("[", i):
        items: list[Any] = []
        if text.startswith("]", i + 1):
            return items, i + 2
        while True:
            item, i = _value(text, i + 1)
            items.append(item)
            if text.startswith("]", i):
                return items, i + 1
            if not text.startswith(", ", i):
                raise _NotPlain
            i += 1  # the space: the next item starts after it
    raise _NotPlain


__all__ = ["dumps", "loads"]
