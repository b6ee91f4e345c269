"""Whether the callers of a helper vouch for the mode of the model it captures.

A helper that captures its parameter without `eval()` relies on its callers. When every
caller in the project, in its own module or in others (`project_callers`), passes an
eval-mode model or one whose mode cannot change the graph, the capture is right and is not
reported. One caller that cannot be classified (a model from a loader, a loop item, its own
parameter, a use of the helper that is not a plain call) keeps the report: the helper is then
judged as if its callers were unknown (issue 14, item 7). A helper nobody calls is not
vouched for either: it is there for callers qlint cannot see, unless it is a plain function
of a test module that nothing names (dead code: nothing can call it).

What one call may pass (`harmless_models`) and whether a registry's dispatch lets it reach
the capture at all (`dispatch_selections`) are their own modules' questions; the verdict on
callers that rule out the capture's branch is `ruled_out_branches`.
"""

from __future__ import annotations

import ast
import re
import weakref

from qlint.analysis.flow.call_sites import Home, calls_all_known, calls_read_here, rows_naming
from qlint.analysis.flow.caller_modules import analysed_flows
from qlint.analysis.flow.constructor_flags import other_arm_ruled_out
from qlint.analysis.flow.decorator_registries import REGISTRY_RESULT
from qlint.analysis.flow.dispatch_selections import (
    forwarded,
    keyed_elsewhere,
    reaching_selection,
    selected_out,
    site_of,
)
from qlint.analysis.flow.function_flows import CallSite
from qlint.analysis.flow.kept_caller_verdicts import Verdicts
from qlint.analysis.flow.model_flow import (
    PARAM,
    STORED,
    Capture,
    FunctionFlow,
    ModeFact,
    caller_facts,
    capture_holder,
)
from qlint.analysis.flow.model_values import ATTR, PARAM_PART
from qlint.analysis.flow.pass_through import evaled_parameters
from qlint.analysis.flow.project_callers import KeptCalls, ProjectCall, each_project_call
from qlint.analysis.flow.read_only_params import reads_only
from qlint.analysis.flow.switched_parts import kept_until, partial
from qlint.analysis.flow.unread_uses import unread_use
from qlint.analysis.graphs.skipped_tests import never_runs
from qlint.analysis.names.functions import bodies
from qlint.analysis.tree_walk import own_nodes, walk_kinds
from qlint.rules.base import FileContext
from qlint.rules.handed_parameters import kept, taking
from qlint.rules.harmless_models import (
    IN_MODE_KINDS,
    harmless_for_every_instance,
    harmless_model,
    harmless_part,
    innermost,
)
from qlint.rules.judged_bodies import judged_before, one_call

# Functions of other modules handing on their own parameter, followed up to their callers at most.
_MAX_HANDED = 3
_NAMES = frozenset({ast.Name})
_CALLS = frozenset({ast.Call})
_FLOW = "caller_verdicts.model_flow"  # on a caller module's context: the analysis its calls were read in


def vouched_by_callers(ctx: FileContext, cap: Capture, flow: str, flows: list[FunctionFlow]) -> bool:
    """Every path to the capture starts at a caller that passes a harmless model, and at least
    one path goes through the helper's parameter. (A helper nothing runs is left to `dead_code`.)
    An item of the parameter (`for name, m in models.items()`) is vouched for by callers that
    all write the container in the call, holding harmless models only, when the helper adds
    nothing to it (`read_only_params`); a field or an item of a bundle (`artifact.model`,
    `artifact.data["forward"]`) by callers that build it in the call or just for it, from a
    class that stores what it is given unchanged (`held_contents`, `harmless_part`); a
    `self.model` stored from `__init__`'s parameter by the constructions of its class, in its
    module and across the project (`construction_references`). A `self.model` that `__init__`
    switched before storing it (`switched_params`) is in that mode for every instance of a
    class nothing subclasses, and the other arm of `__init__`'s branch on a flag is ruled out
    when every construction selects the eval arm (`constructor_flags`)."""
    facts = cap.modes_for(flow)
    helpers = set()
    parts = set()
    decorated = False
    for fact in facts:
        if fact.state == "eval" or other_arm_ruled_out(ctx, fact):
            # (The other arm of a branch of `__init__` that no construction selects.)
            continue
        origin = fact.origin
        if fact.state == "unset" and origin is not None and origin.kind == PARAM_PART:
            func = _own_parameter(flows, cap, origin)
            if func is None:
                return False
            parts.add((func, origin.index, origin.path))
            continue
        if fact.state != "unset" or origin is None or origin.kind not in (PARAM, STORED) or origin.index is None:
            return False
        if origin.kind == PARAM and _evaled_by_decorator(ctx, origin.node, origin.index):
            decorated = True  # every call runs a decorator's wrapper that evals the parameter first
            continue
        # `self.model` stored from `__init__`'s parameter: the constructions are its callers.
        helpers.add((origin.node, origin.index))
    if not helpers and not parts:
        return decorated
    return all(_callers_harmless(ctx, flows, func, index) for func, index in helpers) and all(
        _callers_harmless(ctx, flows, func, index, harmless_part(path, func, index)) for func, index, path in parts
    )


