"""The values model flow reasons about: where a model came from (`Origin`), its mode on one
path (`ModeFact`), the object itself (`Obj`), what a function does with models
(`FunctionFlow`: captures, mode switches, sinks, calls of helpers) and the environment the
interpreter carries from statement to statement (`Env`, joined where paths meet).

Plain data and the join: the interpreter (`model_interp`, asking `model_calls` about calls) computes
them, the driver (`model_flow`) memoises them per function, rules read them.
"""

from __future__ import annotations

import ast
from itertools import islice

from qlint.analysis.flow.implied_truths import with_truths
from qlint.analysis.flow.part_modes import for_flow
from qlint.value_classes import field, replace, value_class

# Origin kinds: where a value came from.
PARAM, PARAM_PART, ATTRIBUTE, CONSTRUCTED, PRETRAINED, CALL, UNKNOWN = (
    "parameter",
    "part of a parameter",  # `artifact.data["forward"]`, a loop over `models.items()`
    "attribute",
    "constructor",
    "from_pretrained",
    "call",
    "unknown",
)
# A callable that builds a model (a parametrize value, an element of a dict of lambdas).
FACTORY = "factory"
# An attribute of a construction written as an element of a container (`[seq, seq.second]`):
# a submodule, in whatever mode the whole left it; what it holds is among what the whole
# holds (`Origin.built` is the whole's construction, `built_parts`).
BUILT_PART = "part of a construction"
# `fn(model)` where `fn` is a parameter or an item of one (`for t in transforms: m = t(m)`): what
# it returns depends on the callables the caller passes (`FunctionFlow.applied`).
APPLIED = "result of a callable parameter"
# A `self.<attr>` that `__init__` stored from its parameter: the caller's mode, like a parameter.
STORED = "stored constructor parameter"
# A `self.<attr>` every store of which in its class is of a model in a known mode
# (`model_attrs.InMode`): the fact's mode is that store's, its node the method reading it.
IN_MODE = "attribute stored in a known mode"
# A `self.<attr>` read by a private method that one other method of its class calls right
# after storing an eval-mode model in it (`init_calls`): an `IN_MODE` whose method must also be
# reached from nowhere else (`store_then_call.reached_elsewhere`); its node the method reading it.
CALLED_AFTER_STORE = "attribute stored right before its one call"
# A dict, list, tuple or set written as a helper's argument (`quantize_all({"fp": model.eval()})`):
# the modes of the models it holds are its `Origin.items`, what the helper's items of that
# parameter (`for name, m in models.items()`) are in.
CONTAINER = "container literal"
PROGRAM, EXPORTED, PREPARED, PREPARED_QAT, CONVERTED = (
    "ExportedProgram",
    "ExportedProgram.module()",
    "prepare_pt2e",
    "prepare_qat_pt2e",
    "convert_pt2e",
)
GRAPH_KINDS = frozenset({EXPORTED, PREPARED, PREPARED_QAT, CONVERTED})
# On `Capture.contexts`/the interpreter's context stack inside `with pytest.raises(...)`,
# `self.assertRaises(...)` or a `try` catching NotImplementedError: code there expects
# `.eval()` on an exported graph to raise, so it is no finding.
EXPECTS_ERROR = "<expects an error>"

Guard = frozenset  # of (condition, polarity): the branches a fact or a sink lies in


