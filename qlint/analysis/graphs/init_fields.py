"""A field a class only ever sets in `__init__` from one of its parameters, the places the
project constructs that class (`compiled_next`, `graph_readers`), and the modules of the
project that spell a name (`modules_naming`, which `pass_call_sites` reads too).

`self.graph = graph` in `__init__` and nowhere else: the field holds what each construction
passed. The constructions are read where the class is named: its own module and every other
module of the project whose text spells it; a use of the name that is not a call of it (a
base class, the class handed on, an import re-exported under another name) leaves the
constructions unknown.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.context import FileContext
from qlint.analysis.flow.project_search import modules_holding
from qlint.analysis.graphs.project_scan import scan_root
from qlint.analysis.graphs.project_texts import parsed_module, read_module, text_holding
from qlint.analysis.module_keys import project_keys
from qlint.analysis.names import project_words
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.project_files import listing_dependency
from qlint.analysis.word_search import spells_word

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def init_parameter(tree: ast.Module, cls: ast.ClassDef, attr: str) -> tuple[int, str] | None:
    """(position after `self`, name) of the `__init__` parameter that `self.<attr>` is set
    from, when that assignment is the only store of an attribute `attr` in the module."""
    init = next((s for s in cls.body if isinstance(s, _FUNCS) and s.name == "__init__"), None)
    if init is None:
        return None
    params = [a.arg for a in (*init.args.posonlyargs, *init.args.args)][1:]
    stores = [n for n in ast.walk(tree) if isinstance(n, ast.Attribute) and n.attr == attr and not _loaded(n)]
    if len(stores) != 1:
        return None
    for stmt in init.body:
        if (
            isinstance(stmt, ast.Assign)
            and stmt.targets == stores
            and dotted_parts(stores[0]) == ["self", attr]
            and isinstance(stmt.value, ast.Name)
            and stmt.value.id in params
        ):
            return params.index(stmt.value.id), stmt.value.id
    return None


def _loaded(node: ast.Attribute) -> bool:
    return isinstance(node.ctx, ast.Load)


def argument(call: ast.Call, param: tuple[int, str]) -> ast.expr | None:
    """What `call` passes for the `__init__` parameter `param` (None: not passed, or unpacked)."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return None
    index, name = param
    if index < len(call.args):
        return call.args[index]
    return next((k.value for k in call.keywords if k.arg == name), None)


def constructions(ctx: FileContext, cls: ast.ClassDef) -> list[tuple[FileContext, ast.Call]] | None:
    """Every call constructing `cls` (a top-level class of the module checked) in the project,
    with the module it sits in; None when a use of the class is not one (or there is none)."""
    if getattr(ctx.scope.classes.get(cls.name), "node", None) is not cls:
        return None
    found: list[tuple[FileContext, ast.Call]] = []
    for other in [ctx, *modules_naming(ctx, cls.name)]:
        calls = _calls_in(other, cls, other is ctx, ctx.module or "")
        if calls is None:
            return None
        found.extend((other, c) for c in calls)
    return found or None


def _calls_in(other: FileContext, cls: ast.ClassDef, own: bool, module: str) -> list[ast.Call] | None:
    parents = {child: node for node in ast.walk(other.tree) for child in ast.iter_child_nodes(node)}
    resolver = Resolver(other.scope, other.project, other.optable)
    base = module.rpartition(".")[2]
    calls = []
    for node in ast.walk(other.tree):
        if not isinstance(node, ast.Name) or node.id != cls.name or not isinstance(node.ctx, ast.Load):
            continue
        parent = parents.get(node)
        if isinstance(parent, (ast.ImportFrom, ast.alias)):
            continue
        if not own:
            # Named there: it must be this class, as that module imports it.
            name = resolver.qualname(node) or ""
            if name != f"{module}.{cls.name}" and not name.endswith(f".{base}.{cls.name}"):
                return None
        if not (isinstance(parent, ast.Call) and parent.func is node):
            return None
        calls.append(parent)
    return calls


def modules_naming(ctx: FileContext, name: str) -> list[FileContext]:
    """The package's other modules whose text spells `name` as a word, parsed, in the order of
    its listing (a module that does not parse is left out: it constructs and calls nothing).
    Every module and the listing are dependencies of the check: any may come to spell it.

    Found from what is known of each module's content (`project_search.modules_holding`: its
    words, read once per content in the process, and what earlier runs found its text to hold
    or lack, kept between runs), then read and searched as text. Read module by module for
    each name, a one-file check of ao's `pt2e/qat_utils.py` read the package's ~440 modules
    once per pass it asked about (5 names, ~60 of the check's ~180 ms of CPU)."""
    root = scan_root(ctx.path)
    if root is None:
        return []
    root = os.path.abspath(root)
    ctx.project.record_listing(ctx.path, listing_dependency(root, True, (name,)))
    keys = project_keys(ctx, root)
    holders = set(modules_holding(ctx, root, name))
    own = os.path.abspath(ctx.path)
    needle = (name.encode(),)
    found = []
    for path, key in keys.items():
        # A module past the words' size limit has none kept (`project_words`): its text is
        # searched, as the scan of the package's texts searches it up to its own limit.
        if key is None or path == own or (path not in holders and not _past_words(key)):
            continue
        read = text_holding(ctx.project, path, key, needle)
        if read is None or not spells_word(read[0], name):
            continue
        other = parsed_module(ctx, path, read[0])
        if other is not None:
            found.append(other)
    return found


def _past_words(key: tuple) -> bool:
    return key[0] != "overlay" and key[1] > project_words.MAX_BYTES


def constructed_method(ctx: FileContext, cls: ast.ClassDef, field: str, method: str):
    """(module, def) of `method` of the class whose construction `__init__` of `cls` stores in
    `self.<field>` (`self.compiler = Compiler()`), the one store of that attribute in the
    module; the class is one of the module or of another module of the project. None when
    that is not so, or the method is decorated or not the class's own."""
    init = next((s for s in cls.body if isinstance(s, _FUNCS) and s.name == "__init__"), None)
    stores = [n for n in ast.walk(ctx.tree) if isinstance(n, ast.Attribute) and n.attr == field and not _loaded(n)]
    if init is None or len(stores) != 1 or dotted_parts(stores[0]) != ["self", field]:
        return None
    stmt = next((s for s in init.body if isinstance(s, ast.Assign) and s.targets == stores), None)
    if stmt is None or not isinstance(stmt.value, ast.Call):
        return None
    found = _class_of(ctx, stmt.value.func)
    if found is None:
        return None
    other, held = found
    node = next((s for s in held.body if isinstance(s, _FUNCS) and s.name == method), None)
    if node is None or node.decorator_list:
        return None
    return other, node


def _class_of(ctx: FileContext, func: ast.expr) -> tuple[FileContext, ast.ClassDef] | None:
    if isinstance(func, ast.Name) and func.id in ctx.scope.classes:
        return ctx, ctx.scope.classes[func.id].node
    name = Resolver(ctx.scope, ctx.project, ctx.optable).qualname(func)
    if not name or "." not in name:
        return None
    module, _, attr = name.rpartition(".")
    path = ctx.project.find_module_in_check(module, ctx.path)
    other = read_module(ctx, path) if path is not None else None
    if other is None:
        return None
    held = other.scope.classes.get(attr)
    return (other, held.node) if held is not None else None
