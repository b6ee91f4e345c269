"""Follow model values through a function body: where each came from, which mode
statements (`.eval()`, `.train()`) reach each use, and where captured graphs flow.

PT2E bakes a model's train/eval mode into the captured graph, so whether a capture is
right depends on facts spread over a function: which `.eval()` runs on every path before
`torch.export.export`, whether the program then reaches `prepare_pt2e` or
`prepare_qat_pt2e`, and whether `.eval()` is later called on the exported GraphModule.
This module computes those facts once per file for every rule (and the runtime checker).

The analysis (`qlint.analysis.flow.model_interp`) is a forward abstract interpretation over the
structured `ast`: a value is an `Obj` (one model object, or a merge of several at a join),
each `Obj` has a set of possible `ModeFact`s (one per path), branches are joined, loops run
twice, `return`/`raise` end a path. A fact set inside `if cond:` remembers `cond`, so a
`.train()` under `if is_qat:` does not reach a `prepare_pt2e` under the `else:`. Helpers of
the same module or project are summarised by analysing their body once and substituting
the caller's arguments for their parameters; other modules' helpers once per process, for
every file that calls them (`shared_flows`).
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.flow import registry_contents
from qlint.analysis.flow.carried_flows import watch
from qlint.analysis.flow.forwarded_graphs import LIBRARY_ROOTS
from qlint.analysis.flow.function_flows import CallSite, Capture, FunctionFlow, HandedSwitch, ModeSwitch, Sink
from qlint.analysis.flow.graph_returns import GRAPH_SOURCES, imported_graph_calls, own_graph_returns
from qlint.analysis.flow.inherited_methods import imported_class_methods
from qlint.analysis.flow.model_env import Env, join, merge_values
from qlint.analysis.flow.model_values import (
    ATTRIBUTE,
    BUILT_PART,
    CALL,
    CONSTRUCTED,
    CONVERTED,
    EXPECTS_ERROR,
    EXPORTED,
    GRAPH_KINDS,
    PARAM,
    PARAM_PART,
    PREPARED,
    PREPARED_QAT,
    PRETRAINED,
    PROGRAM,
    STORED,
    UNKNOWN,
    UNKNOWN_MODE,
    Guard,
    ModeFact,
    Obj,
    Origin,
    compatible,
)
from qlint.analysis.flow.module_analysis import ModelFlow
from qlint.analysis.flow.relevant_bodies import module_functions, relevant, segment
from qlint.analysis.mentions import CalledRows, mentions, word_rows
from qlint.value_classes import replace

# The values are re-exported: rules read captures and switches from here.
__all__ = [
    "ATTRIBUTE",
    "BUILT_PART",
    "CALL",
    "CONSTRUCTED",
    "CONVERTED",
    "EXPECTS_ERROR",
    "EXPORTED",
    "GRAPH_KINDS",
    "GRAPH_SOURCES",
    "PARAM",
    "PARAM_PART",
    "PREPARED",
    "PREPARED_QAT",
    "PRETRAINED",
    "PROGRAM",
    "STORED",
    "UNKNOWN",
    "UNKNOWN_MODE",
    "CallSite",
    "Capture",
    "Env",
    "FunctionFlow",
    "Guard",
    "HandedSwitch",
    "ModeFact",
    "ModeSwitch",
    "Obj",
    "Origin",
    "Sink",
    "analyse_bodies",
    "caller_facts",
    "calls_switcher",
    "capture_holder",
    "compatible",
    "file_flow",
    "join",
    "may_hand_graph",
    "merge_values",
    "module_flows",
    "switchers",
]


def module_flows(ctx, switches_only: bool = False) -> list[FunctionFlow]:
    """Every function, method and the module body of `ctx` that may handle models (cached per file).

    With `switches_only` (QL203 reads nothing but mode switches) the list holds only those of
    them whose own text can call `.eval`/`.train`: a switch is recorded only in the flow of the
    body that makes the call, so the others could add none; and those that name a source of
    exported graphs, which they may hand to a helper that switches it (`FunctionFlow.handed`:
    QL203 reads those only in bodies that `may_hand_graph`). Helpers they call are still
    analysed. When every flow is already there (QL201/QL202 ran first) that list is returned."""
    cached = ctx.cache.get("model_flow")
    if cached is None and switches_only:
        cached = ctx.cache.get("model_flow.switches")
        if cached is None:
            chosen = [(f, cls) for f, cls in relevant(ctx) if _may_switch_or_hand(ctx, f)]
            cached = ctx.cache["model_flow.switches"] = _analyse(ctx, chosen)
    elif cached is None:
        cached = ctx.cache["model_flow"] = _analyse(ctx, relevant(ctx))
    return cached


def analyse_bodies(ctx, functions) -> list[FunctionFlow]:
    """The flows of `functions` ((body, class scope) of `ctx`'s module) that `relevant` did not
    choose, in the file's one analysis (a rule reaching further: `graph_returns`)."""
    return _analyse(ctx, functions)


def _analyse(ctx, functions) -> list[FunctionFlow]:
    flow = file_flow(ctx)
    flows = [flow.function(f, cls) for f, cls in functions]
    return [f for f in flows if f is not None]


def file_flow(ctx) -> ModelFlow:
    """The file's one analysis: a later, wider request reuses the bodies already summarised,
    and another module's bodies are read from it (`ModelFlow.for_module`)."""
    flow = ctx.cache.get("model_flow.analysis")
    if flow is None:
        previous = getattr(ctx.project, "previous_trees", None)
        carry = previous.carry(os.path.abspath(ctx.path), ctx.tree) if previous is not None else None
        flow = ctx.cache["model_flow.analysis"] = ModelFlow(ctx.scope, ctx.project, ctx.optable)
        flow.classes.claim_check()
        registry_contents.checking(ctx)  # lookups of registries read for content search its project
        if carry is not None:
            watch(ctx.scope, flow.tracker)
            flow.carry = carry
    return flow


def _may_switch(segment: str) -> bool:
    return "eval" in segment or "train" in segment


def _may_switch_or_hand(ctx, func: ast.AST) -> bool:
    text = segment(ctx, func)
    return _may_switch(text) or _hands(ctx, text)


def may_hand_graph(ctx, flow: FunctionFlow) -> bool:
    """The body names a source of exported graphs and calls a function that may switch a
    mode (`switchers`), or hands such a function on as a value: only there are the graphs it
    hands to switching helpers read, so that the answer is the same with or without the
    other rules' flows. A graph from the
    caller is reported at the caller's call (`ParamSwitch` climbs); one a body only gets
    from a helper's return, naming no source itself, is not read."""
    return _hands(ctx, segment(ctx, flow.node))


def _hands(ctx, text: str) -> bool:
    # Called, or handed on as a callback (`run(to_eval, gm)`: `callbacks.CallbackLinks.passed`);
    # a body naming no graph source may still hand a switching function to a helper that calls
    # it with a graph the helper makes (`run(to_eval)`: `callbacks.CallbackCall.made`).
    # A graph may also come back from a function of this module that returns one
    # (`q = self.strategy.quantize(m)`, then `self.strategy.calibrate(q)`).
    # Handed on is enough; called asks for a graph in the text, the module's returns searched last.
    names = switchers(ctx)
    if any(f"{name}{end}" in text for name in names for end in (",", ")")):
        return True
    if not any(f"{name}(" in text for name in names):
        return False
    if any(s in text for s in GRAPH_SOURCES) or any(f"{name}(" in text for name in own_graph_returns(ctx)):
        return True
    # Or from a helper of another module (`keep(h, m)`, then `to_eval(h)`: `graph_returns`).
    return any(c in text for c in imported_graph_calls(ctx))


def calls_switcher(ctx, text: str) -> bool:
    """The text calls a function that may switch a mode (`switchers`)."""
    return any(f"{name}(" in text for name in switchers(ctx))


def switchers(ctx) -> tuple[str, ...]:
    """Names of the functions a body of this module may call that may switch a mode: its own
    functions and methods whose text switches one or calls such a name (helpers of helpers),
    and, in a module that prepares graphs (whose flows QL201/QL202 read in full anyway), every
    function imported from outside the libraries (another module of the project may define it).
    Asked only of bodies that name a graph source. Elsewhere a graph handed to a helper of
    another module is not followed: reading every imported helper there cost ~4% more bodies
    on ExecuTorch for no finding."""
    found = ctx.cache.get("model_flow.switchers")
    if found is not None:
        return found
    names: set[str] = set()
    if "prepare_pt2e" in ctx.words or "prepare_qat_pt2e" in ctx.words or imported_graph_calls(ctx):
        # Or a module calling a helper of another module that returns or stores a graph
        # (`graph_returns`): the holder it was given may be handed to a third one (`to_eval(h)`).
        # snake_case by convention: a class's construction switches nothing it is handed
        # until one of its methods runs, which the body names separately.
        names = {
            local
            for local, full in ctx.scope.imports.items()
            if full.partition(".")[0] not in LIBRARY_ROOTS and "." in full and local[:1].islower()
        }
        # And the methods of classes imported from the project (`Runner().warm(gm)`).
        names |= imported_class_methods(file_flow(ctx), LIBRARY_ROOTS)
    # A body's text is whole rows and no word spans a line break: it holds a word exactly
    # when one of its rows does (`mentions`). One search of the module per word, instead of
    # one per word and body (ao's 4,307-line test_quantize_pt2e.py: ~20,000 searches, 4.5 ms).
    text, starts = ctx.words, ctx.word_lines.starts
    pending = [f for f, _ in module_functions(ctx) if not isinstance(f, ast.Module)]
    switching = word_rows(text, starts, (".eval(", ".train("))
    # The calls of many names (a test module's hundreds of methods, each switching a model)
    # are read from one pass over the module's calls (`CalledRows`).
    called = CalledRows(text, starts)
    calling = called.rows(names)
    for _ in range(3):  # wrappers of wrappers
        added = {f.name for f in pending if mentions(f, switching) or mentions(f, calling)}
        new = added - names
        if not new:
            break
        names |= added
        pending = [f for f in pending if f.name not in names]
        calling = sorted({*calling, *called.rows(new)})
    found = ctx.cache["model_flow.switchers"] = tuple(sorted(names))
    return found


def capture_holder(flows: list[FunctionFlow], cap: Capture) -> FunctionFlow | None:
    """The analysed body whose walk found the capture `cap`."""
    return next((f for f in flows if any(c is cap for c in f.captures)), None)


def caller_facts(
    flows: list[FunctionFlow], func: ast.AST, index: int, known=None, here=None
) -> list[tuple[ast.Call, ModeFact]] | None:
    """The modes the calls of this module pass for parameter `index` of `func` (None: no call here).

    A parameter whose every caller passes a model in eval mode is in eval mode: the function
    relies on its callers, and they honour it. Callers' own parameters are followed up.

    A method called on an instance (`quantizer.prepare(m)`) may also be called on instances
    the flow cannot see: its calls count only when `known(method)` says they are all read
    (the rules ask `confined_instances`); without it they do not.

    A caller's own parameter is followed up only to a function whose every caller is read in
    this module (`here(function)`, the rules ask `call_sites.calls_read_here`): one called from
    another module, or used as a value, has callers these flows do not hold, and the caller's
    fact stays as it is (the parameter, in whatever mode its callers left it) for the verdicts
    to read those callers where they are (issue 14, item 7). Without `here` (what a message
    describes) every caller's parameter is followed.
    """
    return _callers(flows, func, index, frozenset(), known, here)


def _callers(flows, func, index, seen, known, here=None) -> list[tuple[ast.Call, ModeFact]] | None:
    found = [c for f in flows for c in f.calls if c.callee is func and index in c.args]
    if not found:
        return None
    sites = [(c.call, c.args[index]) for c in found]
    on_instance = getattr(func, "name", "") != "__init__" and any(_on_instance(c.ref) for c in found)
    if on_instance and (known is None or not known(func)):
        return None
    out: list[tuple[ast.Call, ModeFact]] = []
    for call, facts in sites:
        for fact in facts:
            origin = fact.origin
            if fact.state == "unset" and origin is not None and origin.kind == PARAM:
                step = (id(origin.node), origin.index)
                further = None
                if step not in seen:
                    further = _callers(flows, origin.node, origin.index, seen | {step}, known, here)
                # Asked only where it matters: a caller there that switched its model to train
                # mode already decides against the helper, whoever else calls that function.
                if further is not None and here is not None and not any(_switched_to_train(f) for _, f in further):
                    further = further if here(origin.node) else None
                if further is not None:
                    out.extend(further)
                    continue
            out.append((call, replace(fact, guard=frozenset())))
    return out


def _switched_to_train(fact: ModeFact) -> bool:
    """Train mode that no construction explains (a mode-free construction may be harmless)."""
    return fact.state == "train" and (fact.origin is None or fact.origin.built is None)


def _on_instance(func: ast.expr) -> bool:
    """`obj.method(...)` on something other than `self`/`cls` (`func`: what names the callee)."""
    return isinstance(func, ast.Attribute) and not (
        isinstance(func.value, ast.Name) and func.value.id in ("self", "cls")
    )
