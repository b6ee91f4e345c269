"""Uses of removed capture APIs that are compatibility paths, not breaks (QL402's quiet cases).

`capture_pre_autograd_graph` or `export_for_training` breaks nothing on torch 2.13 in a
branch a torch-version check keeps torch 2.13 out of, in a probe (`try`/`except
ImportError|AttributeError` whose other side binds the names from an API torch still has),
or on the side of a fallback whose other side captures with `export(...)` itself. It does
when every branch of the shim reaches for a removed API. The branch reading is QL401's
(`import_edits.guarded`); the version checks are `version_gates`'.
"""

from __future__ import annotations

import ast

from qlint.analysis.caught_errors import catches
from qlint.analysis.context import FileContext
from qlint.analysis.edits import import_edits as ie
from qlint.analysis.failure_tries import failure_try
from qlint.analysis.removed_capture_apis import APIS, NAMES, TARGET_RELEASE
from qlint.analysis.statement_walk import statement_lists
from qlint.analysis.version_gates import ModuleConstants, is_version_test, taken

_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_EXPORT = "export"  # the name `torch.export`'s capture is called by


def compatibility_path(ctx: FileContext, stmt: ast.AST, parents, names: set[str]) -> bool:
    """A compatibility path: a branch torch 2.13 does not take, a probe, or one side of a
    fallback whose other side works on torch 2.13 (QL401's test, with version checks read)."""
    gate = _version_gate(ctx, stmt, parents)
    if gate == "skipped" or _fallback_after_export(stmt, parents, names):
        return True
    # A `try` whose broad handler only reports the failure of the pipeline it wraps is no
    # probe of an attribute: the use is judged from outside it.
    guard = stmt if names else failure_try(stmt, parents) or stmt
    if gate == "taken":
        return _probe_or_alternate(ctx, guard, parents, names)
    if not ie.guarded(guard, parents, names, _module_constant(ctx)):
        return bool(names) and _import_falls_back_to_export(stmt, parents, names)
    if _fallback_removed(ctx, stmt, parents, names):
        return False
    return bool(names) or not _probe_falls_back_removed(guard, parents)


def _version_gate(ctx: FileContext, node: ast.AST, parents) -> str | None:
    """ "skipped" when torch 2.13 does not reach `node` past a version check (or past one qlint
    cannot read): the `if`/`else` branch it does not take, or the code after an `if <version>:
    return` it does take; "taken" when every version check on the way passes; None without any."""
    found = None
    child, parent = node, parents.get(id(node))
    lookup = _module_constant(ctx)
    while parent is not None:
        if (
            isinstance(parent, (ast.If, ast.IfExp))
            and child is not parent.test
            and is_version_test(parent.test, lookup)
        ):
            runs = taken(parent.test, TARGET_RELEASE, lookup)
            in_body = child in parent.body if isinstance(parent.body, list) else child is parent.body
            if runs is None or runs != in_body:
                return "skipped"
            found = "taken"
        for block in statement_lists(parent):
            if child in block:
                for earlier in block[: block.index(child)]:
                    if isinstance(earlier, ast.If) and is_version_test(earlier.test, lookup) and _exits(earlier.body):
                        runs = taken(earlier.test, TARGET_RELEASE, lookup)
                        if runs is None or runs:
                            return "skipped"
                        found = "taken"
        if isinstance(parent, _SCOPES):
            break
        child, parent = parent, parents.get(id(parent))
    return found


