"""Whether the callers of a helper vouch for the mode of the model it captures.

A helper that captures its parameter without `eval()` relies on its callers. When every
caller in the project, in its own module or in others (`project_callers`), passes an
eval-mode model or one whose mode cannot change the graph, the capture is right and is not
reported. One caller that cannot be classified (a model from a loader, a loop item, its own
parameter, a use of the helper that is not a plain call) keeps the report: the helper is then
judged as if its callers were unknown (issue 14, item 7). A helper nobody calls is not
vouched for either: it is there for callers qlint cannot see, unless it is a plain function
of a test module that nothing names (dead code: nothing can call it).
"""

from __future__ import annotations

import ast
import re
import weakref

from qlint.analysis.flow.call_paths import on_params, vouched_on_every_path
from qlint.analysis.flow.call_sites import Home, Site, calls_all_known, calls_read_here, checked_home, rows_naming
from qlint.analysis.flow.constructor_flags import other_arm_ruled_out
from qlint.analysis.flow.decorator_registries import REGISTRY_RESULT, class_key
from qlint.analysis.flow.function_flows import CallSite
from qlint.analysis.flow.kept_caller_verdicts import Verdicts
from qlint.analysis.flow.model_apis import argument_for
from qlint.analysis.flow.model_flow import (
    PARAM,
    STORED,
    Capture,
    FunctionFlow,
    ModeFact,
    caller_facts,
    capture_holder,
    compatible,
)
from qlint.analysis.flow.model_values import (
    ATTR,
    CALLED_AFTER_STORE,
    CONSTRUCTED,
    CONTAINER,
    GRAPH_KINDS,
    IN_MODE,
    ITEM,
    PAIRS,
    PARAM_PART,
    VALUES,
)
from qlint.analysis.flow.pass_through import evaled_parameters
from qlint.analysis.flow.project_callers import KeptCalls, ProjectCall, analysed_flows, each_project_call
from qlint.analysis.flow.read_only_params import reads_only
from qlint.analysis.flow.store_then_call import reached_elsewhere
from qlint.analysis.flow.switched_parts import eval_switched_part, kept_until, partial
from qlint.analysis.flow.switched_subclasses import subclassed, vouched_for_every_instance
from qlint.analysis.flow.unread_uses import unread_use
from qlint.analysis.graphs.skipped_tests import never_runs
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.tree_walk import own_nodes, walk_kinds
from qlint.rules.base import FileContext
from qlint.rules.capture_content import changed_after_build
from qlint.rules.handed_parameters import kept, taking
from qlint.rules.judged_bodies import one_call

# Functions of other modules handing on their own parameter, followed up to their callers at most.
_MAX_HANDED = 3
_NAMES = frozenset({ast.Name})
_CALLS = frozenset({ast.Call})
_FLOW = "caller_verdicts.model_flow"  # on a caller module's context: the analysis its calls were read in

# `self.<attr>` facts that hold for every instance unless the class is subclassed.
_IN_MODE = (IN_MODE, CALLED_AFTER_STORE)


