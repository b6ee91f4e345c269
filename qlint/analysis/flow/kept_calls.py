"""Which calls of a walked body hand back the module they are given in the mode it was in.

The walk asks this of each call (`CallSemantics.call`) and records the answer on the body's
`FunctionFlow.kept` (call id -> the argument handed back), which `switched_parts` reads: a store
of such a call's result over the very part it was given (`model.model = torch.compile(
model.model)`), or over a child of a `named_children()` loop (`setattr(m, name,
torch.compile(child))`), gives that part no module of another mode. What the call returns is,
for the walk, the object it was given, so an eval-mode model stays one through it.

Kept are: the library calls `mode_keeping.LIBRARY` names; a call of a local name every
assignment binds to such a callable (`compile_fn = torch.compile` or `= compile_regions`); a
call of a project function (stored back over the part it takes) that returns its first
parameter as it came on every path, switches nothing and gives that parameter's parts only such
kept stores; the construction of a project class whose instances copy the module they are
given whole (`mode_keeping.copied_parameter`); and a body's call of itself, which is kept when
the rest of the body is (the judgement reads it so, by induction on the depth of the modules).
Anything else, and any call whose callee cannot be resolved, is not.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow import helper_callees
from qlint.analysis.flow.mode_keeping import LIBRARY, argument, bindings, configured, copied_parameter, init_of
from qlint.analysis.flow.model_values import PARAM
from qlint.analysis.flow.switched_parts import changes_parts
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import parameter_args

_MODULE = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


def kept_argument(sem, node: ast.Call, name: str | None, found) -> ast.expr | None:
    """The argument `node` hands back in its mode (`name`: the callee's qualified name;
    `found`: what `helper_callees.callee` answered for it), or None."""
    walked = sem.walk.func
    keeper = LIBRARY.get(name) if name is not None else None
    if keeper is not None:
        if configured(keeper, node, walked, sem.walk.qualname):
            return argument(node, keeper.position, keeper.keyword)
        return None
    if found is not None:
        _, callee, _, offset = found
        if offset or not (callee is walked or _stored_back(sem, node)):
            return None
        first = _first_param(callee)
        if first is None:
            return None
        if callee is walked:
            return argument(node, 0, first)  # kept if the rest of this body is
        return argument(node, 0, first) if keeps(sem, found) else None
    func = node.func
    if isinstance(func, ast.Name) and func.id in sem.resolver.local:
        # Most local names called hold a model (`model(x)`): the body's bindings say so at once.
        if not all(isinstance(v, ast.Name | ast.Attribute) for v in sem.resolver.local[func.id]):
            return None
        values = bindings(walked, func.id)
        if values and all(_keeping_callable(sem, v) for v in values):
            return argument(node, 0, "")  # only positionally: the callables may name it apart
        return None
    return _copied(sem, node, name) if _in_children_loop(sem) else None


def _in_children_loop(sem) -> bool:
    """The call lies in a loop over `<module>.named_children()`, where a copy of the child
    may be stored back in its place (the only place `switched_parts` reads one)."""
    for stmt in sem.walk.stmt_stack:
        if type(stmt) is ast.For:
            it = stmt.iter
            if type(it) is ast.Call and type(it.func) is ast.Attribute and it.func.attr == "named_children":
                return True
    return False


def _first_param(func: ast.AST) -> str | None:
    params = parameter_args(func, star=False)
    return params[0].arg if params else None


def _stored_back(sem, node: ast.Call) -> bool:
    """`x.part = f(x.part, ...)`: the shape worth judging the project function for."""
    stmts = sem.walk.stmt_stack
    stmt = stmts[-1] if stmts else None
    if not isinstance(stmt, ast.Assign) or stmt.value is not node or len(stmt.targets) != 1 or not node.args:
        return False
    target = stmt.targets[0]
    return isinstance(target, ast.Attribute) and ast.unparse(target) == ast.unparse(node.args[0])


def _keeping_callable(sem, expr: ast.expr) -> bool:
    """`expr` (what an alias is bound to) names a library call kept without conditions, or a
    project function `keeps` holds for."""
    if not isinstance(expr, (ast.Name, ast.Attribute)):
        return False
    keeper = LIBRARY.get(sem.walk.qualname(expr))
    if keeper is not None:
        return keeper.config is None
    found = helper_callees.callee(sem, expr)
    return found is not None and not found[3] and found[1] is not sem.walk.func and keeps(sem, found)


def keeps(sem, found) -> bool:
    """The project function returns its first parameter as it came on every path, switches
    no module, and gives that parameter's parts only kept stores (`switched_parts`)."""
    summary = sem.helper(None, found)
    if summary is None:
        return False
    flow = summary[0]
    if flow.keeps is not None:
        return flow.keeps
    callee = found[1]
    first = _first_param(callee)
    flow.keeps = bool(
        first is not None
        and flow.returns
        and not flow.switches
        and all(_returns_first(env, obj, callee) for env, obj in flow.returns)
        and not changes_parts(callee, first, flow.kept)
    )
    return flow.keeps


def _returns_first(env, obj, callee: ast.AST) -> bool:
    if obj is None:
        return False
    facts = env.facts(obj)
    return bool(facts) and all(
        f.state == "unset"
        and f.origin is not None
        and f.origin.kind == PARAM
        and f.origin.index == 0
        and f.origin.node is callee
        for f in facts
    )


def _copied(sem, node: ast.Call, name: str | None) -> ast.expr | None:
    """The module a construction of a class that copies it whole is given."""
    built = sem.builds.construction(node, name)
    cls = built.cls if built is not None else None
    cls_node = cls.node if cls is not None else None
    if not isinstance(cls_node, ast.ClassDef) or not cls_node.bases:
        return None
    # A plain `nn.Module` subclass: a base of its own could set the mode in ways not read here.
    resolver = Resolver(cls.scope, sem.owner.project, sem.owner.optable)
    if any(resolver.qualname(b) not in _MODULE for b in cls_node.bases) or cls_node.keywords:
        return None
    param = copied_parameter(cls_node)
    if param is None:
        return None
    params = [a.arg for a in parameter_args(init_of(cls_node), star=False)]
    return argument(node, params.index(param) - 1, param)


__all__ = ["keeps", "kept_argument"]