def _evaled_by_decorator(ctx: FileContext, func: ast.AST, index: int) -> bool:
    """`func`, a function or method of this module, is under decorators of the project whose
    wrappers hand it parameter `index` in eval mode (`pass_through.evaled_parameters`)."""
    if not getattr(func, "decorator_list", None):
        return False
    body = ctx.tree.body
    here = any(n is func for n in body) or any(n is func for c in body if isinstance(c, ast.ClassDef) for n in c.body)
    return here and index in evaled_parameters(ctx, func)


def _own_parameter(flows: list[FunctionFlow], cap: Capture, origin) -> ast.AST | None:
    """The function whose own parameter the part was taken from, when that is the function
    holding the capture, it only reads the parameter, and the part was taken in its own body
    (not in a helper's, whose capture reached it through a return)."""
    holder = capture_holder(flows, cap)
    index = origin.index
    if holder is None or origin.owner is not holder.node or index is None or index >= len(holder.params):
        return None
    if not isinstance(holder.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return None
    # An attribute of the model (`model.model`): what the helper does to its other parts, or
    # after the capture (`model.model = prepare_pt2e(...)`), leaves the captured part as it
    # came; an item of a container: the helper adds nothing to it anywhere.
    attrs = origin.path is not None and all(step[0] == ATTR for step in origin.path)
    sites = [*holder.calls, *(site for _, site in holder.foreign_calls)]
    kept = partial(holder.kept, holder.itself)
    if attrs and not kept_until(holder.node, holder.params[index], origin.path, cap.call, sites, kept):
        return None
    if not attrs and not reads_only(holder.node, index):
        return None
    if not any(n is origin.node for n in own_nodes(holder.node, scopes=False)):
        return None
    return holder.node


def _callers_harmless(
    ctx: FileContext,
    flows: list[FunctionFlow],
    func: ast.AST,
    index: int,
    harmless=None,
    seen=frozenset(),
    select: tuple[int, frozenset[str]] | None = None,
) -> bool:
    """Every caller passes a harmless model (`harmless`: the test of what a call passes;
    by default the model itself, with the callers' own parameters followed up to theirs: in
    this module while every caller of theirs is read here, and past that, through this same
    test of each such caller's own callers, in the project). `select`: (a parameter, the
    class keys) such that a call passing a construction of another class there does not reach
    the capture (a registry's dispatch, `decorator_registries`): such calls are passed over."""
    if unread_use(ctx, flows, func):
        return False
    part = harmless is not None
    # The verdict asked of the helper itself: each caller module's, when every call there is
    # read the plain way, is kept between runs (`kept_caller_verdicts`).
    verdicts = Verdicts(ctx, index) if not part and not seen and select is None else None
    if harmless is None:
        seen = seen | {(id(func), index)}
        own = flows

        def harmless(fact: ModeFact, flows: list[FunctionFlow], call: ast.Call, holder) -> bool:
            # What a registry's class hands back as it was given (`registry_results`): the
            # argument of that earlier call decides, read the same way.
            from qlint.analysis.flow.registry_results import carried

            given = carried(ctx, ctx.cache.get("model_flow.analysis") or ctx.cache.get(_FLOW), fact)
            if given is not None:
                return bool(given) and all(again()(f, flows, call, holder) for f in given)
            # A parameter of a function of this module where `caller_facts` stopped: its
            # callers, here and in the project, are read the same way.
            origin = fact.origin
            if fact.state == "unset" and origin is not None and origin.kind == PARAM and origin.index is not None:
                if (id(origin.node), origin.index) in seen:
                    return True  # a cycle adds no caller: the ones outside it are checked on their own
                if flows is own and any(f.node is origin.node for f in own):
                    return _callers_harmless(ctx, own, origin.node, origin.index, None, seen)
            return harmless_model(fact, flows, call, holder)

        # Recursion through a weak reference: a closure over itself would be a cycle through
        # the check's context, freed only by the cyclic collector.
        again = weakref.ref(harmless)
        here = lambda f: calls_read_here(ctx, f)  # noqa: E731
        same = caller_facts(flows, func, index, lambda f: calls_all_known(ctx, f), here)
        if same is None and any(c.callee is func and index in c.args for f in flows for c in f.calls):
            # Calls here on instances (`b.quantize(m)`) that count only when every call of the
            # method is known, and not all are: what they pass is not read, so it vouches for nothing.
            return False
        same = same or []
    else:
        # A container the caller was handed itself holds what its own callers put in it, and
        # they are not followed: only a container written in the call counts.
        same = [(c.call, fact) for f in flows for c in f.calls if c.callee is func for fact in _passed(c, index)]
    if select is not None:
        same = [(c, f) for c, f in same if not selected_out(site_of(flows, func, c), select)]
    for call, fact in same:
        holder = holding_flow(flows, call)
        if part:
            # A model the caller put in the bundle from its own parameter (`helper(Artifact(data=
            # {"forward": model}))`): its own callers here and in the project decide, as for a
            # parameter handed on whole.
            points = taking(call, fact)
            local = lambda f, call=call, points=points: _own_parameter_harmless(ctx, flows, f, call, points, seen)  # noqa: E731
            if not harmless(fact, flows, call, holder, local):
                return False
        elif not harmless_for_every_instance(ctx, ctx, fact, harmless(fact, flows, call, holder)):
            return False
    called = bool(same)
    judged: dict = {}  # calls found harmless with no caller of theirs read (`judged_before`)
    # Module by module: the first caller that passes a risky model (or a use that cannot be
    # read) decides, and the modules after it are not analysed.
    for found in each_project_call(ctx, func, index, verdicts):
        if found is None:
            return False
        if isinstance(found, KeptCalls):
            called = True  # every call there passes a harmless model, as a run before judged
            continue
        if verdicts is not None and not _plain(found):
            verdicts.taint()
        if (select is not None and selected_out(found.site, select)) or keyed_elsewhere(ctx, found.site):
            continue  # hands the dispatch a config of another class: the capture is not reached
        if part:
            facts = _passed(found.site, index, found.facts) if found.site is not None else found.facts

            # A model of the bundle that is the caller's own parameter: its callers decide.
            def foreign(f: ModeFact, found: ProjectCall = found, facts=facts) -> bool:
                points = frozenset().union(*(taking(found.call, top) for top in facts))
                return kept(list(found.flows), found.flow, f, points) and _handed_on(
                    ctx, found, f, seen | {(id(func), index)}
                )

            if not all(harmless(f, list(found.flows), found.call, found.flow, foreign) for f in facts):
                if _never_runs(found):
                    continue
                return False
        elif not judged_before(judged, found) and not _passes_harmless(
            ctx, found, harmless, seen, select, verdicts, judged
        ):
            if _never_runs(found):
                continue
            return False
        called = True
        if verdicts is not None:
            verdicts.vouched()
    return called


def _passes_harmless(
    ctx: FileContext, found: ProjectCall, harmless, seen: frozenset, select, verdicts, judged: dict | None = None
) -> bool:
    """Every model the found call passes is harmless, or is its maker's own parameter, handed
    on as it came, and its callers pass harmless ones (`_handed_on`). `judged`: where a call
    whose models are all harmless themselves is kept (`judged_bodies.judged_before`)."""
    flows = list(found.flows)
    alone = True
    # The facts of one call (a loop over `[Conv2dSingle(), Conv2dSequential()]`) ask the same
    # of the same bodies: answered once (`judged_bodies`).
    with one_call():
        for fact in found.facts:
            if harmless_for_every_instance(ctx, found.module[0], fact, harmless(fact, flows, found.call, found.flow)):
                continue
            alone = False
            if verdicts is not None:
                verdicts.taint()  # its callers' search is not among what the kept verdict read
            if not _handed_on(ctx, found, fact, seen, select):
                return False
    if alone and judged is not None:
        judged.setdefault((id(found.call), id(found.flow)), []).append(found)
    return True


def _plain(found: ProjectCall) -> bool:
    """The found call is judged from what its module's analysis read alone: no registry's
    dispatch (`keyed_elsewhere`, `selected_out`: the registry's closure is searched), no
    registry result (the checked module's analysis reads its class, `registry_results`), no
    `self.model` stored by a constructor or in a known mode (its subclasses are searched,
    `harmless_for_every_instance`)."""
    if found.site is None or found.site.selection is not None:
        return False
    return all(f.origin is None or f.origin.kind not in (STORED, *IN_MODE_KINDS, REGISTRY_RESULT) for f in found.facts)


def _never_runs(found: ProjectCall) -> bool:
    """The call is made by a function of that module that unittest skips on every run
    (`skipped_tests.never_runs`): it passes nothing, and vouches for nothing either."""
    return found.module is not None and never_runs(found.module[0], found.flow.node)


def holding_flow(flows: list[FunctionFlow], call: ast.Call) -> FunctionFlow | None:
    """The innermost analysed body holding `call`: the function making it rather than the
    module around it, whose body holds every function's code too."""
    holding = [f for f in flows if any(n is call for n in walk_kinds(f.node, _CALLS))]
    return min(holding, key=lambda f: _span(f.node), default=None)


def _span(node: ast.AST) -> int:
    end = getattr(node, "end_lineno", None)
    return end - node.lineno if end is not None else 1 << 30


def _own_parameter_harmless(
    ctx: FileContext, flows: list[FunctionFlow], fact: ModeFact, call: ast.Call, points: frozenset[int], seen: frozenset
) -> bool:
    """`fact` is a parameter, as it came (nothing switched it before the call), of the function
    of the checked module that makes `call` itself (not a function nested in it, which may run
    later), and its callers pass harmless models for it."""
    origin = fact.origin
    if origin is None or origin.kind != PARAM or (id(origin.node), origin.index) in seen:
        return False
    func = origin.node
    holder = next((f for f in flows if f.node is func), None)
    # `kept` asks the rest: the parameter as it came, nothing added to it on the way.
    if holder is None or not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    if innermost(func, call) is not func or not any(n is call for n in ast.walk(func)):
        return False
    if not kept(flows, holder, fact, points):
        return False
    return _callers_harmless(ctx, flows, func, origin.index, None, seen | {(id(func), origin.index)})


def _passed(site: CallSite, index: int, default: frozenset[ModeFact] = frozenset()) -> frozenset[ModeFact]:
    """What a call passes for a parameter whose parts a helper reads: with what a bundle
    holds at the call (`held_contents`)."""
    held = site.held.get(index) if site.held else None
    return held if held is not None else site.args.get(index, default)


def _handed_on(
    ctx: FileContext, found: ProjectCall, fact: ModeFact, seen: frozenset, select: tuple | None = None
) -> bool:
    """A caller in another module that hands on its own parameter (`def quantize(model):
    helper(model)`): harmless when that function's own callers are, read the same way in
    the project (`_MAX_HANDED` modules up). A module-level function: its calls in its own
    module (`main()` of the same script) are read from the bodies that name it there
    (`_naming_bodies`), and a use there that is no call read keeps it unknown. `select`: what
    the found call must pass to reach the capture (`_callers_harmless`); a config the caller
    hands on from its own parameter puts the same condition on its own callers."""
    origin = fact.origin
    node = origin.node if origin is not None else None
    if fact.state != "unset" or origin.kind != PARAM or origin.index is None or node is not found.flow.node:
        return False
    if found.module is None or (id(node), origin.index) in seen or len(seen) > _MAX_HANDED:
        return False
    other = found.module[0]
    # That module's analysis, for the classes its registry dispatch may select (`registry_results`).
    other.cache.setdefault(_FLOW, found.module[1])
    if other.scope.functions.get(node.name) is not node:
        return False
    flows = _naming_bodies(found, node.name)
    if flows is None:
        return False  # named in a class body: no flow is read there
    try:
        after = forwarded(found, node, select) if select is not None else reaching_selection(ctx, found, node)
        return _callers_harmless(other, flows, node, origin.index, None, seen, after)
    finally:
        # What that search read is what this check's answer depends on.
        ctx.project.hand_over_dependencies(other.path, ctx.path)


def _naming_bodies(found: ProjectCall, name: str) -> list[FunctionFlow] | None:
    """The bodies of the caller's module analysed so far, with every one whose text names
    `name` analysed too (its calls of the function handing the model on are then read), or
    None when a class body names it. A module that names it once (its `def`) adds none."""
    other, flow, analysed, _ = found.module
    if len(re.findall(rf"(?<!\w){re.escape(name)}(?!\w)", other.text)) > 1:
        home = Home(other, flow, analysed)
        rows = rows_naming(other, name)
        for body in bodies(other.tree, other.scope, other.cache):
            if not any(n.id == name for n in body.nodes(rows, _NAMES)):
                continue
            if isinstance(body.node, ast.ClassDef):
                return None
            home.body(body.node, body.class_scope)
    return analysed_flows(analysed)


__all__ = ["holding_flow", "vouched_by_callers"]
