"""What calls do to models: captures, PT2E steps, mode switches, ExecuTorch sessions, and
summaries of helpers of the same module or project.

The statement walk (`qlint.analysis.flow.model_interp.Interpreter`) holds one `CallSemantics`
and hands it every call; `CallSemantics` asks the walk back only through `Walk`, so neither
module imports the other's class.
"""

from __future__ import annotations

import ast
import weakref
from typing import Protocol

from qlint.analysis.flow import decorator_registries as registries
from qlint.analysis.flow.callbacks import CallbackLinks
from qlint.analysis.flow.class_calls import class_callee
from qlint.analysis.flow.class_methods import method_of
from qlint.analysis.flow.dead_branches import contradicted_at_call, open_ended
from qlint.analysis.flow.graph_holders import GraphHolders
from qlint.analysis.flow.graph_parts import GraphParts
from qlint.analysis.flow.graph_wrappers import constructed_plain, wrapper_fields
from qlint.analysis.flow.handed_switches import handed_fields, handed_switches
from qlint.analysis.flow.held_contents import held_facts
from qlint.analysis.flow.instance_methods import method_summary
from qlint.analysis.flow.kept_calls import kept_argument
from qlint.analysis.flow.library_engines import wrapped_model
from qlint.analysis.flow.loop_items import LITERALS, Containers
from qlint.analysis.flow.maybe_graphs import graph_paths, reaching, returned_paths, tests_type
from qlint.analysis.flow.mode_keeping import LIBRARY, hands_back_same
from qlint.analysis.flow.model_apis import Api, argument, classify_call, key, recipe_flow
from qlint.analysis.flow.model_apis import switch_mode as _switch_mode
from qlint.analysis.flow.model_builds import Builds
from qlint.analysis.flow.model_values import (
    APPLIED,
    CALL,
    CONTAINER,
    CONVERTED,
    EXPECTS_ERROR,
    EXPORTED,
    GRAPH_KINDS,
    ITEM,
    PAIRS,
    PARAM,
    PARAM_PART,
    PREPARED,
    PREPARED_QAT,
    PRETRAINED,
    PROGRAM,
    UNKNOWN,
    UNKNOWN_MODE,
    VALUES,
    CallSite,
    Capture,
    Env,
    FunctionFlow,
    ModeFact,
    ModeSwitch,
    Obj,
    Origin,
    Sink,
    anchored,
    join,
    merge_values,
    new_value,
    part_of,
)
from qlint.analysis.flow.prepared_results import PreparedResults
from qlint.analysis.flow.registry_dispatch import apply_each, dispatch_targets
from qlint.analysis.flow.relayed_lambdas import RelayedLambdas
from qlint.analysis.flow.switched_fields import switch_fields
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ClassScope, parameter_args, unique_value
from qlint.value_classes import replace

# Calls into these are API calls (`classify_call`) or library internals, never summarised.
_LIBRARIES = ("torch.", "torchao.", "executorch.exir", "copy.")
# Decorators whose method is read as an attribute: calling `self.name(...)` calls its value.
_PROPERTIES = frozenset({"property", "cached_property"})
_SELF_RETURNING = frozenset(
    {"to", "cpu", "cuda", "float", "half", "double", "bfloat16", "requires_grad_", "share_memory", "to_empty", "type"}
)
_ITEMS = frozenset({"items", "values", "get", "pop", "__getitem__"})  # of a dict of models
_ITEM_STEPS = {"items": (PAIRS,), "values": (VALUES,)}  # the others take one item
_PT2E_RESULT = {"prepare": PREPARED, "prepare_qat": PREPARED_QAT, "convert": CONVERTED}


class Walk(Protocol):
    """What call semantics asks of the statement walk that holds it."""

    func: ast.AST  # the function (or module) analysed
    flow: FunctionFlow  # what it records about that function
    guards: list[tuple[str, bool]]  # the branch conditions around the current statement
    contexts: list[str]  # enclosing `with` contexts and `try` blocks
    stmt_stack: list[ast.stmt]
    previous: list[ast.stmt | None]  # the statement before each of `stmt_stack` in its block
    containers: Containers  # lists and dicts written in the function (`loop_items`)
    parts: GraphParts  # graphs held in parts of local values (`graph_parts`)

    def expr(self, e: ast.expr | None, env: Env) -> Obj | None: ...

    def qualname(self, expr: ast.AST) -> str | None: ...


