"""Which branch of a torch-version check runs on a given torch release.

Compatibility code picks an API by version: `if TORCH_VERSION_AT_LEAST_2_5:
export_for_training(...) else: capture_pre_autograd_graph(...)`. Going quiet on every
version-gated branch (as a plain "is this a version check?" test does) misses that the branch
torch 2.13 takes may itself call an API 2.13 no longer has. This module evaluates the common
spellings of such tests against a release and says "taken", "not taken" or "unknown".

Understood: torchao-style constants (`TORCH_VERSION_AT_LEAST_2_5`, `TORCH_VERSION_AFTER_2_4`,
transformers' `is_torch_greater_or_equal_than_2_2`), `is_torch_version_at_least("2.5")`-like
calls with a version string (transformers' `is_torch_greater_or_equal("2.5")`,
`is_torch_less_than(...)`), comparisons of anything that mentions `__version__` or a `*VERSION*`
name with a version string, `version.parse("2.5")` / `parse_version(...)` of one, or a tuple of
ints; `not`, `and`, `or`; and names bound to any
of these (`_IS_TORCH_OLDER_THAN_2_4 = tuple(...torch.__version__...) < (2, 4)`), in the module
or in the project module they are imported from (`ModuleConstants`).

Not a torch-version check: the interpreter's version (`sys.version_info`, `sys.version`,
`platform.python_version()`), and a name that merely contains "version" (`if args.version:`).
`torch.__version__` is a `TorchVersion`, which compares with strings as versions
(`torch.__version__ >= "2.5"` holds on 2.13); a plain string made from it
(`torch.__version__.split("+")[0]`, `str(torch.__version__)`) compares as text.
"""

from __future__ import annotations

import ast
import operator
import re
from collections.abc import Callable

from qlint.lazy_patterns import lazy

# Maps a name to the expression it is bound to (a module constant), or None.
Lookup = Callable[[ast.AST], "ast.AST | None"]

_CONSTANT = lazy(r"TORCH_(?:VERSION_)?(?:AT_LEAST|AFTER|GE|GREATER_EQUAL|GREATER_OR_EQUAL(?:_THAN)?)_(\d+)_(\d+)", re.I)
_AT_LEAST_CALL = lazy(r"(?:version_at_least|at_least|version_ge)$", re.I)
# transformers' `is_torch_greater_or_equal("2.5")` and its kind: named for torch and an
# ordering, not for "version"; read only with a version literal (`_torch_ordering`).
_TORCH_AT_LEAST = lazy(r"torch_(?:version_)?(?:greater_or_equal|greater_equal|newer_or_equal)$", re.I)
_TORCH_BELOW = lazy(r"torch_(?:version_)?(?:less_than|older_than)$", re.I)
_VERSION_TEXT = lazy(r"^\s*v?(\d+)\.(\d+)")
_OPS = {ast.Lt: operator.lt, ast.LtE: operator.le, ast.Gt: operator.gt, ast.GtE: operator.ge}
_EQUALITY = {ast.Eq: operator.eq, ast.NotEq: operator.ne}
# The interpreter's version, under any of its spellings: never torch's.
_PYTHON_LABELS = frozenset({"version_info", "hexversion", "python_version", "python_version_tuple"})
# Other packages whose names contain "torch": their versions are not torch's.
_OTHER_PACKAGE = lazy(r"torch(?:ao|vision|audio|text|rec|tune|data|serve)", re.I)
_STR_METHODS = frozenset({"split", "strip", "replace", "partition", "rsplit", "lower"})
_DEPTH = 4  # names bound to names bound to ...: enough for real code, finite on cycles


def is_version_test(test: ast.AST, lookup: Lookup | None = None) -> bool:
    """Does `test` check a package's version (not the interpreter's)? Names are followed
    through `lookup` to the checks they are bound to."""
    return _is_version_test(test, lookup or _none, 0)