def _exits(block: list[ast.stmt]) -> bool:
    """The block leaves its enclosing code: return/raise/continue/break, or `pytest.skip`/`sys.exit`."""
    if not block:
        return False
    last = block[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        func = last.value.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        return name in ("skip", "exit", "_exit")
    return False


def _module_constant(ctx: FileContext) -> ModuleConstants:
    """Constants of this module or imported from the project, cached for the file."""
    found = ctx.cache.get("ql402.versions")
    if found is None:
        found = ctx.cache["ql402.versions"] = ModuleConstants(ctx.scope, ctx.project, ctx.path)
    return found


def _probe_or_alternate(ctx: FileContext, node: ast.AST, parents, names: set[str]) -> bool:
    """`try`/`except ImportError|AttributeError` around the use, whose handler (or body) binds
    the same names from an API torch still has; with no names, any such `try` is a probe."""
    child, parent = node, parents.get(id(node))
    while parent is not None and not isinstance(parent, (*_SCOPES, ast.Module)):
        if isinstance(parent, ast.Try):
            catching = [h for h in parent.handlers if ie.catches_import_failure(h)]
            if (
                catching
                and child in parent.body
                and (not names or any(_binds_working(ctx, h.body, names) for h in catching))
            ):
                return True
            if child in catching and _binds_working(ctx, parent.body, names):
                return True
        child, parent = parent, parents.get(id(parent))
    return False


def _binds_working(ctx: FileContext, stmts: list[ast.stmt], names: set[str]) -> bool:
    for stmt in stmts:
        for node in ast.walk(stmt):
            if isinstance(node, ast.ImportFrom):
                base = ie.import_base(ctx, node)
                if any((a.asname or a.name) in names and f"{base}.{a.name}" not in APIS for a in node.names):
                    return True
    return False


def _fallback_removed(ctx: FileContext, node: ast.AST, parents, names: set[str]) -> bool:
    child, parent = node, parents.get(id(node))
    while parent is not None and not isinstance(parent, (*_SCOPES, ast.Module)):
        others: list[ast.stmt] | None = None
        if isinstance(parent, ast.Try):
            if child in parent.body:
                others = [s for h in parent.handlers for s in h.body]
            elif child in parent.handlers:
                others = parent.body
        elif isinstance(parent, ast.If) and child is not parent.test:
            others = parent.orelse if child in parent.body else parent.body
        if others is not None:
            found = [
                f"{ie.import_base(ctx, s)}.{a.name}"
                for stmt in others
                for s in ast.walk(stmt)
                if isinstance(s, ast.ImportFrom)
                for a in s.names
                if (a.asname or a.name) in names
            ]
            if found:
                return all(q in APIS for q in found)
        child, parent = parent, parents.get(id(parent))
    return False


def _probe_falls_back_removed(node: ast.AST, parents) -> bool:
    """An attribute probe (`torch.export.export_for_training(...)` in a `try` body) whose handlers
    reach for a removed API and spell no other capture: `except Exception: from torch._export
    import capture_pre_autograd_graph` fails on torch 2.13 as the probe does, so no branch of the
    shim works there. A handler calling any `export(...)` (`torch.export.export`) is a way out,
    and a `hasattr` check around the shim keeps it a probe."""
    verdict = False
    child, parent = node, parents.get(id(node))
    while parent is not None and not isinstance(parent, (*_SCOPES, ast.Module)):
        if isinstance(parent, (ast.If, ast.IfExp)) and child is not parent.test and ie.probes_attribute(parent.test):
            return False
        if isinstance(parent, ast.Try) and child in parent.body:
            catching = [h for h in parent.handlers if ie.catches_import_failure(h)]
            found = [n for h in catching for stmt in h.body for n in ast.walk(stmt)]
            if any(_spells_export(n) for n in found):
                return False  # this handler, or an outer one the failing fallback reaches, works
            if catching and not verdict:
                if not any(_names_removed_api(n) for n in found):
                    return False
                verdict = True
        child, parent = parent, parents.get(id(parent))
    return verdict


def _import_falls_back_to_export(node: ast.AST, parents, names: set[str]) -> bool:
    """An old import in a `try` body whose `except ImportError:` (or an outer one the failure
    reaches) captures with `export(...)` itself, the imported names read only inside that body:
    on torch 2.13 the import raises and the handler captures, so the shim works there, as one
    re-importing the name from torch.export does. A name read after the `try` is unbound there."""
    exporting = None  # the innermost such `try`
    child, parent = node, parents.get(id(node))
    while parent is not None and not isinstance(parent, (*_SCOPES, ast.Module)):
        if (
            exporting is None
            and isinstance(parent, ast.Try)
            and child in parent.body
            and any(catches(h, _IMPORT_ERROR_CATCHERS) and _exports(h.body) for h in parent.handlers)
        ):
            exporting = parent
        child, parent = parent, parents.get(id(parent))
    scope = parent if parent is not None else child  # the walk ends at the names' scope
    return exporting is not None and _read_only_inside(exporting.body, names, scope)


def _fallback_after_export(node: ast.AST, parents, names: set[str]) -> bool:
    """The use sits in an `except AttributeError:` (or `ImportError`) handler of a `try` whose
    body captures with `export(...)` itself (`torch.export.export`): the handler is for a torch
    without `torch.export`, and torch 2.13 takes the body, the mirror of
    `_import_falls_back_to_export`. A handler that also catches other errors (`Exception`, a bare
    `except:`) may be meant for models `export` fails on, which 2.13 would send to the removed
    API; an imported name read outside the handler is unbound on the body's path."""
    child, parent = node, parents.get(id(node))
    while parent is not None and not isinstance(parent, (*_SCOPES, ast.Module)):
        if isinstance(parent, ast.Try) and child in parent.handlers:
            if _catches_only(child, _MISSING_API_ERRORS) and _exports(parent.body):
                handler = child
                while parent is not None and not isinstance(parent, (*_SCOPES, ast.Module)):
                    parent = parents.get(id(parent))
                scope = parent if parent is not None else node
                return not names or _read_only_inside(handler.body, names, scope)
            return False
        child, parent = parent, parents.get(id(parent))
    return False


def _catches_only(handler: ast.ExceptHandler, names: frozenset[str]) -> bool:
    """Every error `handler` names is in `names` (by last part); a bare `except:` names none."""
    if handler.type is None:
        return False
    types = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return all((t.id if isinstance(t, ast.Name) else getattr(t, "attr", None)) in names for t in types)


def _exports(stmts: list[ast.stmt]) -> bool:
    return any(_spells_export(n) for s in stmts for n in ast.walk(s))


def _read_only_inside(body: list[ast.stmt], names: set[str], scope: ast.AST) -> bool:
    inside = {id(n) for stmt in body for n in ast.walk(stmt)}
    return all(
        id(n) in inside
        for n in ast.walk(scope)
        if isinstance(n, ast.Name) and n.id in names and not isinstance(n.ctx, ast.Store)
    )


_IMPORT_ERROR_CATCHERS = frozenset({"ImportError", "Exception", "BaseException"})
# What a missing API raises: a handler catching only these is for a torch that lacks one.
_MISSING_API_ERRORS = frozenset({"AttributeError", "ImportError", "ModuleNotFoundError"})


def _names_removed_api(node: ast.AST) -> bool:
    if isinstance(node, ast.ImportFrom):
        return any(a.name in NAMES for a in node.names)
    return isinstance(node, ast.Attribute) and node.attr in NAMES


def _spells_export(node: ast.AST) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)) == _EXPORT
