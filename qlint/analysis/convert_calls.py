"""The project's `convert_pt2e(...)` calls and whether each keeps the weight-folding default.

`convert_pt2e` folds a weight's quantize op into an int8 constant unless it gets
`fold_quantize=False` (the default is True since PyTorch PR #118605; torchao 0.18 keeps it).
A matcher written for the unfolded form only works when every graph it sees was made by a
call that turns folding off, so QL103 asks: which calls can this matcher's graphs come from?

"The project" is the nearest ancestor directory with a project marker (else the file's
top-level package, or its own directory). Files are found by a text scan for `convert_pt2e` and parsed only
when they mention it; the result is cached per directory and modification times.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis import scan_memo
from qlint.analysis.module_keys import project_keys
from qlint.analysis.names.live_trees import parse as live_parse
from qlint.analysis.names.modules import import_root, module_name_for
from qlint.analysis.project_files import listing_dependency
from qlint.value_classes import value_class

_NEEDLE = "convert_pt2e"
_QUESTION = "text-lacks:" + _NEEDLE  # `scan_memo`'s question: shared with the callers' scan


@value_class(frozen=True)
class ConvertCall:
    path: str
    node: ast.Call
    folds: str  # "default" (no fold_quantize), "true", "false", or "unknown" (an expression / **kwargs)


def fold_setting(call: ast.Call) -> str:
    for kw in call.keywords:
        if kw.arg == "fold_quantize":
            if isinstance(kw.value, ast.Constant) and isinstance(kw.value.value, bool):
                return "true" if kw.value.value else "false"
            return "unknown"
    if len(call.args) >= 3 or any(isinstance(a, ast.Starred) for a in call.args):
        return "unknown"  # positional `convert_pt2e(m, False, False)` or a splat
    if any(kw.arg is None for kw in call.keywords):
        return "unknown"
    return "default"


def calls_in(tree: ast.AST, path: str) -> list[ConvertCall]:
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
            if name == _NEEDLE:
                out.append(ConvertCall(path, node, fold_setting(node)))
    return out


_MARKERS = ("pyproject.toml", "setup.py", "setup.cfg", ".git")


def project_dir(path: str) -> tuple[str, bool]:
    """(directory, recursive): the nearest ancestor with a project marker (pyproject.toml,
    setup.py, setup.cfg, .git); else the file's top-level package, or its own directory only.

    Repositories such as ExecuTorch map directories without `__init__.py` into one package
    at install time, so the `__init__.py` chain alone would cut a backend off from the
    examples that convert its graphs."""
    directory = os.path.dirname(os.path.abspath(path))
    while True:
        if any(os.path.exists(os.path.join(directory, m)) for m in _MARKERS):
            return directory, True
        parent = os.path.dirname(directory)
        if parent == directory:
            break
        directory = parent
    module = module_name_for(path)
    if module and "." in module:
        return os.path.join(import_root(path), module.split(".")[0]), True
    return os.path.dirname(os.path.abspath(path)), False


_CACHE: dict[str, tuple[tuple, list[ConvertCall]]] = {}


def project_calls(ctx) -> list[ConvertCall]:
    """Every `convert_pt2e(...)` call under the project directory of the module `ctx` checks,
    read through the project index (unsaved buffers count). Every other module there decides
    the answer (one that gains `fold_quantize=False` silences a finding): each is recorded as a
    dependency of the check, for the results cache and the language server's dependents, and so
    is the listing (a new module calling `convert_pt2e`)."""
    project = ctx.project
    root, recursive = project_dir(ctx.path)
    keyed = list(project_keys(ctx, root, recursive).items())
    project.record_listing(ctx.path, listing_dependency(root, recursive, [_NEEDLE]))
    key = tuple(keyed)
    cached = _CACHE.get(root)
    if cached is not None and cached[0] == key:
        return cached[1]
    found: list[ConvertCall] = []
    for file, file_key in keyed:
        if scan_memo.known_miss(file, _QUESTION, file_key):
            continue
        text = project.text(file)
        if not text or _NEEDLE not in text:
            if text is not None:
                scan_memo.note_miss(file, _QUESTION, file_key)
            continue
        try:
            tree = live_parse(text, file)
        except (SyntaxError, ValueError, RecursionError):
            continue
        found.extend(calls_in(tree, file))
    _CACHE[root] = (key, found)
    return found
