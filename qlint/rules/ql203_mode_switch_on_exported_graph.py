"""QL203 mode-switch-on-exported-graph: `.eval()` / `.train()` on an exported GraphModule.

`ExportedProgram.module()`, `prepare_pt2e`, `prepare_qat_pt2e` and `convert_pt2e` return
GraphModules whose batch norm and dropout were fixed at capture time. torch 2.13 makes
`.eval()`/`.train()` on them raise `NotImplementedError` (older releases silently changed
nothing); torchao's `move_exported_model_to_eval`/`_train` rewrite those ops instead.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator

from qlint.analysis import tree_walk
from qlint.analysis.flow.graph_fields import field_switches
from qlint.analysis.flow.graph_returns import SWITCH_TRIGGERS, may_switch_graph, returned_graph_bodies
from qlint.analysis.flow.model_flow import (
    GRAPH_KINDS,
    HandedSwitch,
    ModeSwitch,
    analyse_bodies,
    calls_switcher,
    may_hand_graph,
    module_flows,
)
from qlint.analysis.flow.model_values import Origin
from qlint.analysis.flow.reflective_switches import SPELLED
from qlint.diagnostic import Applicability, Diagnostic, Edit, Fix
from qlint.evidence.mode_switch import ModeSwitchEvidence
from qlint.rules.base import FileContext, FixAvailability, Rule
from qlint.rules.pt2e_helpers import PT2E, pt2e_helper

_HELPERS = {"eval": "move_exported_model_to_eval", "train": "move_exported_model_to_train"}


class ModeSwitchOnExportedGraph(Rule):
    code = "QL203"
    name = "mode-switch-on-exported-graph"
    summary = "`.eval()`/`.train()` called on an exported, prepared or converted GraphModule"
    runtime_check = "qlint.runtime.checks.capture"
    evidence_type = ModeSwitchEvidence
    # A file that prepares a graph may hand it to a helper elsewhere that switches it
    # (`calibrate(prepared)`); QL201/QL202 analyse those files' flows anyway.
    triggers = SWITCH_TRIGGERS
    # A file that switches a graph it gets from a helper of another module (`graph_returns`),
    # or a field a base class of another module stores (`inherited_fields`).
    import_trigger = "qlint.analysis.flow.inherited_fields:switches_graph_from_elsewhere"
    text_trigger = "qlint.analysis.flow.graph_returns:may_switch_graph"
    identifier_triggers = True  # `getattr(gm, "eval")` or `.module()` in fullwidth letters is that name
    fix_availability = FixAvailability.SOMETIMES

    def triggered_by(self, text: str) -> bool:
        """A mode switch or a prepare call, *and* a source of exported graphs, or the file is never parsed."""
        return may_switch_graph(text)

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        flows = module_flows(ctx, switches_only=True)
        # Bodies that get a graph only from an imported helper's return name no graph source.
        extra = returned_graph_bodies(ctx, {id(f.node) for f in flows}, lambda text: calls_switcher(ctx, text))
        for function in [*flows, *(analyse_bodies(ctx, extra) if extra else ())]:
            for switch in function.switches:
                if switch.held and not switch.patched:
                    yield self._container(ctx, switch)
                    continue
                kinds = {o.kind for o in switch.origins}
                if switch.maybe and not switch.patched and not kinds <= GRAPH_KINDS:
                    yield self._maybe(ctx, switch)
                    continue
                if not kinds or not kinds <= GRAPH_KINDS or switch.patched:
                    continue
                yield self._diagnostic(ctx, switch)
            if function.handed and may_hand_graph(ctx, function):
                for handed in function.handed.values():
                    yield self._handed(ctx, handed)
        # `self.gm` set to a graph in one method and switched (or handed to a helper that
        # switches it) in another.
        for switch in field_switches(ctx, lambda bodies: analyse_bodies(ctx, bodies)):
            if isinstance(switch, HandedSwitch):  # `switch_off(self.gm)`
                yield self._handed(ctx, switch)
            else:
                yield self._diagnostic(ctx, switch)

    def _diagnostic(self, ctx: FileContext, switch: ModeSwitch) -> Diagnostic:
        # A graph it holds only as a copy raises nothing: the message names one it may hold itself.
        receiver, origin, called = _described(ctx, switch, switch.origins - switch.copies or switch.origins)
        helper = _HELPERS.get(switch.mode)
        use = f"`{helper}({receiver})`" if helper else "`move_exported_model_to_eval` / `move_exported_model_to_train`"
        message = (
            f"`{receiver}` comes from `{origin.kind}` ({_made(ctx, origin)}): `{called}` on it raises"
            " NotImplementedError on torch 2.13"
        )
        help_ = (
            "Exported GraphModules have no usable train/eval switch (older releases silently kept batch norm"
            f" and dropout as captured); use {use} from `{PT2E}`"
        )
        if switch.absent_allow is not None:  # the user allowed it, through a spelling 2.13 lacks
            message, help_ = _absent_allow(ctx, switch.absent_allow, message, help_)
        replaced = _replaced_switch(ctx, switch)
        if replaced is not None:  # `gm.eval = nn.Module().eval`: the call runs that instead
            message = f"`{receiver}` comes from `{origin.kind}` ({_made(ctx, origin)}): {replaced}"
            help_ += f", and drop the replacement of `{receiver}.{switch.call.func.attr}`"
        evidence = ModeSwitchEvidence(switch.mode, origin.kind, origin.node.lineno)
        fix = _fix(ctx, switch, receiver, helper)
        return ctx.diagnostic(self, switch.call, message, fix, evidence=evidence, help=help_)

    def _maybe(self, ctx: FileContext, switch: ModeSwitch) -> Diagnostic:
        """The receiver is the graph on some paths that reach the switch, an eager module on others."""
        receiver, origin, called = _described(ctx, switch, switch.maybe)
        helper = _HELPERS.get(switch.mode)
        use = f"`{helper}`" if helper else "`move_exported_model_to_eval` / `move_exported_model_to_train`"
        message = (
            f"`{receiver}` may be the graph from `{origin.kind}` ({_made(ctx, origin)}): on that path"
            f" `{called}` raises NotImplementedError on torch 2.13"
        )
        help_ = (
            f"On the paths that make it an exported graph, switch it with {use} from `{PT2E}` (or call"
            " `allow_exported_model_train_eval` on it there); keep this switch for the eager module"
        )
        if switch.absent_allow is not None:
            message, help_ = _absent_allow(ctx, switch.absent_allow, message, help_)
        # The eager paths need the switch itself: no one rewrite is right for both.
        fix = Fix(Applicability.DISPLAY_ONLY, f"Use {use} where `{receiver}` is the exported graph")
        evidence = ModeSwitchEvidence(switch.mode, origin.kind, origin.node.lineno)
        return ctx.diagnostic(self, switch.call, message, fix, evidence=evidence, help=help_)

    def _container(self, ctx: FileContext, switch: ModeSwitch) -> Diagnostic:
        """A torch container holding an exported graph: its switch reaches the graph's."""
        receiver, origin, called = _described(ctx, switch, switch.held)
        message = (
            f"`{receiver}` holds the graph from `{origin.kind}` ({_made(ctx, origin)}): `{called}` switches it"
            " too, which raises NotImplementedError on torch 2.13"
        )
        help_ = (
            f"`Module{called}` switches every submodule, the exported graph's raising override included; call"
            f" `allow_exported_model_train_eval` on the graph first (from `{PT2E}`), or switch the graph with"
            " `move_exported_model_to_eval` / `move_exported_model_to_train` and leave its container's mode alone"
        )
        if switch.absent_allow is not None:
            message, help_ = _absent_allow(ctx, switch.absent_allow, message, help_)
        # Neither torchao helper takes the container (it has no `.graph`): nothing to rewrite here.
        fix = Fix(Applicability.DISPLAY_ONLY, "Allow or move the graph itself, not its container")
        evidence = ModeSwitchEvidence(switch.mode, origin.kind, origin.node.lineno)
        return ctx.diagnostic(self, switch.call, message, fix, evidence=evidence, help=help_)

    def _handed(self, ctx: FileContext, handed: HandedSwitch) -> Diagnostic:
        """At the call that hands the graph over: the helper is right for eager modules."""
        graph = ctx.source_of(handed.argument)
        if handed.field:  # `runner.calibrate()` switching the `runner.gm` set here
            graph = f"{graph}.{handed.field}"
        origin = min(handed.origins, key=lambda o: (o.node.lineno, o.node.col_offset))
        switch = handed.switch
        called = f".{switch.call.func.attr}({', '.join(ast.unparse(a) for a in switch.call.args)})"
        where = _where(ctx, switch.path, switch.call.lineno)
        came = "holds the graph from" if handed.held else "comes from"
        message = (
            f"`{graph}` {came} `{origin.kind}` ({_made(ctx, origin)}) and this call runs `{called}` on it"
            f" ({where}), which raises NotImplementedError on torch 2.13"
        )
        helper = _HELPERS.get(switch.mode)
        use = f"`{helper}`" if helper else "`move_exported_model_to_eval` / `move_exported_model_to_train`"
        if handed.stored_by is not None:
            return self._stored(ctx, handed, origin, called, where, use)
        if handed.made:
            made = _where(ctx, handed.made, origin.node.lineno)
            return self._made(ctx, handed, graph, f"`{origin.kind}` ({made})", called, where, use)
        if handed.maybe:
            return self._dispatched(ctx, handed, graph, origin, called, where, use)
        if handed.on_path:
            return self._handed_on_path(ctx, handed, graph, origin, called, where, use)
        help_ = (
            f"Call `allow_exported_model_train_eval({graph})` from `{PT2E}` before handing it over (the helper's"
            f" switch then runs {use}), or switch it with {use} and keep the helper's switch for eager modules"
        )
        from qlint.rules.allow_fixes import allow_fix  # a finding's fix: import edits and version gates

        fix = allow_fix(ctx, handed, graph)
        if handed.field and isinstance(handed.call.func, ast.Attribute) and handed.call.func.value is handed.argument:
            # `runner.calibrate()`: its method's switch (`set_train(h)`, a function's: `x.core.train()`)
            message = message.replace(" on it (", f" on `self.{handed.field}` (", 1)
        if handed.absent_allow is not None:
            message, help_ = _absent_allow(ctx, handed.absent_allow, message, help_)
        evidence = ModeSwitchEvidence(switch.mode, origin.kind, origin.node.lineno, allowed_fix=True)
        return ctx.diagnostic(self, handed.call, message, fix, evidence=evidence, help=help_)

    def _stored(self, ctx, handed: HandedSwitch, origin: Origin, called: str, where: str, use: str):
        """A construction here handed the graph to a project class that keeps it in
        `self.<field>`, and the method called here switches that field (`stored_graphs`)."""
        built, argument = handed.stored_by
        cls = ctx.source_of(built.func)
        method = f"{cls}.{handed.call.func.attr}"
        field = f"self.{handed.field}"
        message = (
            f"`{cls}(...)` (line {built.lineno}) stores the graph from `{origin.kind}` ({_made(ctx, origin)}) in"
            f" `{field}`, and this call of `{method}` runs `{called}` on it ({where}), which raises"
            " NotImplementedError on torch 2.13"
        )
        help_ = (
            f"Call `allow_exported_model_train_eval` (from `{PT2E}`) on the graph before `{cls}(...)` stores it,"
            f" or switch `{field}` in `{method}` with {use} (the switch stays right for eager modules)"
        )
        from qlint.rules.allow_fixes import stored_allow_fix  # as in `_handed`

        fix = stored_allow_fix(ctx, built, argument, cls)
        evidence = ModeSwitchEvidence(handed.switch.mode, origin.kind, origin.node.lineno, allowed_fix=True)
        return ctx.diagnostic(self, handed.call, message, fix, evidence=evidence, help=help_)

    def _dispatched(self, ctx, handed: HandedSwitch, graph: str, origin: Origin, called: str, where: str, use: str):
        """The receiver is an instance of one of several classes, and `graph` is the graph only
        where the class that returned it runs: so does the switch its method makes."""
        switch = handed.switch
        message = (
            f"`{graph}` may be the graph from `{origin.kind}` ({_made(ctx, origin)}): where the class that"
            f" returns it runs, this call runs `{called}` on it ({where}), which raises NotImplementedError"
            " on torch 2.13"
        )
        help_ = (
            "In the classes whose method returns the exported graph, allow it first"
            f" (`allow_exported_model_train_eval` from `{PT2E}`) or switch it with {use}; the switch stays right"
            " for the classes that return an eager module"
        )
        # Which class runs is chosen at run time: no one rewrite here is right for all of them.
        fix = Fix(Applicability.DISPLAY_ONLY, f"Use {use} where `{graph}` is the exported graph")
        evidence = ModeSwitchEvidence(switch.mode, origin.kind, origin.node.lineno)
        return ctx.diagnostic(self, handed.call, message, fix, evidence=evidence, help=help_)

    def _handed_on_path(self, ctx, handed: HandedSwitch, graph: str, origin: Origin, called: str, where: str, use: str):
        """The argument is the graph on some paths only: the helper's switch raises on those."""
        switch = handed.switch
        message = (
            f"`{graph}` may be the graph from `{origin.kind}` ({_made(ctx, origin)}): on that path this call"
            f" runs `{called}` on it ({where}), which raises NotImplementedError on torch 2.13"
        )
        help_ = (
            f"On the paths that make it an exported graph, allow it first (`allow_exported_model_train_eval` from"
            f" `{PT2E}`) or switch it with {use}; the helper's switch stays right for the eager module"
        )
        # The eager paths need the helper's switch itself: no one rewrite is right for both.
        fix = Fix(Applicability.DISPLAY_ONLY, f"Allow `{graph}` or use {use} where it is the exported graph")
        evidence = ModeSwitchEvidence(switch.mode, origin.kind, origin.node.lineno)
        return ctx.diagnostic(self, handed.call, message, fix, evidence=evidence, help=help_)

    def _made(self, ctx, handed: HandedSwitch, function: str, source: str, called: str, where: str, use: str):
        """The helper called makes the graph and calls `function`, chosen here, with it."""
        helper = ctx.source_of(handed.call.func)
        switch = handed.switch
        origin = min(handed.origins, key=lambda o: (o.node.lineno, o.node.col_offset))
        message = (
            f"`{helper}` calls `{function}` with the graph it makes from {source}, and `{function}` runs"
            f" `{called}` on it ({where}), which raises NotImplementedError on torch 2.13"
        )
        help_ = (
            f"Pass a callback that switches the graph with {use} from `{PT2E}` (or calls"
            f" `allow_exported_model_train_eval` on it first), or allow the graph in `{helper}` before it calls back"
        )
        # The graph is no name here, and the callback is right for the eager modules others pass.
        fix = Fix(Applicability.DISPLAY_ONLY, f"Pass a callback that uses {use} on the graph")
        if handed.absent_allow is not None:  # the helper allowed it, through a spelling 2.13 lacks
            message, help_ = _absent_allow(ctx, handed.absent_allow, message, help_, handed.made)
        evidence = ModeSwitchEvidence(switch.mode, origin.kind, origin.node.lineno)
        return ctx.diagnostic(self, handed.call, message, fix, evidence=evidence, help=help_)