def _is_version_test(test: ast.AST, lookup: Lookup, depth: int) -> bool:
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _is_version_test(test.operand, lookup, depth)
    if isinstance(test, ast.BoolOp):
        return any(_is_version_test(v, lookup, depth) for v in test.values)
    label = _label(test)
    if label is not None and _CONSTANT.search(label):
        return True
    if isinstance(test, ast.Name) and depth < _DEPTH:
        value = lookup(test)
        return value is not None and _is_version_test(value, lookup, depth + 1)
    if isinstance(test, ast.Call):
        name = _label(test.func) or ""
        if isinstance(test.func, ast.Attribute) and name in ("startswith", "endswith"):
            return _mentions_version(test.func.value, lookup)
        if _torch_ordering(test, lookup) is not None:
            return True
        return "version" in name.lower() and name not in _PYTHON_LABELS
    if isinstance(test, ast.Compare):
        sides = [test.left, *test.comparators]
        if any(_python_version(s) for s in sides) or not any(_mentions_version(s, lookup) for s in sides):
            return False
        # An ordering, or equality with a version literal: `self.version == 2` is no torch check.
        ordered = any(type(op) in _OPS for op in test.ops)
        return ordered or any(_version_value(s, lookup) is not None for s in sides)
    return False


def _none(node: ast.AST) -> None:
    return None


def branch_runs(test: ast.AST, in_body: bool, release: tuple[int, int], lookup: Lookup | None = None) -> bool | None:
    """For code in the body (`in_body`) or the else of `if test:`: True when torch `release`
    runs it, False when it does not or qlint cannot tell (a version check it cannot read:
    compatibility code, not to be judged); None when `test` is no version check at all."""
    lookup = lookup or _none
    if not is_version_test(test, lookup):
        return None
    runs = taken(test, release, lookup)
    return False if runs is None else runs == in_body


