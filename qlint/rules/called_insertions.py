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
- the matcher is a sink call on `<name>.graph` inside a function, or a comparison with the
  target of a node of that graph (`any(n.target == coreai.quantize for n in
  <name>.graph.nodes)`, `n` bound by that loop alone), the name bound there once, to a call of
  a function of the project (`finalize(gm)` imported from it, or a method of an object built
  from a class imported from it: `Quantizer(...).finalize(...)`); a node of any other graph
  keeps the finding;
- a module of that package inserts the packet in a function or a method, and the call's name
  reaches it through the package's calls, by name (`finalize` -> `self._quantizer.finalize`
  -> `prepare_for_mlir_export` -> `_process_mlir_activation_quantization`; a method
  `self._insert(gm, node)` is reached as `_insert`).
"""

from __future__ import annotations

import ast

from qlint.analysis import tree_walk
from qlint.analysis.context import FileContext
from qlint.analysis.graphs.call_parts import callee_name
from qlint.analysis.graphs.insertions import writes_insertion
from qlint.analysis.graphs.own_insertions import inserting_functions, spelled_packet
from qlint.analysis.graphs.project_scan import scan_root
from qlint.analysis.graphs.project_texts import parsed_module, texts_spelling
from qlint.analysis.names.functions import Body
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import unique_value
from qlint.rules.module_insertions import insertions

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# Rounds of callers read through the package (each a search of its modules for the names).
_ROUNDS = 4


def matched_on_called_insertion(ctx: FileContext, key: tuple[str, str, str], body: Body | None, use) -> bool:
    """Whether the matcher `use` (the packet `key`, in `body`) searches the graph of a call that
    runs the project's own insertion of that packet."""
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
    spelled = spelled_packet(key[2])
    inserting: set[str] = set()
    for path, text, _ in texts_spelling(ctx, (key[2],), root):
        # Only a module writing an insertion is parsed (`self.quantize(x)` spells the packet too).
        if spelled.search(text) is not None and writes_insertion(text):
            inserting.update(_facts(ctx, path, text)[0].get(key, ()))
    return bool(inserting) and _reaches(ctx, name, frozenset(inserting), root)


def _graph_source(body: Body, use) -> ast.Call | None:
    """The call whose result's graph the matcher holding `use` searches:
    `finalized = f(...)`, then `finalized.graph.find_nodes(target=<use>)`, or a comparison
    with the target of a node of that graph (`any(n.target == <use> for n in
    finalized.graph.nodes)`, or under `for n in finalized.graph.nodes:`)."""
    name = _sink_graph(body, use) or _compared_graph(body, use)
    value = unique_value(body.local.get(name)) if name is not None else None
    return value if isinstance(value, ast.Call) else None


def _sink_graph(body: Body, use) -> str | None:
    """`<name>` of the sink call `<name>.graph.<sink>(..., <use>, ...)` holding `use`."""
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
    return parts[0]


_EQUALITY = (ast.Eq, ast.NotEq, ast.Is, ast.IsNot)
_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def _compared_graph(body: Body, use) -> str | None:
    """`<name>` when `use` is compared with `<n>.target` (`_compares`), `<n>`
    a node of `<name>.graph`: the target of the innermost comprehension binding `<n>`
    around the comparison, or of a `for` statement around it that is `<n>`'s only binding
    in the function, iterating `<name>.graph.nodes` (or `.find_nodes(...)`)."""
    compare = next((n for n in body.nodes({use.lineno}, frozenset({ast.Compare})) if _compares(n, use)), None)
    if compare is None:
        return None
    other = compare.left if compare.left is not use else compare.comparators[0]
    if not (isinstance(other, ast.Attribute) and other.attr == "target" and isinstance(other.value, ast.Name)):
        return None
    node_name = other.value.id
    parents = tree_walk.parents(body.node)
    child, node = compare, parents.get(id(compare))
    while node is not None and node is not body.node:
        if isinstance(node, (ast.Lambda, *_FUNCS, ast.ClassDef)):
            return None
        if isinstance(node, ast.comprehension) and child is node.iter:
            return None  # the iterable is read in the scope around the comprehension: not followed
        if isinstance(node, _COMPREHENSIONS):
            bound = [g for g in node.generators if isinstance(g.target, ast.Name) and g.target.id == node_name]
            if bound:
                return _nodes_of(bound[-1].iter) if len(bound) == 1 else None
        if isinstance(node, (ast.For, ast.AsyncFor)) and getattr(node.target, "id", None) == node_name:
            if child in node.body and body.local.get(node_name) == [node]:
                return _nodes_of(node.iter)
            return None
        child, node = node, parents.get(id(node))
    return None


def _compares(compare: ast.Compare, use) -> bool:
    """`x == <use>` (`!=`, `is`, `is not`, either side), or `x in <use>` (`not in`), `<use>`
    the collection or one of the elements of a tuple, list or set written there."""
    if len(compare.ops) != 1:
        return False
    op, right = compare.ops[0], compare.comparators[0]
    if isinstance(op, _EQUALITY):
        return compare.left is use or right is use
    if not isinstance(op, (ast.In, ast.NotIn)):
        return False
    return right is use or (isinstance(right, _LITERALS) and any(e is use for e in right.elts))