def _made(ctx: FileContext, origin: Origin) -> str:
    """Where the graph was made: `line N` here; for one a helper of another module made and
    returned, `path:N` there and the call here that returned it (the helper's own line is what
    a same-module message names); for one a base class of another module stores in a field,
    `path:N` there and the base as this module names it."""
    here = f"line {origin.node.lineno}"
    if origin.made_at is None:
        return here
    path, line = origin.made_at
    if not isinstance(origin.node, ast.Call):  # a field a base of another module stores (`graph_fields`)
        return f"{_where(ctx, path, line)}, stored by the base class named at {here}"
    # A call whose result is dropped handed the graph back in what it was given (`attach(m, q)`
    # storing `m.core`, `left_graphs`): it returned nothing.
    if isinstance(tree_walk.parents(ctx.tree).get(id(origin.node)), ast.Expr):
        return f"{_where(ctx, path, line)}, stored in what the call at {here} was given"
    return f"{_where(ctx, path, line)}, returned by the call at {here}"


def _absent_allow(ctx: FileContext, allow: tuple[ast.Call, ast.ExceptHandler], message: str, help_: str, path=""):
    """Why the allow written before the switch (in file `path`, else here) did not count
    (`library_calls.absent_allow`)."""
    from qlint.rules.allow_fixes import ALLOW  # as in `_handed`

    call, handler = allow
    module = ast.unparse(call.func.value)  # `path` may be another file: not `ctx.source_of`
    path = path or ctx.path
    message += (
        f"; the `{ALLOW}` at {_where(ctx, path, call.lineno)} is looked up in `{module}`, which torch 2.13"
        f" lacks (its AttributeError is swallowed at {_where(ctx, path, handler.lineno)})"
    )
    help_ = f"Import `{ALLOW}` from `{PT2E}` instead, so that the allow runs on torch 2.13. {help_}"
    return message, help_