def taken(test: ast.AST, release: tuple[int, int], lookup: Lookup = _none, _depth: int = 0) -> bool | None:
    """True/False when `test` is true/false on torch `release`; None when qlint cannot tell.

    `lookup` resolves names to the constants they are bound to (`TORCH_2_6 = version.parse("2.6")`)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = taken(test.operand, release, lookup, _depth)
        return None if inner is None else not inner
    if isinstance(test, ast.BoolOp):
        values = [taken(v, release, lookup, _depth) for v in test.values]
        if isinstance(test.op, ast.And):
            return False if False in values else None if None in values else True
        return True if True in values else None if None in values else False
    label = _label(test)
    if label is not None:
        found = _CONSTANT.search(label)
        if found:
            return (int(found[1]), int(found[2])) <= release
    if isinstance(test, ast.Name) and _depth < _DEPTH:
        value = lookup(test)
        return None if value is None else taken(value, release, lookup, _depth + 1)
    if isinstance(test, ast.Call) and test.args:
        name = _label(test.func) or ""
        wanted = _version_value(test.args[0], lookup)
        if _AT_LEAST_CALL.search(name) and wanted is not None:
            return wanted <= release
        ordering = _torch_ordering(test, lookup)
        if ordering is not None:
            return ordering(release)
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        return _compare(test, release, lookup)
    return None


def _compare(test: ast.Compare, release: tuple[int, int], lookup: Lookup) -> bool | None:
    left, right = _through(test.left, lookup), _through(test.comparators[0], lookup)
    kind = type(test.ops[0])
    op = _OPS.get(kind) or _EQUALITY.get(kind)
    if op is None or _python_version(left) or _python_version(right) or _foreign(left) or _foreign(right):
        return None
    if kind in _EQUALITY:
        return None  # `== "2.5"` pins one release: too rare to read, never a guard for 2.13
    text = f"{release[0]}.{release[1]}.0"
    if _text_version(left, lookup) and isinstance(right, ast.Constant) and isinstance(right.value, str):
        return op(text, right.value)  # plain strings compare as text, as Python does: "2.13" < "2.5"
    if _text_version(right, lookup) and isinstance(left, ast.Constant) and isinstance(left.value, str):
        return op(left.value, text)
    if _mentions_version(left, lookup) and (value := _version_value(right, lookup)) is not None:
        return op(release, value)
    if _mentions_version(right, lookup) and (value := _version_value(left, lookup)) is not None:
        return op(value, release)
    return None


def _torch_ordering(call: ast.Call, lookup: Lookup) -> Callable[[tuple[int, int]], bool] | None:
    """`is_torch_greater_or_equal("2.5")` / `is_torch_less_than("2.5")`: whether a release passes,
    or None when the call is not of that kind (no version literal, another package's name)."""
    name = _label(call.func) or ""
    wanted = _version_value(call.args[0], lookup) if len(call.args) == 1 and not call.keywords else None
    if wanted is None or _OTHER_PACKAGE.search(name):
        return None
    if _TORCH_AT_LEAST.search(name):
        return lambda release: wanted <= release
    if _TORCH_BELOW.search(name):
        return lambda release: release < wanted
    return None


def _label(node: ast.AST) -> str | None:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return None


def _labels(node: ast.AST):
    for sub in ast.walk(node):
        label = _label(sub)
        if label is not None:
            yield label


def _mentions_version(node: ast.AST, lookup: Lookup = _none) -> bool:
    node = _through(node, lookup)
    return not _python_version(node) and any("version" in label.lower() for label in _labels(node))


def _python_version(node: ast.AST) -> bool:
    """`sys.version_info`, `sys.version`, `platform.python_version()`, `from sys import version_info`."""
    for sub in ast.walk(node):
        if _label(sub) in _PYTHON_LABELS:
            return True
        if _is_sys(sub) and sub.attr.startswith("version"):
            return True
    return False


def _is_sys(node: ast.AST) -> bool:
    return isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "sys"


def _foreign(node: ast.AST) -> bool:
    """Another package's version (`transformers.__version__`, `TORCHAO_VERSION`): not torch's."""
    for sub in ast.walk(node):
        if isinstance(sub, ast.Attribute) and sub.attr == "__version__":
            head = sub.value
            while isinstance(head, ast.Attribute):
                head = head.value
            if not (isinstance(head, ast.Name) and "torch" in head.id.lower() and not _OTHER_PACKAGE.search(head.id)):
                return True
        label = _label(sub)
        if label is not None and _OTHER_PACKAGE.search(label):
            return True
    return False


def _text_version(node: ast.AST, lookup: Lookup) -> bool:
    """A version as a plain `str`: a str method's result, a slice, or `str(...)` of a version.
    `torch.__version__` itself (a `TorchVersion`) is not: it compares as a version."""
    node = _through(node, lookup)
    if isinstance(node, ast.Subscript):
        return _mentions_version(node.value, lookup)
    if isinstance(node, ast.Call):
        if isinstance(node.func, ast.Name) and node.func.id == "str" and node.args:
            return _mentions_version(node.args[0], lookup)
        if isinstance(node.func, ast.Attribute) and node.func.attr in _STR_METHODS:
            return _mentions_version(node.func.value, lookup)
    if isinstance(node, ast.Attribute) and node.attr == "__version__":
        return _foreign(node)
    return False


def _through(node: ast.AST, lookup: Lookup) -> ast.AST:
    """A name's constant value where it has one (`_TORCH_VERSION = torch.__version__`), else the name."""
    for _ in range(_DEPTH):
        if not isinstance(node, ast.Name):
            break
        value = lookup(node)
        if not isinstance(value, (ast.Constant, ast.Attribute, ast.Call, ast.Tuple, ast.Name, ast.Subscript)):
            break
        node = value
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


class ModuleConstants:
    """A `Lookup` over names bound once at module level: in the file itself, or in the
    project module a name is imported from (`from pkg.utils import TORCH_VERSION_2_11_0`).

    An expression found in another module keeps that module's names: a name inside it is
    looked up where the expression was written, not in the file being checked."""

    def __init__(self, scope, project=None, path: str | None = None):
        self._scope, self._project, self._path = scope, project, path
        self._owner: dict[int, object] = {}  # id(Name inside a foreign value) -> its module scope

    def __call__(self, node: ast.AST) -> ast.AST | None:
        if not isinstance(node, ast.Name):
            return None
        scope = self._owner.get(id(node), self._scope)
        value = scope.unique(node.id)
        if value is not None:
            return value
        full = scope.imports.get(node.id)
        if not full or "." not in full or self._project is None or self._path is None:
            return None
        module, _, name = full.rpartition(".")
        other = self._project.module_scope(module, self._path)
        value = other.unique(name) if other is not None else None
        if value is not None:
            for sub in ast.walk(value):
                if isinstance(sub, ast.Name):
                    self._owner[id(sub)] = other
        return value
