"""The package's import graph: no circles anywhere, and no arrow from the analysis layer up
into rules, the engine or any face. Imports inside functions and under TYPE_CHECKING count:
a deferred import is still a circle a reader has to hold in mind."""

from __future__ import annotations

import ast
from pathlib import Path

import qlint

ROOT = Path(qlint.__file__).resolve().parent
# What the analysis layer may import from the rest of qlint: the layers below it
# (`qlint.value_classes`, which imports nothing of qlint, makes the classes of every layer;
# `qlint.short_digests`, which imports nothing of qlint either, hashes for every layer;
# `qlint.plain_json`, which imports nothing of qlint, spells the cache's keys).
BELOW_ANALYSIS = (
    "qlint.analysis",
    "qlint.diagnostic",
    "qlint.evidence",
    "qlint.source",
    "qlint.optable",
    "qlint.value_classes",
    "qlint.short_digests",
    "qlint.lazy_patterns",
    "qlint.plain_json",
)


def _module_name(path: Path) -> str:
    parts = path.relative_to(ROOT.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def import_graph() -> dict[str, set[str]]:
    modules = {_module_name(p): p for p in ROOT.rglob("*.py")}
    graph: dict[str, set[str]] = {m: set() for m in modules}
    for name, path in modules.items():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                named = [node.module, *(f"{node.module}.{a.name}" for a in node.names)]
            elif isinstance(node, ast.Import):
                named = [a.name for a in node.names]
            else:
                continue
            graph[name].update(n for n in named if n in modules and n != name)
    return graph


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, children = work[-1]
            child = next(children, None)
            if child is not None:
                if child not in index:
                    index[child] = low[child] = len(index)
                    stack.append(child)
                    on_stack.add(child)
                    work.append((child, iter(sorted(graph[child]))))
                elif child in on_stack:
                    low[node] = min(low[node], index[child])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    top = stack.pop()
                    on_stack.discard(top)
                    component.append(top)
                    if top == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def test_cycle_finder_sees_a_circle():
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [["a", "b", "c"]]
    assert cycles({"a": {"b"}, "b": set()}) == []


def test_no_import_circles():
    assert cycles(import_graph()) == []


def test_analysis_imports_nothing_above_it():
    graph = import_graph()
    upward = sorted(
        (name, target)
        for name, targets in graph.items()
        if name.startswith("qlint.analysis")
        for target in targets
        if not target.startswith(BELOW_ANALYSIS)
    )
    assert upward == []


def _qlint_bases(path: Path) -> list[tuple[str, str]]:
    """(class, base) where a class of this module derives from a class imported from qlint."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    from_qlint = {
        a.asname or a.name
        for node in ast.walk(tree)
        if isinstance(node, ast.ImportFrom) and node.module and node.module.startswith("qlint")
        for a in node.names
    }
    return [
        (node.name, base.id)
        for node in ast.walk(tree)
        if isinstance(node, ast.ClassDef)
        for base in node.bases
        if isinstance(base, ast.Name) and base.id in from_qlint
    ]


def test_base_finder_sees_an_imported_base(tmp_path):
    module = tmp_path / "m.py"
    module.write_text("from qlint.x import Calls\nfrom typing import Protocol\nclass A(Calls, Protocol): pass\n")
    assert _qlint_bases(module) == [("A", "Calls")]


def test_analysis_classes_are_not_split_across_modules():
    """A class whose methods live in another module as a mixin is one class a reader has to
    assemble from two files; the analysis layer composes objects instead."""
    split = [(str(p.relative_to(ROOT)), *pair) for p in (ROOT / "analysis").rglob("*.py") for pair in _qlint_bases(p)]
    assert split == []


def test_call_semantics_does_not_know_the_interpreter():
    graph = import_graph()
    assert "qlint.analysis.flow.model_calls" in graph["qlint.analysis.flow.model_interp"]
    assert not any(t.startswith("qlint.analysis.flow.model_interp") for t in graph["qlint.analysis.flow.model_calls"])
    driver = ("qlint.analysis.flow.model_flow", "qlint.analysis.flow.module_analysis")
    assert not any(t.startswith(driver) for t in graph["qlint.analysis.flow.model_calls"])
    # What calls that build models do is asked of its own object, which knows neither side.
    above = ("qlint.analysis.flow.model_calls", "qlint.analysis.flow.model_interp", *driver)
    assert not any(t.startswith(above) for t in graph["qlint.analysis.flow.model_builds"])
    # So are what library calls and helper calls do, which the call semantics hands on.
    for part in (f"qlint.analysis.flow.{p}" for p in ("library_calls", "helper_callees", "helper_calls")):
        assert part in graph["qlint.analysis.flow.model_calls"]
        assert not any(t.startswith(above) for t in graph[part])


def test_the_walks_parts_know_neither_the_interpreter_nor_the_call_semantics():
    """The walk of bindings, branches, loops, contexts and parts are functions handed the walk
    (`model_interp` imports them): none imports the interpreter, the call semantics or the
    driver, and the call semantics imports none of them (it asks the walk through `Walk`)."""
    graph = import_graph()
    parts = ("binding_walk", "branch_walk", "context_walk", "loop_walk", "part_reads", "self_attributes")
    above = tuple(f"qlint.analysis.flow.{m}" for m in ("model_calls", "model_interp", "model_flow", "module_analysis"))
    for part in (f"qlint.analysis.flow.{p}" for p in parts):
        assert part in graph["qlint.analysis.flow.model_interp"]
        assert part not in graph["qlint.analysis.flow.model_calls"]
        assert not any(t.startswith(above) for t in graph[part])