# `nn.Module.eval` itself: set on an instance, a plain function that gets no `self`.
_UNBOUND_OWNERS = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})


def _replaced_switch(ctx: FileContext, switch: ModeSwitch) -> str | None:
    """What the call runs when an earlier statement of its own block set the graph's switch
    to another object's (issue 14; a workaround in pytorch/pytorch#151726's thread):

        gm.eval = nn.Module().eval  # the call switches that new module: no error, and
        gm.eval()                   # the graph keeps the mode it was captured in
        gm.eval = nn.Module.eval    # a function bound to nothing: the call raises TypeError

    An instance attribute shadows the graph's raising override, so the message's
    NotImplementedError would be wrong. Only a plain name's switch, set by an assignment in the
    same statement list before it with no statement between that names the graph again (a
    call handed the graph may set its switch once more); any other replacement (a function
    written here, `types.MethodType`, `functools.partial`) keeps the message as it is."""
    receiver, called = switch.receiver, switch.call.func
    if not isinstance(receiver, ast.Name) or not isinstance(called, ast.Attribute):
        return None
    parents = tree_walk.parents(ctx.tree)
    statement = tree_walk.statement_around(switch.call, parents)
    owner = parents.get(id(statement)) if statement is not None else None
    blocks = [getattr(owner, field, None) or [] for field in ("body", "orelse", "finalbody")]
    block = next((b for b in blocks if any(s is statement for s in b)), None)
    if block is None:
        return None
    before = block[: next(i for i, s in enumerate(block) if s is statement)]
    for prior in reversed(before):
        value = _sets_switch(prior, receiver.id, called.attr)
        if value is not None:
            return _runs_instead(ctx, value, prior.lineno, receiver.id, called.attr)
        if any(isinstance(n, ast.Name) and n.id == receiver.id for n in ast.walk(prior)):
            return None
    return None


