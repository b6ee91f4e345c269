"""Whether every call path into a helper either hands it a harmless model or rules out the
branch that reaches `prepare_pt2e`.

A shared PTQ/QAT helper (`_generate_ref_quantized_model(mod, inputs, is_qat=False)`)
captures whatever its callers pass and prepares for PTQ only under `not is_qat`; a test
utility (`get_exported_graph(model, ..., qmode=QuantizationMode.NONE)`) returns before
`prepare_pt2e` unless a caller asks for another mode. Whether the capture is right is
decided call by call: a call that passes an eval-mode model is right whatever the branch; a
call whose arguments (or the defaults it leaves) contradict the branch conditions is right
whatever the model; a call that forwards its own parameters (`is_qat=is_qat`, `model`)
hands the question to its own callers, level by level (`call_sites`). A call that is none of
these, or a function whose callers are not all known, decides against the helper.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from qlint.analysis.context import FileContext
from qlint.analysis.flow.call_sites import KEPT, Home, Site, each_site, readable_sites
from qlint.analysis.flow.dead_branches import defaults, holds, on_name, rebound
from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.kept_call_paths import path_verdicts
from qlint.analysis.flow.kept_caller_verdicts import Verdicts
from qlint.analysis.flow.kept_qat_callers import handovers
from qlint.analysis.flow.model_values import PARAM, Guard, ModeFact
from qlint.value_classes import value_class

_MAX_LEVELS = 6
Harmless = Callable[[ModeFact, Site], bool]
Hit = Callable[[ModeFact, Site, int], bool]


@value_class(frozen=True)
class Need:
    """A branch condition on a parameter of the function walked that the path requires."""

    name: str
    right: str  # "" for a truth test (`if is_qat:`), else the comparison and its right side: `== "qat"`, `is None`
    polarity: bool
    home: object  # the `Resolver` of the module the condition is written in (reads `right`)

    def condition(self) -> str:
        return f"{self.name} {self.right}" if self.right else self.name

    def on(self, name: str) -> Need:
        return Need(name, self.right, self.polarity, self.home)


Needs = frozenset[Need]


def vouched_on_every_path(
    ctx: FileContext,
    home: Home,
    fn: FunctionFlow,
    paths: list[tuple[ModeFact, list[Guard]]],
    harmless: Harmless,
    flow: str | None = None,
) -> bool:
    """`paths`: a mode the capture in `fn` may be in, with the guards of the prepare calls it
    may reach. True when no call into `fn` can take one of them with a model that is not
    harmless. `flow`: the rule's flow ("ptq", "qat") `harmless` judges for: the answers on
    the project's other modules are then kept between runs (`kept_call_paths`)."""
    for fact, guards in paths:
        origin = fact.origin
        model = None
        if fact.state == "unset" and origin is not None and origin.kind == PARAM and origin.node is fn.node:
            model = origin.index
        needsets = tuple(_needs(fn, fact.guard | guard) for guard in guards)
        if not needsets or (model is None and not all(needsets)):
            return False
        kept = path_verdicts(ctx, flow, model, needsets) if flow is not None else None
        if not _walk(ctx, home, fn, model, needsets, harmless, 0, frozenset(), kept):
            return False
    return True


