"""Passes the project runs on Dynamo's output graph, before AOT autograd traces it (QL101, QL102).

A `torch.compile` backend is handed Dynamo's graph, which records what the user's code
called: a call of a packet is a node whose target is the packet, and Dynamo creates some
nodes as packets itself (`torch.ops.streams.record_event`). A backend that runs a pass on
that graph and then hands it to `aot_module_simplified` (or `aot_autograd(...)`) gives the
pass a graph where matching packets is right, and where an inserted packet is re-traced to
its overload by AOT before any matcher keyed on overloads sees it. So does Inductor's
`pre_grad_custom_pass`, which Inductor runs on the same graph before AOT.

Read off the backends, anywhere in the project: a function whose first parameter (the graph)
and another of its parameters (the example inputs) are the first two arguments of the AOT
call, and which calls a pass on the graph before it; and a function assigned to
`torch._inductor.config.pre_grad_custom_pass`. A graph bound anew before the pass (a
re-trace, `gm = make_fx(gm)(*args)`) is not Dynamo's any more: such a backend is not read.
Inductor's `compile_fx(gm, example_inputs)` is such an AOT call: on Dynamo's graph it runs the
pre-grad passes and then AOT autograd (`compile_fx_inner`, which compiles AOT's graphs, is not).

A backend may also rewrite the graph itself, in its own statements, before its AOT call (a
hardware backend replacing `aten.linear` nodes with its own op, then `compile_fx(gm, ...)`):
an insertion into the graph parameter's graph there is made into Dynamo's graph too
(`inserted_before_aot`).

A backend's own body (the passes it calls before its AOT call, the pre-grad pass it assigns)
is read by `aot_backends`; here, which modules of the project hold backends, kept per module
content and per check, and whether a function is among what they run.
"""

from __future__ import annotations

import ast
import os
from typing import Any

from qlint.analysis import scan_memo
from qlint.analysis.context import FileContext
from qlint.analysis.graphs import file_keys
from qlint.analysis.graphs.aot_backends import PRE_GRAD, aot_call, backend_callees, graph_and_inputs, own_calls
from qlint.analysis.graphs.project_scan import scan_root
from qlint.analysis.graphs.project_texts import parsed_module, text_holding
from qlint.analysis.module_keys import project_keys
from qlint.analysis.names.functions import Body, bodies
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.project_files import listing_dependency
from qlint.analysis.recent_entries import RecentEntries
from qlint.analysis.tree_walk import name_loads, spans_rows
from qlint.lazy_patterns import lazy

_NEEDLES = ("aot_module", "aot_autograd", "compile_fx", PRE_GRAD)
_NEEDLE_BYTES = tuple(n.encode() for n in _NEEDLES)
# Only a module that calls an entry point or assigns the hook is parsed: most modules that
# spell them import or mention them (torch: 72 spell one, 10 call or assign).
_WRITES_SOURCE = r"\b(?:aot_module_simplified|aot_module|aot_autograd|compile_fx)\s*\(|\bpre_grad_custom_pass\s*=[^=]"
_WRITES = lazy(_WRITES_SOURCE)
_QUESTION = "dynamo-graph-passes:" + _WRITES_SOURCE  # not `.pattern`: that compiles the lazy pattern
_CACHE_KEY = "dynamo-graph-passes"
# path -> (content key, the qualified names the module's backends run on Dynamo's graph)
_FACTS: dict[str, tuple[tuple, frozenset[str]]] = {}
_MAX_FACTS = 100_000


def sees_dynamo_graph(ctx: FileContext, body: Body | None) -> bool:
    """Whether a backend of the project runs the function `body` belongs to (or its method's
    class) on Dynamo's output graph before AOT autograd, or registers it as Inductor's
    pre-grad pass."""
    if body is None or ctx.module is None or not isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    func = body.node
    # A module of a directory without `__init__.py` is named by its file alone, while a
    # backend names it as its import resolves: compared from the module's last part on.
    base = ctx.module.rpartition(".")[2]
    tails = set()
    if ctx.scope.functions.get(func.name) is func:
        tails.add(f"{base}.{func.name}")
    owner = body.class_scope.node if body.class_scope is not None else None
    if owner is not None and ctx.scope.classes.get(owner.name) is not None:
        tails |= {f"{base}.{owner.name}", f"{base}.{owner.name}.{func.name}"}
    if not tails:
        return False
    # A backend names what it runs: a module whose text spells none of these names none of them
    # (a method through its class: `Pass.run(gm)`, `Pass(gm)`).
    if _named(dynamo_graph_callees(ctx, frozenset({func.name if owner is None else owner.name})), tails):
        return True
    # A private helper of the module that only such passes call (with the graph they were
    # handed) runs on the same graph.
    if owner is not None or not func.name.startswith("_"):
        return False
    callers = _callers(ctx, func.name)
    if not callers:
        return False
    callees = dynamo_graph_callees(ctx, frozenset(c.name for c in callers))
    return all(_named(callees, {f"{base}.{c.name}"}) for c in callers)


