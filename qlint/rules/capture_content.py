"""What QL201 and QL202 say about the model's content: the submodules that make its mode matter.

A capture in the wrong mode changes only what depends on `self.training` (batch norm,
dropout, code reading the flag). Where the model's class resolves, the message names those
parts, or says that none was found; where a part of it does not resolve, it says nothing.
Where everything the captured model can be resolves and none holds such a part, its mode
cannot change the graph and the capture is not reported (`mode_free`).
"""

from __future__ import annotations

import ast

from qlint.analysis import tree_walk
from qlint.analysis.flow.call_sites import calls_read_here
from qlint.analysis.flow.class_contents import Content
from qlint.analysis.flow.class_filters import covered
from qlint.analysis.flow.evaled_wrappers import evaled_candidates
from qlint.analysis.flow.given_parts import CHANGES
from qlint.analysis.flow.loop_aliases import loop_aliases
from qlint.analysis.flow.model_flow import ATTRIBUTE, PARAM, STORED, Capture, FunctionFlow, caller_facts, capture_holder
from qlint.analysis.flow.product_items import product_sources
from qlint.analysis.flow.unread_uses import unread_use
from qlint.rules.judged_bodies import judged
from qlint.rules.model_bindings import binding_ends
from qlint.rules.model_changes import READS, BodyIndex, body_index, changed_in, held_names
from qlint.rules.replaced_parts import content_without, graph_replaced

_NAMED = 2  # models named in one message; more is noise


def content_note(cap: Capture, flow: str, flows: list[FunctionFlow]) -> str:
    """`; `Net` holds BatchNorm2d and Dropout, ...` for the message, or "" when nothing is known."""
    builds = _builds(cap, flow, flows)
    changed = _changed_after_build(cap, flows, builds)  # parts added later: "none found" is not known
    return builds_note(builds, changed)


def builds_note(builds: list, changed: bool = True) -> str:
    """The same for these constructions (`changed`: one may have been given parts after its
    build, so "none found" is not said)."""
    notes: list[str] = []
    for content in _joined(builds):
        name = f"`{content.name}`"
        if content.dependent:
            parts = [p if p != "`self.training`" else "code reading `self.training`" for p in content.dependent]
            held = ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else parts[0]
            notes.append(f"in {name}, the mode changes {held}")
        elif content.complete and not changed:
            notes.append(f"no batch norm, dropout or `self.training` was found in {name}, so its mode may not matter")
    return "".join(f"; {n}" for n in list(dict.fromkeys(notes))[:_NAMED])  # one class built twice: one note


def _joined(builds: list) -> list[Content]:
    """The content of each construction, one for those of one call (a helper's container bound
    at several calls, `held_slots`): what any of them holds, known when all are."""
    joined: dict[int, Content] = {}
    for built in builds:
        content = built.content()
        was = joined.get(id(built.call))
        if was is not None:
            dependent = tuple(sorted({*was.dependent, *content.dependent}))
            content = Content(was.name, dependent, was.complete and content.complete)
        joined[id(built.call)] = content
    return list(joined.values())


