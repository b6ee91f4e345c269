"""`Cls.method(...)` of a class's `@classmethod` or `@staticmethod`, read as a function
(issue 14, item 8).

ExecuTorch's llama `ModelArgs.__post_init__` runs `self.act_fn = ActFn.from_string(self.act_fn)`,
a classmethod of an `Enum` of its module that returns `cls(value)`. Reading what a model holds
(`class_contents`), a call of an attribute of a class was a call that may build anything, so
every llama model built from `ModelArgs` was not known in full. A classmethod or staticmethod
written in the class's body runs that body: what it builds is read as a function's is, and in a
classmethod called on the class itself, `cls(...)` builds an instance of that class.
"""

from __future__ import annotations

import ast

from qlint.analysis.node_memo import kept_on_node

_KEY = "_qlint_own_class_calls"
_KINDS = frozenset({"classmethod", "staticmethod"})


def class_method(cls: ast.ClassDef, name: str) -> ast.FunctionDef | None:
    """The method `name` written in `cls`'s body under `@classmethod` or `@staticmethod` (the
    only decorator), when the body defines the name once; None otherwise."""
    found = [s for s in cls.body if _binds(s, name)]
    if len(found) != 1 or not isinstance(found[0], ast.FunctionDef):
        return None
    method = found[0]
    decorators = method.decorator_list
    if len(decorators) != 1 or not isinstance(decorators[0], ast.Name) or decorators[0].id not in _KINDS:
        return None
    return method


def own_method(cls: ast.ClassDef, name: str) -> tuple[ast.FunctionDef | ast.AsyncFunctionDef, int] | None:
    """The method `name` written once in `cls`'s body, undecorated or under `@classmethod` or
    `@staticmethod`, with how many of its first parameters no argument of `self.name(...)`
    binds (`self` or `cls`: 1; a staticmethod: 0); None otherwise."""
    found = [s for s in cls.body if _binds(s, name)]
    if len(found) != 1 or not isinstance(found[0], (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    method = found[0]
    decorators = method.decorator_list
    if not decorators:
        return method, 1
    if len(decorators) != 1 or not isinstance(decorators[0], ast.Name) or decorators[0].id not in _KINDS:
        return None
    return method, 0 if decorators[0].id == "staticmethod" else 1


def calls_own_class(method: ast.FunctionDef, call: ast.Call) -> bool:
    """`call` is `cls(...)` in the classmethod `method`, `cls` its first parameter, bound
    nowhere else in it."""
    if not (isinstance(call.func, ast.Name) and method.decorator_list[0].id == "classmethod" and method.args.args):
        return False
    first = method.args.args[0].arg
    if call.func.id != first:
        return False
    return not any(
        (isinstance(n, ast.Name) and n.id == first and not isinstance(n.ctx, ast.Load))
        or (isinstance(n, ast.arg) and n.arg == first and n is not method.args.args[0])
        or (isinstance(n, (ast.Global, ast.Nonlocal)) and first in n.names)
        for n in ast.walk(method)
    )


def own_class_calls(cls: ast.ClassDef) -> frozenset[int]:
    """The ids of the `cls(...)` calls of `cls`'s own classmethods: an instance of the class
    (or of a subclass, read on its own), which a reading of this class holds already."""
    return kept_on_node(cls, _KEY, _own_class_calls)


def _own_class_calls(cls: ast.ClassDef) -> frozenset[int]:
    out: set[int] = set()
    for stmt in cls.body:
        method = class_method(cls, stmt.name) if isinstance(stmt, ast.FunctionDef) else None
        if method is None:
            continue
        out.update(id(n) for n in ast.walk(method) if isinstance(n, ast.Call) and calls_own_class(method, n))
    return frozenset(out)


def _binds(stmt: ast.stmt, name: str) -> bool:
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return stmt.name == name
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return any(isinstance(n, ast.Name) and n.id == name for t in targets for n in ast.walk(t))
    return False


__all__ = ["calls_own_class", "class_method", "own_class_calls"]
