"""Graphs a body gets only from a helper of another module of the project (QL203).

`gm = capture(model, x); gm.eval()` with `capture` in another module returning
`torch.export.export(...).module()`, `prepare_pt2e(...)` or `convert_pt2e(...)` raises on
torch 2.13 as an in-place capture does. The body names no graph source itself, so neither
the rule's text trigger nor the bodies the model flow reads (`relevant_bodies`) see it.

Which functions of a module may return such a graph is a summary fact (`GraphReturns`,
computed once per module content from its text: a function whose text names a graph
source and returns a value, or stores on an attribute of a parameter, `left_graphs`); the
model flow then decides on the helper's real returns and stores. A file is read for QL203
through its imports (`switches_returned_graph`, the rule's import trigger) when it switches a
mode and calls an imported function of that list whose result it switches (`gm = capture(...)`,
`g, _ = capture(...)`, `out = capture(...)` then `out["model"].eval()`), or to which it hands
what it switches (`attach(m, q)` before `m.train()` or `m.core.train()`, or before a function
of the file switching what it is handed, `finish(m)`), or a method of an imported class doing
so (`Keeper().keep(m)`, `k = Keeper(); k.keep(m)`). The bodies that call one and switch a
mode, or call a function that may (`switchers`), are read (`returned_graph_bodies`). A file
with no switch that hands a holder to an imported storing helper and then to an imported
switching one (`keep(h, m)`, then `to_eval(h)`) is not read: finding the storing helper among
the functions such files import looked up ~2x the modules on ExecuTorch (+126 parsed by the
trigger alone, ~+4% of a cold run's instructions).
"""

from __future__ import annotations

import ast
import re

from qlint.analysis.flow.forwarded_graphs import LIBRARY_ROOTS, may_be_module, returns_graph
from qlint.analysis.flow.relevant_bodies import module_functions, segment
from qlint.analysis.flow.switched_callees import SWITCHES, bound_to, switched_results
from qlint.analysis.names.text_imports import file_imports
from qlint.analysis.text_needles import gate_by, holds_any
from qlint.analysis.tree_walk import walk_kinds

# Where an exported GraphModule comes from; `.eval()` alone is in every training script.
# (`model_flow` takes it from here: this module is the import trigger's and stays light.)
GRAPH_SOURCES = (".module(", "prepare_pt2e", "prepare_qat_pt2e", "convert_pt2e", "capture_pre_autograd_graph")
# The reflective switches that raise on a graph (`reflective_switches`): `getattr(gm, "eval")()`,
# `getattr(gm, 'train')(False)`, `nn.Module.eval(gm)` hold no `.eval()` (`Module.train(gm, False)`
# raises nothing).
_SPELLED = ('"eval")(', "'eval')(", '"train")(', "'train')(", "Module.eval(")
# QL203's triggers, searched in every file: a mode switch, or a prepare call whose graph a helper
# elsewhere may switch. `.eval(` holds `.eval()` and `Module.eval(`, and a spelled form is only
# read as a switch in a call of `getattr` (`reflective_switches._spelling`): two searches, not
# six (each a search of the whole text of most files: +0.4% of a cold run on ao). Not `)(`,
# which holds the four spelled forms: `(` is common, and a search for `)(` costs about twice
# that of another needle per character (~0.17% of a cold run on ao, where `getattr` costs
# ~0.05%). `may_switch_graph` asks the exact forms of the few files they admit.
SWITCH_TRIGGERS = (".eval(", ".train(", "getattr", "prepare_pt2e", "prepare_qat_pt2e")
_EXACT = (*SWITCHES, *_SPELLED, "prepare_pt2e", "prepare_qat_pt2e")
# The exact forms that hold `.eval(` (asked of every file a moment before) are searched only of a
# text that holds it (`gate_by`): `.eval()` of ~40 of ao's 633 files, not of the ~590 others.
gate_by(".eval()", ".eval(")
gate_by("Module.eval(", ".eval(")
# `may_switch_graph` asks for a graph source first, those other rules' triggers searched the text
# for first (QL201's, QL202's, QL204's, QL402's): most files `getattr` admits hold none, and are
# then not searched for the four spelled forms.
_SOURCES_ASKED_FIRST = (*GRAPH_SOURCES[1:], GRAPH_SOURCES[0])
_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ASSIGNS = frozenset({ast.Assign})


def may_switch_graph(text: str) -> bool:
    """QL203's `triggered_by` (its `text_trigger`): a trigger substring, and a graph source.
    Here, not in the rule: a file with `.eval()` and no graph source (a training script) is
    turned away without importing the rule and the model flow behind it (~100 modules)."""
    return holds_any(text, _SOURCES_ASKED_FIRST) and holds_any(text, _EXACT)


