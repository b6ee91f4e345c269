"""Names a module takes from `from <module> import *` of another module of the project.

ExecuTorch's Qualcomm tests write `from executorch.backends.qualcomm.tests.models import *`
and then `SimpleModel()`; its example scripts import `build_executorch_binary` from
`examples/qualcomm/utils.py`, which star-imports it from `backends/qualcomm/export_utils.py`.
A name a module neither defines nor imports by name comes from its star imports: the last
one whose module exports it (its `__all__` when it has one, else its public names) binds it.

The star imports are read from the module's text (a star import is legal only at module
level, so every `from x import *` line is one), which works the same for the module being
checked and for another module known only by its summary.
"""

from __future__ import annotations

import ast
import os
import re

from qlint.analysis.names.content_keys import content_key
from qlint.analysis.names.modules import module_name_for, resolve_relative
from qlint.analysis.names.scope import ModuleScope
from qlint.lazy_patterns import lazy

_STAR = lazy(rb"^[ \t]*from[ \t]+(\.*)([\w.]*)[ \t]+import[ \t]*\*", re.MULTILINE)
# What every match of `_STAR` contains: most modules have `import` and a `*` somewhere
# (`**kwargs`), few have this, and looking for it skips encoding the text for `_STAR`.
_STAR_HINT = lazy(r"import[ \t]*\*")
_SOURCES: dict[str, tuple[tuple | None, tuple[str, ...]]] = {}
_MAX = 20_000
# Star imports of these are not followed: their names are not the project's (and torch's own
# `__all__` lists run to thousands of names).
FOREIGN_PACKAGES = frozenset(("torch", "torchao", "numpy", "typing"))


def star_sources(project, path: str, module: str | None) -> tuple[str, ...]:
    """The modules `path` star-imports, in the order written (relative ones made absolute)."""
    if not hasattr(project, "text"):
        return ()  # a lookup that resolves names without the project's modules
    path = os.path.abspath(path)
    key = content_key(project.overlay, path)
    known = _SOURCES.get(path)
    if known is not None and known[0] == key:
        return known[1]
    found: list[str] = []
    text = project.text(path) if key is not None else None
    if text is not None and _STAR_HINT.search(text) is not None:
        module = module if module is not None else module_name_for(path)
        for match in _STAR.finditer(text.encode("utf-8", "surrogatepass")):
            level = len(match.group(1))
            name = match.group(2).decode() or None
            base = resolve_relative(module, path, level, name)
            if base and base.split(".")[0] not in FOREIGN_PACKAGES:
                found.append(base)
    if len(_SOURCES) > _MAX:
        _SOURCES.clear()
    _SOURCES[path] = (key, tuple(found))
    return tuple(found)


def exports(scope: ModuleScope, name: str) -> bool | None:
    """Whether `from <scope's module> import *` binds `name` (None: `__all__` cannot be read)."""
    listed = scope.assigns.get("__all__")
    if listed:
        names = _names(listed[-1])
        if names is None:
            return None
        return name in names
    return not name.startswith("_")


def defines(scope: ModuleScope, name: str) -> bool:
    return name in scope.functions or name in scope.classes or name in scope.imports or name in scope.assigns


def _names(value: ast.expr) -> set[str] | None:
    if not isinstance(value, (ast.List, ast.Tuple)):
        return None
    out = set()
    for elt in value.elts:
        if not (isinstance(elt, ast.Constant) and isinstance(elt.value, str)):
            return None
        out.add(elt.value)
    return out


__all__ = ["FOREIGN_PACKAGES", "defines", "exports", "star_sources"]