def mode_free(cap: Capture, flow: str, flows: list[FunctionFlow], ctx) -> bool:
    """Every construction the captured model may come from is known in full and holds nothing
    whose behaviour depends on the mode. One origin we cannot follow (a parameter whose callers
    we do not see, a factory, a load, a module from elsewhere) and the mode may matter."""
    facts = cap.modes_for(flow)
    origins = [*cap.origins, *(f.origin for f in facts if f.origin is not None)]
    if not facts or not origins:
        return False
    builds = []
    switched = [f.parts[0] for f in facts if f.parts and f.node is f.parts[0].switch]
    switched_here = bool(switched)
    # The classes switched one at a time (`looped_switches`); None: a part, which may hold anything.
    kinds = None if any(p.kinds is None for p in switched) else frozenset().union(*(p.kinds for p in switched))
    evaled = []
    own = set()  # the constructions the capture's own name holds (`replaced_parts`)
    handed: dict[int, set] = {}
    for origin in dict.fromkeys(origins):
        if origin.kind == ATTRIBUTE:
            # `self.model` built in the class: judged as that construction when nothing else
            # in the module writes it or gives it parts (a stored parameter is not judged here).
            from qlint.rules.attribute_content import kept_source

            origin = kept_source(ctx.tree, origin, READS, CHANGES)
            if origin is None:
                return False
        if origin.built is not None:
            builds.append(origin.built)
            own.add(id(origin.built))
            continue
        if origin.kind not in (PARAM, STORED):
            return False
        callers = caller_facts(flows, origin.node, origin.index, here=lambda f: calls_read_here(ctx, f))
        if not callers or unread_use(ctx, flows, origin.node):
            return False  # a use in a lambda or a callback passes a model we did not see
        if origin.kind == PARAM and not calls_read_here(ctx, origin.node):
            return False  # callers in other modules: what they pass is not known here
        # A caller that passes an eval-mode model is harmless whatever the model holds, unless
        # the capture's function switches parts of it itself (`part_modes`); the others must
        # each pass a model known in full.
        risky = [f for _, f in callers if f.state != "eval" or switched_here]
        if any(f.origin is None or f.origin.built is None for f in risky):
            return False
        builds.extend(f.origin.built for f in risky if f.state != "eval")
        for f in risky:  # the modes a caller hands each construction on in (`held_slots`)
            if f.state != "eval" and f.origin.built.slots:
                handed.setdefault(id(f.origin.built), set()).add(f)
        evaled.extend(f.origin.built for f in risky if f.state == "eval")
    # Parts replaced by converted graphs before the capture: their mode was fixed by their own.
    replaced = graph_replaced(ctx, cap, flows) if own else None
    # A child put back in eval mode stays so while nothing switches the whole model again:
    # each fact is the fresh construction's train mode, not a `.train()`/`.eval()`.
    unswitched = all(
        f.origin is not None and f.origin.built is not None and f.node is f.origin.built.call for f in facts
    )
    for built in builds:
        content = built.content()
        if not content.complete and not content.dependent and unswitched and not switched_here:
            # A wrapper around a model its function evaled: that model's mode is fixed.
            evaled_inside = _evaled_parts(built)
            content = built.content(evaled_inside) if evaled_inside else content
        if (content.dependent or not content.complete) and replaced is not None and id(built) in own:
            content = content_without(built, replaced.attrs) or content
        if not switched_here and flow == "ptq":
            # A helper's container around what its call passed, or an `nn.Sequential` built
            # around evaled modules: a module passed in eval mode stays so while nothing
            # switched the container since (`held_slots`, `constructed_values._fixed_parts`). For
            # a QAT capture such a module is what is wrong: it is read with the rest.
            content = built.content_as_returned(handed.get(id(built), facts), content)
        if content.dependent or not content.complete:
            return False
    for built in evaled:
        # Evaled by the caller: only what the capture's function switched back can matter.
        content = built.content()
        if not content.complete or (kinds is None and content.dependent) or covered(content.dependent, kinds or ()):
            return False
    ignored = frozenset((replaced.name, row) for row in replaced.rows) if replaced is not None else frozenset()
    return not _changed_after_build(cap, flows, [*builds, *evaled], ignored, unswitched)


def _evaled_parts(built) -> frozenset[str]:
    """The names a class written in the building function stores that hold a model that
    function evaled (`evaled_wrappers`) and neither gives parts nor hands to a call."""
    cls = built.cls
    if cls is None or cls.around is None or built.func is None:
        return frozenset()
    names = evaled_candidates(built.func, cls.node, built.call)
    if not names:
        return names
    body = body_index(built.func)
    touched = {root for root, _ in body.changes} | {root for _, roots in body.handed for root in roots}
    return names - touched


def _changed_after_build(
    cap: Capture,
    flows: list[FunctionFlow],
    builds: list,
    ignored: frozenset[tuple[str, int]] = frozenset(),
    unswitched: bool = False,
) -> bool:
    """A model given parts or hooks after it was built (`model.fc = head`, `model[0] = ...`,
    `setattr(model, ...)`) may hold more than its class says. Read in the functions that build
    it or capture it, for the names it is bound to there. `ignored`: (name, row) changes that
    are no new parts (`replaced_parts`); `unswitched`: the model is never switched, so a child
    stored evaled is no new part either (`converted_children`)."""
    points = {id(cap.call)}
    for origin in {*cap.origins, *(f.origin for f in cap.modes if f.origin is not None)}:
        if origin.kind in (PARAM, STORED):
            points.update(id(call) for call, _ in caller_facts(flows, origin.node, origin.index) or ())
    holder = capture_holder(flows, cap)
    captured = cap.model.id if holder is not None and isinstance(cap.model, ast.Name) else None
    return changed_after_build(flows, builds, frozenset(points), holder, captured, ignored, unswitched)


