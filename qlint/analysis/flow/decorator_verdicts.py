"""What a project decorator's def does to the arguments and result of the function it wraps, read
from its syntax (`pass_through` asks, and keeps the verdict on the def): `PASSES` for a
pass-through (`return fn`, or a wrapper calling `fn` with its own parameters in order and
returning the result on every path), `EVALS` and the positions for one but for the parameters
its wrapper puts in eval mode, "no" for anything else."""

from __future__ import annotations

import ast

from qlint.analysis.flow.relay_evals import eval_of_name
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.tree_walk import SCOPES, isinstance_test, own_nodes
from qlint.analysis.tree_walk import parents as tree_parents

_WRAPS = frozenset({"functools.wraps"})
PASSES = "passes"
EVALS = "evals:"  # a verdict: a pass-through but for the evals of these positions
# What a decorator may run before it returns its wrapper: imports, assignments, calls, branches.
_SETUP = (ast.Expr, ast.Assign, ast.AnnAssign, ast.Import, ast.ImportFrom, ast.If)
# Where a call of `fn` may run more than once (a retry).
_REPEATS = (ast.For, ast.AsyncFor, ast.While, ast.Try, getattr(ast, "TryStar", ast.Try))


def decorator_verdict(deco: ast.AST, resolver: Resolver) -> str:
    """`PASSES` for a pass-through of arguments and result, `EVALS` and the positions for one
    but for the evals its wrapper opens with, else "no" (kept on the node)."""
    if not isinstance(deco, ast.FunctionDef) or deco.decorator_list:
        return "no"
    args = deco.args
    if args.posonlyargs or args.kwonlyargs or args.vararg or args.kwarg or len(args.args) != 1 or args.defaults:
        return "no"
    fn = args.args[0].arg
    defs = [s for s in deco.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))]
    last = deco.body[-1]
    if not isinstance(last, ast.Return) or not isinstance(last.value, ast.Name):
        return "no"
    for stmt in deco.body[:-1]:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        if not isinstance(stmt, _SETUP) or _rebinds(stmt, {fn}, deep=True):
            return "no"  # a loop, a `return` or a class; or `fn` rebound, changed
    names = {d.name for d in defs}
    if len(names) != len(defs) or _rebinds_any(deco, names | {fn}, defs):
        return "no"
    if last.value.id == fn:
        return PASSES  # `return fn`: the function itself
    wrapper = next((d for d in defs if d.name == last.value.id), None)
    if wrapper is None or any(_mentions(d, fn) for d in defs if d is not wrapper):
        return "no"  # another def that may call `fn` its own way (d2go's `_new_type` does not)
    return _wrapper(wrapper, fn, resolver, _local_imports(deco))