@value_class(frozen=True)
class Origin:
    kind: str
    node: ast.AST  # the expression (or function, for parameters) it came from
    index: int | None = None  # parameter position
    name: str = ""  # parameter or attribute name
    # For a construction: the `built_models.Built` that says what the model holds. Not part of
    # the identity: one call analysed twice (a loop body) is one origin.
    built: object = field(default=None, compare=False)
    makes: tuple = field(default=(), compare=False)  # for a factory: the callables it may be
    items: frozenset = field(default=frozenset(), compare=False)  # for a container: its models' `ModeFact`s
    owner: ast.AST | None = field(default=None, compare=False)  # for a part: the function of its parameter
    # For a construction: the objects it was given, (positional, ((keyword, object), ...)), which
    # a class that stores them holds as attributes (`stored_fields`).
    passed: tuple = field(default=(), compare=False)
    # For a part: the steps from the parameter to it (`part_of`), None when not followed.
    path: tuple | None = field(default=None, compare=False)
    # For a construction handed to a helper (`CallSite.held`): ((attribute, its `ModeFact`s), ...)
    # for each attribute its class stores unchanged, as they were at that call (`held_contents`);
    # None when not read so.
    fields: tuple | None = field(default=None, compare=False)
    # For a `self.<attr>` read: the origin its class gives it (its construction in the class, or
    # the `__init__` parameter stored in it), which `mode_free` judges once it has checked that
    # nothing else in the module writes the attribute or gives it parts; None when unknown.
    source: object = field(default=None, compare=False)
    # For a graph a helper of another module made, named at the call here (`anchored`): where
    # that module made it, (path, line), for messages. Not part of the identity.
    made_at: tuple | None = field(default=None, compare=False)
    # For a construction whose slots a helper's call bound (`held_slots.bind`): that call. Part
    # of the identity: two calls of one helper hand back two containers holding what each passed.
    bound_at: ast.AST | None = None


def anchored(origin: Origin, node: ast.AST, path: str, **changes) -> Origin:
    """`origin`, from a helper in the module at `path`, as the call `node` here hands it back:
    positions there mean nothing here, but where a graph was made is worth a message's words."""
    if origin.kind in GRAPH_KINDS and origin.made_at is None:
        changes["made_at"] = (path, origin.node.lineno)
    return replace(origin, node=node, **changes)


@value_class(frozen=True)
class ModeFact:
    """The mode on one path: "eval", "train", "unset" (as it came) or "unknown" (`.train(flag)`)."""

    state: str
    node: ast.AST | None  # the call that set it, or the origin's node
    origin: Origin | None = None  # for "unset": what it came in as
    guard: Guard = frozenset()
    # Parts switched to another mode since the whole model was (`part_modes.PartMode`).
    parts: tuple = ()

    def guarded(self, condition: tuple[str, bool]) -> ModeFact:
        return replace(self, guard=self.guard | {condition})


@value_class(frozen=True)
class Obj:
    anchor: ast.AST  # where it was created (or merged)
    key: str
    origins: frozenset[Origin]
    captures: frozenset[int] = frozenset()  # indices into FunctionFlow.captures it derives from

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset([o.kind for o in self.origins])

    @property
    def is_graph(self) -> bool:
        # `kinds` is not empty and within GRAPH_KINDS: asked of most values the walk meets,
        # which built that set twice per asking.
        origins = self.origins
        return bool(origins) and GRAPH_KINDS.issuperset([o.kind for o in origins])


@value_class(frozen=True)
class Sink:
    """Where a captured program goes: "ptq" or "qat", the prepare call (or recipe), its file."""

    flow: str
    node: ast.AST
    path: str
    guard: Guard = frozenset()


@value_class
class Capture:
    call: ast.Call  # the capture (or the call of a same-project helper that captures)
    stmt: ast.stmt  # the statement it sits in
    api: str
    model: ast.expr | None  # the model as written; None when a helper builds it
    modes: frozenset[ModeFact]
    origins: frozenset[Origin]
    sinks: set[Sink] = field(default_factory=set)
    inner: tuple[str, ast.AST, str] | None = None  # (path, node, note): where a helper/session captures
    contexts: tuple[str, ...] = ()  # qualified names of enclosing `with` contexts
    fixable: bool = True  # `model` still names the captured object at `stmt`
    # The `move_exported_model_to_train` calls (or `.train()` after the allow) that run on the
    # prepared graph: dropout and batch norm are switched back to training behaviour after an
    # eval-mode capture, from the move on (QL202 asks whether it comes first: `moved_graphs`).
    retrained: set = field(default_factory=set)
    # `prepare_qat_pt2e` calls whose graph goes straight to `convert_pt2e` or
    # `move_exported_model_to_eval`: QAT rebuilt for conversion, never trained.
    rebuilt: set = field(default_factory=set)

    def flows(self, kind: str) -> list[Sink]:
        return sorted((s for s in self.sinks if s.flow == kind), key=lambda s: (s.path, s.node.lineno))

    def modes_for(self, kind: str) -> frozenset[ModeFact]:
        """The facts on paths that can reach a sink of this kind, as that flow reads them (a
        part switched to the mode wrong for it makes the model's mode that: `part_modes`)."""
        sinks = self.flows(kind)
        return frozenset(for_flow(f, kind) for f in self.modes if any(compatible(f.guard, s.guard) for s in sinks))