class GraphReturns:
    """The module-level functions whose text names a graph source and that return a value or
    store on an attribute of a parameter (`m.core = prepare_qat_pt2e(...)`, `left_graphs`),
    and the methods of its module-level classes that name one and store or return so, as
    `Class.method`."""

    # Lazy: since the import trigger reads a module that names no graph source from its text
    # (`_graph_returns`), the fact is asked of few modules (ExecuTorch, cold: computed with 562
    # summaries made for other readers, read for 7, at the cost of 5 more parses now).
    key = "ql203.graph_returns.v5"
    lazy = True

    def compute(self, tree: ast.Module, scope, text: str):
        if not any(s in text for s in GRAPH_SOURCES):
            return []
        lines = text.splitlines(keepends=True)
        bodies = {}
        methods = []
        for node in tree.body:
            if isinstance(node, _FUNCS) and (_returns_value(node) or _stores_on_parameter(node)):
                bodies[node.name] = "".join(lines[node.lineno - 1 : node.end_lineno])
            elif isinstance(node, ast.ClassDef):
                # `Keeper().keep(h, m)`, `gm = Exporter(x).export(m)`: the model flow decides on
                # the method's real stores and returns.
                for f in node.body:
                    if isinstance(f, _FUNCS) and (_stores_on_parameter(f) or _returns_value(f)):
                        body = "".join(lines[f.lineno - 1 : f.end_lineno])
                        if any(s in body for s in GRAPH_SOURCES):
                            methods.append(f"{node.name}.{f.name}")
        out = [name for name, body in bodies.items() if any(s in body for s in GRAPH_SOURCES)]
        # A function returning what another of them returns (d2go's `setup_qat_model` calling
        # `prepare_fake_quant_model`): the model flow decides on its real returns.
        grown = True
        while grown:
            grown = False
            for name, body in bodies.items():
                if name not in out and any(re.search(rf"(?<![\w.]){re.escape(o)}\(", body) for o in out):
                    out.append(name)
                    grown = True
        return out + methods

    def load(self, path: str, summary, value):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise TypeError("graph returns")
        return frozenset(value)


_FACT = GraphReturns()


def returning_calls(text: str, path: str, project) -> tuple[str, ...]:
    """The call spellings (`capture(`, `helpers.prepare(`) of imported functions of the project
    that may return an exported graph, whose results `text` switches."""
    if project is None:
        return ()
    callees = switched_results(text)
    if not callees:
        return ()
    # The file's imports as QL101's and QL102's import triggers read them just before (once per
    # text; its module named only where a relative import needs it).
    imports = file_imports(text, path)
    # A method called on an instance of a class, handed what is switched (`k.keep(h`, `k =
    # Keeper(...)`; `Keeper().keep(h`).
    # Or one whose result is switched (`gm = Exporter(x).export(m)`, `e = Exporter(x); gm =
    # e.export(m)`): GraphReturns lists the methods that return too.
    classes: dict[str, list[str]] = {}
    imported = {local for local, _ in imports}
    for c in callees:
        head, _, method = c.partition(".")
        if "(" in c:  # `Keeper().keep`, `Exporter(x).export`
            classes.setdefault(c[: c.index("(")], []).append(c)
        elif method and "." not in method and head not in imported and head not in ("self", "cls"):
            for cls in bound_to(text, head):
                if "." not in cls and cls[:1].isupper():
                    classes.setdefault(cls, []).append(c)
    roots = {c.partition(".")[0] for c in callees} | classes.keys()
    out: list[str] = []
    for local, full in imports:
        if full.partition(".")[0] in LIBRARY_ROOTS or local not in roots:
            continue
        module, _, attr = full.rpartition(".")
        if local in classes and module:
            # `from pkg.store import Keeper` (also when the method calls a helper of a third
            # module that returns or stores a graph: `forwarded_graphs`)
            out.extend(
                f"{c}("
                for c in classes[local]
                if returns_graph(project, module, f"{attr}.{c.rpartition('.')[2]}", path, _graph_returns)
            )
        # `from pkg.helpers import capture` (also when `capture` calls a helper of a third
        # module that does: `forwarded_graphs`)
        if module and local in callees and returns_graph(project, module, attr, path, _graph_returns):
            out.append(f"{local}(")
        attrs = sorted(c.partition(".")[2] for c in callees if c.startswith(f"{local}."))
        if module and attr[:1].isupper():
            # `from pkg.exporter import Exporter`: `Exporter.capture(`, a static or class method
            # called on the class (CapWords, as `class_calls` reads such calls), listed by its
            # module's fact as `Exporter.capture`
            out.extend(
                f"{local}.{name}("
                for name in attrs
                if "." not in name and returns_graph(project, module, f"{attr}.{name}", path, _graph_returns)
            )
            if not may_be_module(project, module, path):
                continue
        # `from pkg import helpers` / `import pkg.helpers as helpers` (`from pkg import Exporters`
        # of a package's module named in CapWords too)
        out.extend(f"{local}.{name}(" for name in attrs if returns_graph(project, full, name, path, _graph_returns))
    return tuple(dict.fromkeys(out))