def _named(callees: frozenset[str], tails: set[str]) -> bool:
    ends = tuple("." + t for t in tails)
    return any(c in tails or c.endswith(ends) for c in callees)


def _callers(ctx: FileContext, name: str) -> list[ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """The module-level functions that call `name`; None when something else does (a method,
    the module body, a reference that is not a call)."""
    callers = []
    # Each read of the name is on a row of the module's reads of it (kept: one walk of the
    # module), and so is a call of it: a body's statements on none of those rows hold neither
    # (a function's defaults and decorators are its enclosing body's), and are not walked.
    lines = frozenset(n.lineno for n in name_loads(ctx.tree, name))
    if not lines:
        return callers
    rows = sorted(lines)
    for body in bodies(ctx.tree, ctx.scope, ctx.cache):
        if body.node is not ctx.tree and not spans_rows(body.node, rows):
            continue
        nodes = body.nodes(lines)
        uses = [n for n in nodes if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)]
        if not uses:
            continue
        node = body.node
        if (
            not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            or ctx.scope.functions.get(node.name) is not node
        ):
            return None
        calls = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
        if any(id(u) not in calls for u in uses):
            return None  # handed on as a value: what runs it is not known
        callers.append(node)
    return callers


def dynamo_graph_callees(ctx: FileContext, words: frozenset[str]) -> frozenset[str]:
    """Qualified names of what the project's backends run on Dynamo's graph before AOT, and
    of its pre-grad passes, read from the modules of the project that spell an AOT entry point
    or the pre-grad hook (kept per module content) and one of `words`: a module that spells
    none of them is not parsed (a fresh one-file check of torch's observer.py parsed ten)."""
    memo = (_CACHE_KEY, words)
    if memo in ctx.cache:
        return ctx.cache[memo]
    found: set[str] = set()
    for path, key, text in _backends(ctx):
        if text is None:  # the module checked
            found |= backend_callees(ctx)
            continue
        known = _FACTS.get(path)
        if known is not None and known[0] == key:
            found |= known[1]
            continue
        if text is _UNREAD:  # listed by an earlier check: read now, as that check read it then
            read = text_holding(ctx.project, path, key, _NEEDLE_BYTES)
            if read is None:
                continue
            text = read[0]
        if not any(w in text for w in words):
            continue
        names = frozenset(backend_callees(parsed_module(ctx, path, text)))
        if len(_FACTS) > _MAX_FACTS:
            _FACTS.clear()
        _FACTS[path] = (key, names)
        if names:
            file_keys.record(ctx.project, ctx.path, ((path, key),))
        found |= names
    ctx.cache[memo] = frozenset(found)
    return ctx.cache[memo]


def _backends(ctx: FileContext) -> list[tuple[str, tuple, str | None]]:
    """(path, content key, text) of each module of the project that spells an AOT entry point
    or the pre-grad hook, once per check; the checked module's own text is None, and that of a
    module an earlier check listed `_UNREAD` (read when asked)."""
    if _CACHE_KEY in ctx.cache:
        return ctx.cache[_CACHE_KEY]
    own = os.path.abspath(ctx.path)
    root, modules = _project_modules(ctx)
    listed = _LISTED.get((root, own))
    if listed is not None and listed[0] is modules:
        found = [(path, key, _UNREAD) for path, key in listed[1]]
        own_entry = listed[2]
    else:
        found, own_entry = _list_backends(ctx, modules, own)
        _LISTED[root, own] = (modules, [(path, key) for path, key, _ in found], own_entry)
    if own_entry is not None and _writes(ctx.words):
        found.append((*own_entry, None))
    ctx.cache[_CACHE_KEY] = found
    return found


