"""A matcher that searches the graph a call of the project returned, when that call runs the
project's own insertion of the packet (QL101).

apple/coreai-optimization's test finalizes a model and looks the custom ops up in the graph it
gets back: `finalized = quantizer.finalize(backend=CoreAI)`, then
`finalized.graph.find_nodes(op="call_function", target=coreai.quantize)`. `finalize` reaches
`prepare_for_mlir_export`, whose helpers insert `coreai.quantize` as the packet, so the graph
holds exactly the nodes the test asks for. The matcher is the project's own consumer of its
insertion: it runs the inserting function and matches its output directly, whatever QL102
says about the insertion (that is about the graph's other readers, its users).

Narrow on purpose:
- the op is one the op table does not know (the project's own, a custom library's): no capture
  puts its overloads into the graph beside the inserted packets;
- the matcher is a sink call on `<name>.graph` inside a function, the name bound there once,
  to a call of a function of the project (`finalize(gm)` imported from it, or a method of an
  object built from a class imported from it: `Quantizer(...).finalize(...)`);
- a module of that package inserts the packet in a module-level function, and the call's name
  reaches it through the package's calls, by name (`finalize` -> `self._quantizer.finalize`
  -> `prepare_for_mlir_export` -> `_process_mlir_activation_quantization`).
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.call_parts import callee_name
from qlint.analysis.graphs.project_scan import parsed_module, scan_root, texts_spelling
from qlint.analysis.names.functions import Body
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import unique_value
from qlint.rules.module_insertions import insertions

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Rounds of callers read through the package (each a search of its modules for the names).
_ROUNDS = 6


def matched_on_called_insertion(ctx: FileContext, key: tuple[str, str, str], body: Body | None, use) -> bool:
    """Whether the matcher `use` (the packet `key`, in `body`) searches the graph of a call that
    runs the project's own insertion of that packet."""
    from qlint.rules.packet_consumers import _inserting_functions
    from qlint.rules.packet_origins import _spelled_packet

    if body is None or not isinstance(body.node, _FUNCS) or ctx.optable.lookup(key[1], key[2]) is not None:
        return False
    source = _graph_source(body, use)
    if source is None:
        return False
    found = _callee(ctx, body, source)
    if found is None:
        return False
    root, name = found
    # The test's own project scan does not reach the package (its root is the tests' package):
    # the package's modules spelling the packet are read from its root.
    spelled = _spelled_packet(key[2])
    inserting: set[str] = set()
    for path, text, _ in texts_spelling(ctx, (key[2],), root):
        if spelled.search(text) is None:
            continue
        module = parsed_module(ctx, path, text)
        if module is not None:
            rows = [e.lineno for r, e in insertions(module) if r.key == key]
            if rows:
                inserting.update(_inserting_functions(module, rows))
    return bool(inserting) and _reaches(ctx, name, inserting, root)


def _graph_source(body: Body, use) -> ast.Call | None:
    """The call whose result's graph the sink call holding `use` searches:
    `finalized = f(...)` then `finalized.graph.find_nodes(target=<use>)`."""
    sink = next(
        (
            n
            for n in body.nodes({use.lineno}, frozenset({ast.Call}))
            if any(a is use for a in (*n.args, *(k.value for k in n.keywords)))
        ),
        None,
    )
    if sink is None or not isinstance(sink.func, ast.Attribute):
        return None
    parts = dotted_parts(sink.func.value)
    if parts is None or len(parts) != 2 or parts[1] != "graph":
        return None
    value = unique_value(body.local.get(parts[0]))
    return value if isinstance(value, ast.Call) else None


def _callee(ctx: FileContext, body: Body, call: ast.Call) -> tuple[str, str] | None:
    """(the root directory of the project package, the function's name) of the function the call
    runs: one imported from the package (`finalize(gm)`, `passes.finalize(gm)`, under an alias
    too), or a method of an object built from a class the package defines
    (`q = Quantizer(...)`, `q.finalize()`)."""
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
    func = call.func
    name = callee_name(call)
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        built = unique_value(body.local.get(func.value.id))
        if isinstance(built, ast.Call):
            func = built.func  # the class: the method is named by the call
        elif func.value.id in body.local:
            return None
    qualname = resolver.qualname(func)
    if qualname is None or "." not in qualname or qualname.startswith("torch.") or name is None:
        return None
    if func is call.func:
        name = qualname.rpartition(".")[2]  # the function's own name, not an alias's
    module = qualname.rpartition(".")[0]
    scope = ctx.project.module_scope(module, ctx.path) or ctx.project.module_scope(qualname, ctx.path)
    root = scan_root(scope.path) if scope is not None and scope.path else None
    return (root, name) if root is not None else None


def _reaches(ctx: FileContext, name: str, inserting: set[str], root: str) -> bool:
    """Whether a function or method called `name` reaches one of the `inserting` functions
    through the package's calls (matched by the callee's name)."""
    reach = set(inserting)
    asked: set[str] = set()
    for _ in range(_ROUNDS):
        if name in reach:
            return True
        new = sorted(reach - asked)
        if not new:
            return False
        asked.update(new)
        grown: set[str] = set()
        for path, text, _ in texts_spelling(ctx, tuple(new), root):
            module = parsed_module(ctx, path, text)
            if module is None:
                continue
            for func in ast.walk(module.tree):
                if isinstance(func, _FUNCS) and func.name not in reach and _calls_any(func, reach):
                    grown.add(func.name)
        reach |= grown
    return name in reach


def _calls_any(func: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Call) and callee_name(n) in names for n in ast.walk(func))