def handed_on_some_path(
    ctx: FileContext, home: Home, fn: FunctionFlow, paths: list[tuple[ModeFact, list[Guard]]], hits: Hit
) -> list[tuple[Site, ModeFact, int, Site | None]]:
    """The mirror of `vouched_on_every_path`: the calls into `fn` (or into the callers that
    hand it their own parameter, level by level) that pass a model `hits` accepts, and whose
    arguments take the branch of a prepare call for sure (a condition they cannot decide counts
    as taken), themselves or through a call above that decides the flags they hand on
    (`f(model, is_qat)` calling `helper(model.eval(), is_qat)`, called with `is_qat=True`).
    Each with the fact passed, the index of the parameter it is passed for and that call
    above (None: the call decides). A use that cannot be read adds no call and hides none."""
    out: list[tuple[Site, ModeFact, int, Site | None]] = []
    for fact, guards in paths:
        origin = fact.origin
        if fact.state != "unset" or origin is None or origin.kind != PARAM or origin.node is not fn.node:
            continue
        needsets = tuple(_needs(fn, fact.guard | guard) for guard in guards)
        if needsets and origin.index is not None:
            # What each caller module of the project adds is kept between runs when it is
            # nothing (`kept_qat_callers`): every model passed there is seen by `hits` first.
            kept = handovers(ctx, origin.index, needsets)

            def watched(fact: ModeFact, site: Site, index: int, hits: Hit = hits, kept: Verdicts = kept) -> bool:
                if fact.state == "eval":
                    # Judged from what is read across the project (`qat_callers._risky`): the
                    # module read now is not kept, whatever `hits` answers.
                    kept.taint()
                return hits(fact, site, index)

            seen = watched if kept is not None else hits
            _collect(ctx, home, fn, origin.index, needsets, seen, 0, frozenset(), out, kept)
    return out


def _collect(
    ctx, home: Home, fn: FunctionFlow, model: int, needsets, hits: Hit, level: int, seen, out, kept=None
) -> None:
    step = (id(fn.node), model, needsets)
    if step in seen or level > _MAX_LEVELS:
        return
    seen = seen | {step}
    for site in readable_sites(ctx, home, fn.node, kept):
        alive = [f for needs in needsets if (f := _at_call(site, fn, needs)) is not None]
        if not alive:
            continue  # every prepare call's branch is ruled out by this call's arguments
        above: Site | bool | None = False  # the call that decides the flags handed on, when asked
        for fact in site.site.args.get(model, ()):
            if hits(fact, site, model):
                if not all(alive):  # a branch taken whatever the callers' callers pass
                    out.append((site, fact, model, None))
                    continue
                if above is False:
                    above = _taken_above(ctx, site.home, site.holder, tuple(alive), level + 1, seen)
                if above is not None:
                    out.append((site, fact, model, above))
            elif _own_parameter(fact, site):
                _collect(ctx, site.home, site.holder, fact.origin.index, tuple(alive), hits, level + 1, seen, out)


def _taken_above(ctx, home: Home, fn: FunctionFlow, needsets, level: int, seen) -> Site | None:
    """A call into `fn` (or into a caller handing on the flags, level by level) whose arguments
    take one of the branches `needsets` describe (on `fn`'s parameters) for sure; None when
    every readable call rules them all out, or hands them on to callers not found."""
    step = (id(fn.node), None, needsets)
    if step in seen or level > _MAX_LEVELS:
        return None
    seen = seen | {step}
    for site in readable_sites(ctx, home, fn.node):
        alive = [f for needs in needsets if (f := _at_call(site, fn, needs)) is not None]
        if not alive:
            continue
        if not all(alive):
            return site
        found = _taken_above(ctx, site.home, site.holder, tuple(alive), level + 1, seen)
        if found is not None:
            return found
    return None


def _own_parameter(fact: ModeFact, site: Site) -> bool:
    """The caller's own parameter, as its callers passed it."""
    origin = fact.origin
    return (
        fact.state == "unset"
        and origin is not None
        and origin.kind == PARAM
        and origin.index is not None
        and origin.node is site.holder.node
    )


def on_params(fn: FunctionFlow, guard: Guard) -> bool:
    """Some condition of the guard tests one of `fn`'s parameters: a call may decide it."""
    return bool(_needs(fn, guard))


def _needs(fn: FunctionFlow, guard: Guard) -> Needs:
    """The conditions of a guard on `fn`'s own parameters (others cannot be decided by a call)."""
    out = set()
    for condition, polarity in guard:
        name = on_name(condition)
        if name in fn.params and not rebound(fn.node, name):
            right = condition[len(name) + 1 :]
            out.add(Need(name, right, polarity, fn.resolver))
    return frozenset(out)


