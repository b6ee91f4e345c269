"""Follow model values through a function body: where each came from, which mode
statements (`.eval()`, `.train()`) reach each use, and where captured graphs flow.

PT2E bakes a model's train/eval mode into the captured graph, so whether a capture is
right depends on facts spread over a function: which `.eval()` runs on every path before
`torch.export.export`, whether the program then reaches `prepare_pt2e` or
`prepare_qat_pt2e`, and whether `.eval()` is later called on the exported GraphModule.
This module computes those facts once per file for every rule (and the runtime checker).

The analysis (`qlint.analysis.model_interp`) is a forward abstract interpretation over the
structured `ast`: a value is an `Obj` (one model object, or a merge of several at a join),
each `Obj` has a set of possible `ModeFact`s (one per path), branches are joined, loops run
twice, `return`/`raise` end a path. A fact set inside `if cond:` remembers `cond`, so a
`.train()` under `if is_qat:` does not reach a `prepare_pt2e` under the `else:`. Helpers of
the same module or project are summarised by analysing their body once and substituting
the caller's arguments for their parameters.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field, replace

from qlint.analysis.scope import ClassScope, ModuleScope

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
PROGRAM, EXPORTED, PREPARED, PREPARED_QAT, CONVERTED = (
    "ExportedProgram",
    "ExportedProgram.module()",
    "prepare_pt2e",
    "prepare_qat_pt2e",
    "convert_pt2e",
)
GRAPH_KINDS = frozenset({EXPORTED, PREPARED, PREPARED_QAT, CONVERTED})
# A function is analysed only if its text mentions one of these (or a helper that does).
_KEYWORDS = (
    "export",
    "prepare_pt2e",
    "prepare_qat_pt2e",
    "convert_pt2e",
    "capture_pre_autograd_graph",
    "QuantizationRecipe",
    "ExportSession",
)
_MAX_SUMMARY_DEPTH = 4
# On `Capture.contexts`/the interpreter's context stack inside `with pytest.raises(...)`,
# `self.assertRaises(...)` or a `try` catching NotImplementedError: code there expects
# `.eval()` on an exported graph to raise, so it is no finding.
EXPECTS_ERROR = "<expects an error>"

Guard = frozenset  # of (condition, polarity): the branches a fact or a sink lies in


@dataclass(frozen=True)
class Origin:
    kind: str
    node: ast.AST  # the expression (or function, for parameters) it came from
    index: int | None = None  # parameter position
    name: str = ""  # parameter or attribute name


@dataclass(frozen=True)
class ModeFact:
    """The mode on one path: "eval", "train", "unset" (as it came) or "unknown" (`.train(flag)`)."""

    state: str
    node: ast.AST | None  # the call that set it, or the origin's node
    origin: Origin | None = None  # for "unset": what it came in as
    guard: Guard = frozenset()

    def guarded(self, condition: tuple[str, bool]) -> ModeFact:
        return replace(self, guard=self.guard | {condition})


@dataclass(frozen=True)
class Obj:
    anchor: ast.AST  # where it was created (or merged)
    key: str
    origins: frozenset[Origin]
    captures: frozenset[int] = frozenset()  # indices into FunctionFlow.captures it derives from

    @property
    def kinds(self) -> frozenset[str]:
        return frozenset(o.kind for o in self.origins)

    @property
    def is_graph(self) -> bool:
        return bool(self.kinds) and self.kinds <= GRAPH_KINDS


@dataclass(frozen=True)
class Sink:
    """Where a captured program goes: "ptq" or "qat", the prepare call (or recipe), its file."""

    flow: str
    node: ast.AST
    path: str
    guard: Guard = frozenset()


@dataclass
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
    # `move_exported_model_to_train` runs on the prepared graph: dropout and batch norm are
    # switched back to training behaviour after an eval-mode capture.
    retrained: bool = False

    def flows(self, kind: str) -> list[Sink]:
        return sorted((s for s in self.sinks if s.flow == kind), key=lambda s: (s.path, s.node.lineno))

    def modes_for(self, kind: str) -> frozenset[ModeFact]:
        """The facts on paths that can reach a sink of this kind."""
        sinks = self.flows(kind)
        return frozenset(f for f in self.modes if any(compatible(f.guard, s.guard) for s in sinks))


@dataclass
class ModeSwitch:
    """`<receiver>.eval()` / `.train(...)`; mode is "eval", "train" or None (`.train(flag)`)."""

    call: ast.Call
    receiver: ast.expr
    mode: str | None
    origins: frozenset[Origin]
    patched: bool  # `allow_exported_model_train_eval` was called on it first, or an error is expected


@dataclass
class CallSite:
    """A call of a helper of this module, with the modes of the models it passes."""

    callee: ast.AST
    call: ast.Call
    args: dict[int, frozenset[ModeFact]]


@dataclass
class FunctionFlow:
    """What one function (or module) body does with models."""

    node: ast.AST
    path: str
    params: list[str]
    param_objs: dict[str, Obj] = field(default_factory=dict)
    captures: list[Capture] = field(default_factory=list)
    switches: list[ModeSwitch] = field(default_factory=list)
    returns: list[tuple[Env, Obj | None]] = field(default_factory=list)
    param_sinks: dict[int, set[Sink]] = field(default_factory=dict)  # parameter -> prepare calls it reaches
    calls: list[CallSite] = field(default_factory=list)


UNKNOWN_MODE = frozenset({ModeFact("unknown", None)})


def compatible(a: Guard, b: Guard) -> bool:
    """Two guards can hold on one run: no condition is required both true and false."""
    return not any((cond, not polarity) in b for cond, polarity in a)


@dataclass
class Env:
    vars: dict[str, Obj] = field(default_factory=dict)
    modes: dict[Obj, frozenset[ModeFact]] = field(default_factory=dict)
    patched: frozenset[Obj] = frozenset()

    def copy(self) -> Env:
        return Env(dict(self.vars), dict(self.modes), self.patched)

    def facts(self, obj: Obj) -> frozenset[ModeFact]:
        return self.modes.get(obj, UNKNOWN_MODE)


def join(envs: list[Env | None], anchor: ast.AST) -> Env | None:
    """Merge the paths that meet at `anchor`: a name bound to different objects becomes a merge."""
    live = [e for e in envs if e is not None]
    if len(live) <= 1:
        return live[0].copy() if live else None
    out = Env(patched=frozenset().union(*(e.patched for e in live)))
    for env in live:
        for obj, facts in env.modes.items():
            out.modes[obj] = out.modes.get(obj, frozenset()) | facts
    for key in {k for e in live for k in e.vars}:
        objs = {e.vars[key] for e in live if key in e.vars}
        if len(objs) == 1:
            out.vars[key] = objs.pop()
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
    return out


def merge_values(objs: list[Obj], env: Env, anchor: ast.AST) -> Obj:
    """One value for `a if c else b` or a helper with several returns."""
    if len(set(objs)) == 1:
        return objs[0]
    merged = join([Env({"value": o}, env.modes, env.patched) for o in objs], anchor)
    env.modes.update(merged.modes)
    return merged.vars["value"]


@dataclass
class _Memo:
    """Shared by the analyses of every module one file's check reaches."""

    functions: dict[int, FunctionFlow | None] = field(default_factory=dict)  # None: in progress
    modules: dict[str, ModelFlow | None] = field(default_factory=dict)