def vouched_by_callers(ctx: FileContext, cap: Capture, flow: str, flows: list[FunctionFlow]) -> bool:
    """Every path to the capture starts at a caller that passes a harmless model, and at least
    one path goes through the helper's parameter. (A helper nothing runs is left to `dead_code`.)
    An item of the parameter (`for name, m in models.items()`) is vouched for by callers that
    all write the container in the call, holding harmless models only, when the helper adds
    nothing to it (`read_only_params`); a field or an item of a bundle (`artifact.model`,
    `artifact.data["forward"]`) by callers that build it in the call or just for it, from a
    class that stores what it is given unchanged (`held_contents`, `_harmless_part`); a
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
        _callers_harmless(ctx, flows, func, index, _harmless_part(path, func, index)) for func, index, path in parts
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


def branch_ruled_out(ctx: FileContext, cap: Capture, flow: str, flows: list[FunctionFlow]) -> bool:
    """The prepare calls the capture reaches lie in branches on the helper's parameters, and
    every call path into the helper either rules them out by its arguments or passes a
    harmless model (`call_paths`).

    For QL201 (`flow` "ptq") the modes at stake are those that are not eval, and a model in
    eval mode (or one with nothing mode-dependent) is harmless. For QL202 ("qat") the
    mirror: the eval-mode facts are at stake, and only a model whose mode cannot change the
    graph is harmless; the helper set eval itself, so in practice only the callers' flags
    (`is_qat=False`) can rule its QAT branch out."""
    sinks = cap.flows(flow)
    at_stake = (lambda f: f.state != "eval") if flow == "ptq" else (lambda f: f.state == "eval")
    facts = [f for f in cap.modes_for(flow) if at_stake(f)]
    # The branch may be the prepare call's or the mode's own (`if calibrate: model.eval()`,
    # called with `calibrate=True`, never captures the model as it came).
    if not any(s.guard for s in sinks) and not any(f.guard for f in facts):
        return False
    holder = capture_holder(flows, cap)
    paths = [(fact, [s.guard for s in sinks if compatible(fact.guard, s.guard)]) for fact in facts]
    if holder is None or not any(on_params(holder, fact.guard | g) for fact, guards in paths for g in guards):
        return False  # nothing a caller's argument could decide: the verdict above stands

    def harmless(fact: ModeFact, site: Site) -> bool:
        if flow != "ptq" and fact.state == "eval":
            return False
        return _harmless(fact, site.home.flows(), site.site.call, site.holder)

    return vouched_on_every_path(ctx, checked_home(ctx), holder, paths, harmless, flow)


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
            return _harmless(fact, flows, call, holder)

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
        same = [(c, f) for c, f in same if not _selected_out(_site_of(flows, func, c), select)]
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
        elif not _instances_harmless(ctx, ctx, fact, harmless(fact, flows, call, holder)):
            return False
    called = bool(same)
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
        if (select is not None and _selected_out(found.site, select)) or _keyed_elsewhere(ctx, found.site):
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
        elif not _passes_harmless(ctx, found, harmless, seen, select, verdicts):
            if _never_runs(found):
                continue
            return False
        called = True
        if verdicts is not None:
            verdicts.vouched()
    return called


def _passes_harmless(ctx: FileContext, found: ProjectCall, harmless, seen: frozenset, select, verdicts) -> bool:
    """Every model the found call passes is harmless, or is its maker's own parameter, handed
    on as it came, and its callers pass harmless ones (`_handed_on`)."""
    flows = list(found.flows)
    # The facts of one call (a loop over `[Conv2dSingle(), Conv2dSequential()]`) ask the same
    # of the same bodies: answered once (`judged_bodies`).
    with one_call():
        for fact in found.facts:
            if _instances_harmless(ctx, found.module[0], fact, harmless(fact, flows, found.call, found.flow)):
                continue
            if verdicts is not None:
                verdicts.taint()  # its callers' search is not among what the kept verdict read
            if not _handed_on(ctx, found, fact, seen, select):
                return False
    return True


def _plain(found: ProjectCall) -> bool:
    """The found call is judged from what its module's analysis read alone: no registry's
    dispatch (`_keyed_elsewhere`, `_selected_out`: the registry's closure is searched), no
    registry result (the checked module's analysis reads its class, `registry_results`), no
    `self.model` stored by a constructor or in a known mode (its subclasses are searched,
    `_instances_harmless`)."""
    if found.site is None or found.site.selection is not None:
        return False
    return all(f.origin is None or f.origin.kind not in (STORED, *_IN_MODE, REGISTRY_RESULT) for f in found.facts)


def _never_runs(found: ProjectCall) -> bool:
    """The call is made by a function of that module that unittest skips on every run
    (`skipped_tests.never_runs`): it passes nothing, and vouches for nothing either."""
    return found.module is not None and never_runs(found.module[0], found.flow.node)


def _instances_harmless(ctx: FileContext, home: FileContext, fact: ModeFact, harmless: bool) -> bool:
    """What a caller in module `home` passes is harmless for every instance of its class: a
    mode its class's `__init__` gave the attribute holds unless a subclass may build its
    instances otherwise (`switched_subclasses`), and the other arm of a branch on a flag
    there is harmless when every construction selects the eval arm (`constructor_flags`)."""
    if fact.origin is None or fact.origin.kind not in (STORED, *_IN_MODE):
        return harmless
    try:
        if fact.origin.kind in _IN_MODE:
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
    if _innermost(func, call) is not func or not any(n is call for n in ast.walk(func)):
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
        after = _forwarded(found, node, select) if select is not None else _selection(ctx, found, node)
        return _callers_harmless(other, flows, node, origin.index, None, seen, after)
    finally:
        # What that search read is what this check's answer depends on.
        ctx.project.hand_over_dependencies(other.path, ctx.path)


def _selection(ctx: FileContext, found: ProjectCall, node: ast.AST) -> tuple[int, frozenset[str]] | None:
    """The parameter of `node` and the class keys that must be passed there for the found call
    (a registry's dispatch in `node`) to reach the capture, when the registry is closed."""
    selection = found.site.selection if found.site is not None else None
    from qlint.analysis.flow.registry_closure import closed

    if selection is None or selection.owner is not node or not closed(ctx, selection):
        return None
    return selection.index, selection.keys


def _forwarded(found: ProjectCall, node: ast.AST, select: tuple[int, frozenset[str]]):
    """`select` on the caller's own parameter, when the found call passes that parameter, as
    it came, for the selecting one (`def quantize_for(model, config): prepare(model, config)`)."""
    index, keys = select
    site = found.site
    origins = site.origins.get(index) if site is not None and site.origins else None
    if not origins or any(o.kind != PARAM or o.node is not node or o.index is None for o in origins):
        return None
    indices = {o.index for o in origins}
    return (indices.pop(), keys) if len(indices) == 1 else None


def _keyed_elsewhere(ctx: FileContext, site: CallSite | None) -> bool:
    """A registry's dispatch whose key, known at the call, selects another class, in a closed
    registry (`decorator_registries.Selection` without a parameter)."""
    selection = site.selection if site is not None else None
    from qlint.analysis.flow.registry_closure import closed

    return selection is not None and selection.index is None and closed(ctx, selection)


def _site_of(flows: list[FunctionFlow], func: ast.AST, call: ast.Call) -> CallSite | None:
    return next((c for f in flows for c in f.calls if c.call is call and c.callee is func), None)


def _selected_out(site: CallSite | None, select: tuple[int, frozenset[str]]) -> bool:
    """The call passes, for the selecting parameter, only constructions of classes that are
    not among the keys: `type(config)` picks another class of the registry."""
    index, keys = select
    origins = site.origins.get(index) if site is not None and site.origins else None
    if not origins:
        return False
    return all(
        o.kind == CONSTRUCTED and getattr(o.built, "cls", None) is not None and class_key(o.built.cls) not in keys
        for o in origins
    )


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


def _harmless(fact: ModeFact, flows: list[FunctionFlow], call: ast.Call, holder: FunctionFlow | None) -> bool:
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


def _harmless_part(path: tuple | None, func: ast.AST, index: int):
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
        return _harmless(fact, flows, call, holder) or (param is not None and param(fact))
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
    scope = _innermost(body, argument)
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


def _innermost(body: ast.AST, node: ast.AST) -> ast.AST:
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
        or _harmless(f, flows, call, holder)
        or (param is not None and param(f))
        for f in origin.items
    )


__all__ = ["branch_ruled_out", "holding_flow", "vouched_by_callers"]