def _walk(ctx, home: Home, fn: FunctionFlow, model, needsets, harmless: Harmless, level: int, seen, kept=None) -> bool:
    """`kept` (the first level only): the answers on the project's other modules, kept between
    runs; one kept stands for its calls, all of them decided at the call."""
    step = (id(fn.node), model, needsets)
    if step in seen:
        return True  # a cycle adds no caller: the ones outside it are checked on their own
    if level > _MAX_LEVELS:
        return False
    seen = seen | {step}
    called = False
    for site in each_site(ctx, home, fn.node, kept=kept):
        if site is None:
            return False  # a use that cannot be read: its callers are not all known
        called = True
        if site is KEPT:
            continue  # a caller module an earlier run found deciding every call of it
        vouched = _vouched_at(ctx, site, fn, model, needsets, harmless, level, seen, kept)
        # Not held while the next call is found: a caller module read apart goes once its
        # calls are (`project_callers.each_project_call`).
        site = None
        if not vouched:
            return False
    return called  # nobody calls it: it is there for callers qlint cannot see


def _vouched_at(
    ctx, site: Site, fn: FunctionFlow, model, needsets, harmless: Harmless, level: int, seen, kept=None
) -> bool:
    """`_walk`'s verdict on one call into `fn`. `kept`: the module read now is not kept when
    the call hands the question on to its own callers (what that walk reads is not named)."""
    alive = []
    for needs in needsets:
        forwarded = _at_call(site, fn, needs)
        if forwarded is not None:
            alive.append(forwarded)
    if not alive:
        return True  # every prepare call's branch is ruled out by this call's arguments
    safe, up = _passed_model(site, model, harmless)
    if safe:
        return True
    if up is None and not all(alive):
        return False
    if kept is not None:
        kept.taint()
    return _walk(ctx, site.home, site.holder, up, tuple(alive), harmless, level + 1, seen)


def _at_call(site: Site, fn: FunctionFlow, needs: Needs) -> Needs | None:
    """None when the call contradicts one of the needs; else the ones handed on to the caller's
    own parameters (the others hold, or cannot be known)."""
    out = set()
    for need in needs:
        expr, reader = _argument(site, fn, need.name)
        verdict = holds(need.condition(), expr, reader, need.home) if reader is not None else None
        if verdict is (not need.polarity):
            return None
        if verdict is None and isinstance(expr, ast.Name) and _forwards(site.holder, expr.id):
            out.add(need.on(expr.id))
    return frozenset(out)


def _argument(site: Site, fn: FunctionFlow, name: str):
    """(the expression the parameter gets at the call, the resolver that reads it)."""
    index = fn.params.index(name)
    if index in site.site.exprs:
        return site.site.exprs[index], site.holder.resolver
    if site.site.open_ended():
        return None, None
    default = defaults(fn.node).get(name)
    return (default, fn.resolver) if default is not None else (None, None)


def _forwards(holder: FunctionFlow, name: str) -> bool:
    """`is_qat=is_qat`: the caller's own parameter, as its callers passed it."""
    return (
        isinstance(holder.node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and name in holder.params
        and not rebound(holder.node, name)
    )


def _passed_model(site: Site, model: int | None, harmless: Harmless) -> tuple[bool, int | None]:
    """(True, None): a harmless model; (False, index): the caller's own parameter, as its
    callers passed it; (False, None): any other model."""
    facts = site.site.args.get(model) if model is not None else None
    if not facts:
        return False, None
    up = None
    for fact in facts:
        if harmless(fact, site):
            continue
        origin = fact.origin
        if fact.state != "unset" or origin is None or origin.kind != PARAM or origin.node is not site.holder.node:
            return False, None
        if up is not None and up != origin.index:
            return False, None
        up = origin.index
    return up is None, up


__all__ = ["Need", "handed_on_some_path", "on_params", "vouched_on_every_path"]
