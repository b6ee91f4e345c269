"""What a container a helper builds holds in the slots its parameters fill.

`def make_block(m): return nn.Sequential(m, nn.Linear(3, 3))`: read alone, `m` may be anything,
so the container's content is unknown, and a capture of what `make_block(...)` returns was
reported in train mode whatever its callers pass. The container's own `training` flag is True,
but only its parts' modes matter, and a construction switches none of them. So each call binds
`m` to what it passes (`bind`, from `helper_calls.apply`): a module in eval mode (`net.eval()`,
a local evaled before) stays so while nothing switches the container or that module; a module
in train mode holds what its construction holds (a mode-free layer, a project class judged
mode-free, or BatchNorm that the message then names); a call leaving the parameter to its
default passes that; anything else (a parameter of the caller whose callers are not read, an
unknown call's result) stays unknown. A helper calling a helper binds the inner one's slot to
its own parameter, which its callers bind in turn.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_values import PARAM, ModeFact, Origin
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk_kinds
from qlint.value_classes import replace, value_class


@value_class(frozen=True)
class Slot:
    """One argument of a construction that passes a parameter of the function building it."""

    arg: int  # id of the argument node
    facts: frozenset  # the modes of what it holds: the parameter's own until a call binds them
    default: ast.expr | None = None  # the parameter's default value, read where a call leaves it
    defaulted: bool = False  # a call left the parameter to its default
    # The call's argument is a name the calling function switches to train mode somewhere: an
    # eval-mode module passed there may not stay so (`fixed` reading).
    switchable: bool = False
    # `*ms` of the function's own `*ms`: the position of the first argument it takes, until a
    # call binds it to the modes of what it passes from there.
    rest: int | None = None


def slots_of(func: ast.AST, node: ast.AST, args: list, wrapped_ids: set[int], env) -> tuple[Slot, ...]:
    """The slots of the construction `node` met in `func`'s walk: its arguments that are no
    module it wraps (`wrapped_ids`, ids of their objects) and hold a parameter of `func`
    (`*ms` too, of the function's own `*ms`). `args`: the objects of its positional
    arguments, then of its keyword ones."""
    if not isinstance(node, ast.Call):
        return ()
    pairs = list(zip(node.args, args, strict=False))
    if len(args) == len(node.args) + len(node.keywords) and all(kw.arg for kw in node.keywords):
        pairs += zip([kw.value for kw in node.keywords], args[len(node.args) :], strict=True)
    out = []
    for expr, obj in pairs:
        if isinstance(expr, ast.Starred):
            if _own_rest(func, expr.value):
                positional = func.args.posonlyargs + func.args.args
                out.append(Slot(id(expr), frozenset(), rest=len(positional)))
            continue
        if obj is None or id(obj) in wrapped_ids or isinstance(expr, ast.Call):
            continue
        params = [o for o in obj.origins if o.kind == PARAM and o.node is func]
        if not params:
            continue
        default = _default(func, params[0].index) if len(params) == 1 else None
        out.append(Slot(id(expr), frozenset(env.facts(obj)), default))
    return tuple(out)


def slot_of(slots: tuple[Slot, ...], arg: ast.expr) -> Slot | None:
    for slot in slots:
        if slot.arg == id(arg):
            return slot
    return None


def built_default(slot: Slot) -> ast.Call | None:
    """The call a slot's call left to the parameter's default builds (`m=nn.ReLU()`): read as
    a call written in the construction is (`built_models.Built._arguments`)."""
    return slot.default if slot.defaulted and isinstance(slot.default, ast.Call) else None


def slot_content(slot: Slot, found: set[str], fixed: bool) -> bool:
    """Add what the module in `slot` may hold that makes the mode matter; False when it may
    hold what we cannot see. `fixed`: the container was not switched since its helper handed
    it back, so a module passed in eval mode stays in eval mode. (A default that builds is
    `built_default`'s.)"""
    if slot.defaulted:
        return isinstance(slot.default, ast.Constant) and slot.default.value is None  # None: no module
    if slot.rest is not None:
        return False  # the `*args` of a call not read
    complete = True
    for fact in slot.facts:
        if fact.state == "eval" and fixed and not slot.switchable:
            continue
        inner = fact.origin.built if fact.origin is not None else None
        if fact.state not in ("train", "eval") or inner is None:
            return False
        content = inner.content()
        found.update(content.dependent)
        complete &= content.complete
    return complete


def bind(origins, before, after, call: ast.Call, callee: ast.AST, subst, left, switchable, rest):
    """`origins` and `after` (the modes `subst` made of `before`, what the helper `callee`
    returns there) with each construction holding slots bound at `call`: a slot holding a
    parameter of `callee` holds what the call passes for it (`subst`), or its default where
    `left(index)` says the call leaves it; `switchable(index)`: the call's argument may be
    switched later; `rest(index)`: the modes of what the call passes from that position on,
    for `*ms` (None: not known). Each construction also keeps the modes it is handed back in
    (`returned`), or none once the helper's own modes of it are not those it was built or
    handed in (`s.train()` in the helper)."""
    bound: dict[int, object] = {}
    for origin in origins:
        built = origin.built
        if built is None or not getattr(built, "slots", ()) or id(built) in bound:
            continue
        slots = tuple(_bound(s, callee, subst, left, switchable, rest) for s in built.slots)
        kept = built.returned is not None and all(_unguarded(f) in built.returned for f in before)
        bound[id(built)] = replace(built, slots=slots, returned=frozenset() if not kept else None)
    if not bound:
        return origins, after
    origins = {_rebuilt(o, bound, call) for o in origins}
    after = frozenset(replace(f, origin=_rebuilt(f.origin, bound, call)) if f.origin is not None else f for f in after)
    for built in bound.values():
        if built.returned is None:  # as they now are, rebound at this call
            built.returned = modes_of(after)
    return origins, after


def modes_of(facts) -> frozenset:
    """`facts` as a construction keeps them (`returned`): the branches they lie in left out."""
    return frozenset(_unguarded(f) for f in facts)


def returned_so(built, facts) -> bool:
    """The capture sees `built` only in the modes its helper handed it back in."""
    returned = getattr(built, "returned", None)
    return bool(returned) and bool(facts) and all(_unguarded(f) in returned for f in facts)


def switched_name(func: ast.AST, expr: ast.expr) -> bool:
    """`expr` (a call's argument: `n`, `n.eval()`, `m.encoder`) names a module that `func`
    switches with `.train(...)` somewhere (`n.train()`, `n.encoder.train()`)."""
    root = _root(expr)
    return root is not None and root in kept_on_node(func, _TRAINED, _trained_roots)


def _trained_roots(func: ast.AST) -> frozenset[str]:
    """The names whose module (or a part of it) `func` switches with `.train(...)`."""
    out = set()
    for node in walk_kinds(func, _CALLS):
        if isinstance(node.func, ast.Attribute) and node.func.attr == "train":
            root = _root(node.func.value)
            if root is not None:
                out.add(root)
    return frozenset(out)


def _root(expr: ast.expr) -> str | None:
    while True:
        if isinstance(expr, (ast.Attribute, ast.Subscript)):
            expr = expr.value
        elif isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            expr = expr.func.value  # `n.eval()`, `n.to(device)`: `n` itself
        else:
            return expr.id if isinstance(expr, ast.Name) else None


_CALLS = frozenset({ast.Call})
_TRAINED = "_qlint_trained_roots"


def _bound(slot: Slot, callee: ast.AST, subst, left, switchable, rest) -> Slot:
    if slot.rest is not None:
        # What the call passes from that position on; unknown where it cannot be listed.
        found = rest(slot.rest)
        facts, moved = found if found is not None else (frozenset({ModeFact("unknown", None)}), False)
        return replace(slot, facts=facts, rest=None, switchable=moved)
    params = {f.origin.index for f in slot.facts if _param_of(f, callee)}
    if not params:
        return slot
    if len(params) == 1 and slot.default is not None and left(next(iter(params))):
        return replace(slot, facts=frozenset(), defaulted=True)
    moved = any(switchable(i) for i in params)
    return replace(slot, facts=subst(slot.facts), switchable=slot.switchable or moved)


def _param_of(fact, callee: ast.AST) -> bool:
    origin = fact.origin
    return fact.state == "unset" and origin is not None and origin.kind == PARAM and origin.node is callee


def _rebuilt(origin, bound: dict, call: ast.Call):
    """`origin` with its construction bound at `call`, a new origin for each call (`bound_at`):
    merged with another call's, each keeps what it holds."""
    built = origin.built
    if built is None or id(built) not in bound:
        return origin
    return replace(origin, built=bound[id(built)], bound_at=call)


def _unguarded(fact):
    """`fact` as `returned` keeps it: no branches, and its origin bare of what is not part of its
    identity (`Origin.built` and the like). Kept whole, a construction's `returned` held its own
    origin, whose `built` is the construction: a cycle holding the module's syntax tree, which
    the checks leave to the cyclic collector they pause (`gc_pause`), ~50% more peak memory
    on ExecuTorch."""
    origin = fact.origin
    if origin is not None:
        origin = Origin(origin.kind, origin.node, origin.index, origin.name, bound_at=origin.bound_at)
    return replace(fact, guard=frozenset(), origin=origin)


def _own_rest(func: ast.AST, name: ast.expr) -> bool:
    """`name` is `func`'s own `*args` parameter, never rebound in it."""
    args = getattr(func, "args", None)
    vararg = args.vararg if isinstance(args, ast.arguments) else None
    if vararg is None or not isinstance(name, ast.Name) or name.id != vararg.arg:
        return False
    return not any(
        isinstance(n, ast.Name) and n.id == name.id and not isinstance(n.ctx, ast.Load) for n in ast.walk(func)
    )


def _default(func: ast.AST, index: int | None) -> ast.expr | None:
    """The default value of parameter `index` of `func` (as `parameter_args` orders them)."""
    args = getattr(func, "args", None)
    if index is None or not isinstance(args, ast.arguments):
        return None
    positional = [*args.posonlyargs, *args.args]
    if index < len(positional):
        first = len(positional) - len(args.defaults)
        return args.defaults[index - first] if index >= first else None
    kw = index - len(positional)
    return args.kw_defaults[kw] if kw < len(args.kw_defaults) else None


__all__ = [
    "Slot",
    "bind",
    "built_default",
    "modes_of",
    "returned_so",
    "slot_content",
    "slot_of",
    "slots_of",
    "switched_name",
]
