"""Branches that cannot run, so the model flow neither follows them nor reports from them.

Three shapes, all decided from constants the code itself states:

- `if False:` / `if 0:` / `if not True:` blocks;
- a flag the function binds exactly once, to a constant (`is_qat = True` then
  `if is_qat: prepare_qat_pt2e(...) else: prepare_pt2e(...)`): any run that reaches the test
  sees that constant, since Python raises `UnboundLocalError` on the runs that do not;
- a helper's branch on its own parameter, at a call that passes a constant for it (or leaves
  the constant default): `_prepare(ep)` with `def _prepare(ep, is_qat=False)` never reaches
  the helper's `if is_qat:` arm; the same for a member of a project enum compared with
  `==`/`is` (`qmode=QuantizationMode.NONE` against `if qmode == QuantizationMode.NONE:`),
  read by `argument_values`.

Anything else (a module-level constant other modules may set, `global`, a flag bound twice)
is not constant here.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.argument_values import equal, identical, literal, truth, value_of
from qlint.analysis.flow.graph_instances import is_graph_instance
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.statement_walk import own_statements
from qlint.analysis.tree_walk import CHILD_FIELDS, child_fields, walk_kinds

_UNKNOWN = object()


class ConstantFlags:
    """Names one function body binds exactly once, to a constant, and never rebinds."""

    def __init__(self, func: ast.AST):
        self.func = func
        self._values: dict[str, object] | None = None

    def truth(self, test: ast.expr) -> bool | None:
        """True/False when `test` is constant in this function, else None."""
        return _truth(_value(test, self))

    def named(self, name: str) -> object:
        """The constant the body binds `name` to once (`_UNKNOWN`: none), its flags read at the
        first name asked: most tests name none."""
        if self._values is None:
            self._values = single_constants(self.func)
        return self._values.get(name, _UNKNOWN)


def literal_truth(test: ast.expr) -> bool | None:
    """The truth of a test written as a literal (`False`, `0`, `not True`), else None: the
    first shape above, for code that has no function body to read flags from (an import's
    guard, `import_edits`)."""
    return _truth(_value(test, None))


def _value(test: ast.expr, flags: ConstantFlags | None) -> object:
    """What a test states: a constant, `not` of one, or one of `flags` (`_UNKNOWN`: anything else)."""
    if isinstance(test, ast.Constant):
        return test.value
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _value(test.operand, flags)
        return _UNKNOWN if inner is _UNKNOWN else not inner
    if flags is not None and isinstance(test, ast.Name):
        return flags.named(test.id)
    return _UNKNOWN


def _truth(value: object) -> bool | None:
    if value is _UNKNOWN:
        return None
    try:
        return bool(value)
    except Exception:  # a constant whose truth is not plain (none in practice)
        return None


def single_constants(func: ast.AST) -> dict[str, object]:
    """`_single_constants`, kept on the node: a helper of another module is analysed again by
    every file that calls it, and its body does not change while its tree lives. Shared:
    callers must not change the dict."""
    return kept_on_node(func, _CONSTANTS, _single_constants)


_CONSTANTS = "_qlint_single_constants"


def _single_constants(func: ast.AST) -> dict[str, object]:
    """`name -> constant` for names bound once, by `name = <constant>`, in the body."""
    if isinstance(func, ast.Module):
        return {}  # module globals: other modules and `global` statements may set them
    if not _binds_a_constant(getattr(func, "body", [])):
        return {}  # no `name = <constant>` of its own: the walk below would keep nothing (most bodies)
    counts: dict[str, int] = {}
    values: dict[str, object] = {}
    params = {arg.arg for arg in parameter_args(func)}
    stack = list(getattr(func, "body", []))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            counts[node.name] = 2
            continue
        if isinstance(node, ast.Lambda):
            continue
        if isinstance(node, (ast.Global, ast.Nonlocal)):
            for name in node.names:
                counts[name] = 2
        elif isinstance(node, ast.Name) and not isinstance(node.ctx, ast.Load):
            counts[node.id] = counts.get(node.id, 0) + 1
        elif isinstance(node, ast.alias):
            counts[(node.asname or node.name).split(".")[0]] = 2
        elif isinstance(node, (ast.ExceptHandler, ast.MatchAs, ast.MatchStar)) and node.name:
            counts[node.name] = 2
        if (
            isinstance(node, ast.Assign)
            and len(node.targets) == 1
            and isinstance(node.targets[0], ast.Name)
            and isinstance(node.value, ast.Constant)
        ):
            values[node.targets[0].id] = node.value.value
        # `ast.iter_child_nodes` without its generators (most of a body is expressions, walked
        # here only for the names they store); the token singletons hold nothing to count.
        cls = type(node)
        for field in CHILD_FIELDS.get(cls) or child_fields(cls):
            value = getattr(node, field, None)
            if type(value) is list:
                stack.extend(v for v in value if isinstance(v, ast.AST) and not isinstance(v, _TOKENS))
            elif isinstance(value, ast.AST) and not isinstance(value, _TOKENS):
                stack.append(value)
    return {
        name: value
        for name, value in values.items()
        if counts.get(name) == 1 and (name not in params or _overwritten_first(func.body, name))
    }


def _overwritten_first(body: list[ast.stmt], name: str) -> bool:
    """The parameter `name` is set to a constant by a statement of the body's own list (run on
    every path) before any statement reads it: every test of it sees that constant (TI's
    `is_qat = True  # only the QAT flow is used` ahead of `if is_qat: ... else: prepare_pt2e`)."""
    for stmt in body:
        if (
            type(stmt) is ast.Assign
            and len(stmt.targets) == 1
            and type(stmt.targets[0]) is ast.Name
            and stmt.targets[0].id == name
        ):
            return True
        if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(stmt)):
            return False
    return False


_TOKENS = (ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop)


def _binds_a_constant(stmts: list[ast.stmt]) -> bool:
    """A statement of the body (not of a function or class in it) is `name = <constant>`:
    statements lie in statement lists only, so these are walked, not the expressions."""
    return any(
        type(node) is ast.Assign
        and len(node.targets) == 1
        and type(node.targets[0]) is ast.Name
        and type(node.value) is ast.Constant
        for node in own_statements(stmts)
    )


def contradicted_at_call(
    guard,
    callee: ast.AST,
    passed: dict[int, ast.expr | None],
    caller: Resolver | None = None,
    home: Resolver | None = None,
    open_ended: bool = False,
    graphs: frozenset[int] = frozenset(),
) -> bool:
    """A callee's guard (`{(condition, polarity)}`) that the call's known arguments rule out.

    `passed` maps parameter index -> the argument expression (None: not passed, so the
    parameter's default counts, unless the call is `open_ended`: `*args`/`**kwargs` may pass
    it); `caller` reads the arguments, `home` (the callee's module) its defaults and
    conditions: enum members need them, constants do not. `graphs`: the parameters the call
    hands an exported graph, which decide the callee's `isinstance` tests on them
    (`graph_instances`); such a test on any other parameter is not known here."""
    params = parameter_args(callee, star=False)
    index = {a.arg: i for i, a in enumerate(params)}
    for condition, polarity in guard:
        name = on_name(condition)
        if name not in index or rebound(callee, name):
            continue
        i = index[name]
        if is_graph_instance(condition):
            # The condition says the test holds for an exported graph: the arm that needs it
            # false cannot run for one.
            if i in graphs and not polarity:
                return True
            continue
        expr, reader = passed.get(i), caller
        if expr is None and i not in passed:
            if open_ended:
                continue
            expr, reader = defaults(callee).get(name), home
        if holds(condition, expr, reader, home) is (not polarity):
            return True
    return False


def open_ended(call: ast.Call) -> bool:
    """`f(*args)` / `f(**kwargs)`: any parameter not written out may still be passed."""
    return any(isinstance(a, ast.Starred) for a in call.args) or any(kw.arg is None for kw in call.keywords)


def condition_of(test: ast.expr, local: dict) -> tuple[str, bool] | None:
    """A branch condition we can recognise again: `flag`, `not self.is_qat`, `mode == "qat"`,
    `qmode == QuantizationMode.NONE` (a dotted name that is no local of the function: a
    module's constant or an enum member, the same at every test)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = condition_of(test.operand, local)
        return (inner[0], not inner[1]) if inner else None
    parts = dotted_parts(test)
    if parts is not None:
        return ".".join(parts), True
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        left = dotted_parts(test.left)
        op, right = test.ops[0], test.comparators[0]
        if left is None or not isinstance(op, (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)):
            return None
        positive = isinstance(op, (ast.Eq, ast.Is))
        # `is` keeps its own word: `1 is True` is false where `1 == True` is not.
        word = "is" if isinstance(op, (ast.Is, ast.IsNot)) else "=="
        if isinstance(right, ast.Constant):
            return f"{'.'.join(left)} {word} {right.value!r}", positive
        named = dotted_parts(right)
        if named is not None and len(named) > 1 and named[0] not in local:
            return f"{'.'.join(left)} {word} {'.'.join(named)}", positive
    return None


def on_name(condition: str) -> str:
    """The name a condition tests (`is_qat`, `qmode` in `qmode == QuantizationMode.NONE`)."""
    return condition.partition(" ")[0]


def holds(condition: str, expr: ast.expr | None, reader: Resolver | None, home: Resolver | None) -> bool | None:
    """Whether `condition` is true when its name is `expr` (read with `reader`; the condition's
    own right side with `home`); None when that is not known."""
    value = value_of(expr, reader)
    if value is None:
        return None
    _, _, compared = condition.partition(" ")
    if not compared:
        return truth(value)
    word, _, text = compared.partition(" ")
    other = literal(text, home)
    if other is None:
        return None
    return identical(value, other) if word == "is" else equal(value, other)


def rebound(func: ast.AST, name: str) -> bool:
    """The body assigns the parameter: a test on it may see another value than the caller's.
    (Every call of the function asks for each guard: the names are kept on its node, which an
    editor's next check reuses while the function is unchanged, `statement_reuse`.)"""
    return name in kept_on_node(func, _STORED, _stored_names)


_STORED = "_qlint_stored_names"
_NAMES = frozenset({ast.Name})


def _stored_names(func: ast.AST) -> frozenset[str]:
    return frozenset(
        node.id
        for stmt in getattr(func, "body", [])
        for node in walk_kinds(stmt, _NAMES)
        if not isinstance(node.ctx, ast.Load)
    )


def defaults(func: ast.AST) -> dict[str, ast.expr]:
    args = getattr(func, "args", None)
    if not isinstance(args, ast.arguments):
        return {}
    positional = [*args.posonlyargs, *args.args]
    found = {a.arg: d for a, d in zip(positional[len(positional) - len(args.defaults) :], args.defaults, strict=True)}
    found.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None})
    return found


__all__ = [
    "ConstantFlags",
    "condition_of",
    "contradicted_at_call",
    "defaults",
    "holds",
    "literal_truth",
    "on_name",
    "open_ended",
    "rebound",
]