@value_class
class ModeSwitch:
    """`<receiver>.eval()` / `.train(...)`; mode is "eval", "train" or None (`.train(flag)`)."""

    call: ast.Call
    receiver: ast.expr
    mode: str | None
    origins: frozenset[Origin]
    patched: bool  # `allow_exported_model_train_eval` was called on it first, or an error is expected
    guard: Guard = frozenset()  # the branches it lies in (first seen)
    # When `patched` only through an allow that lies in branches (`if is_graph: allow(m)`): those
    # branches. A caller whose arguments rule them out hands a graph the allow never reached.
    allowed_under: Guard = frozenset()
    # The receiver is a torch container (`nn.Sequential(gm)`) holding exported graphs that
    # nothing allowed: where they came from. `Module.eval()` switches every submodule, and
    # the graph's own switch raises.
    held: frozenset[Origin] = frozenset()
    # The receiver is an exported graph on some paths only (`maybe_graphs`): the graphs whose
    # paths can reach the switch, none allowed, copied or told apart by a type test.
    maybe: frozenset[Origin] = frozenset()
    # The receiver was allowed only through a spelling torch 2.13 lacks, in a `try` whose handler
    # swallows the AttributeError (`library_calls.absent_allow`): that allow call and the handler.
    absent_allow: tuple[ast.Call, ast.ExceptHandler] | None = None


@value_class(frozen=True)
class ParamSwitch:
    """`.eval()`/`.train()` that a function runs on what its caller passes for one parameter,
    itself or in a helper it hands the parameter to, with nothing there allowing it
    (`allow_exported_model_train_eval`) or expecting the error first. Harmless for an eager
    module; a caller handing such a function an exported graph is a QL203 finding there."""

    call: ast.Call  # the `.eval()`/`.train()` call
    path: str  # the file it is in
    mode: str | None
    guard: Guard = frozenset()  # the branches of this function the switch lies in
    # The branches an allow of the parameter lies in (`ModeSwitch.allowed_under`): the switch
    # raises only for callers whose arguments rule them out. Empty: nothing allows it.
    unless: Guard = frozenset()


@value_class(frozen=True)
class HandedSwitch:
    """A call here that hands an exported GraphModule, neither allowed to switch modes nor
    copied (a copy drops torch's override), to a parameter whose mode the callee switches."""

    call: ast.Call  # the helper call
    stmt: ast.stmt  # the statement it sits in
    argument: ast.expr  # the graph as written
    origins: frozenset[Origin]  # where the graph came from
    switch: ParamSwitch
    held: bool = False  # the argument is a torch container holding the graph (`ModeSwitch.held`)
    field: str = ""  # the graph is the argument's attribute of that name, which the method switches
    # The helper called makes the graph itself, in this file, and calls `argument`, the function
    # this call passes it, with that graph (`callbacks.CallbackCall.made`); empty otherwise.
    made: str = ""
    # The argument is the graph only for some of the classes a receiver may be an instance of
    # (`registry_dispatch`): the switch runs on the paths where the class that made it runs.
    maybe: bool = False
    # The argument is the graph on some paths that reach the call only (`maybe_graphs`):
    # `origins` are the graphs whose paths can reach it.
    on_path: bool = False
    absent_allow: tuple[ast.Call, ast.ExceptHandler] | None = None  # as `ModeSwitch.absent_allow`
    # `field` holds what the construction here passed (`stored_graphs`): that construction, and
    # the argument as written there (None: no single expression).
    stored_by: tuple[ast.Call, ast.expr | None] | None = None