class CallSemantics:
    """What one call does to the models of one function's walk; keeps the state only calls need."""

    def __init__(self, walk: Walk, owner, resolver: Resolver, class_scope: ClassScope | None, nested, classes):
        # The interpreter that owns this: a weak reference, so that a walk's objects are freed
        # when it ends rather than when the cyclic collector next runs.
        self.walk = weakref.proxy(walk)
        self.owner = owner  # the `ModelFlow` that summarises helpers (not imported: it imports us)
        self.resolver = resolver
        self.class_scope = class_scope
        self.nested = nested  # helpers defined inside the function: name -> def
        self.classes = classes  # classes defined inside the function: name -> def (None: two of them)
        self.builds = Builds(self)
        self.capture_index: dict[int, int] = {}
        self.switch_index: dict[int, ModeSwitch] = {}
        self.sessions: dict[Obj, tuple] = {}
        self.graph_holders: set[Obj] = set()  # modules with an exported GraphModule as a submodule
        self.containers = GraphHolders()  # torch containers built here, with the graphs they hold
        self.callbacks = CallbackLinks(self)
        self.lambdas = RelayedLambdas(self)
        self.results = PreparedResults(self)
        # Call node id -> the objects of each element of the tuple a helper returns on every path.
        self.unpacked: dict[int, tuple[Obj | None, ...]] = {}
        # id(dict/list/tuple/set literal) -> the modes of the models it holds (`Interpreter.items_of`).
        self.literal_items: dict[int, frozenset[ModeFact]] = {}
        # Object -> the branches its `allow_exported_model_train_eval` lies in (`ModeSwitch.allowed_under`).
        self.allow_guards: dict[Obj, frozenset] = {}
        # Graph origin -> the guards of the paths it was made (or a helper handed it back) on
        # here, in this function's terms (`maybe_graphs`).
        self.made_graphs: dict[Origin, set] = {}
        # An engine a library built around a model -> (its attribute holding it, the model).
        self.engines: dict[Obj, tuple[str, Obj]] = {}

    @property
    def flow(self) -> FunctionFlow:
        return self.walk.flow

    def engine_part(self, holder: Obj, attr: str) -> Obj | None:
        """The model a library engine holds (`library_engines`), read as `engine.<attr>`,
        while nothing here assigned to that attribute."""
        held = self.engines.get(holder) if self.engines else None
        if held is None or held[0] != attr or (holder, attr) in self.builds.overwritten:
            return None
        return held[1]

    def holds_graph(self, holder: Obj) -> None:
        """`holder.block = <exported graph>`: `holder.eval()` would now raise."""
        self.graph_holders.add(holder)

    def stored_on(self, holder: Obj, attr: str, obj: Obj | None) -> None:
        """`holder.<attr> = obj`: what a module instance built here holds (`graph_wrappers`)."""
        self.containers.stored(holder, attr, obj, lambda: constructed_plain(self.owner, holder))

    def call(self, node: ast.Call, env: Env) -> Obj | None:
        func = node.func
        # `runner.calibrate()` may change the graphs `runner`'s fields hold: what they were before.
        root = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
        fields = self.walk.parts.fields_of(root, env) if root is not None else None
        self.walk.parts.touched(node, env)
        receiver = self.walk.expr(func.value, env) if isinstance(func, ast.Attribute) else None
        if receiver is None and _switch_on_part(func, env):
            # `wrapper.model.eval()`: `Module.eval()` returns the module it was called on, in that
            # mode, whatever holds it (ExecuTorch's esrgan returns `model.model.eval()` of a
            # third-party wrapper).
            receiver = new_value(env, func.value, "", Origin(UNKNOWN, func.value))
        args = [self.walk.expr(a.value if isinstance(a, ast.Starred) else a, env) for a in node.args]
        kwargs = {kw.arg: self.walk.expr(kw.value, env) for kw in node.keywords}
        first = args[0] if args and not isinstance(node.args[0], ast.Starred) else None
        self.lambdas.call(node, args, kwargs, env)

        builds = self.builds
        looked_up = registries.lookup(self, node, env)  # `REGISTRY.get(type(config))`
        if looked_up is not None:
            return looked_up
        if isinstance(func, (ast.Name, ast.Subscript, ast.Call)):
            held = env.vars.get(func.id) if isinstance(func, ast.Name) else registries.lookup(self, func, env)
            made = registries.instance(held, node, env)  # `qcls(cfg)`, `REGISTRY[type(cfg)](cfg)`
            if made is not None:
                return made
        makes = builds.factory_called(func, env)
        if makes is not None:  # `make()`, `MODELS[name]()`: what each callable builds
            return merge_values([builds.make(node, m, args, kwargs, env) for m in makes], env, node)
        if isinstance(func, ast.Attribute) and func.attr == "get" and (makes := builds.callables(func.value)):
            return builds.factory(node, makes, env)  # `MODELS.get(name)`
        found = self.callee(func)
        kept = self._kept(node, func, receiver, found, args, kwargs, env)
        if kept is not None:
            return kept  # `torch.compile(model)`: the model, in the mode it was in
        unread = receiver is None and found is not None and self.unread_result(node, args, kwargs)
        if unread and self.site_only(found, node):
            return new_value(env, node, "", Origin(CALL, node))
        summary = self.helper(func, found)
        if summary is None and receiver is not None and isinstance(func, ast.Attribute):
            summary = method_summary(self, func.attr, receiver)  # `quantizer.prepare(m)`
            if summary is None and len(receiver.origins) > 1:  # `HANDLERS[k](q).prepare(m)`
                targets = dispatch_targets(self, func.attr, receiver)
                if targets:
                    return apply_each(self, node, targets, receiver, args, kwargs, env)
            if summary is None:
                registered = _registered_instance(receiver) and first is not None
                before = env.facts(first) if registered else frozenset()
                # `get_quantizer(config).prepare(model)`: the followed module's registered classes.
                registries.dispatch(self, node, func.attr, receiver, args, kwargs, env)
                if registered:
                    # Which class runs is the caller's key: what it returns is judged there.
                    made = self._unread_result(node, first, env)
                    env.modes[made] = registries.result_fact(node, func.attr, receiver, before)
                    return made
        if summary is not None:
            callee, offset = summary
            if offset and callee.field_switches and receiver is not None:
                handed_fields(self, node, callee, receiver, fields or {}, env)
                switch_fields(self, node, callee, receiver, env)  # `Wrapper(model).prepare()`
            return self.apply(node, *summary, receiver, args, kwargs, env)
        if isinstance(func, ast.Name):
            if (graph := env.vars.get(func.id)) is not None:
                self.results.forward(graph, node)  # `prepared(*inputs)`: a calibration pass
            self.callbacks.called(node, func.id, env, args, kwargs)
            applied = self.callbacks.apply_parameter(node, func, first, env)
            if applied is not None:
                return applied
        if receiver is not None and self.walk.containers.filled(node, receiver, args):
            return None
        if receiver is not None and isinstance(func, ast.Attribute):
            if self.containers.filled(node, func.attr, receiver, args):
                return None
            result = self.method(node, func.attr, receiver, env)
            if result is not False:
                return result
        # A method of a model value (`model.load_state_dict`) names no API: skip the lookup.
        name = None if receiver is not None and _root_is_value(func, env) else self.walk.qualname(func)
        api = classify_call(name, func)
        if api is not None:
            return self.api_call(node, api, first, kwargs, env)
        if isinstance(func, ast.Attribute) and func.attr == "from_pretrained":
            return new_value(env, node, "", Origin(PRETRAINED, node))
        if (wrapped := wrapped_model(name, node, args, kwargs)) is not None:
            engine = new_value(env, node, "", Origin(CALL, node))
            self.engines[engine] = wrapped  # `deepspeed.init_inference(model).module` is `model`
            return engine
        if name in _MODE_KEEPING_WRAPPERS and (child := first if first is not None else kwargs.get("module")):
            return child  # `nn.DataParallel(model)` runs the child in the mode the child is in
        built = builds.construction(node, name)
        if built is not None:
            builds.instantiation(node, built, args, kwargs, env)
            # What it was given, for the attributes its class stores (`bundle.model`); a
            # container written there is a value of its own (`held_contents`).
            starred = any(isinstance(a, ast.Starred) for a in node.args)
            positional = () if starred else tuple(self._given(a, e, env) for a, e in zip(args, node.args, strict=True))
            keywords = tuple((kw.arg, self._given(kwargs[kw.arg], kw.value, env)) for kw in node.keywords if kw.arg)
            passed = (positional, keywords)
            made = builds.construct(node, built, [*args, *kwargs.values()], env, passed)
            if not starred:
                self.containers.built(name, node, made, args, self.walk.containers.literals)
                if built.cls is not None and any(self._holds(o) for o in [*args, *kwargs.values()]):
                    self.containers.wrapped(made, wrapper_fields(self.owner, built.cls), passed)
            return made
        return self._unread_result(node, first, env)

    def _kept(self, node: ast.Call, func, receiver, found, args, kwargs, env: Env) -> Obj | None:
        """Record a call that hands back the module it is given in its mode (`kept_calls`);
        for a library's or an alias's, the object it was given is its value."""
        # A project helper is judged by its def; only other callees need the name (resolved
        # here as below, where the walk asks for it again).
        skip = found is not None or (receiver is not None and _root_is_value(func, env))
        name = None if skip else self.walk.qualname(func)
        kept = kept_argument(self, node, name, found)
        if kept is None:
            return None
        self.flow.kept[id(node)] = kept
        if found is not None and found[1] is self.walk.func:
            self.flow.itself.add(id(node))
        keeper = LIBRARY.get(name) if name is not None else None
        if found is not None or not (keeper or (isinstance(func, ast.Name) and func.id in self.resolver.local)):
            return None  # a helper's summary, or a construction, is read as any other
        if keeper is not None and not hands_back_same(keeper, node):
            return None  # a copy in the same mode: switching it later leaves the original
        if any(a is kept for a in node.args):
            return args[next(i for i, a in enumerate(node.args) if a is kept)]
        return next((kwargs[kw.arg] for kw in node.keywords if kw.value is kept), None)

    def _unread_result(self, node: ast.Call, first: Obj | None, env: Env) -> Obj:
        """The value of a call the walk does not read, given `first` as its first argument."""
        if first is not None and (first.captures or PARAM in first.kinds):
            # `gm = some_pass(gm)`: graph passes return the graph they were given (or a rewrite of it).
            facts = env.facts(first) if first.is_graph else {ModeFact("unset", node, Origin(CALL, node))}
            obj = Obj(node, "", first.origins, first.captures)
            env.modes[obj] = frozenset(facts)
            return obj
        return new_value(env, node, "", Origin(CALL, node))

    def method(self, node: ast.Call, attr: str, receiver: Obj, env: Env):
        """A method of a tracked value; False when it is not one we know."""
        if attr in ("eval", "train"):
            mode = _switch_mode(node, attr)
            seen = self.switch_index.get(id(node))
            if seen is None:  # a loop body runs twice: merge what both passes saw
                guard = frozenset(self.walk.guards)
                seen = self.switch_index[id(node)] = ModeSwitch(node, node.func.value, mode, frozenset(), False, guard)
                self.flow.switches.append(seen)
            seen.origins |= receiver.origins
            if EXPECTS_ERROR not in self.walk.contexts:
                seen.held |= self.containers.live(receiver, env)
            # A copy's `eval`/`train` are the plain module's again: they raise nothing.
            other = receiver in env.copied or EXPECTS_ERROR in self.walk.contexts
            if other or receiver in env.patched:
                under = frozenset() if other else self.allow_guards.get(receiver, frozenset())
                # Seen patched twice (a loop body) under different branches: take it as always.
                seen.allowed_under = under if not seen.patched or seen.allowed_under == under else frozenset()
                seen.patched = True
            if not other and receiver not in env.patched and "try" not in self.walk.contexts:
                paths = graph_paths(receiver, env, self.made_graphs)
                if paths and not tests_type(self.walk.func, node.func.value):
                    seen.maybe |= reaching(paths, self.walk.guards, self.walk.denied())
            env.modes[receiver] = frozenset({ModeFact(mode or "unknown", node)})
            self.walk.containers.switched(receiver)
            if mode == "train" and receiver in env.patched:  # after allow_exported_model_train_eval
                self.retrain(receiver)
            return receiver
        if attr in _SELF_RETURNING:
            return receiver
        if attr in _ITEMS and (part := part_of(receiver, node, (_ITEM_STEPS.get(attr, (ITEM,)),))) is not None:
            return new_value(env, node, "", part)
        if attr in ("module", "run_decompositions") and PROGRAM in receiver.kinds:
            kind = EXPORTED if attr == "module" else PROGRAM
            return new_value(env, node, "", Origin(kind, node), captures=receiver.captures)
        if attr in ("module", "run_decompositions") and PARAM in receiver.kinds:
            # A helper handed the caller's ExportedProgram: what it prepares is the caller's capture.
            obj = Obj(node, "", receiver.origins, receiver.captures)
            env.modes[obj] = frozenset({ModeFact("unset", node, Origin(CALL, node))})
            return obj
        if attr == "export" and receiver in self.sessions:
            ctor, model_expr, model, recipe = self.sessions[receiver]
            bound = key(model_expr) is not None and env.vars.get(key(model_expr)) == model
            note = "the session is created here; its QuantizeStage captures the model"
            index = self.capture(node, "executorch.export.ExportSession", model_expr, model, env, bound)
            cap = self.flow.captures[index]
            cap.inner = (self.flow.path, ctor, note)
            cap.sinks.add(Sink("ptq", *recipe, frozenset(self.walk.guards)))
            return new_value(env, node, "", Origin(CALL, node))
        return False

    def _holds(self, obj: Obj | None) -> bool:
        """`obj` is an exported graph, or a container or module instance built here holding one."""
        return obj is not None and (obj.is_graph or obj in self.containers.held or obj in self.containers.fields)

    def _given(self, obj: Obj | None, expr: ast.expr, env: Env) -> Obj | None:
        """What a construction is given for one argument: a container written there becomes a
        value holding what it holds (`held_contents`), which a bundle's field then is."""
        if obj is not None or not isinstance(expr, LITERALS):
            return obj
        items = self.literal_items.get(id(expr))
        return new_value(env, expr, "", Origin(CONTAINER, expr, items=items)) if items is not None else None

    def _held(self, given: dict[int, Obj], passed: dict, env: Env) -> dict | None:
        """What the bundles a helper's call passes hold (`held_contents`), by parameter."""
        out = None
        for i, obj in given.items():
            if not any(o.passed for o in obj.origins):
                continue  # no construction given anything: most arguments
            literals, overwritten = self.walk.containers.literals, self.builds.overwritten
            facts = held_facts(obj, env, self.owner.stored_fields, literals, overwritten)
            if facts is not passed[i]:
                out = out if out is not None else {}
                out[i] = facts
        return out

    def _literal(self, expr: ast.expr | None) -> frozenset[ModeFact]:
        items = self.literal_items.get(id(expr)) if expr is not None else None
        if items is None:
            return UNKNOWN_MODE
        return frozenset({ModeFact("unset", expr, Origin(CONTAINER, expr, items=items))})

    def api_call(self, node: ast.Call, api: Api, first: Obj | None, kwargs: dict, env: Env) -> Obj | None:
        arg = first if first is not None else next((kwargs[k] for k in api.model_keywords if k in kwargs), None)
        if api.kind == "capture":
            index = self.capture(node, api.name, argument(node, 0, api.model_keywords), arg, env)
            kind = EXPORTED if api.returns_module else PROGRAM
            return new_value(env, node, "", Origin(kind, node), captures={index})
        if api.kind == "executorch":
            # ExecuTorch's QuantizeStage captures without eval() when the recipe is PTQ.
            recipe = recipe_flow(argument(node, 2, ("export_recipe",)), self.resolver, self.walk.qualname)
            model_expr = argument(node, 0, api.model_keywords)
            session = new_value(env, node, "", Origin(CALL, node))
            if recipe is not None and model_expr is not None:
                if api.name.endswith("ExportSession"):
                    self.sessions[session] = (node, model_expr, arg, recipe)
                else:
                    index = self.capture(node, api.name, model_expr, arg, env)
                    self.flow.captures[index].sinks.add(Sink("ptq", *recipe, frozenset(self.walk.guards)))
            return session
        if api.kind in _PT2E_RESULT:
            # `prepare_pt2e(gm, SomeQuantizer(is_qat=True))` simulates QAT: neither flow is certain.
            qat_quantizer = api.kind == "prepare" and self.is_qat_quantizer(argument(node, 1, ("quantizer",)))
            if arg is not None and api.kind != "convert" and not qat_quantizer:
                self.reach(arg, Sink("ptq" if api.kind == "prepare" else "qat", node, self.flow.path))
            captures = arg.captures if arg is not None else frozenset()
            if api.kind == "convert" and arg is not None:
                self.results.rebuilt_for_conversion(arg)
            result = new_value(env, node, "", Origin(_PT2E_RESULT[api.kind], node), captures=captures)
            self.results.note(result, arg)
            return result
        if api.kind == "allow_train_eval" and arg is not None:
            env.patched |= {arg}
            guard, known = frozenset(self.walk.guards), self.allow_guards.get(arg)
            guard = self.allow_guards[arg] = guard if known is None or known == guard else frozenset()
            for origin in arg.origins if len(arg.origins) == 1 else ():
                if origin.kind == PARAM and origin.node is self.walk.func:
                    self.flow.param_allows[origin.index] = guard
        if api.kind == "move" and arg is not None:
            # The torchao helpers are how an exported graph changes mode: a later re-export
            # captures it in that mode.
            mode = "train" if api.name.endswith("_train") else "eval"
            env.modes[arg] = frozenset({ModeFact(mode, node)})
            if mode == "train":
                self.retrain(arg)
            else:
                self.results.rebuilt_for_conversion(arg)
        if api.kind == "load_program":
            return new_value(env, node, "", Origin(PROGRAM, node))
        if api.kind == "copy" and arg is not None:
            obj = Obj(node, "", arg.origins, arg.captures)
            env.modes[obj] = env.facts(arg)
            # Measured on torch 2.13/torchao 0.18: `deepcopy`/`copy` of a graph from `.module()`,
            # `prepare_pt2e` or `convert_pt2e` (allowed or not) switches modes without raising.
            env.copied |= {obj}
            return obj
        return arg  # move_exported_model_to_eval/train, allow_exported_model_train_eval return the model

    def capture(self, node, api: str, model_expr, model: Obj | None, env: Env, fixable=True, facts=None, inner=None):
        """Record a capture of `model` with the modes it may be in here; returns its index."""
        if model is None:
            model = new_value(env, node, "", Origin(UNKNOWN, model_expr or node))
        facts = env.facts(model) if facts is None else facts
        index = self.capture_index.get(id(node))
        if index is not None:  # a loop body analysed twice
            cap = self.flow.captures[index]
            cap.modes |= facts
            cap.origins |= model.origins
            return index
        # Its `.eval()` reaches the graph and raises; a lambda's parameter is no name of `stmt`.
        fixable = fixable and model not in self.graph_holders and not self.lambdas.depth
        stmt = self.walk.stmt_stack[-1]
        cap = Capture(node, stmt, api, model_expr, facts, model.origins, inner=inner, fixable=fixable)
        cap.contexts = tuple(self.walk.contexts)
        self.capture_index[id(node)] = len(self.flow.captures)
        self.flow.captures.append(cap)
        return len(self.flow.captures) - 1

    def is_qat_quantizer(self, expr: ast.expr | None) -> bool:
        located = self.resolver.value_of(expr) if expr is not None else None
        call = located.node if located is not None else None
        return isinstance(call, ast.Call) and any(
            kw.arg == "is_qat" and isinstance(kw.value, ast.Constant) and kw.value.value is True for kw in call.keywords
        )

    def retrain(self, graph: Obj) -> None:
        for index in graph.captures:
            self.flow.captures[index].retrained = True

    def reach(self, obj: Obj, sink: Sink) -> None:
        sink = replace(sink, guard=frozenset(self.walk.guards))
        for index in obj.captures:
            self.flow.captures[index].sinks.add(sink)
        for origin in obj.origins:
            if origin.kind == PARAM and origin.node is self.walk.func:
                self.flow.param_sinks.setdefault(origin.index, set()).add(sink)

    # -- helpers of the same module / class / project ----------------------------------
    def helper(self, func: ast.expr, found=False) -> tuple[FunctionFlow, int] | None:
        """The summary of the function called, and 1 if `self` fills its first parameter
        (`found`: what `callee` answered for it, when asked already)."""
        if found is False:
            found = self.callee(func)
        if found is None:
            return None
        owner, node, holder, offset = found
        flow = owner.function(node, holder)
        return (flow, offset) if flow is not None else None

    def callee(self, func: ast.expr, depth: int = 0):
        """(the `ModelFlow` of its module, the def, its class scope, 1 if `self` fills its first
        parameter) of the helper called, without analysing it; None when it is none we follow."""
        owner = self.owner
        if isinstance(func, ast.Name) and func.id in self.resolver.local and depth < 3:
            # `fn = to_eval; fn(gm)`: a local bound once to a function is that function.
            alias = unique_value(self.resolver.local[func.id])
            if isinstance(alias, (ast.Name, ast.Attribute)):
                found = self.callee(alias, depth + 1)
                # `fn = self.method; fn(x)`: the call has no `.value` to hand over as `self`.
                return found if found is None or not found[3] else None
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in ("self", "cls"):
            found = method_of(self.class_scope, func.attr, owner.scope) if self.class_scope else None
            if found is None:
                return None
            method, holder = found  # the class's own method, or one of a base class of this module
            if any(_decorator_name(d) in _PROPERTIES for d in method.decorator_list):
                return None  # `self.prop(x)` calls the value the property returns, not its getter
            static = any(isinstance(d, ast.Name) and d.id == "staticmethod" for d in method.decorator_list)
            return owner, method, holder, 0 if static else 1
        if isinstance(func, ast.Name) and func.id in self.nested:  # a helper defined in this function
            return owner, self.nested[func.id], None, 0
        if isinstance(func, ast.Name) and func.id in owner.scope.functions and func.id not in self.resolver.local:
            return owner, owner.scope.functions[func.id], None, 0
        name = self.walk.qualname(func)
        if not name or "." not in name:
            return None
        module, _, attr = name.rpartition(".")
        if name.startswith(_LIBRARIES) and (classify_call(name, func) is not None or not self._followed(module)):
            return None
        other = owner.for_module(module)
        for _ in range(3):  # `api.qm(...)` where `pkg/api.py` re-exports it (renamed or not)
            if other is None or attr in other.scope.functions or attr not in other.scope.imports:
                break
            module, _, attr = other.scope.imports[attr].rpartition(".")
            other = owner.for_module(module) if module else None
        if other is not None and other is not owner and attr in other.scope.functions:
            return other, other.scope.functions[attr], None, 0
        if other is None and isinstance(func, ast.Attribute):
            return class_callee(owner, module, attr)  # `Ready.apply(model)`, on the class
        return None

    def unread_result(self, node: ast.Call, args: list, kwargs: dict) -> bool:
        """A call that is a statement of its own and hands the callee no value the walk follows
        (`main()` under `if __name__ == "__main__":`): what the callee does to its parameters,
        returns or captures can reach nothing here (a capture it returns reaches no prepare)."""
        stmts = self.walk.stmt_stack
        if not stmts or not isinstance(stmts[-1], ast.Expr) or stmts[-1].value is not node:
            return False
        if any(isinstance(a, ast.Starred) for a in node.args) or any(kw.arg is None for kw in node.keywords):
            return False
        return all(a is None for a in args) and all(v is None for v in kwargs.values())

    def site_only(self, found, node: ast.Call) -> bool:
        """For such a call of a helper (`found`, from `callee`) not analysed yet: record the
        call (callers are looked up in `FunctionFlow.calls`, with the containers written in
        it) without analysing the helper, which only this call would have asked for so far.
        False when the call is to be read in full."""
        owner, callee, _, offset = found
        if offset or id(callee) in owner.memo.functions:
            return False
        params = [p.arg for p in parameter_args(callee, star=False)]
        exprs = {i: arg for i, arg in enumerate(node.args)}
        exprs.update((params.index(kw.arg), kw.value) for kw in node.keywords if kw.arg in params)
        site = CallSite(callee, node, {i: self._literal(expr) for i, expr in exprs.items()}, exprs)
        if owner.scope.path == self.flow.path:
            self.flow.calls.append(site)
        else:
            self.flow.foreign_calls.append((owner.scope.path, site))
        return True

    def _followed(self, module: str) -> bool:
        """The module whose callers are being read (`project_callers`): in torchao's own tree
        its helpers are `torchao.*` too, and their calls are what the reading is for."""
        owner = self.owner
        if module == owner.scope.module:  # `for_module`'s answer: the module itself
            return owner.classes.followed(owner.scope.path)
        return owner.classes.followed_module(module, owner.scope.path)

    def apply(self, node, callee: FunctionFlow, offset, receiver, args, kwargs, env: Env, selection=None) -> Obj | None:
        """The caller's view of a call to a summarised helper."""
        actual: dict[int, tuple[Obj | None, ast.expr | None]] = {}
        if offset:
            actual[0] = (receiver, node.func.value)
        for i, (obj, arg) in enumerate(zip(args, node.args, strict=True)):
            if not isinstance(arg, ast.Starred):
                actual[i + offset] = (obj, arg)
        for kw in node.keywords:
            if kw.arg in callee.params:
                actual[callee.params.index(kw.arg)] = (kwargs[kw.arg], kw.value)
        given = {i: obj for i, (obj, _) in actual.items() if obj is not None}
        # Positions in another file mean nothing here: what a helper there did happened at this call.
        foreign = callee.path != self.flow.path
        # An argument we cannot follow (`bundle.model`) is passed in an unknown mode.
        # A container written in the call passes the models it holds, in their modes.
        passed = {i: env.facts(obj) if obj is not None else self._literal(expr) for i, (obj, expr) in actual.items()}
        written = {i: expr for i, (_, expr) in actual.items()}
        held = self._held(given, passed, env) if _reads_parts(callee) else None
        origins = {i: obj.origins for i, obj in given.items()}
        site = CallSite(
            callee.node,
            node,
            passed,
            written,
            held=held,
            origins=origins,
            selection=selection,
            kept=callee.kept,
            itself=frozenset(callee.itself),
        )
        if not foreign:
            self.flow.calls.append(site)
        else:
            self.flow.foreign_calls.append((callee.path, site))
        if callee.param_switches:
            handed_switches(self, node, callee, actual, written, env)

        def subst(facts: frozenset[ModeFact]) -> frozenset[ModeFact]:
            """Callee facts in caller terms: "as it came in" becomes the argument's modes here."""
            out: set[ModeFact] = set()
            for f in facts:
                o = f.origin
                if (
                    f.state == "unset"
                    and o is not None
                    and o.kind == PARAM
                    and o.node is callee.node
                    and o.index in given
                ):
                    out |= env.facts(given[o.index])
                elif f.state == "unset" and o is not None and o.kind == registries.REGISTRY_RESULT:
                    out |= registries.rekeyed_fact(f, callee.node, given, self.walk.func, node, again())
                elif f.state == "unset" and o is not None and o.kind == APPLIED and id(o.node) in callee.applied:
                    # `source_transform(model, [f, g])`: what `f` and `g` make of the model.
                    came = callee.applied[id(o.node)]
                    facts = env.facts(given[came]) if came in given else UNKNOWN_MODE
                    made = self.callbacks.made_of(actual.get(o.index, (None, None))[1], facts, node)
                    out |= made if made is not None else {ModeFact("unset", node, Origin(CALL, node))}
                else:
                    out.add(replace(f, guard=frozenset(), node=node if foreign else f.node))
            return frozenset(out)

        # `subst` recurses through a weak reference: a closure over itself is a reference
        # cycle, which would keep this check's flows alive until the cyclic collector runs.
        again = weakref.ref(subst)
        captures: dict[int, int] = {}

        def passed_here(passed: tuple, ret_env: Env) -> tuple:
            """The objects a construction in the helper was given, as the caller sees them: its
            own arguments, or the modes the helper left them in (one level: what they were
            given in turn is not followed)."""

            def one(label, obj: Obj | None) -> Obj | None:
                if obj is None:
                    return None
                for name, param in callee.param_objs.items():
                    if obj == param and callee.params.index(name) in given:
                        return given[callee.params.index(name)]
                origins = frozenset(
                    anchored(o, node, callee.path, passed=()) if foreign else replace(o, passed=()) for o in obj.origins
                )
                out = Obj(node, f"passed {label}", origins, frozenset())
                env.modes[out] = subst(ret_env.facts(obj))
                return out

            args_, kwargs_ = passed
            return tuple(one(i, a) for i, a in enumerate(args_)), tuple((k, one(k, v)) for k, v in kwargs_)

        def translate(obj: Obj, ret_env: Env) -> Obj:
            for name, param in callee.param_objs.items():
                if obj == param and callee.params.index(name) in given:
                    return given[callee.params.index(name)]
            origins, caps = set(), set()
            for o in obj.origins:
                if o.kind == PARAM and o.node is callee.node and o.index in given:
                    origins |= given[o.index].origins
                    caps |= given[o.index].captures
                elif o.kind in registries.KINDS:
                    origins |= registries.rekeyed(o, callee.node, given, self.walk.func, node)
                else:
                    here = anchored(o, node, callee.path) if foreign else o
                    if o.passed:  # what a construction was given, in caller terms too
                        here = replace(here, passed=passed_here(o.passed, ret_env))
                    origins.add(here)
            for c in obj.captures:
                cap = callee.captures[c]
                if cap.sinks:
                    continue  # it reaches prepare inside the helper: reported there
                if c not in captures:
                    model, model_expr = actual.get(_param_index(cap, callee), (None, None))
                    inner = (callee.path, cap.call, "the helper captures the model here")
                    captures[c] = self.capture(node, cap.api, model_expr, model, env, True, subst(cap.modes), inner)
                caps.add(captures[c])
            for index in callee.param_results.get(obj, ()):
                caps |= given[index].captures if index in given else frozenset()
            out = Obj(node, "", frozenset(origins), frozenset(caps))
            env.modes[out] = subst(ret_env.facts(obj))
            return out

        for index, sinks in callee.param_sinks.items():
            for sink in sinks if index in given else ():
                # `_prepare(ep)` with `def _prepare(ep, is_qat=False)`: its QAT arm cannot run.
                if not contradicted_at_call(
                    sink.guard, callee.node, written, self.resolver, callee.resolver, open_ended(node)
                ):
                    self.reach(given[index], sink)
                    if sink.node in callee.rebuilt_sinks:
                        self.results.rebuilt_in_helper(given[index], sink.node)
        for record in callee.callback_calls:
            self.callbacks.passed(record, actual, env, node, callee)
        ends = callee.returns
        for name, param in callee.param_objs.items():
            index = callee.params.index(name)
            if index not in given or not ends:
                continue
            final = frozenset().union(*(e.facts(param) for e, _ in ends))
            if any(f.state != "unset" or f.origin is None or f.origin.kind != PARAM for f in final):
                env.modes[given[index]] = subst(final)  # the helper sets the argument's mode
                self.walk.containers.switched(given[index])
            if any(param in e.patched for e, _ in ends) and not self._allow_ruled_out(node, callee, index, written):
                env.patched |= {given[index]}
        self._unpack(node, callee, translate, env)
        results = [translate(obj, e) for e, obj in ends if obj is not None]
        if not results:
            return new_value(env, node, "", Origin(CALL, node))
        result = merge_values(results, env, node)
        self.results.note(result, None)
        # The graphs the helper's returns hand back, on the branches of the call's arguments
        # (an allowed one is no path to a raise); what it was given keeps the paths it had.
        here = frozenset(self.walk.guards)
        for origin, guard in returned_paths(callee, node, written, self.resolver, foreign):
            self.made_graphs.setdefault(origin, set()).add(guard | here)
        # The others of another file's helper are named for this call too: none of their
        # paths reaches here, which `note_made` must not take for a graph made at the call.
        for origin in result.origins if foreign else ():
            if origin.node is node and origin.kind in GRAPH_KINDS:
                self.made_graphs.setdefault(origin, set())
        return result

    def _allow_ruled_out(self, node: ast.Call, callee: FunctionFlow, index: int, written: dict) -> bool:
        """The callee allows parameter `index` only under flags this call's arguments rule out
        (`def evaluate(m, is_graph=False): if is_graph: allow(m)` called as `evaluate(gm)`)."""
        guard = callee.param_allows.get(index)
        return bool(guard) and contradicted_at_call(
            guard, callee.node, written, self.resolver, callee.resolver, open_ended(node)
        )

    def _unpack(self, node: ast.Call, callee: FunctionFlow, translate, env: Env) -> None:
        """`return model.eval(), inputs` on every path: each element in caller terms, for `a, b = f()`."""
        size = _items_of(callee)
        if not size:
            return
        items: list[Obj | None] = []
        for position in range(size):
            values = [(e, callee.return_items[i][position]) for i, (e, _) in enumerate(callee.returns)]
            if any(v is None for _, v in values):
                items.append(None)  # some path returns something we do not follow there
                continue
            objs = [translate(v, e) for e, v in values]
            if len(set(objs)) == 1:
                items.append(objs[0])
                continue
            # Named by position, so that two elements merged at one call stay two objects.
            merged = join([Env({f"item{position}": o}, env.modes, env.patched, env.copied) for o in objs], node)
            env.modes.update(merged.modes)
            items.append(merged.vars[f"item{position}"])
        self.unpacked[id(node)] = tuple(items)


