"""One module's analysis (`ModelFlow`): its function bodies walked once per check and
memoised, reused from an earlier check where they still hold (`shared_flows`, `carried_flows`),
and the analyses of the other modules of the project it reaches, which share its memo.
`model_flow` makes the file's one analysis and hands its flows to the rules."""

from __future__ import annotations

import ast
import os
import weakref

from qlint.analysis.flow.carried_flows import watched_class
from qlint.analysis.flow.function_flows import FunctionFlow
from qlint.analysis.flow.kept_rebindings import hands_back_in
from qlint.analysis.flow.model_apis import api_kind, is_class_call
from qlint.analysis.flow.model_attrs import Evaled, Stored, attribute_sources
from qlint.analysis.flow.model_classes import ClassIndex
from qlint.analysis.flow.model_interp import Interpreter
from qlint.analysis.flow.self_handing_calls import fields_changed_in
from qlint.analysis.flow.shared_flows import Tracker
from qlint.analysis.flow.stored_fields import held_fields, stored_fields
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ClassScope, ModuleScope, function_assigns
from qlint.value_classes import field, value_class

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Calls that leave the module they are handed in its mode (`attribute_sources`).
_MODE_KEEPING_APIS = frozenset({"capture", "copy"})


@value_class
class _Memo:
    """Shared by the analyses of every module one file's check reaches."""

    functions: dict[int, FunctionFlow | None] = field(default_factory=dict)  # None: in progress
    modules: dict[str, ModelFlow | None] = field(default_factory=dict)
    classes: ClassIndex | None = None
    tracker: Tracker | None = None
    # The path of a module whose functions are summarised even under a library's name: the
    # helper whose callers this analysis reads (`project_callers`).
    follow: str | None = None
    # What `test_fixtures` looked up once per check: the conftests above a directory, and
    # whether a module renames a fixture.
    fixtures: dict = field(default_factory=dict)