class ModelFlow:
    """Analyses and memoises function bodies of one module (and, on demand, project helpers)."""

    def __init__(self, scope: ModuleScope, project, optable, depth: int = 0, memo: _Memo | None = None):
        self.scope = scope
        self.project = project
        self.optable = optable
        self.depth = depth
        self.memo = memo or _Memo()
        self._attributes: dict[int, dict[str, ast.Call]] = {}

    def function(self, func: ast.AST, class_scope: ClassScope | None = None) -> FunctionFlow | None:
        key = id(func)
        if key in self.memo.functions:
            return self.memo.functions[key]
        from qlint.analysis.model_interp import Interpreter

        self.memo.functions[key] = None  # recursion guard: a recursive call is not summarised
        flow = Interpreter(self, func, class_scope).run()
        self.memo.functions[key] = flow
        return flow

    def attribute_builders(self, class_scope: ClassScope | None, resolver) -> dict[str, ast.Call]:
        """`self.<attr>` only ever set to a new module in this class (one walk per class)."""
        if class_scope is None:
            return {}
        found = self._attributes.get(id(class_scope.node))
        if found is None:
            from qlint.analysis.model_apis import attribute_builders, is_class_call

            def builds(call: ast.Call) -> bool:
                return is_class_call(resolver.qualname(call.func), call.func, self.scope)

            found = self._attributes[id(class_scope.node)] = attribute_builders(class_scope.node, builds)
        return found

    def for_module(self, module: str) -> ModelFlow | None:
        """The analysis of another module of the project (None outside it, or too deep)."""
        if module == self.scope.module:
            return self
        if module not in self.memo.modules:  # one file-system lookup per module name
            other = self.project.module_scope(module, self.scope.path) if self.depth < _MAX_SUMMARY_DEPTH else None
            flow = None if other is None else ModelFlow(other, self.project, self.optable, self.depth + 1, self.memo)
            self.memo.modules[module] = flow
        return self.memo.modules[module]


