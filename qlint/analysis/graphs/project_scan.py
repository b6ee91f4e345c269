"""What other modules of the project do to graphs, asked only when a finding is at stake.

Two facts decide whether a packet matcher is right that cannot be read from its module:
- another module inserts that very packet into graphs (directly or through the project's
  own wrapper), so the graphs the matcher sees carry it;
- the graphs are normalised to packets before the matcher sees them: a function that runs
  `strip_overloads` (or rewrites `n.target = n.target.overloadpacket`) and then calls the
  matcher, or a decorator whose wrapper does so.

The project is the top-level package holding the file.
Its modules are read once per process, and only those whose text holds an insertion or a
normalisation are kept and parsed; the modules consulted are recorded as dependencies of
the check through the project index.
"""

from __future__ import annotations

import ast
import os
import re
from dataclasses import dataclass, field

from qlint.analysis.context import FileContext
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.modules import import_root, module_name_for
from qlint.analysis.names.resolver import Resolver
from qlint.source import DecodeError, LineIndex, decode_source

_INSERTS = ("call_function", "create_node")
_NORMALISES = ("strip_overloads", "overloadpacket")
_NEEDLE_BYTES = tuple(n.encode() for n in _INSERTS + _NORMALISES)
_SKIP_DIRS = frozenset({".git", "node_modules", "__pycache__", ".tox", ".venv", "venv", "build", "dist"})
_MAX_BYTES = 2_000_000


def scan_root(path: str) -> str | None:
    """The top-level package `path` belongs to (None for a module outside any package: a
    script's neighbours are not its project). In a repository whose package maps onto its
    root, that is the top-level directory the file sits in."""
    module = module_name_for(path)
    if not module or "." not in module:
        return None
    return os.path.join(import_root(path), module.split(".")[0])


@dataclass
class _Project:
    texts: dict[str, str] = field(default_factory=dict)  # path -> text, for kept modules
    contexts: dict[str, FileContext | None] = field(default_factory=dict)
    normalised: set[str] | None = None  # qualified names normalisers call or decorate


_PROJECTS: dict[str, _Project] = {}
_NO_PROJECT = _Project(normalised=frozenset())  # type: ignore[arg-type]


def _project(root: str | None) -> _Project:
    if root is None:
        return _NO_PROJECT
    found = _PROJECTS.get(root)
    if found is None:
        found = _PROJECTS[root] = _Project()
        for directory, dirs, files in os.walk(root):
            dirs[:] = [d for d in dirs if d not in _SKIP_DIRS and not d.startswith(".")]
            for name in files:
                if not name.endswith(".py"):
                    continue
                path = os.path.join(directory, name)
                try:
                    with open(path, "rb") as fh:
                        data = fh.read(_MAX_BYTES + 1)
                except OSError:
                    continue
                # Bytes first: most modules hold neither, and decoding them all costs more.
                if len(data) > _MAX_BYTES or not any(n in data for n in _NEEDLE_BYTES):
                    continue
                try:
                    found.texts[path] = decode_source(data)
                except DecodeError:
                    continue
    return found


def other_contexts(
    ctx: FileContext, needles: tuple[str, ...], pattern: re.Pattern | None = None, own: bool = False
) -> list[FileContext]:
    """Parsed contexts of the project's other modules whose text holds one of `needles` and
    matches `pattern` (only modules that insert into graphs or normalise them are kept)."""
    project = _project(scan_root(ctx.path))
    skip = None if own else os.path.abspath(ctx.path)
    out = []
    for path, text in project.texts.items():
        if path == skip or not any(n in text for n in needles):
            continue
        if pattern is not None and pattern.search(text) is None:
            continue
        if path not in project.contexts:
            project.contexts[path] = _context(path, text, ctx)
        other = project.contexts[path]
        if other is not None:
            out.append(other)
            module = other.module
            if module:
                ctx.project.module_scope(module, ctx.path)  # a dependency of this check
    return out


def _context(path: str, text: str, ctx: FileContext) -> FileContext | None:
    try:
        tree = ast.parse(text, filename=path)
    except (SyntaxError, ValueError, RecursionError):
        return None
    return FileContext(path, text, tree, LineIndex(text), ctx.optable, ctx.project, module_name_for(path))


def normalised_callees(ctx: FileContext) -> set[str]:
    """Qualified names of what the project's normalisers call once the graph carries
    packets (`strip_overloads(gm); run_passes(gm)`), and of decorators whose wrapper does."""
    project = _project(scan_root(ctx.path))
    if project.normalised is None:
        project.normalised = set()
        # Every module of the project as on disk (the cache serves every file of it)...
        for other in other_contexts(ctx, _NORMALISES, own=True):
            project.normalised |= _normalisers(other)
    # ... and this one as being checked (an editor's buffer may differ from the disk).
    own = _normalisers(ctx) if any(n in ctx.text for n in _NORMALISES) else set()
    return project.normalised | own


def _normalisers(ctx: FileContext) -> set[str]:
    found: set[str] = set()
    for body in bodies(ctx.tree, ctx.scope, ctx.cache):
        func = body.node
        if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
        calls = [n for n in body.nodes() if isinstance(n, ast.Call)]
        if not any(_normalises(n, resolver) for n in body.nodes()):
            continue
        for call in calls:
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


def _normalises(node: ast.AST, resolver: Resolver) -> bool:
    if isinstance(node, ast.Call):
        name = resolver.qualname(node.func) or ""
        return name.split(".")[-1] == "strip_overloads"
    if isinstance(node, ast.Assign) and isinstance(node.value, ast.Attribute):
        return node.value.attr == "overloadpacket" and any(
            isinstance(t, ast.Attribute) and t.attr == "target" for t in node.targets
        )
    return False


def _enclosing_functions(tree: ast.Module, func: ast.AST) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    return [
        node
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
        and node is not func
        and any(inner is func for inner in ast.walk(node))
    ]