class ModelFlow:
    """Analyses and memoises function bodies of one module (and, on demand, project helpers)."""

    def __init__(
        self, scope: ModuleScope, project, optable, depth: int = 0, memo: _Memo | None = None, follow: str | None = None
    ):
        self.scope = scope
        self.project = project
        self.optable = optable
        self.depth = depth
        if memo is None:
            self.memo = _Memo()  # the checked module's analysis owns the memo
        else:
            # Another module's analysis, held in `memo.modules`: a weak reference back, so the memo
            # and what it holds are freed with the check, not when the cyclic collector next runs.
            # (A module reached from another one's analysis is handed that one's proxy.)
            self.memo = memo if isinstance(memo, weakref.ProxyType) else weakref.proxy(memo)
        if follow is not None:
            self.memo.follow = follow
        # The checked module's flows kept from its last check and for its next (`carried_flows`).
        self.carry = None
        self._attributes: dict[int, dict[str, ast.Call | Stored | Evaled]] = {}
        self.field_makers: dict[tuple[int, str], list | None] = {}  # `field_instances`, per class and field
        if self.memo.classes is None:
            self.memo.classes = ClassIndex(
                project, scope.path, getattr(project, "checks", None), follow=self.memo.follow
            )
            self.memo.tracker = Tracker(project, self.memo.classes)
        self.classes = self.memo.classes
        self.tracker = self.memo.tracker

    def function(self, func: ast.AST, class_scope: ClassScope | None = None) -> FunctionFlow | None:
        key = id(func)
        tracker = self.tracker
        if key in self.memo.functions:
            flow = self.memo.functions[key]
            if flow is None:
                tracker.in_progress(key)
            else:
                tracker.used(key)
            return flow
        # Another module's helper: the flow an earlier check analysed, if it still holds; a
        # function of the checked module: its flow from the module's last check, if it holds.
        if self.depth:
            flow = tracker.reuse(self.scope, key, func, class_scope)
        else:
            flow = self._carried(key, func, class_scope)
        if flow is not None:
            self.memo.functions[key] = flow
            return flow
        self.memo.functions[key] = None  # recursion guard: a recursive call is not summarised
        tracker.push(key)
        flow = None
        try:
            flow = Interpreter(self, func, class_scope).run()
        finally:
            deps = tracker.pop(flow)
        self.memo.functions[key] = flow
        if deps is not None and self.depth:
            tracker.keep(self.scope, key, func, class_scope, flow, deps)
        elif deps is not None and self._carries(key, func, class_scope):
            bodies = tracker.read_bodies(key)
            if bodies is not None:
                self.carry.next[key] = (func, flow, deps, bodies)
        return flow

    def sliced(self, func: ast.AST, class_scope: ClassScope | None, dropped: frozenset[int]) -> FunctionFlow | None:
        """The flow of `func` passing over the statements `dropped` (`caller_slices`): what its
        calls there pass. Not its summary: a call of `func` is summarised from a whole walk
        (`function`), and while this one runs `func` is in progress, as for a whole walk."""
        key = id(func)
        memo, tracker = self.memo.functions, self.tracker
        memo[key] = None
        tracker.push(("sliced", key))  # what the tracker knows of the function's own flow is not this
        flow = None
        try:
            flow = Interpreter(self, func, class_scope, dropped).run()
        finally:
            tracker.pop(flow)
            if memo.get(key, 0) is None:
                del memo[key]
        return flow

    def renew(self, path: str) -> None:
        """The analysis (of a caller of `path`, the module checked) serves a later check of
        `path`, whose content changed only in bodies none of its flows read
        (`caller_modules`): that module is looked up again, for its new scope, and so is what
        the class index found."""
        for name, flow in list(self.memo.modules.items()):
            if flow is None or os.path.abspath(flow.scope.path) == path:
                del self.memo.modules[name]
        self.classes.renew()
        self.tracker.renew()

    def _carries(self, key: int, func: ast.AST, class_scope: ClassScope | None) -> bool:
        carry = self.carry
        if carry is None or self.memo.follow is not None:
            return False
        if key in carry.top:
            return watched_class(class_scope)
        # A function written in another one, or a method of a class written there (`nested_carry`).
        return isinstance(func, _DEFS)

    def _carried(self, key: int, func: ast.AST, class_scope: ClassScope | None) -> FunctionFlow | None:
        """The checked module's flow of `func` from its last check, if it holds (`carried_flows`)."""
        if not self._carries(key, func, class_scope):
            return None
        entry = self.carry.last.get(key)
        if entry is None or entry[0] is not func or any(self.carry.changed(b) for b in entry[3]):
            return None
        from qlint.analysis.flow.nested_carry import inside_edited

        if key not in self.carry.top and inside_edited(func, self.carry.changed_bodies()):
            return None
        if not self.tracker.carried(key, entry[2], entry[3]):
            return None
        flow = entry[1]
        # Names in it resolve as a new analysis of it would resolve them.
        flow.resolver = Resolver(self.scope, self.project, self.optable, function_assigns(func), class_scope)
        self.carry.next[key] = entry
        return flow

    def attribute_sources(self, class_scope: ClassScope | None, resolver) -> dict[str, ast.Call | Stored | Evaled]:
        """`self.<attr>` built in this class or stored from `__init__` (one walk per class)."""
        if class_scope is None:
            return {}
        found = self._attributes.get(id(class_scope.node))
        if found is None:

            def builds(call: ast.Call) -> bool:
                if self.classes.resolve(call.func, resolver, {}) is not None:
                    return True
                return not self.classes.names_function(call.func, resolver) and is_class_call(
                    resolver.qualname(call.func), call.func
                )

            def keeps_mode(call: ast.Call) -> bool:
                # `torch.export.export(self.model, ...)` or `copy.deepcopy(self.model)` in another
                # method: neither switches the module it is given (torch 2.13's export reads
                # `training`, never sets it), so the attribute stays what `__init__` stored.
                return api_kind(call, resolver.qualname) in _MODE_KEEPING_APIS

            def hands_back(method: ast.AST):
                # A call between a switch and a store, resolved as the storing method's walk would.
                return hands_back_in(method, lambda: Interpreter(self, method, class_scope))

            def changed(method: ast.AST):
                # What a call handing `self` may change, resolved as the method's walk would.
                return fields_changed_in(method, lambda: Interpreter(self, method, class_scope))

            found = attribute_sources(class_scope.node, builds, keeps_mode, hands_back, changed)
            self._attributes[id(class_scope.node)] = found
        return found

    def stored_fields(self, cls, held: bool = False) -> dict:
        """What constructions of the resolved class `cls` hold as attributes (`stored_fields`;
        with `held`, whatever mode a method switches them to: `held_fields`)."""
        return held_fields(cls.node) if held else stored_fields(cls.node)

    def for_module(self, module: str) -> ModelFlow | None:
        """The analysis of another module of the project (None outside it), however many
        modules away: a kept flow (`shared_flows`) is reused wherever the next check meets it,
        so a limit on the depth a module is first met at made a file's findings depend on the
        files checked before it in the process (a flow analysed shallow and reused deep saw
        what a fresh analysis there would not: `-j`, file order, `qlint check FILE`). Each module
        is analysed once per check and each body once, so the work stays bounded by the
        project; the old limit of four was met on no real tree (ExecuTorch, ao, installed
        torch/torchao/executorch: 0 of ~12,700 lookups), and 60 modules are ~440 frames deep."""
        if module == self.scope.module:
            return self
        if module not in self.memo.modules:  # one file-system lookup per module name
            other = self.project.module_scope(module, self.scope.path)
            flow = None if other is None else ModelFlow(other, self.project, self.optable, self.depth + 1, self.memo)
            self.memo.modules[module] = flow
        return self.memo.modules[module]
