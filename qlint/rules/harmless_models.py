"""What a caller may pass a helper that captures its parameter without making the capture
wrong: an eval-mode model, a construction with nothing mode-dependent in it, a graph whose
mode its own capture fixed (`harmless_model`); a part of what it passes, found by the steps
the helper takes to it (`harmless_part`); and a `self.<attr>` whose mode its class gives every
instance (`harmless_for_every_instance`). The caller verdicts (`caller_verdicts`,
`ruled_out_branches`) ask these of each call they read.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.constructor_flags import other_arm_ruled_out
from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.model_apis import argument_for
from qlint.analysis.flow.model_values import (
    ATTR,
    CALLED_AFTER_STORE,
    CONTAINER,
    GRAPH_KINDS,
    IN_MODE,
    ITEM,
    PAIRS,
    STORED,
    VALUES,
    ModeFact,
)
from qlint.analysis.flow.store_then_call import reached_elsewhere
from qlint.analysis.flow.switched_parts import eval_switched_part, partial
from qlint.analysis.flow.switched_subclasses import subclassed, vouched_for_every_instance
from qlint.analysis.names.scope import parameter_args
from qlint.rules.base import FileContext
from qlint.rules.capture_content import changed_after_build

# `self.<attr>` facts that hold for every instance unless the class is subclassed.
IN_MODE_KINDS = (IN_MODE, CALLED_AFTER_STORE)


def harmless_for_every_instance(ctx: FileContext, home: FileContext, fact: ModeFact, harmless: bool) -> bool:
    """What a caller in module `home` passes is harmless for every instance of its class: a
    mode its class's `__init__` gave the attribute holds unless a subclass may build its
    instances otherwise (`switched_subclasses`), and the other arm of a branch on a flag
    there is harmless when every construction selects the eval arm (`constructor_flags`)."""
    if fact.origin is None or fact.origin.kind not in (STORED, *IN_MODE_KINDS):
        return harmless
    try:
        if fact.origin.kind in IN_MODE_KINDS:
            # `self.model` that every store in its class leaves in eval mode, or that the one
            # caller of the method reading it stored right before calling it: so for every
            # instance unless a subclass (which may store it otherwise, or override that
            # caller) exists in the project, and, for the latter, nothing else reaches the method.
            if not harmless or subclassed(home, fact.origin.node):
                return False
            return fact.origin.kind == IN_MODE or not reached_elsewhere(ctx, home, fact.origin.node)
        if harmless and vouched_for_every_instance(home, fact):
            return True
        return other_arm_ruled_out(home, fact)
    finally:
        if home is not ctx:
            # What those searches read is what this check's answer depends on.
            ctx.project.hand_over_dependencies(home.path, ctx.path)


def harmless_model(fact: ModeFact, flows: list[FunctionFlow], call: ast.Call, holder: FunctionFlow | None) -> bool:
    """An eval-mode model, or a construction known in full with nothing mode-dependent, not
    given parts between its construction and this call, or a graph (`ep.module()`, a prepared
    or converted model): its mode was fixed by the capture that made it, judged where that
    is prepared, as a caller in the helper's own module is read (`capture_common.reasons`); or
    what a project function without a result returned: None, no model (`none_results`)."""
    if fact.state == "eval":
        return True
    if fact.state == "unset" and fact.origin is not None and fact.origin.kind in GRAPH_KINDS:
        return True
    from qlint.analysis.flow.none_results import none_result

    if none_result(fact, flows):
        return True
    built = fact.origin.built if fact.origin is not None else None
    if built is None:
        return False
    # A helper's container around an evaled module, or an `nn.Sequential` around evaled
    # modules, handed on as it was returned or built (`Built.content_as_returned`).
    content = built.content_as_returned({fact})
    if content.dependent or not content.complete:
        return False
    return not changed_after_build(flows, [built], frozenset({id(call)}), holder)


def harmless_part(path: tuple | None, func: ast.AST, index: int):
    """The test of what a caller passes for parameter `index` of `func`, whose part (`path`:
    the steps from the parameter, `model_values.part_of`) the helper captures: the part,
    found by those steps in a container or a bundle the caller writes in the call or builds
    just for it (`_handed_over`), is harmless, and so is an attribute of a model the caller
    switched to eval and gave no parts since (`switched_parts`). A part whose steps were not
    followed: every model of a container written in the call is."""
    if path is None:
        return _harmless_items
    params = [a.arg for a in parameter_args(func, star=False)]
    # `self.helper(models)`: the receiver is the first parameter, not the call's first argument.
    bound = 1 if params and params[0] in ("self", "cls") else 0

    def harmless(fact: ModeFact, flows: list[FunctionFlow], call: ast.Call, holder: FunctionFlow | None, param=None):
        offset = bound if isinstance(call.func, ast.Attribute) else 0
        argument = argument_for(call, index - offset, params[index] if index < len(params) else None)
        # The project functions the caller hands the model to, but for the helper judged here.
        sites = [*holder.calls, *(site for _, site in holder.foreign_calls)] if holder is not None else []
        sites = [site for site in sites if site.call is not call]
        body = holder.node if holder is not None else None
        kept = partial(holder.kept, holder.itself) if holder is not None else None
        if eval_switched_part(fact, path, argument, body, sites, kept):
            return True
        return _handed_over(fact, argument, holder) and _harmless_at(fact, path, flows, call, holder, True, param)

    return harmless


def _harmless_at(
    fact: ModeFact, path: tuple, flows, call: ast.Call, holder: FunctionFlow | None, top=False, param=None
) -> bool:
    """What `path` leads to from `fact`'s object is harmless: an item of a container written
    in the call, an attribute a bundle stores as it was given (`held_contents`), or any part of
    an eval-mode model or of a graph that the caller put there (`top`: the argument itself,
    whose mode may be a wrapper's, the modes of the modules it wraps, which say nothing of
    its other attributes). `param(fact)`: whether a model that is the caller's own parameter,
    put there as it came, is harmless (its own callers decide)."""
    if not path:
        return harmless_model(fact, flows, call, holder) or (param is not None and param(fact))
    origin = fact.origin
    step, rest = path[0], path[1:]
    if fact.state == "unset" and origin is not None and origin.kind == CONTAINER:
        if step[0] in (VALUES, PAIRS):  # `.values()` captured as it is: the container
            return _harmless_at(fact, rest, flows, call, holder, top, param)
        # An item, by key or by position: any of them.
        return step[0] == ITEM and all(_harmless_at(f, rest, flows, call, holder, False, param) for f in origin.items)
    if origin is not None and origin.fields is not None:
        # An attribute the class does not store (or an item of the bundle): not the caller's.
        held = dict(origin.fields).get(step[1]) if step[0] == ATTR else None
        return held is not None and all(_harmless_at(f, rest, flows, call, holder, False, param) for f in held)
    # A part of an eval-mode model is in eval mode; a part of a graph is a graph's.
    if top:
        return False
    return fact.state == "eval" or (fact.state == "unset" and origin is not None and origin.kind in GRAPH_KINDS)


def _handed_over(fact: ModeFact, argument: ast.expr | None, holder: FunctionFlow | None) -> bool:
    """The object came to the helper as the caller wrote it: the construction or literal
    `fact` comes from is the argument, or is bound by `name = <it>` to a name of the caller
    that nothing else reads (nor rebinds) besides this argument, so no attribute or item of
    it was changed on the way. A container or bundle the caller was handed itself holds what
    its own callers put in it; one handed back by a helper of the module may have been."""
    node = fact.origin.node if fact.origin is not None else None
    if node is None or argument is None:
        return False
    if argument is node:
        return True
    return isinstance(argument, ast.Name) and holder is not None and _bound_for(holder.node, argument, node)


def _bound_for(body: ast.AST, argument: ast.Name, value: ast.AST) -> bool:
    """`name = value` in the innermost function of `body` holding `argument`, and `name`'s
    only other appearance there (nested functions included; for a global, in the whole
    module) is `argument`."""
    scope = innermost(body, argument)
    name = argument.id
    seen = [n for n in ast.walk(scope) if isinstance(n, ast.Name) and n.id == name]
    if len(seen) != 2 or not any(n is argument for n in seen):
        return False
    store = next(n for n in seen if n is not argument)
    if not isinstance(store.ctx, ast.Store):
        return False
    bound = next((n for n in ast.walk(scope) if isinstance(n, ast.Assign) and n.targets == [store]), None)
    if bound is None or bound.value is not value:
        return False
    # `global name` / `nonlocal name` elsewhere would let another scope rebind or change it.
    return not any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(body))


def innermost(body: ast.AST, node: ast.AST) -> ast.AST:
    """The innermost function of `body` whose lines hold `node` (`body` itself when none):
    the last such of a breadth-first walk, as each lies inside the one before."""
    row = node.lineno
    found = body
    for n in ast.walk(body):
        if n is not body and isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.lineno <= row <= n.end_lineno:
            found = n
    return found


def _harmless_items(
    fact: ModeFact, flows: list[FunctionFlow], call: ast.Call, holder: FunctionFlow | None, param=None
) -> bool:
    """A container written in the call whose every model (also in containers it holds) is
    harmless (`param`: as in `_harmless_at`)."""
    origin = fact.origin
    if fact.state != "unset" or origin is None or origin.kind != CONTAINER:
        return False
    return all(
        _harmless_items(f, flows, call, holder, param)
        or harmless_model(f, flows, call, holder)
        or (param is not None and param(f))
        for f in origin.items
    )
