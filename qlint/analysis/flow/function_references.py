"""Whether a reference in another module is the helper function being searched for: a
name resolved through the project's imports and re-exports (renamed or not, through
`import *`), told apart from a function of the same name of another module, a local, or
something the flow cannot read (which leaves the callers unknown).
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.context import FileContext
from qlint.analysis.flow.foreign_references import cannot_bind, defines, imported_here, own_function
from qlint.analysis.flow.project_search import (
    OWN,
)
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.import_paths import module_bases
from qlint.analysis.names.live_trees import parse as live_parse
from qlint.analysis.names.modules import module_name_for, resolve_relative
from qlint.analysis.names.references import References
from qlint.analysis.names.resolver import Resolver


def imported_elsewhere(ctx: FileContext, path: str, refs: References, func: ast.AST, target: str, word: str) -> bool:
    """Whether every use of `word` in the candidate module is its one module-level import of
    something that is not the helper (`from executorch.examples.qualcomm.utils import
    build_executorch_binary` in the 45 Qualcomm scripts searched for the callers of
    MediaTek's function of that name), decided from its summary as `function_uses` decides each
    reference after a parse: the import resolved through the project's re-exports, neither
    the helper nor a re-export of it, a function of another module or of no project module."""
    if word not in refs.sole_imports or refs.aliases.get(word):
        return False  # loaded as `x.word`, bound otherwise too, or also imported under another name
    scope = ctx.project.scope_at(path)
    if scope is None or word not in scope.imports:
        return False
    qual = Resolver(scope, ctx.project, ctx.optable).qualname_of([word])
    if qual == target or _in_module(qual, func.name, ctx.project, path, ctx.path):
        return False  # the helper itself: its calls are read from the module's tree
    return word != func.name or _elsewhere(qual, func.name, ctx.project, path, ctx.path)


def function_uses(other: FileContext, target: str, func: ast.AST, helper_path: str, references: References, word: str):
    """[(body, {id(reference): reference})] of the references to the helper in a module, or
    None when one may denote it but is not a plain reference (an alias of a re-export, an
    attribute of an object). Only the statements on the rows its summary lists are walked.
    A call through an object that could not bind the helper's parameters (`compiled.export()`
    for `def export(model, ...)`) would raise if it were the helper: it is not one.

    Under a name the helper is re-exported as (`word`, not its own name), a reference counts
    only when it resolves to the helper (`from pkg.api import qm`; the resolver follows the
    re-export): that name is the re-exporter's binding, which another object's attribute or
    another module's global of the same spelling is not."""
    name = func.name
    renamed = word != name
    names = references.names_for(word)
    rows = references.rows(names)
    out = []
    own = names == {word}  # every load skipped for what the module's content alone says
    for body in bodies(other.tree, other.scope, other.cache):
        resolver = None
        refs: dict[int, ast.AST] = {}
        called: dict[int, ast.Call] = {}
        for node in body.nodes(rows):
            if isinstance(node, ast.Call):
                called[id(node.func)] = node  # walked before its callee expression
                continue
            named = node.id in names if isinstance(node, ast.Name) else getattr(node, "attr", None) == word
            if not named or not isinstance(getattr(node, "ctx", None), ast.Load):
                continue
            if resolver is None:
                resolver = Resolver(other.scope, other.project, other.optable, body.local, body.class_scope)
            ref = node
            if isinstance(ref, ast.Name) and (ref.id in body.local or defines(body, ref.id)):
                continue  # a local of that name: where it was bound from is a reference of its own
            if isinstance(ref, ast.Name) and own_function(other, ref.id, body):
                continue  # the module's own function of that name (scripts may share a module name)
            own = False
            qual = resolver.qualname(ref)
            if qual is None and isinstance(ref, ast.Name):
                qual = imported_here(other, body, ref.id)  # `from m import f` inside the function
            if qual == target or _in_module(qual, name, other.project, other.path, helper_path):
                refs[id(ref)] = ref
            elif renamed:
                continue  # `word` bound to something else here
            elif not _elsewhere(qual, name, other.project, other.path, helper_path) and not cannot_bind(
                called.get(id(ref)), func
            ):
                return None
        if refs:
            if isinstance(body.node, ast.ClassDef):
                return None  # called in a class body: no flow is analysed there
            out.append((body, refs))
    other.cache[(OWN, word)] = own and not out
    return out


def _in_module(qual: str | None, name: str, project, requester: str, helper_path: str, depth: int = 0) -> bool:
    """`qual` names `name` in the helper's own file (module names depend on where the
    project imports from: the file decides), or a module's import of it, renamed or not
    (`api.qm` where `pkg/api.py` holds `from .utils import f as qm`: the resolver follows
    re-exports of names, not of a module's attributes)."""
    module, _, attr = (qual or "").rpartition(".")
    if not module or depth > 3:
        return False
    scope = project.module_scope(module, requester)
    if scope is None:
        return False
    if os.path.abspath(scope.path) == os.path.abspath(helper_path):
        return attr == name
    if attr in scope.functions or attr in scope.classes or attr not in scope.imports:
        return False
    return _in_module(scope.imports[attr], name, project, requester, helper_path, depth + 1)


def _elsewhere(qual: str | None, name: str, project, requester: str, helper_path: str, depth: int = 0) -> bool:
    """The reference names a function of another module (or of no module of the project),
    not the helper through a re-export or an object we cannot see."""
    if qual is None or depth > 3:
        return False
    module, _, attr = qual.rpartition(".")
    if attr != name or not module:
        return True  # `alias.name` resolving to something else entirely
    scope = project.module_scope(module, requester)
    if scope is None:
        # Not a module of the project: a third-party function of the same name, unless the
        # module is the project's under a name the index cannot map. The directories are
        # dependencies (a `.py` file there is one of `module_scope`'s tried paths).
        return not any(
            project.is_directory(b, requester) or os.path.isfile(b + ".py") for b in module_bases(module, requester)
        )
    if os.path.abspath(scope.path) == os.path.abspath(helper_path):
        return False
    if name in scope.functions or name in scope.classes:
        return True
    if name in scope.imports:  # re-exported: where it comes from decides
        return _elsewhere(scope.imports[name], name, project, requester, helper_path, depth + 1)
    # `from .export_utils import *` (ExecuTorch's examples/qualcomm/utils.py): each source in turn.
    sources = _star_sources(project, scope.path)
    return bool(sources) and all(
        _elsewhere(f"{m}.{name}", name, project, requester, helper_path, depth + 1) for m in sources
    )


def _star_sources(project, path: str) -> list[str]:
    text = project.text(path)
    if text is None or "import *" not in text:
        return []
    try:
        tree = live_parse(text, path)
    except (SyntaxError, ValueError, RecursionError):
        return []
    module = module_name_for(path)
    found = []
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and any(a.name == "*" for a in node.names):
            base = resolve_relative(module, path, node.level, node.module)
            if base is not None:
                found.append(base)
    return found
