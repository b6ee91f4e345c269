"""What calls do to models: each call of a function's walk handed to what reads it, and the
state they share (the captures and mode switches recorded, ExecuTorch sessions, graph holders).
The export, PT2E and ExecuTorch APIs and the methods of model values are `library_calls`';
the helpers of the same module or project `helper_callees`' and `helper_calls`'; constructions `model_builds`'.

The statement walk (`qlint.analysis.flow.model_interp.Interpreter`) holds one `CallSemantics`
and hands it every call; `CallSemantics` asks the walk back only through `Walk`, so neither
module imports the other's class.
"""

from __future__ import annotations

import ast
import weakref
from typing import Protocol

from qlint.analysis.flow import decorator_registries as registries
from qlint.analysis.flow import helper_callees, helper_calls
from qlint.analysis.flow.applied_switches import applied_switch
from qlint.analysis.flow.callbacks import CallbackLinks
from qlint.analysis.flow.called_lambdas import called_lambda, run_lambda
from qlint.analysis.flow.class_constructors import as_called_class, own_class
from qlint.analysis.flow.closure_switches import closure_switches
from qlint.analysis.flow.factory_closures import applied_closure
from qlint.analysis.flow.field_instances import field_instances
from qlint.analysis.flow.function_flows import Capture, FunctionFlow, ModeSwitch, Sink
from qlint.analysis.flow.given_setters import given_by_setter
from qlint.analysis.flow.graph_holders import GraphHolders
from qlint.analysis.flow.graph_parts import GraphParts
from qlint.analysis.flow.graph_wrappers import constructed_plain, wrapper_fields
from qlint.analysis.flow.handed_parts import hands_part
from qlint.analysis.flow.handed_switches import handed_closure, handed_fields
from qlint.analysis.flow.held_parts import HeldParts
from qlint.analysis.flow.inert_applies import kept_by_apply
from qlint.analysis.flow.instance_methods import method_summary
from qlint.analysis.flow.kept_calls import kept_argument
from qlint.analysis.flow.library_calls import api_call, chosen_prepare, either_prepare, method_call
from qlint.analysis.flow.library_engines import MODE_KEEPING_WRAPPERS, wrapped_model
from qlint.analysis.flow.loop_items import LITERALS, Containers
from qlint.analysis.flow.mode_keeping import LIBRARY, hands_back_same
from qlint.analysis.flow.model_apis import classify_call
from qlint.analysis.flow.model_builds import Builds
from qlint.analysis.flow.model_env import Env, merge_values, new_value
from qlint.analysis.flow.model_values import CALL, CONTAINER, PARAM, PRETRAINED, UNKNOWN, ModeFact, Obj, Origin
from qlint.analysis.flow.partial_calls import partial_call
from qlint.analysis.flow.prepared_results import PreparedResults
from qlint.analysis.flow.reflective_switches import SWITCHES, eval_through_field, eval_through_train, reflective_switch
from qlint.analysis.flow.relayed_lambdas import RelayedLambdas
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ClassScope
from qlint.value_classes import replace


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
        # Per receiver's classes: which class's method returned each origin (`registry_dispatch`).
        self.dispatched: dict[frozenset, dict] = {}
        self.sessions: dict[Obj, tuple] = {}
        self.graph_holders: set[Obj] = set()  # modules with an exported GraphModule as a submodule
        self.containers = GraphHolders()  # torch containers built here, with the graphs they hold
        self.held_parts = HeldParts()  # wrappers built here around parts still named here
        self.callbacks = CallbackLinks(self)
        self.lambdas = RelayedLambdas(self)
        self.results = PreparedResults(self)
        # Call node id -> the objects of each element of the tuple a helper returns on every path.
        self.unpacked: dict[int, tuple[Obj | None, ...]] = {}
        # Call node id -> id(argument) -> the graphs its attributes held before the call, for the
        # plain names handed to it (`GraphParts.handed_fields`).
        self.handed_fields: dict[int, dict[int, dict[str, Obj]]] = {}
        # Call node id -> the graphs held under each key of the dict a helper returns on every
        # path, by the key as a part's suffix (`['model']`, `left_graphs.returned_parts`).
        self.returned_parts: dict[int, dict[str, Obj]] = {}
        # id(dict/list/tuple/set literal) -> the modes of the models it holds (`part_reads.items_of`).
        self.literal_items: dict[int, frozenset[ModeFact]] = {}
        # Object -> the branches its `allow_exported_model_train_eval` lies in (`ModeSwitch.allowed_under`).
        self.allow_guards: dict[Obj, frozenset] = {}
        # Graph origin -> the guards of the paths it was made (or a helper handed it back) on
        # here, in this function's terms (`maybe_graphs`).
        self.made_graphs: dict[Origin, set] = {}
        # Value -> graph origin -> the conditions of the arms that chose it (`arm_graphs`).
        self.held_graphs: dict[Obj, dict[Origin, frozenset]] = {}
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
        if type(func) is ast.Name and func.id in self.resolver.local and (spelled := partial_call(self, node)):
            return self.call(spelled, env)  # `prep = functools.partial(set_mode, train=True); prep(m)`
        if (type(func) is ast.Call or (type(func) is ast.Attribute and func.attr in SWITCHES)) and (
            read := reflective_switch(self, node, env)
        ):
            return self.call(read[0], env) if read[0] is not None else read[1]  # `getattr(m, "eval")()`
        # The walk is held through a proxy: its parts and `expr` are looked up once per call.
        parts, expr = self.walk.parts, self.walk.expr
        # `runner.calibrate()` may change the graphs `runner`'s fields hold: what they were before.
        root = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
        fields = parts.fields_of(root, env) if root is not None else None
        if parts.roots or self.handed_fields:  # `set_train(h)` may switch what `h`'s fields hold: before
            held = parts.handed_fields(node, env) if parts.roots else None
            if held:
                self.handed_fields[id(node)] = held
            else:
                self.handed_fields.pop(id(node), None)
        parts.touched(node, env)
        self.held_parts.replacing(node, env)
        receiver = expr(func.value, env) if isinstance(func, ast.Attribute) else None
        if receiver is None and _switch_on_part(func, env):
            # `wrapper.model.eval()`: `Module.eval()` returns the module it was called on, in that
            # mode, whatever holds it (ExecuTorch's esrgan returns `model.model.eval()` of a
            # third-party wrapper).
            receiver = new_value(env, func.value, "", Origin(UNKNOWN, func.value))
        args = [expr(a.value if type(a) is ast.Starred else a, env) for a in node.args]
        kwargs = {kw.arg: expr(kw.value, env) for kw in node.keywords}
        first = args[0] if args and not isinstance(node.args[0], ast.Starred) else None
        given_by_setter(self, node, args, kwargs, env)  # `model.add_module("head", nn.Dropout())`
        self.lambdas.call(node, args, kwargs, env)
        if (lam := called_lambda(self, func)) is not None:
            ran = run_lambda(self, node, lam, args, kwargs, env)  # `prep = lambda m: m.train(); prep(model)`
            if ran is not None:
                return ran
        if (made := applied_closure(self, node, args, kwargs, env)) is not None:
            return made  # `make_transform(kind)(model)`: what the callables it returns do
        if receiver is None and (chosen := chosen_prepare(self, func)) is not None:
            return either_prepare(self, node, chosen, first, kwargs, env)  # `prepare = A if qat else B`

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
        key = node.args[0] if node.args and not isinstance(node.args[0], ast.Starred) else None
        if isinstance(func, ast.Attribute) and func.attr == "get" and (makes := builds.callables(func.value, key)):
            return builds.factory(node, makes, env)  # `MODELS.get(name)`
        found = helper_callees.callee(self, func)
        if found is not None and receiver is None and not found[3] and found[0].scope.path == self.flow.path:
            # `run_eval()` of a function written here that switches this function's `model`.
            for _, switch_call in closure_switches(self.owner.scope, found[1], self.walk.func):
                handed_closure(self, node, switch_call, self.flow.path, found[1], env)
        kept = self._kept(node, func, receiver, found, args, kwargs, env)
        if kept is not None:
            return kept  # `torch.compile(model)`: the model, in the mode it was in
        unread = receiver is None and found is not None and helper_calls.unread_result(self, node, args, kwargs)
        if unread and hands_part(self, node, env):
            unread = False  # `make_train(model.bn)`: the part has no value, the helper may switch it
        if unread and helper_calls.site_only(self, found, node):
            return new_value(env, node, "", Origin(CALL, node))
        summary = helper_callees.helper(self, func, found)
        if summary is None and receiver is not None and isinstance(func, ast.Attribute):
            summary = method_summary(self, func.attr, receiver, node)  # `quantizer.prepare(m)`
            if summary is None and func.attr == "eval" and (spelled := eval_through_train(self, node, receiver)):
                return self.call(spelled, env)  # `Module.eval` runs the class's own `train(False)`
            if summary is None and (stored := field_instances(self, receiver)) is not None:
                receiver = stored  # `self.strategy.quantize(m)`, stored by `self._create_strategy()`
                summary = method_summary(self, func.attr, receiver, node)
            if summary is None and len(receiver.origins) > 1:  # `HANDLERS[k](q).prepare(m)`
                from qlint.analysis.flow.registry_dispatch import apply_each, dispatch_targets

                targets = dispatch_targets(self, func.attr, receiver)
                if targets:
                    return apply_each(self, node, targets, receiver, args, kwargs, env)
            if summary is None:
                registered = registries.registered_instance(receiver) and first is not None
                before = env.facts(first) if registered else frozenset()
                # `get_quantizer(config).prepare(model)`: the followed module's registered classes.
                registries.dispatch(self, node, func.attr, receiver, args, kwargs, env)
                if registered:
                    # Which class runs is the caller's key: what it returns is judged there.
                    made = self._unread_result(node, first, env)
                    env.modes[made] = registries.result_fact(node, func.attr, receiver, before)
                    return made
        if (
            summary is not None
            and receiver is not None
            and func.attr == "eval"
            and (through := eval_through_field(node, *summary, self.flow))
        ):
            held = self.call(through[0], env)  # `w.eval()` evals its field alone: `w.model.eval()`
            return held if through[1] else receiver
        if summary is not None:
            callee, offset = summary
            if offset and callee.field_switches and receiver is not None:
                handed_fields(self, node, callee, receiver, fields or {}, env)
                from qlint.analysis.flow.switched_fields import switch_fields

                switch_fields(self, node, callee, receiver, env)  # `Wrapper(model).prepare()`
            result = helper_calls.apply(self, node, *summary, receiver, args, kwargs, env)
            return as_called_class(self, node, result, env) if offset else result  # `Deeper.create()`
        if isinstance(func, ast.Name) and (self.class_scope is None or own_class(self, node) is None):
            if (graph := env.vars.get(func.id)) is not None:
                self.results.forward(graph, node)  # `prepared(*inputs)`: a calibration pass
            self.callbacks.called(node, func.id, env, args, kwargs)
            applied = self.callbacks.apply_parameter(node, func, first, env)
            if applied is not None:
                return applied
        if isinstance(func, ast.Attribute) and func.attr == "apply" and applied_switch(self, node, env):
            return receiver  # `m.apply(freeze_bn)`: the modules it switches (`looped_switches`)
        if isinstance(func, ast.Attribute) and func.attr == "apply" and kept_by_apply(self, node, receiver):
            return receiver  # `m = Net().apply(init_weights)`: the module, in its mode
        if receiver is not None and self.walk.containers.filled(node, receiver, args):
            return None
        if receiver is not None and isinstance(func, ast.Attribute):
            if self.containers.filled(node, func.attr, receiver, args):
                return None
            result = method_call(self, node, func.attr, receiver, env)
            if result is not False:
                return result
        # A method of a model value (`model.load_state_dict`) names no API: skip the lookup.
        name = None if receiver is not None and _root_is_value(func, env) else self.walk.qualname(func)
        api = classify_call(name, func)
        if api is not None:
            return api_call(self, node, api, first, kwargs, env)
        if isinstance(func, ast.Attribute) and func.attr == "from_pretrained":
            return new_value(env, node, "", Origin(PRETRAINED, node))
        if (wrapped := wrapped_model(name, node, args, kwargs)) is not None:
            engine = new_value(env, node, "", Origin(CALL, node))
            self.engines[engine] = wrapped  # `deepspeed.init_inference(model).module` is `model`
            return engine
        if name in MODE_KEEPING_WRAPPERS and (child := first if first is not None else kwargs.get("module")):
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
            self.held_parts.built(self.owner, made, built, node, env)
            if (held := builds.closure_held.pop(id(node), None)) is not None:
                self.held_parts.hold(self.owner, made, held)  # `self.body = net.body` of a class written here
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

    def retrain(self, graph: Obj, move: ast.Call) -> None:
        for index in graph.captures:
            self.flow.captures[index].retrained.add(move)

    def reach(self, obj: Obj, sink: Sink) -> None:
        sink = replace(sink, guard=frozenset(self.walk.guards))
        for index in obj.captures:
            self.flow.captures[index].sinks.add(sink)
        for origin in obj.origins:
            if origin.kind == PARAM and origin.node is self.walk.func:
                self.flow.param_sinks.setdefault(origin.index, set()).add(sink)

    # Asked by the modules that hand this object calls of their own (`callbacks`, `model_builds`,
    # `registry_dispatch`, ...): the helper-call side lives in `helper_callees` and `helper_calls`.
    def helper(self, func: ast.expr, found=False) -> tuple[FunctionFlow, int] | None:
        return helper_callees.helper(self, func, found)

    def apply(self, node, callee: FunctionFlow, offset, receiver, args, kwargs, env: Env, selection=None) -> Obj | None:
        return helper_calls.apply(self, node, callee, offset, receiver, args, kwargs, env, selection)


def _switch_on_part(func: ast.expr, env: Env) -> bool:
    """`<value>.<attr>.eval()`: a mode call on an attribute of a local value (or an item of one),
    or of what a call returned (`YOLO(path).model.eval()`, `torch.load(f).net.train()`)."""
    if not (isinstance(func, ast.Attribute) and func.attr in ("eval", "train")):
        return False
    part = func.value
    while isinstance(part, ast.Subscript):  # `m.layers[0].train()`
        part = part.value
    if isinstance(part, ast.Call) and isinstance(part.func, ast.Name) and part.func.id == "getattr" and part.args:
        part = ast.Attribute(part.args[0])  # `getattr(m, "encoder").train()`: as `m.encoder`
    return isinstance(part, ast.Attribute) and _root_is_value(part, env)


def _root_is_value(func: ast.expr, env: Env) -> bool:
    while isinstance(func, ast.Attribute):
        func = func.value
    return (isinstance(func, ast.Name) and func.id in env.vars) or isinstance(func, ast.Call)