# (root, checked file) -> (the project's content keys, the other modules `_backends` listed
# in them, the checked module's (path, key) when its own text is to be asked): while the keys
# are the same object (an editor's watched project between keystrokes: `project_keys`), so are
# the modules that spell an entry point; torch's ~2,300 were asked again at each keystroke of
# observer.py. No texts are kept: they are read when a check asks (`dynamo_graph_callees`).
_Listing = tuple[dict, list[tuple[str, tuple]], tuple[str, tuple] | None]
_LISTED: RecentEntries[tuple[str | None, str], _Listing] = RecentEntries(16)
_UNREAD: Any = object()


def _list_backends(
    ctx: FileContext, modules: dict[str, tuple | None], own: str
) -> tuple[list[tuple[str, tuple, str]], tuple[str, tuple] | None]:
    """`_backends` of the other modules, and the checked module's (path, key) unless what
    earlier checks found rules it out."""
    found = []
    own_entry = None
    # What earlier checks and runs found, in one pass: a check with a finding would otherwise
    # ask every module of the project the question again (torch: ~2,300 of them).
    holds, misses = scan_memo.known_sets(modules, [_QUESTION])[0]
    for path, key in modules.items():
        if key is None or path in misses:
            continue
        if os.path.abspath(path) == own:
            own_entry = (path, key)
            continue
        known = _FACTS.get(path)
        if known is not None and known[0] == key:
            found.append((path, key, ""))  # read before: `dynamo_graph_callees` takes its facts
            continue
        read = text_holding(ctx.project, path, key, _NEEDLE_BYTES)
        if read is not None and path in holds:
            found.append((path, key, read[0]))
            continue
        if read is None or not _WRITES.search(read[0]):
            scan_memo.note(path, _QUESTION, key, False)
            continue
        scan_memo.note(path, _QUESTION, key, True)
        found.append((path, key, read[0]))
    return found, own_entry


def _writes(text: str) -> bool:
    """Whether `text` calls an AOT entry point or assigns the pre-grad hook. Each way spells
    one of `_NEEDLES`, which a substring search rules out ~100 times faster than the pattern
    (whose leading `\\b` is tried at every position: 18 M instructions of a one-file check of
    torch's observer.py)."""
    return any(n in text for n in _NEEDLES) and _WRITES.search(text) is not None


def _project_modules(ctx: FileContext) -> tuple[str | None, dict[str, tuple | None]]:
    """The package the file belongs to, and the content key of every module of it (each a
    dependency of the check)."""
    root = scan_root(ctx.path) or _namespace_root(ctx.path)
    if root is None:
        return None, {}
    ctx.project.record_listing(ctx.path, listing_dependency(root, True, _NEEDLES))
    return root, project_keys(ctx, root)


def _namespace_root(path: str) -> str | None:
    """The top-level package above a module whose own directory lacks `__init__.py`
    (TorchAir's `torchair/_acl_concrete_graph/`): a few directories up at most, so that a
    script outside any package does not make the scan read a whole disk."""
    directory = os.path.dirname(os.path.abspath(path))
    for _ in range(_MAX_UP):
        if os.path.isfile(os.path.join(directory, "__init__.py")):
            while os.path.isfile(os.path.join(os.path.dirname(directory), "__init__.py")):
                directory = os.path.dirname(directory)
            return directory
        parent = os.path.dirname(directory)
        if parent == directory:
            return None
        directory = parent
    return None


_MAX_UP = 3


def inserted_before_aot(ctx: FileContext, body: Body | None, expr: ast.expr) -> bool:
    """Whether the insertion at `expr` is a backend's own rewrite of Dynamo's graph: made by a
    function `backend(gm, example_inputs)` into `gm`'s graph (`gm` never bound anew in it),
    with a later statement of its own handing `gm` and another of its parameters to AOT
    autograd or `compile_fx`, which re-trace the inserted packet to its overload. Only the
    function itself is read: whoever calls it hands it Dynamo's graph, as they would hand it to
    a pass it runs before its AOT call (`sees_dynamo_graph`)."""
    if body is None or not isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    parts = graph_and_inputs(body.node)
    if parts is None:
        return False
    graph, inputs = parts
    # Imported here: the verdicts reading a pass's graph parameter (`stripped_later`,
    # `graph_parameter_passes`) are what QL101/QL102 import only when a finding asks.
    from qlint.analysis.graphs.graph_parameter_passes import inserts_into_parameter

    if not inserts_into_parameter(body.node, graph, expr):
        return False
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
    return any(
        call.lineno > expr.lineno and aot_call(call, resolver, graph, inputs)
        for stmt in body.stmts
        for call in own_calls(stmt)
    )