def module_flows(ctx) -> list[FunctionFlow]:
    """Every function, method and the module body of `ctx` that may handle models (cached per file)."""
    cached = ctx.cache.get("model_flow")
    if cached is None:
        flow = ModelFlow(ctx.scope, ctx.project, ctx.optable)
        functions = list(_functions(ctx.tree, ctx.scope))
        cached = [flow.function(f, cls) for f, cls in _relevant(ctx, functions)]
        ctx.cache["model_flow"] = cached = [f for f in cached if f is not None]
    return cached


def caller_facts(flows: list[FunctionFlow], func: ast.AST, index: int) -> list[tuple[ast.Call, ModeFact]] | None:
    """The modes the calls of this module pass for parameter `index` of `func` (None: no call here).

    A parameter whose every caller passes a model in eval mode is in eval mode: the function
    relies on its callers, and they honour it. Callers' own parameters are followed up.
    """
    return _callers(flows, func, index, frozenset())


def _callers(flows, func, index, seen) -> list[tuple[ast.Call, ModeFact]] | None:
    sites = [(c.call, c.args[index]) for f in flows for c in f.calls if c.callee is func and index in c.args]
    if not sites:
        return None
    out: list[tuple[ast.Call, ModeFact]] = []
    for call, facts in sites:
        for fact in facts:
            origin = fact.origin
            if fact.state == "unset" and origin is not None and origin.kind == PARAM:
                step = (id(origin.node), origin.index)
                further = None if step in seen else _callers(flows, origin.node, origin.index, seen | {step})
                if further is not None:
                    out.extend(further)
                    continue
            out.append((call, replace(fact, guard=frozenset())))
    return out


def _functions(tree: ast.Module, scope: ModuleScope):
    """(function, its class scope) for the module body and every function and method.

    Functions and classes are statements, so only statement lists are walked.
    """
    yield tree, None
    stack: list[tuple[list[ast.stmt], ClassScope | None, bool]] = [(tree.body, None, True)]
    while stack:
        stmts, cls, top = stack.pop()
        for node in stmts:
            if isinstance(node, ast.ClassDef):
                known = scope.classes.get(node.name) if top else None
                cls_scope = known if known is not None and known.node is node else _class_scope(node)
                stack.append((node.body, cls_scope, False))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield node, cls
                stack.append((node.body, None, False))
            else:
                for block in statement_lists(node):
                    stack.append((block, cls, top))


def statement_lists(node: ast.stmt):
    for name in ("body", "orelse", "finalbody"):
        block = getattr(node, name, None)
        if isinstance(block, list):
            yield block
    for handler in getattr(node, "handlers", ()):
        yield handler.body
    for case in getattr(node, "cases", ()):
        yield case.body


def _class_scope(node: ast.ClassDef) -> ClassScope:
    methods = {s.name: s for s in node.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef))}
    return ClassScope(node, methods=methods, bases=list(node.bases))


def _relevant(ctx, functions):
    """Functions whose text mentions a capture/quantization API, or calls one that does."""
    starts, text = ctx.lines.starts, ctx.text

    def segment(node: ast.AST) -> str:
        if isinstance(node, ast.Module):
            return text
        end = starts[node.end_lineno] if node.end_lineno < len(starts) else len(text)
        return text[starts[node.lineno - 1] : end]

    segments = [(f, cls, segment(f)) for f, cls in functions]
    words = list(_KEYWORDS)
    chosen: dict[int, tuple] = {}
    for _ in range(3):  # helpers of helpers
        added = [(f, cls, seg) for f, cls, seg in segments if id(f) not in chosen and any(w in seg for w in words)]
        if not added:
            break
        for f, cls, _ in added:
            chosen[id(f)] = (f, cls)
            if not isinstance(f, ast.Module):
                words.append(f"{f.name}(")
    return list(chosen.values())