def _graph_returns(project, module: str, requester: str) -> frozenset[str] | None:
    """`module_fact(module, requester, _FACT)`, without parsing a module whose text names no
    graph source: its fact is empty (`GraphReturns.compute`). The import trigger's candidate
    helpers are mostly such modules (ExecuTorch: 25 modules summarised for it alone). The
    module is a dependency all the same (`record_unloaded`)."""
    project.register_fact(_FACT)  # as `module_fact` does: later summaries compute it
    path = project.find_module_in_check(module, requester)
    if path is not None and _names_no_source(project, path):
        project.record_unloaded(module, requester, path)
        return frozenset()
    return project.module_fact(module, requester, _FACT)


# path -> (content key, whether its text names no graph source), while the key holds.
_NO_SOURCE: dict[str, tuple[tuple | None, bool]] = {}


def _names_no_source(project, path: str) -> bool:
    """Whether the module's text, readable, names no graph source (an unreadable or
    undecodable one is left to its summary, which records it as it does)."""
    key = project.content_key(path)
    found = _NO_SOURCE.get(path)
    if found is None or found[0] != key:
        if len(_NO_SOURCE) > 50_000:
            _NO_SOURCE.clear()
        text = project.text(path)
        # `any`, not `holds_any`: that keeps its answers for the checked file's text alone.
        found = _NO_SOURCE[path] = (key, text is not None and not any(s in text for s in GRAPH_SOURCES))
    return found[1]


def switches_returned_graph(text: str, path: str, project) -> bool:
    """QL203's import trigger: the file switches a mode and calls an imported helper that may
    return (or store) an exported graph."""
    return holds_any(text, SWITCHES) and bool(returning_calls(text, path, project))


def own_graph_returns(ctx) -> tuple[str, ...]:
    """Names of this module's functions and methods whose text names a graph source and
    returns a value or stores on an attribute of a parameter (`left_graphs`), and of those
    that call one of them and do the same (a strategy's
    `quantize` returning what `convert_pt2e` made): a body that calls one may get a graph
    from it without naming a source itself (the model flow decides on the real returns)."""
    found = ctx.cache.get("ql203.own_graph_returns")
    if found is not None:
        return found
    bodies: dict[str, list[tuple[ast.AST, str]]] = {}
    if any(s in ctx.words for s in GRAPH_SOURCES):
        for f, _ in module_functions(ctx):
            if isinstance(f, _FUNCS) and ("return" in (text := segment(ctx, f)) or _stores_on_parameter(f)):
                bodies.setdefault(f.name, []).append((f, text))
    out = {name for name, found in bodies.items() if any(s in t for _, t in found for s in GRAPH_SOURCES)}
    new = out
    while new:  # each round searches for the names the last one added, in one pattern
        calls = re.compile(rf"(?<!\w)(?:{'|'.join(re.escape(o) for o in sorted(new))})\(")
        new = {name for name, found in bodies.items() if name not in out and any(calls.search(t) for _, t in found)}
        out |= new
    # The text search above is a superset: a name counts when one of its defs returns a value
    # or stores on an attribute of a parameter (`attach(m, q)`, then `set_train(m)`: `left_graphs`).
    kept = {name for name in out if any(_returns_value(f) or _stores_on_parameter(f) for f, _ in bodies[name])}
    found = ctx.cache["ql203.own_graph_returns"] = tuple(sorted(kept))
    return found


def _returns_value(func: ast.AST) -> bool:
    return any(isinstance(n, ast.Return) and n.value is not None for n in ast.walk(func))


def _stores_on_parameter(func: ast.AST) -> bool:
    """`param.<attr> = value` in the function (`def attach(m, q): m.core = ...`; not `self`'s)."""
    params = {a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)} - {"self", "cls"}
    if not params:
        return False  # most methods: `self` alone
    return any(
        isinstance(t, ast.Attribute) and isinstance(t.value, ast.Name) and t.value.id in params
        for n in walk_kinds(func, _ASSIGNS)
        for t in n.targets
    )


def imported_graph_calls(ctx) -> tuple[str, ...]:
    """`returning_calls` of the checked file, once per check."""
    calls = ctx.cache.get("ql203.returning_calls")
    if calls is None:
        calls = ctx.cache["ql203.returning_calls"] = returning_calls(ctx.words, ctx.path, ctx.project)
    return calls


def returned_graph_bodies(ctx, chosen: set[int], hands=None) -> list:
    """(body, class scope) of the functions, beyond `chosen` (ids), that call an imported
    helper that may return (or store) an exported graph and switch a mode, or call a function
    that may switch one (`hands(text)`: `to_eval(h)` after `keep(h, m)`)."""
    calls = imported_graph_calls(ctx)
    if not calls:
        return []
    out = []
    for f, cls in module_functions(ctx):
        if isinstance(f, ast.Module) or id(f) in chosen:
            continue
        text = segment(ctx, f)
        if any(c in text for c in calls) and (any(s in text for s in SWITCHES) or (hands is not None and hands(text))):
            out.append((f, cls))
    return out


__all__ = [
    "GRAPH_SOURCES",
    "SWITCH_TRIGGERS",
    "GraphReturns",
    "imported_graph_calls",
    "may_switch_graph",
    "own_graph_returns",
    "returned_graph_bodies",
    "returning_calls",
    "switches_returned_graph",
]