@value_class
class CallSite:
    """A call of a helper of this module, with the modes of the models it passes."""

    callee: ast.AST
    call: ast.Call
    args: dict[int, frozenset[ModeFact]]
    # Parameter index -> the argument as written (a branch of the callee on that parameter
    # may be decided by it: `qmode=QuantizationMode.NONE`).
    exprs: dict[int, ast.expr] = field(default_factory=dict)
    # The name of the callee when the call is not written as its call: a function handed to a
    # relay helper (`relay(model, capture)`), which calls it with the model (`relayed_functions`).
    via: ast.expr | None = None
    # Parameter index -> the argument's modes with what it holds at the call, for a bundle (a
    # construction of a class storing what it is given) or a container written in one
    # (`held_contents`): what a helper reading a part of that parameter takes from it.
    held: dict[int, frozenset[ModeFact]] | None = None
    # Parameter index -> where the argument's object came from (its constructions): what a
    # caller hands over in eval mode holds (QL202 through callers, `qat_callers`).
    origins: dict[int, frozenset[Origin]] | None = None
    # A call that reaches the callee only for some classes of what the caller's own caller
    # passes for one parameter (`decorator_registries.Selection`): a registry's dispatch.
    selection: object = None
    # The callee's `FunctionFlow.kept`, when it was analysed: what its body stores back kept.
    kept: dict[int, ast.expr] | None = None
    itself: frozenset[int] = frozenset()

    @property
    def ref(self) -> ast.expr:
        """The node that names the callee: how its uses are matched to the calls read."""
        return self.via if self.via is not None else self.call.func

    def open_ended(self) -> bool:
        """A parameter not written out may still be passed: `f(*args)`, `f(**kwargs)`, or a
        relayed call, whose other arguments the relay helper chooses."""
        call = self.call
        return (
            self.via is not None
            or any(isinstance(a, ast.Starred) for a in call.args)
            or any(kw.arg is None for kw in call.keywords)
        )


