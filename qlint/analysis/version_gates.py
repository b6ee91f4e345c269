"""Which branch of a torch-version check runs on a given torch release.

Compatibility code picks an API by version: `if TORCH_VERSION_AT_LEAST_2_5:
export_for_training(...) else: capture_pre_autograd_graph(...)`. Going quiet on every
version-gated branch (as a plain "is this a version check?" test does) misses that the branch
torch 2.13 takes may itself call an API 2.13 no longer has. This module evaluates the common
spellings of such tests against a release and says "taken", "not taken" or "unknown".

Understood: torchao-style constants (`TORCH_VERSION_AT_LEAST_2_5`, `TORCH_VERSION_AFTER_2_4`,
`is_torch_version_at_least("2.5")`-like calls with a version string), comparisons of anything
that mentions `__version__` or a `*VERSION*` name with a version string, `version.parse("2.5")`
/ `parse_version(...)` of one, or a tuple of ints; `not`, `and`, `or`.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable

# Maps a name to the expression it is bound to (a module constant), or None.
Lookup = Callable[[ast.AST], "ast.AST | None"]

_CONSTANT = re.compile(r"TORCH_VERSION_(?:AT_LEAST|AFTER|GE|GREATER_EQUAL)_(\d+)_(\d+)", re.I)
_AT_LEAST_CALL = re.compile(r"(?:version_at_least|at_least|version_ge)$", re.I)
_VERSION_TEXT = re.compile(r"^\s*v?(\d+)\.(\d+)")
_OPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}


def is_version_test(test: ast.AST) -> bool:
    for node in ast.walk(test):
        label = node.id if isinstance(node, ast.Name) else node.attr if isinstance(node, ast.Attribute) else ""
        if "version" in label.lower():
            return True
    return False


def _none(node: ast.AST) -> None:
    return None


def taken(test: ast.AST, release: tuple[int, int], lookup: Lookup = _none) -> bool | None:
    """True/False when `test` is true/false on torch `release`; None when qlint cannot tell.

    `lookup` resolves names to the constants they are bound to (`TORCH_2_6 = version.parse("2.6")`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = taken(test.operand, release, lookup)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [taken(v, release, lookup) for v in test.values]
        if isinstance(test.op, ast.And):
            return False if False in values else None if None in values else True
        return True if True in values else None if None in values else False
    label = _label(test)
    if label is not None:
        found = _CONSTANT.search(label)
        if found:
            return (int(found[1]), int(found[2])) <= release
    if isinstance(test, ast.Call) and test.args:
        name = _label(test.func) or ""
        wanted = _version_value(test.args[0], lookup)
        if _AT_LEAST_CALL.search(name) and wanted is not None:
            return wanted <= release
    if isinstance(test, ast.Compare) and len(test.ops) == 1 and type(test.ops[0]) in _OPS:
        left, right = _through(test.left, lookup), _through(test.comparators[0], lookup)
        op = _OPS[type(test.ops[0])]
        text = f"{release[0]}.{release[1]}.0"
        if _raw_version(left) and isinstance(right, ast.Constant) and isinstance(right.value, str):
            return op(text, right.value)  # a string comparison, as Python makes it: "2.13" < "2.5"
        if _raw_version(right) and isinstance(left, ast.Constant) and isinstance(left.value, str):
            return op(left.value, text)
        if _mentions_version(left) and (value := _version_value(right, lookup)) is not None:
            return op(release, value)
        if _mentions_version(right) and (value := _version_value(left, lookup)) is not None:
            return op(value, release)
    return None


def _label(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _raw_version(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and node.attr == "__version__"


def _mentions_version(node: ast.AST) -> bool:
    return is_version_test(node)


def _through(node: ast.AST, lookup: Lookup) -> ast.AST:
    """A name's constant value where it has one (`_TORCH_VERSION = torch.__version__`), else the name."""
    if isinstance(node, ast.Name):
        value = lookup(node)
        if isinstance(value, (ast.Constant, ast.Attribute, ast.Call, ast.Tuple)):
            return value
    return node


def _version_value(node: ast.AST, lookup: Lookup = _none) -> tuple[int, int] | None:
    node = _through(node, lookup)
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        found = _VERSION_TEXT.match(node.value)
        return (int(found[1]), int(found[2])) if found else None
    if isinstance(node, ast.Tuple) and len(node.elts) >= 2:
        parts = [e.value for e in node.elts[:2] if isinstance(e, ast.Constant) and isinstance(e.value, int)]
        return (parts[0], parts[1]) if len(parts) == 2 else None
    if isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords:
        return _version_value(node.args[0], lookup)  # version.parse("2.5"), parse_version("2.5.0"), Version(...)
    return None