def _wrapper(wrapper: ast.FunctionDef, fn: str, resolver: Resolver, local: dict[str, str]) -> str:
    args = wrapper.args
    if not isinstance(wrapper, ast.FunctionDef) or args.posonlyargs or args.kwonlyargs or args.defaults:
        return "no"
    for deco in wrapper.decorator_list:
        if not (
            isinstance(deco, ast.Call)
            and _qualname(deco.func, resolver, local) in _WRAPS
            and len(deco.args) == 1
            and not deco.keywords
            and isinstance(deco.args[0], ast.Name)
            and deco.args[0].id == fn
        ):
            return "no"
    params = tuple(a.arg for a in args.args)
    star = args.vararg.arg if args.vararg else None
    kw = args.kwarg.arg if args.kwarg else None
    evaled = []  # the positions of the parameters the opening statements eval
    for stmt in wrapper.body[:-1]:  # `model.eval()`, `model.train(False)`: statements of their own
        name = eval_of_name(stmt.value) if isinstance(stmt, ast.Expr) else None
        if name not in params:
            break
        evaled.append(params.index(name))
    body = wrapper.body[len(evaled) :]
    calls: list[ast.Call] = []
    allowed: set[int] = set()  # the loads of `fn` and the parameters in the exact calls
    handed: list[frozenset[int]] = []  # per call: the positions it hands evaled (`fn(m.eval())`)
    for node in own_nodes(body):
        found = _exact(node, fn, params, star, kw) if isinstance(node, ast.Call) else None
        if found is not None:
            calls.append(node)
            handed.append(found)
            allowed.update(id(n) for n in ast.walk(node) if isinstance(n, ast.Name))
    if not calls or len(set(handed)) > 1:
        return "no"  # none, or calls that eval different parameters: in no one mode
    evaled += handed[0]
    # The `fn` of `fn.method(...)`: a call through it, not a read of a name for a log line.
    called = {
        id(n.func.value)
        for stmt in body
        for n in ast.walk(stmt)
        if isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute)
    }
    parents = tree_parents(wrapper)
    for node in (n for stmt in body for n in ast.walk(stmt)):  # nested bodies too
        if (
            isinstance(node, ast.Attribute)
            and isinstance(node.value, ast.Name)
            and node.value.id == fn
            and isinstance(node.ctx, ast.Load)
            and id(node.value) not in called
        ):
            allowed.add(id(node.value))  # `fn.__name__` read for a log line
        elif isinstance(node, ast.Name) and node.id in params and _tested(node, parents):
            allowed.add(id(node))  # `if not cfg.QUANTIZATION.EAGER_MODE:`
    names = {fn, *params, star, kw} - {None}
    for node in (n for stmt in body for n in ast.walk(stmt)):
        if isinstance(node, ast.Name) and node.id in names and id(node) not in allowed:
            return "no"  # handed elsewhere, changed (`model.eval()`, `kwargs.pop`), or rebound
        if isinstance(node, (ast.Global, ast.Nonlocal)) and names & set(node.names):
            return "no"
    if not _returns_result(wrapper, calls):
        return "no"
    return EVALS + ",".join(str(p) for p in sorted(set(evaled))) if evaled else PASSES


def _local_imports(deco: ast.FunctionDef) -> dict[str, str]:
    """What the decorator's own imports bind (d2go's imports `functools` there): name -> qualname."""
    bound = {}
    for stmt in deco.body:
        if isinstance(stmt, ast.Import):
            bound.update(
                {a.asname or a.name.split(".")[0]: a.name if a.asname else a.name.split(".")[0] for a in stmt.names}
            )
        elif isinstance(stmt, ast.ImportFrom) and stmt.module and not stmt.level:
            bound.update({a.asname or a.name: f"{stmt.module}.{a.name}" for a in stmt.names})
    return bound


def _qualname(node: ast.expr, resolver: Resolver, local: dict[str, str]) -> str | None:
    head = node.value if isinstance(node, ast.Attribute) else node
    if isinstance(head, ast.Name) and head.id in local:
        return local[head.id] + (f".{node.attr}" if isinstance(node, ast.Attribute) else "")
    return resolver.qualname(node)


def _tested(name: ast.Name, parents) -> bool:
    """A parameter read for a test or a message, through attributes and subscripts, and not
    called through: `cfg.EAGER_MODE` in an `if`, `model is None`, `isinstance(model, X)`,
    `f"{model}"`. Handed to a call, assigned into or called through (`model.eval()`), it is not."""
    node = name
    parent = parents.get(id(node))
    while (
        isinstance(parent, (ast.Attribute, ast.Subscript)) and parent.value is node and isinstance(parent.ctx, ast.Load)
    ):
        node, parent = parent, parents.get(id(parent))
    if isinstance(parent, (ast.Compare, ast.BoolOp, ast.FormattedValue)):
        return True
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        return True
    if isinstance(parent, (ast.If, ast.IfExp, ast.While, ast.Assert)) and parent.test is node:
        return True
    test = isinstance_test(parent) if isinstance(parent, ast.Call) else None
    return test is not None and test[0] is node


def _mentions(func: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(func))


def _exact(call: ast.Call, fn: str, params: tuple[str, ...], star: str | None, kw: str | None) -> frozenset[int] | None:
    """`fn(p1, ..., pn, *star, **kw)`: the wrapper's own parameters, in order, and nothing more,
    but that a parameter may be handed evaled (`fn(model.eval(), *args)`: `Module.eval`
    returns the module itself). The positions handed so, or None for another call."""
    if not (isinstance(call.func, ast.Name) and call.func.id == fn):
        return None
    if len(call.args) != len(params) + (star is not None) or len(call.keywords) != (kw is not None):
        return None
    evaled = set()
    for i, (a, p) in enumerate(zip(call.args[: len(params)], params, strict=True)):
        if eval_of_name(a) == p:
            evaled.add(i)
        elif not (isinstance(a, ast.Name) and a.id == p):
            return None
    if star is not None:
        last = call.args[-1]
        if not (isinstance(last, ast.Starred) and isinstance(last.value, ast.Name) and last.value.id == star):
            return None
    if kw is not None:
        (given,) = call.keywords
        if not (given.arg is None and isinstance(given.value, ast.Name) and given.value.id == kw):
            return None
    return frozenset(evaled)