@value_class
class FunctionFlow:
    """What one function (or module) body does with models."""

    node: ast.AST
    path: str
    params: list[str]
    param_objs: dict[str, Obj] = field(default_factory=dict)
    captures: list[Capture] = field(default_factory=list)
    switches: list[ModeSwitch] = field(default_factory=list)
    returns: list[tuple[Env, Obj | None]] = field(default_factory=list)
    # `return model.eval(), inputs`: the objects of each element, by position in `returns`
    # (callers unpack them: `model, inputs = build()`).
    return_items: dict[int, tuple[Obj | None, ...]] = field(default_factory=dict)
    # Position in `returns` -> the graphs that return may be on some paths only, with the
    # conditions on this function's names they are under (`maybe_graphs.GraphPath`).
    return_graphs: dict[int, frozenset] = field(default_factory=dict)
    # Every value it returns was allowed to switch modes (`allow_exported_model_train_eval`)
    # under no branch condition: its callers may switch what it returns.
    allowed_returns: bool = False
    # Every value it returns is a copy (`return copy.deepcopy(gm)`): a copy's switches raise nothing.
    copied_returns: bool = False
    # The same for positions of the tuple every return builds (`return gm, info` after allowing gm).
    allowed_items: frozenset[int] = frozenset()
    # Parameter index -> attribute -> the exported graph, unallowed, that every path leaves
    # stored there (`m.core = prepare_qat_pt2e(...)`), one per entry of `returns` (`left_graphs`).
    left_fields: dict[int, dict[str, tuple[Obj, ...]]] = field(default_factory=dict)
    # Attribute -> the same for the value every return hands back (`return Wrap(gm)`).
    returned_fields: dict[str, tuple[Obj, ...]] = field(default_factory=dict)
    # Position in `returns` -> the items of the dict that return hands back that hold an
    # exported graph, unallowed and uncopied there, by the key as a part's suffix (`['model']`):
    # a dict literal of constant keys, or a name whose graph parts are known (`left_graphs`).
    return_parts: dict[int, dict[str, Obj]] = field(default_factory=dict)
    param_sinks: dict[int, set[Sink]] = field(default_factory=dict)  # parameter -> prepare calls it reaches
    # The `prepare_qat_pt2e` calls of those whose graph is converted right away (never trained):
    # a caller's capture that reaches them was only rebuilt for conversion (`prepared_results`).
    rebuilt_sinks: set[ast.AST] = field(default_factory=set)
    calls: list[CallSite] = field(default_factory=list)
    # Calls of helpers of other modules, with the callee's path: read only by the cross-module
    # caller index (`project_callers`), which asks who calls a helper and with what.
    foreign_calls: list[tuple[str, CallSite]] = field(default_factory=list)
    # Parameters it calls as callbacks, with what (`qlint.analysis.flow.callbacks.CallbackCall`).
    callback_calls: list = field(default_factory=list)
    # id(call) -> the parameter the call's model came in as, for the `APPLIED` results of calls
    # of callable parameters: the caller substitutes what the callables it passes return.
    applied: dict[int, int] = field(default_factory=dict)
    # prepare/convert results built from parameters: the caller's captures flow into them.
    param_results: dict[Obj, frozenset[int]] = field(default_factory=dict)
    # Parameter index -> the first mode switch run on what the caller passes there (`ParamSwitch`).
    param_switches: dict[int, ParamSwitch] = field(default_factory=dict)
    # For a method: field -> the first switch it runs (itself, or in a method of its own it
    # calls) on `self.<field>` as it found it, unallowed. A caller that set that field of the
    # instance to an exported graph (`runner.gm = prepare_pt2e(...)`) hands the graph over.
    field_switches: dict[str, ParamSwitch] = field(default_factory=dict)
    # (parameter index, attribute) -> the first switch it runs on that attribute of what the
    # caller passes (`def set_train(x): x.core.train()`), unallowed: a caller whose argument
    # holds an exported graph there hands the graph over (`handed_switches.handed_part_switches`).
    part_switches: dict[tuple[int, str], ParamSwitch] = field(default_factory=dict)
    # Parameter index -> the branches `allow_exported_model_train_eval` on it lies in (empty:
    # always): a caller whose arguments rule them out gets its graph back unallowed.
    param_allows: dict[int, Guard] = field(default_factory=dict)
    # Exported graphs handed here to such a parameter (`HandedSwitch`), by the call's id.
    handed: dict[int, HandedSwitch] = field(default_factory=dict)
    # For a method: the calls here that hand `self.<field>`, as it found it, to a parameter a
    # helper switches (`HandedSwitch`es whose origins are that read), by the call's id: a graph
    # another method of the class stores there is switched by them (`graph_fields`).
    field_handed: dict[int, HandedSwitch] = field(default_factory=dict)
    # Call id -> the argument the call hands back in the mode it was in (`kept_calls`): what
    # `switched_parts` lets the body store back over the part it was given.
    kept: dict[int, ast.expr] = field(default_factory=dict)
    # The ids among them of calls of the body itself: kept only when the whole body is judged
    # (by induction), not for what a part of it does to one part.
    itself: set[int] = field(default_factory=set)
    # Whether it returns its first parameter as it came, switching none of its parts
    # (`kept_calls.keeps`), once asked.
    keeps: bool | None = None
    # How the body's names resolve (`qlint.analysis.names.resolver.Resolver`): its branch
    # conditions and defaults are read with it when a caller's argument decides them.
    resolver: object = None


