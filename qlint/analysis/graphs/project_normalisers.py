"""The project's normalisers (QL101, QL102): functions that hand a pass a graph normalised to
packets (`strip_overloads(gm)`, or `n.target = n.target.overloadpacket`, then the pass), and
decorators whose wrapper does so before calling what it wraps. Found among the modules the
project scan keeps (`project_scan`), whose saved answers tell which of them normalise at all.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Callable

from qlint.analysis.context import FileContext
from qlint.analysis.graphs import file_keys, kept_module_facts
from qlint.analysis.graphs.project_scan import (
    NORMALISES,
    keeps_texts,
    kept_module_holds,
    probe_question,
    scan_root,
    scanned_project,
)
from qlint.analysis.graphs.project_texts import module_context
from qlint.analysis.graphs.scanned_facts import module_facts
from qlint.analysis.graphs.strip_loops import calls_after_strip, own_strip
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.project_files import listing_dependency
from qlint.source import DecodeError, decode_source


def normalised_callees(ctx: FileContext) -> set[str]:
    """Qualified names of what the project's normalisers call once the graph carries
    packets (`strip_overloads(gm); run_passes(gm)`), and of decorators whose wrapper does."""
    root = scan_root(ctx.path)
    project = scanned_project(root, ctx)
    if root is not None:  # served from the memo below too: a new normaliser changes the answer
        ctx.project.record_listing(ctx.path, listing_dependency(root, True, NORMALISES))
    # Which kept modules normalise, from what an earlier run found where it holds: most of
    # them only insert, and their texts need not be read for this.
    question = probe_question(NORMALISES, None)
    holding = []
    keep_texts = keeps_texts(ctx.project)
    for path, (key, text) in project.files.items():
        if text is not None and kept_module_holds(project, path, key, text, NORMALISES, None, question, keep_texts)[0]:
            holding.append((path, key))
    keys = tuple(holding)
    if project.normalised is None or project.normalised[0] != keys:
        names: set[str] = set()
        # Every module of the project as the index sees it (the scan serves every file of it),
        # each parsed again: what a module's names resolve to may change with other modules...
        for found in module_facts(ctx, NORMALISES, _normalisers, own=True, keep=False, saved=True):
            names |= found
        project.normalised = (keys, names)
    # ... and this one as being checked (an editor's buffer may differ from the disk).
    own = _normalisers(ctx) if any(n in ctx.words for n in NORMALISES) else set()
    return project.normalised[1] | own


def normalising_decorator(ctx: FileContext, name: str) -> bool:
    """Whether `name` (`pkg.backends.make_backend`, as the checked module imports it) is a
    decorator of the project whose wrapper normalises the graph to packets before it calls
    what it wraps: its module is found as the import resolves (namespace packages and
    directories without `__init__.py` included) and read for its normalisers. For modules the
    project scan does not reach: a script outside any package has no scan root."""
    module, _, func = name.rpartition(".")
    if not module or not func:
        return False
    path = ctx.project.find_module(module, ctx.path)
    if path is None or os.path.abspath(path) == os.path.abspath(ctx.path):
        return False
    key = file_keys.content_key(ctx.project, path)
    # A dependency whatever it holds: an edit that makes it normalise changes the answer.
    file_keys.record(ctx.project, ctx.path, ((path, key),))
    data = file_keys.content_bytes(ctx.project, path, key, _MAX_NORMALISER_BYTES)
    if data is None or not any(n.encode() in data for n in NORMALISES):
        return False
    try:
        text = decode_source(data)
    except DecodeError:
        return False
    other = module_context(path, text, ctx)
    if other is None:
        return False
    # The normaliser's names carry the module name qlint gives the file: compared by the
    # function and the module's last part, which both spellings share.
    tail = f"{module.rpartition('.')[2]}.{func}"
    return any(n == tail or n.endswith("." + tail) for n in _normalisers(other))


_MAX_NORMALISER_BYTES = 2_000_000

# Decorators of libraries whose wrapper strips the graph (`strip_overloads`) before it calls
# the backend it wraps: torch-mlir's TorchDynamo adapter, so that `torch_mlir.compile` can
# script the graph.
LIBRARY_NORMALISERS = frozenset({"torch_mlir.dynamo.make_simple_dynamo_backend"})


def library_normalised(func: ast.AST, resolver: Resolver) -> bool:
    """Whether `func` is decorated by a library decorator that strips its graph first."""
    for deco in getattr(func, "decorator_list", ()):
        if resolver.qualname(deco.func if isinstance(deco, ast.Call) else deco) in LIBRARY_NORMALISERS:
            return True
    return False


def _normalisers(ctx: FileContext) -> set[str]:
    found: set[str] = set()
    for body in bodies(ctx.tree, ctx.scope, ctx.cache):
        func = body.node
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        # Made when a name is to be resolved: binding the locals of every function of the
        # modules read (torch: ~2,600) was a third of this scan, and most resolve nothing.
        resolver = _lazy_resolver(ctx, body)
        # Only calls and assignments can normalise, and only a normaliser's calls are read:
        # most bodies of the modules that spell `overloadpacket` are neither (torch: 31 such
        # modules, their every node walked twice per body was most of QL101's one scan).
        if not (
            any(_normalises(n, resolver) for n in body.nodes(None, _NORMALISING))
            or (func.decorator_list and library_normalised(func, resolver()))
        ):
            found |= _called_after_own_strip(ctx, func, body, resolver)
            continue
        resolver = resolver()
        for call in body.nodes(None, _CALLS):
            target = call.func
            while isinstance(target, ast.Call):  # `FoldPass()(gm)`
                target = target.func
            name = resolver.qualname(target)
            if name:
                found.add(name)
        # A wrapper defined in a decorator: functions the decorator wraps are normalised.
        for outer in _enclosing_functions(ctx.tree, func):
            if ctx.module:
                found.add(f"{ctx.module}.{outer.name}")
    return found


def _lazy_resolver(ctx: FileContext, body) -> Callable[[], Resolver]:
    """The resolver of `body`'s names, made at the first call."""
    made: list[Resolver] = []

    def resolver() -> Resolver:
        if not made:
            made.append(Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope))
        return made[0]

    return resolver