def _returns_result(wrapper: ast.FunctionDef, calls: list[ast.Call]) -> bool:
    """Every `return` gives back the call's result (the call, or a name bound to nothing else,
    read only by `isinstance`), no path falls off the end, and `fn` is called once per run.
    Several calls (d2go's `@mock_quantization_type` calls `fn` on each of three branches, one
    under `mock.patch`) are each the value of a `return`, outside loops and `try`s: one runs."""
    if len(calls) != 1:
        returns = [n for n in own_nodes(wrapper.body) if isinstance(n, ast.Return)]
        ids = {id(c) for c in calls}
        return (
            _ends(wrapper.body)
            and len(returns) == len(calls)
            and all(id(r.value) in ids for r in returns)
            and not any(isinstance(n, _REPEATS) for n in own_nodes(wrapper.body))
        )
    call = calls[0]
    held = None
    returns = []
    for node in own_nodes(wrapper.body):
        if isinstance(node, ast.Assign) and node.value is call:
            if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
                return False
            held = node.targets[0].id
        elif isinstance(node, ast.Return):
            returns.append(node)
    if not returns or not _ends(wrapper.body):
        return False
    for ret in returns:
        value = ret.value
        if value is call or (held is not None and isinstance(value, ast.Name) and value.id == held):
            continue
        return False
    if held is None:
        return True
    reads = {id(r.value) for r in returns}
    for node in own_nodes(wrapper.body):
        test = isinstance_test(node)
        if test is not None and isinstance(test[0], ast.Name):
            reads.add(id(test[0]))
    bound = 0
    for node in (n for stmt in wrapper.body for n in ast.walk(stmt)):
        if isinstance(node, ast.Name) and node.id == held:
            if isinstance(node.ctx, ast.Store):
                bound += 1
            elif id(node) not in reads:
                return False  # handed to something that may change or replace it
    return bound == 1


def _ends(body: list[ast.stmt]) -> bool:
    """Every path through `body` ends in a `return` or a `raise`."""
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise)):
        return True
    if isinstance(last, ast.If):
        return _ends(last.body) and _ends(last.orelse)
    if isinstance(last, (ast.With, ast.AsyncWith)):
        return _ends(last.body)
    if isinstance(last, ast.Try):
        if last.finalbody and _ends(last.finalbody):
            return True
        main = _ends(last.body) or (bool(last.orelse) and _ends(last.orelse))
        return main and all(_ends(h.body) for h in last.handlers)
    return False


def _rebinds(stmt: ast.stmt, names: set[str], deep: bool) -> bool:
    """`stmt` binds one of `names`, assigns into one, or holds a `return` (with `deep`)."""
    for node in ast.walk(stmt):
        if isinstance(node, ast.Name) and node.id in names and not isinstance(node.ctx, ast.Load):
            return True
        if isinstance(node, (ast.Import, ast.ImportFrom)) and any(
            (a.asname or a.name.split(".")[0]) in names for a in node.names
        ):
            return True
        if isinstance(node, (ast.Attribute, ast.Subscript)) and not isinstance(node.ctx, ast.Load):
            root = node.value
            while isinstance(root, (ast.Attribute, ast.Subscript)):
                root = root.value
            if isinstance(root, ast.Name) and root.id in names:
                return True
        if deep and isinstance(node, (ast.Return, *SCOPES)):
            return True
    return False


def _rebinds_any(deco: ast.FunctionDef, names: set[str], wrappers) -> bool:
    """The decorator's body (outside the wrapper) binds `fn` or the wrapper's name again."""
    for stmt in deco.body:
        if stmt in wrappers:
            continue
        if _rebinds(stmt, names, deep=False):
            return True
    return False


__all__ = ["EVALS", "PASSES", "decorator_verdict"]