_LITERALS = (ast.Tuple, ast.List, ast.Set)


def _nodes_of(iterable: ast.expr) -> str | None:
    """`<name>` of `<name>.graph.nodes` or `<name>.graph.find_nodes(...)`."""
    if _copied_list(iterable):
        iterable = iterable.args[0]  # `list(out.graph.nodes)`
    if isinstance(iterable, ast.Call):
        iterable = iterable.func
        if not (isinstance(iterable, ast.Attribute) and iterable.attr == "find_nodes"):
            return None
    parts = dotted_parts(iterable)
    if parts is None or len(parts) != 3 or parts[1] != "graph" or parts[2] not in ("nodes", "find_nodes"):
        return None
    return parts[0]


def _copied_list(expr: ast.expr) -> bool:
    """`list(x)`, `tuple(x)`, `reversed(x)`: the same nodes."""
    if not isinstance(expr, ast.Call) or expr.keywords or len(expr.args) != 1:
        return False
    return isinstance(expr.func, ast.Name) and expr.func.id in ("list", "tuple", "reversed")


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


# `ctx.cache` keys, for the check's other matchers: what each module read holds (the
# functions inserting each packet, each function's callees), and each search of callers.
_FACTS = "called_insertions.facts"
_REACHED = "called_insertions.reached"


def _facts(ctx: FileContext, path: str, text: str) -> tuple[dict, tuple[tuple[str, frozenset], ...]]:
    """({packet key: the module-level functions inserting it}, (each function's name, the names
    it calls)) of the module at `path`, parsed once per check."""
    known = ctx.cache.setdefault(_FACTS, {})
    found = known.get(path)
    if found is None:
        module = parsed_module(ctx, path, text)
        if module is None:
            found = ({}, ())
        else:
            rows: dict[tuple[str, str, str], list[int]] = {}
            for ref, expr in insertions(module):
                rows.setdefault(ref.key, []).append(expr.lineno)
            inserting = {
                k: frozenset(inserting_functions(module, r)) or _enclosing_functions(module.tree, r)
                for k, r in rows.items()
            }
            found = (inserting, _callees(module.tree))
        known[path] = found
    return found


def _enclosing_functions(tree: ast.Module, rows: list[int]) -> frozenset[str]:
    """The names of the innermost functions and methods holding insertions on `rows`, where
    `inserting_functions` names none (an insertion in a method: `self._insert(gm, node)`;
    callers reach it by its name, as they reach a function). One in the module's body, a
    class's or a lambda's is in none."""
    found: set[str] = set()
    for row in rows:
        node, inner = tree, None
        while True:
            child = next(
                (c for c in ast.iter_child_nodes(node) if hasattr(c, "end_lineno") and c.lineno <= row <= c.end_lineno),
                None,
            )
            if child is None:
                break
            if isinstance(child, _FUNCS):
                inner = child
            elif isinstance(child, (ast.Lambda, ast.ClassDef)):
                inner = None
            node = child
        if inner is not None:
            found.add(inner.name)
    return frozenset(found)


def _callees(tree: ast.Module) -> tuple[tuple[str, frozenset], ...]:
    """(name, the names it calls) of each function and method of the module, the calls of the
    functions nested in it counted too, in one walk of the tree."""
    out: list[tuple[str, set]] = []
    stack: list[tuple[ast.AST, list[set]]] = [(tree, [])]
    while stack:
        node, open_ = stack.pop()
        if type(node) is ast.Call:
            name = callee_name(node)
            for names in open_:
                names.add(name)
        elif isinstance(node, _FUNCS):
            names: set = set()
            out.append((node.name, names))
            open_ = [*open_, names]
        stack.extend((child, open_) for child in ast.iter_child_nodes(node))
    return tuple((n, frozenset(c)) for n, c in out)


def _reaches(ctx: FileContext, name: str, inserting: frozenset[str], root: str) -> bool:
    """Whether a function or method called `name` reaches one of the `inserting` functions
    through the calls of the package under `root` (matched by the callee's name), `_ROUNDS` deep.
    The search stops once it has; what it found is kept for the check's other matchers."""
    memo = ctx.cache.setdefault(_REACHED, {})
    state = memo.get((root, inserting))
    if state is None:
        state = memo[root, inserting] = [set(inserting), set(), 0]
    reach, asked = state[0], state[1]
    while name not in reach and state[2] < _ROUNDS:
        new = sorted(reach - asked)
        if not new:
            break
        asked.update(new)
        state[2] += 1
        for path, text, _ in texts_spelling(ctx, tuple(new), root):
            reach.update(n for n, callees in _facts(ctx, path, text)[1] if not callees.isdisjoint(reach))
    return name in reach
