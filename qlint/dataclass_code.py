"""The methods `@dataclass` writes for qlint's classes, compiled once, not at every start.

`dataclasses` writes a class's `__init__`, `__repr__`, `__eq__`, `__hash__` (and, frozen,
`__setattr__`/`__delattr__`) as source text and compiles each when the class is created,
in every process: 0.5 to 1 ms a class on a 2-core machine, two thirds of it in `compile`.
`qlint check FILE` creates some 85 classes, a fifth of the command's time, and a warm
whole-tree run 24. Here the code objects are kept beside qlint's bytecode, in
`__pycache__`, keyed by the exact text `dataclasses` wrote and by the interpreter, and a
later start executes them as Python executes a module's `.pyc`: `exec` of the cached code
object is `exec` of the text it was compiled from (compiled as `exec` compiles a string
there, with no `__future__` flags), so the classes are the same.

Only classes of qlint's own modules go through the cache (a plugin's or a user's never
do); the file is trusted as the `.pyc` files beside it are. Nothing is written when the
interpreter is told not to write bytecode or the package directory is read-only; a file
that does not load is ignored and replaced.
"""

from __future__ import annotations

import builtins
import contextlib
import dataclasses
import marshal
import os
import sys

_FILE = f"dataclass-code.{sys.implementation.cache_tag}.marshal"
# What the code objects depend on besides their text: marshal's format and the bytecode
# belong to the exact interpreter build; the optimisation level changes compiled code.
_STAMP = f"{sys.version}|{sys.flags.optimize}|{marshal.version}"
_MAX_ENTRIES = 2_000  # stale texts accumulate while qlint's classes are edited: start over

_codes: dict[str, object] = {}
_added = False
_directory: str | None = None


def install(directory: str | None = None) -> None:
    """Route qlint's dataclass method texts through the cache kept in `directory` (by
    default the package's `__pycache__`). Idempotent."""
    global _directory
    if dataclasses.__dict__.get("exec") is _exec:
        return
    _directory = directory or os.path.join(os.path.dirname(os.path.abspath(__file__)), "__pycache__")
    _codes.update(_load(os.path.join(_directory, _FILE)))
    # `dataclasses` calls `exec` by its global name: a module global of that name shadows
    # the builtin for it alone.
    dataclasses.exec = _exec  # type: ignore[attr-defined]


def uninstall() -> None:
    """Back to the builtin `exec` (tests); what was compiled is not written."""
    global _added
    dataclasses.__dict__.pop("exec", None)
    _codes.clear()
    _added = False


def _exec(source, globals=None, locals=None, /):  # the signature of `exec`
    if type(source) is str and type(globals) is dict and _ours(globals.get("__name__")):
        code = _codes.get(source)
        if code is None:
            code = _codes[source] = compile(source, "<string>", "exec", dont_inherit=True)
            _note_added()
        source = code
    return builtins.exec(source, globals, locals)


def _ours(module: object) -> bool:
    return type(module) is str and (module == "qlint" or module.startswith("qlint."))


def _note_added() -> None:
    global _added
    if not _added:
        _added = True
        import atexit

        atexit.register(save)


def save() -> None:
    """Write the cache if this process compiled something new (best effort, atomic)."""
    global _added
    if not _added or _directory is None or sys.dont_write_bytecode:
        return
    _added = False
    import tempfile  # only when something new was compiled: it costs a few ms to import

    codes = _codes if len(_codes) <= _MAX_ENTRIES else {}
    with contextlib.suppress(OSError, ValueError):
        data = marshal.dumps((_STAMP, codes))
        os.makedirs(_directory, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=_directory, prefix=".tmp-", suffix=".marshal")
        try:
            with os.fdopen(fd, "wb") as fh:
                fh.write(data)
            os.replace(tmp, os.path.join(_directory, _FILE))
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(tmp)
            raise


def _load(path: str) -> dict[str, object]:
    try:
        with open(path, "rb") as fh:
            stamp, codes = marshal.loads(fh.read())
    except (OSError, EOFError, ValueError, TypeError):
        return {}
    if stamp != _STAMP or type(codes) is not dict:
        return {}
    code_type = type(_load.__code__)
    return {k: v for k, v in codes.items() if type(k) is str and type(v) is code_type}
