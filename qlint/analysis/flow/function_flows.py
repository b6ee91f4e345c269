"""What one function (or module) body does with models (`FunctionFlow`): the captures it
makes and where they go (`Capture`, `Sink`), the mode switches it runs (`ModeSwitch`) and those
it runs on what its caller passes (`ParamSwitch`) or hands a helper to run (`HandedSwitch`),
and its calls of helpers of the module (`CallSite`).

Plain data: the interpreter (`model_interp`) fills them, the driver (`model_flow`) memoises
them per function, rules read them.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_values import Guard, ModeFact, Obj, Origin, compatible
from qlint.analysis.flow.part_modes import for_flow
from qlint.value_classes import field, value_class


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
    # Of `origins`, those the receiver held only through copies on every pass (`Env.partly_copied`):
    # `m = copy.deepcopy(gm) if c else prepare_pt2e(...)` raises through the other graph alone.
    copies: frozenset[Origin] = frozenset()
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
    # The same for each element of the tuple such a return builds, when some element holds a
    # graph: a copying helper's callers read them (`arm_graphs`, `returned_copies`).
    return_item_graphs: dict[int, tuple[frozenset, ...]] = field(default_factory=dict)
    # Every value it returns was allowed to switch modes (`allow_exported_model_train_eval`)
    # under no branch condition: its callers may switch what it returns.
    allowed_returns: bool = False
    # The same for positions of the tuple every return builds (`return gm, info` after allowing gm).
    allowed_items: frozenset[int] = frozenset()
    # It makes a copy (`copy.deepcopy(gm)`) or gets one from a helper (`Env.copied`): only then
    # are the copies its returns may hand back carried to its callers (`returned_copies`).
    copies: bool = False
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