def changed_after_build(
    flows,
    builds: list,
    points: frozenset[int],
    holder: FunctionFlow | None = None,
    captured: str | None = None,
    ignored: frozenset[tuple[str, int]] = frozenset(),
    unswitched: bool = False,
) -> bool:
    """The same for any capture point: `points` are the ids of the calls that take the graph
    (the capture, or the call handing the model to the helper that captures it), `captured`
    the name the model has there, in the body `holder`."""
    calls = {id(b.call) for b in builds}
    rows = [(b.call.lineno, b.call.end_lineno) for b in builds]
    helpers = _Helpers(flows)
    # A body ending above every construction holds none (`_within`): most bodies of a caller's
    # module, passed over without asking each row.
    least = min(end for _, end in rows) if rows else 0
    for fn in flows:
        name = captured if fn is holder else None
        if not name and (not rows or (not isinstance(fn.node, ast.Module) and fn.node.end_lineno < least)):
            continue
        names = {name} if name else set()
        if not names and not any(_within(fn.node, row) for row in rows):
            continue  # neither captures it nor holds a construction: nothing of it is read
        body = body_index(fn.node)
        start = None
        for call in calls & body.bound_by.keys():
            for row, targets in body.bound_by[call]:
                names.update(targets)
                start = row if start is None else min(start, row)
        if not names:
            continue
        kept = ignored if fn is holder else frozenset()
        # The facts of one judged call ask this of the same body again (`judged_bodies`).
        key = (id(fn.node), frozenset(names), name, start, points, kept, unswitched)
        args = (fn.node, body, names, name, start, points, helpers, kept, unswitched)
        if judged(key, flows, _changed_here, *args):
            return True
    return False


class _Helpers:
    """id(call) -> the helper it calls, for the calls of every flow: read once, when a body
    first asks (most askings pass every body over)."""

    __slots__ = ("_flows", "_map")

    def __init__(self, flows):
        self._flows = flows
        self._map: dict[int, ast.AST] | None = None

    def get(self) -> dict[int, ast.AST]:
        if self._map is None:
            self._map = {id(c.call): c.callee for f in self._flows for c in f.calls}
        return self._map


def _changed_here(
    node: ast.AST,
    body: BodyIndex,
    names: set[str],
    name: str | None,
    start: int | None,
    points: frozenset[int],
    helpers: _Helpers,
    kept: frozenset[tuple[str, int]],
    unswitched: bool,
) -> bool:
    """`changed_after_build` for one body `node` (`body`: its index) holding the model under `names`."""
    # Where the model was built here, a name rebound to another object (`m = ep.module()`)
    # or copied for the capture no longer holds it afterwards.
    ends = binding_ends(node, names, name, start, points) if start is not None else {}
    # Loop targets over a container holding the model hold it too (`loop_aliases`).
    aliases = frozenset()
    if body.loops:
        products = product_sources(node)[0] if body.comprehensions else None
        aliases = loop_aliases(body.loops, _holds(names, ends), points, body.rows(node), products)
    return changed_in(body, names, helpers.get(), 0, ends, points, kept, unswitched, aliases)


def _holds(names: set[str], ends: dict[str, int]):
    """Whether a name holds the model at a line (`model_changes.held_names`)."""
    return lambda name, row: name in held_names(names, ends, row)


def _within(fn: ast.AST, rows: tuple[int, int]) -> bool:
    """A node on these lines may be one of `fn`'s (a node of another file may share them).
    Its decorators are its nodes too, on the lines above `def`."""
    if isinstance(fn, ast.Module):
        return True
    # Asked of every body analysed in a caller's module for each call it makes (ExecuTorch's
    # Qualcomm tests: ~100,000 times): the end first, and the decorators only when `def` is
    # below the first line (the first row is never below `def`).
    if rows[1] > fn.end_lineno:
        return False
    return fn.lineno <= rows[0] or tree_walk.first_row(fn) <= rows[0]


def _builds(cap: Capture, flow: str, flows: list[FunctionFlow]) -> list:
    """The constructions the captured model may come from on this flow's paths, first seen first.

    Those the facts on the paths name (a parameter: what its callers pass); else the model's own
    origins (an eval-mode capture for QAT: `.eval()` facts do not say what was built)."""
    origins = []
    for fact in sorted(cap.modes_for(flow), key=lambda f: getattr(f.node, "lineno", 0)):
        origin = fact.origin
        if origin is None:
            continue
        origins.append(origin)
        if fact.state == "unset" and origin.kind in (PARAM, STORED):
            origins.extend(f.origin for _, f in caller_facts(flows, origin.node, origin.index) or () if f.origin)
    if not any(o.built is not None for o in origins):
        origins = list(cap.origins)
    seen: dict[tuple, object] = {}
    for origin in origins:
        built = origin.built
        if built is not None and built_key(built) not in seen:
            seen[built_key(built)] = built
    return sorted(seen.values(), key=lambda b: (b.call.lineno, b.call.col_offset))


def built_key(built) -> tuple:
    """One construction, once: a helper's container bound at two calls (`held_slots`) twice."""
    return (id(built.call), id(built) if built.slots else None)