UNKNOWN_MODE = frozenset({ModeFact("unknown", None)})


def compatible(a: Guard, b: Guard) -> bool:
    """Two guards can hold on one run: no condition is required both true and false, counting
    the truth a holding `flag is True`/`flag is False` gives the flag (`implied_truths`)."""
    a, b = with_truths(a), with_truths(b)
    return not any((cond, not polarity) in b for cond, polarity in a)


@value_class
class Env:
    vars: dict[str, Obj] = field(default_factory=dict)
    modes: dict[Obj, frozenset[ModeFact]] = field(default_factory=dict)
    patched: frozenset[Obj] = frozenset()
    # Copies of exported graphs (`copy.deepcopy(gm)`): a copy drops the override torch puts on the
    # graph's `train`/`eval` (and `allow_exported_model_train_eval`'s), so switching it raises nothing.
    copied: frozenset[Obj] = frozenset()
    # `self.<attr>` values a method read from its class on some path (`Interpreter.attribute`),
    # with the modes they came in: one dict per function, shared by every path. A path that
    # never read the attribute holds it in that mode, which `join` must count (`if is_qat:
    # self.model.train()` leaves the model as stored on the other arm).
    unread: dict[str, tuple[Obj, frozenset[ModeFact]]] | None = field(default=None, compare=False)

    def copy(self) -> Env:
        return Env(dict(self.vars), dict(self.modes), self.patched, self.copied, self.unread)

    def facts(self, obj: Obj) -> frozenset[ModeFact]:
        return self.modes.get(obj, UNKNOWN_MODE)


def join(envs: list[Env | None], anchor: ast.AST) -> Env | None:
    """Merge the paths that meet at `anchor`: a name bound to different objects becomes a merge."""
    live = [e for e in envs if e is not None]
    if len(live) <= 1:
        return live[0].copy() if live else None
    unread = live[0].unread
    if unread:
        fill_unread(live, unread)
    out = Env(
        modes=dict(live[0].modes),
        patched=frozenset().union(*(e.patched for e in live)),
        copied=frozenset().union(*(e.copied for e in live)),
        unread=unread,
    )
    modes = out.modes
    # Paths copied from one environment share most fact sets (the same objects): only the
    # sets that differ are merged, which keeps a join linear in what changed on each path.
    for env in live[1:]:
        theirs = env.modes.items()
        # And they hold the objects they share first, in the same order (a copy keeps its
        # dict's order; a path adds objects at the end or gives one new facts in place): those
        # are walked side by side, each object hashed (its `__hash__` is Python's) only past
        # the first place the two orders part. ~450,000 objects per ExecuTorch QL201 run.
        changed = []
        shared = 0
        for (obj, mine), (other, facts) in zip(modes.items(), theirs, strict=False):
            if obj is not other:
                break
            shared += 1
            if mine is None or (mine is not facts and mine != facts):
                changed.append((obj, facts if mine is None else mine | facts))
        for obj, facts in changed:
            modes[obj] = facts
        for obj, facts in islice(theirs, shared, None):
            mine = modes.get(obj)
            if mine is None:
                modes[obj] = facts
            elif mine is not facts and mine != facts:
                modes[obj] = mine | facts
    # Every name any path binds, in the order first bound (the dicts' keys in turn); most are
    # bound to one object on every path, told apart without a list per name.
    keys = dict(live[0].vars)
    for env in live[1:]:
        keys.update(env.vars)
    every = [e.vars for e in live]
    out_vars = out.vars
    for key in keys:
        first = _ABSENT
        shared = True
        count = 0
        for names in every:
            o = names.get(key, _ABSENT)
            if o is _ABSENT:
                continue
            count += 1
            if first is _ABSENT:
                first = o
            elif o is not first:
                shared = False
        if count < len(every) and partial_key(key):
            continue  # a part of a value (`graph_parts`) that some path did not bind: not known
        if shared:
            out_vars[key] = first
            continue
        bound = [names[key] for names in every if key in names]
        objs = set(bound)
        if len(objs) == 1:
            out.vars[key] = first
            continue
        merged = Obj(
            anchor,
            key,
            frozenset().union(*(o.origins for o in objs)),
            frozenset().union(*(o.captures for o in objs)),
        )
        out.vars[key] = merged
        out.modes[merged] = frozenset().union(*(e.facts(e.vars[key]) for e in live if key in e.vars))
        if any(o in out.patched for o in objs):
            out.patched |= {merged}
        if all(o in out.copied for o in objs):  # a path that hands the graph itself can raise
            out.copied |= {merged}
    return out