def _sets_switch(statement: ast.stmt, name: str, attr: str) -> ast.expr | None:
    """The value of `name.attr = value` when `statement` is that assignment."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    target = statement.targets[0]
    named = isinstance(target, ast.Attribute) and isinstance(target.value, ast.Name)
    if named and target.attr == attr and target.value.id == name:
        return statement.value
    return None


def _runs_instead(ctx: FileContext, value: ast.expr, line: int, name: str, attr: str) -> str | None:
    """`nn.Module.eval` (a function, no `self`) or `<call>.eval` (the built object's own switch)."""
    if not isinstance(value, ast.Attribute) or value.attr != attr:
        return None
    set_to = f"`{name}.{attr}` was set at line {line} to `{ctx.source_of(value)}`"
    if isinstance(value.value, ast.Call):
        return (
            f"{set_to}, the switch of the object that call builds: `.{attr}()` switches that object, not the"
            " graph, and raises nothing, so the graph keeps the mode it was captured in (its batch norm and"
            " dropout still run as captured)"
        )
    parts = []
    base = value.value
    while isinstance(base, ast.Attribute):
        parts.append(base.attr)
        base = base.value
    if isinstance(base, ast.Name) and base.id in ctx.scope.imports:
        owner = ".".join([ctx.scope.imports[base.id], *reversed(parts)])
        if owner in _UNBOUND_OWNERS:
            return f"{set_to}, a function bound to no module: `.{attr}()` gets no `self` and raises TypeError"
    return None


def _where(ctx: FileContext, path: str, line: int) -> str:
    """`line N` in the checked file, else `path:N` relative to it."""
    if os.path.abspath(path) == os.path.abspath(ctx.path):
        return f"line {line}"
    return f"{os.path.relpath(path, os.path.dirname(os.path.abspath(ctx.path)))}:{line}"


def _described(ctx: FileContext, switch: ModeSwitch, origins) -> tuple[str, Origin, str]:
    """The receiver's text, the first of `origins` in the file, and the call as written (`.eval()`)."""
    origin = min(origins, key=lambda o: (o.node.lineno, o.node.col_offset))
    called = f".{switch.call.func.attr}({', '.join(ctx.source_of(a) for a in switch.call.args)})"
    if getattr(switch.call, SPELLED, False):  # `getattr(gm, "eval")()`, `nn.Module.eval(gm)`
        called = ctx.source_of(switch.call)
    return ctx.source_of(switch.receiver), origin, called


def _fix(ctx: FileContext, switch: ModeSwitch, receiver: str, helper: str | None) -> Fix:
    if helper is None:
        return Fix(Applicability.DISPLAY_ONLY, "Call `move_exported_model_to_eval` or `_train` depending on the flag")
    name, import_edits = pt2e_helper(ctx, helper)
    if name is None:
        return Fix(Applicability.DISPLAY_ONLY, f"Use `{PT2E}.{helper}({receiver})`")
    replace = Edit(ctx.range_of(switch.call), f"{name}({receiver})")
    return Fix(Applicability.SAFE, f"Use `{helper}({receiver})`", (replace, *import_edits))