def _registered_instance(receiver: Obj) -> bool:
    """An instance of a class looked up in a decorator-filled registry (and nothing else)."""
    return bool(receiver.origins) and all(o.kind == registries.REGISTRY_INSTANCE for o in receiver.origins)


def _reads_parts(callee: FunctionFlow) -> bool:
    """The helper captures a part of a parameter itself (`artifact.model`): only then is what
    a bundle it is handed holds worth recording (`caller_verdicts` vouches for no other)."""
    return any(
        f.origin is not None and f.origin.kind == PARAM_PART and f.origin.owner is callee.node
        for cap in callee.captures
        for f in cap.modes
    )


def _items_of(callee: FunctionFlow) -> int | None:
    """The length of the tuple every return of `callee` builds (None: some return is no tuple)."""
    sizes = {len(callee.return_items[i]) if i in callee.return_items else None for i in range(len(callee.returns))}
    return next(iter(sizes)) if len(sizes) == 1 else None


# Wrappers whose construction leaves the wrapped module's mode as it is and whose forward runs it.
_MODE_KEEPING_WRAPPERS = frozenset(
    {
        "torch.nn.DataParallel",
        "torch.nn.parallel.DataParallel",
        "torch.nn.parallel.data_parallel.DataParallel",
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.parallel.distributed.DistributedDataParallel",
    }
)


def _switch_on_part(func: ast.expr, env: Env) -> bool:
    """`<value>.<attr>.eval()`: a mode call on an attribute of a local value."""
    if not (isinstance(func, ast.Attribute) and func.attr in ("eval", "train")):
        return False
    return isinstance(func.value, ast.Attribute) and _root_is_value(func.value, env)


def _root_is_value(func: ast.expr, env: Env) -> bool:
    while isinstance(func, ast.Attribute):
        func = func.value
    return isinstance(func, ast.Name) and func.id in env.vars


def _param_index(cap: Capture, callee: FunctionFlow) -> int | None:
    for o in cap.origins:
        if o.kind == PARAM and o.node is callee.node:
            return o.index
    return None


def _decorator_name(decorator: ast.expr) -> str:
    """`property`, `functools.cached_property` -> its last name ('' for a call or other form)."""
    if isinstance(decorator, ast.Attribute):
        return decorator.attr
    return decorator.id if isinstance(decorator, ast.Name) else ""