_ABSENT = object()  # a name a path does not bind (`join`)


def fill_unread(live: list[Env], unread: dict[str, tuple[Obj, frozenset[ModeFact]]]) -> None:
    """Paths that never read a `self.<attr>` another path read from the class hold it as the
    class left it: bound to the same value, in the mode it came in."""
    for name, (obj, facts) in unread.items():
        if any(name in e.vars for e in live):
            for env in live:
                if name not in env.vars:
                    env.vars[name] = obj
                    env.modes.setdefault(obj, facts)


def partial_key(name: str) -> bool:
    """A name of a part of a value (`graph_parts`: `holder.gm`, `pair[0]`): a path that does not
    bind it leaves it unknown where paths join. `self.<attr>` is read from the class instead."""
    return "[" in name or ("." in name and not name.startswith("self."))


def new_value(env: Env, anchor: ast.AST, name: str, origin: Origin, facts=None, captures=frozenset()) -> Obj:
    """A value created at `anchor`; modules start in train mode, `from_pretrained` in eval mode."""
    obj = Obj(anchor, name, frozenset((origin,)), frozenset(captures))
    if facts is None:
        env.modes[obj] = frozenset((ModeFact(_STARTS_IN.get(origin.kind, "unset"), origin.node, origin),))
    else:
        env.modes[obj] = frozenset(facts)
    return obj


# The mode a new value starts in, by its origin's kind ("unset": as it came).
_STARTS_IN = {CONSTRUCTED: "train", PRETRAINED: "eval"}


# The steps of a part's `Origin.path`: an attribute (ATTR, name); an item of a container or
# one element of an unpacked item (ITEM: a subscript, `.get(k)`, a loop variable); the key
# of a dict's pair (KEY); and the views `.values()` (VALUES) and `.items()` (PAIRS), which are
# the container itself until a loop takes an item of them.
ATTR, ITEM, KEY, VALUES, PAIRS = "attr", "item", "key", "values", "pairs"


def part_of(container: Obj | None, node: ast.AST, steps: tuple | None = None) -> Origin | None:
    """`Origin` of an item or attribute of a parameter: its mode is the caller's, too. `steps`
    (None: not followed) are how it was taken from `container`, added to the part's path; a
    view (`.values()`, `.items()`) is the container itself to the step after it."""
    if container is None or container.is_graph:
        return None
    for o in container.origins:
        if o.kind == PARAM and o.name not in ("self", "cls"):
            return Origin(PARAM_PART, node, o.index, o.name, owner=o.node, path=steps)
        if o.kind == PARAM_PART:
            path = o.path
            if path is None or steps is None:
                path = None
            else:
                if path and path[-1][0] in (VALUES, PAIRS):
                    path = path[:-1]
                path = (*path, *steps)
            return Origin(PARAM_PART, node, o.index, o.name, owner=o.owner, path=path)
    return None


def merge_values(objs: list[Obj], env: Env, anchor: ast.AST) -> Obj:
    """One value for `a if c else b` or a helper with several returns."""
    if len(set(objs)) == 1:
        return objs[0]
    merged = join([Env({"value": o}, env.modes, env.patched, env.copied) for o in objs], anchor)
    env.modes.update(merged.modes)
    env.copied = merged.copied
    return merged.vars["value"]