def _names(data) -> set[str]:
    """`_normalisers` as `kept_module_facts` wrote it (sorted names)."""
    if type(data) is not tuple or not all(type(n) is str for n in data):
        raise TypeError("not names")
    return set(data)


# Kept between runs with what it read (`kept_module_facts`): a check of one edited file parsed
# every normalising module of the project again for it.
kept_module_facts.keep_on_disk(_normalisers, "normalisers-1", kept_module_facts.sorted_tuple, _names)


def _called_after_own_strip(ctx: FileContext, func: ast.AST, body, resolver: Callable[[], Resolver]) -> set[str]:
    """What a function calls on a graph only after it strips that graph with the project's
    own strip loop (`strip_loops.calls_after_strip`: a helper nested in it or of the module,
    called as a statement of the function's own body, so unconditionally). A callee it also
    calls before the strip sees the graph with its overloads, and is left out."""
    if own_strip(func, ctx.scope.functions) is None:
        # No strip of its own (most functions): its calls are not walked for the split, which
        # `calls_after_strip` would find empty (torch: every body of the 31 modules that spell
        # `overloadpacket`, walked a second time).
        return set()
    split = calls_after_strip(func, ctx.scope.functions, list(body.nodes(None, _CALLS)))
    if split is None:
        return set()
    qualname = resolver().qualname
    before = {qualname(c.func) for c in split[0]}
    return {n for n in (qualname(c.func) for c in split[1]) if n and n not in before}


_NORMALISING = frozenset({ast.Call, ast.Assign})
_CALLS = frozenset({ast.Call})


def _normalises(node: ast.AST, resolver: Callable[[], Resolver]) -> bool:
    if isinstance(node, ast.Call):
        if not _may_name_strip(node.func):
            return False
        name = resolver().qualname(node.func) or ""
        return name.split(".")[-1] == _STRIP
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute):
        return node.value.attr == "overloadpacket" and any(
            isinstance(t, ast.Attribute) and t.attr == "target" for t in node.targets
        )
    return False


_STRIP = "strip_overloads"


def _may_name_strip(func: ast.expr) -> bool:
    """Whether the callee `func` may resolve to a name ending in `strip_overloads`, as
    `Resolver.qualname` resolves it: a dotted chain of two parts or more keeps its last part
    (what its head resolves to, joined with the rest), unless it is `self.x` or `cls.x`,
    which stands for what the class assigns `x`. A name alone, or such an attribute, may
    stand for anything; any other callee resolves to no name. Every call of every function
    of the modules spelling `overloadpacket` was resolved for this (torch: 31 modules)."""
    parts = dotted_parts(func)
    if parts is None:
        return False
    return len(parts) == 1 or parts[-1] == _STRIP or (len(parts) == 2 and parts[0] in ("self", "cls"))


def _enclosing_functions(tree: ast.Module, func: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [
        node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node is not func
        and any(inner is func for inner in ast.walk(node))
    ]
