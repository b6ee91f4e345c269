"""The modules that can call a method, found through its class's instances rather than its name.

A method's callers are searched in every module spelling its name (`project_callers`); past
`MAX_CANDIDATES` such modules the answer is "unknown" (ExecuTorch: 655 modules spell `run`,
so the harness's `Quantize.run` had no callers it could read, issue 14 item 2). A method runs
on an instance, and an instance is only where it was built, or where it was handed. When every
load of the class's name in the project is a construction that is called on at once
(`Stage(q).run(m)`) or bound to a local of a function that only ever uses it as a method's
receiver there (`confined_instances._receiver_only`), the class's methods (and its bases')
read `self` only as `self.<attr>` (never `self.__class__`, nor a method of the class but to
call it: a bound method holds the instance), and the bases are read in full
(`confined_instances.family_of`), then no instance leaves the function that built it: the
method's calls in other modules are in the modules that name the class, and those are searched
instead (each still read by `method_references`, which leaves out what cannot be the method).

Anything else leaves the callers unknown: the class handed to a function, stored, returned,
named as a base (a subclass) or in `isinstance`, imported under another name, read as a
module's attribute (`stages.Quantize`), named in a string outside `__all__` (`getattr(m,
"Quantize")`), an instance handed on or returned, or more modules naming the class than the
search reads.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.flow.confined_instances import bound_to_receiver, builds, family_of, self_stays
from qlint.analysis.flow.project_search import MAX_CANDIDATES, candidate_modules, modules_holding, references_loading
from qlint.analysis.graphs import file_keys
from qlint.analysis.module_keys import unrecorded_keys
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.project_words import MAX_BYTES
from qlint.analysis.names.scope import ClassScope, parameter_args

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)


def holders(ctx: FileContext, root: str, owner: ClassScope, module) -> list[tuple[str, bytes, tuple]] | None:
    """The project's other modules that may hold an instance of the top-level class `owner`
    of `ctx` (those naming it), as `project_search.candidate_modules` lists them, when no instance
    leaves the function that built it; None otherwise. `module(path, data)`: the parsed
    module (`project_callers._module`), as a caller module is."""
    key = ("kept_instances", id(owner.node))
    if key not in ctx.cache:
        ctx.cache[key] = _holders(ctx, root, owner, module)
    return ctx.cache[key]


def _holders(ctx: FileContext, root: str, owner: ClassScope, module) -> list[tuple[str, bytes, tuple]] | None:
    node = owner.node
    name = node.name
    if ctx.scope.classes.get(name) is not owner or name in ctx.scope.imports or ctx.scope.assigns.get(name):
        return None
    family = family_of(ctx, owner)
    methods = {m for c in family or () for m in c.methods}
    if family is None or not all(_keeps_self(m, methods) for c in family for m in c.methods.values()):
        return None  # a base not read, or a method that hands its instance on
    if not _kept_in(ctx, name, ctx.lines_containing(name), own=node):
        return None
    found = candidate_modules(ctx, root, name)
    if found is None:
        return None
    out = []
    quoted = (f'"{name}"'.encode(), f"'{name}'".encode())
    if not _unlisted_strings_kept(ctx, root, name, {path for path, _, _ in found}, quoted, module):
        return None
    for path, data, key in found:
        refs = references_loading(ctx, path, key, name)
        if refs is not None and refs.aliases.get(name):
            return None  # imported under another name: its loads are not spelled so
        named = any(q in data for q in quoted)  # `getattr(stages, "Quantize")`, `__all__`
        if refs is None and not named:
            continue  # its code never loads the name (as `name` or `x.name`)
        other = module(path, data)
        if other is None:
            continue  # does not parse: it builds nothing
        rows = frozenset(refs.rows({name}) if refs is not None else ())
        if named:
            rows |= other[0].lines_containing(name)
        if not _kept_in(other[0], name, rows):
            return None
        out.append((path, data, key))
    return out


def _unlisted_strings_kept(ctx: FileContext, root: str, name: str, listed: set[str], quoted, module) -> bool:
    """The modules whose text holds the name but which the search leaves out (their code was
    found, in this run or an earlier one, never to load it, `scan_memo`) name it in no string
    but `__all__`'s: `getattr(stages, "Quantize")` loads no name, yet hands the class out."""
    keys = unrecorded_keys(ctx, root)
    for path in modules_holding(ctx, root, name, MAX_CANDIDATES + 1):
        if path in listed or path not in keys:
            continue
        data = file_keys.content_bytes(ctx.project, path, keys[path], MAX_BYTES)
        if data is None or not any(q in data for q in quoted):
            continue
        other = module(path, data)
        if other is not None and not _kept_in(other[0], name, other[0].lines_containing(name)):
            return False
    return True


def _keeps_self(method: ast.AST, methods: set[str]) -> bool:
    """`self` is only read as `self.<attr>`, never as `self.__class__` (which builds or hands
    out another instance of the class), and a method of the class (`methods`) only to call it
    there: `hooks.append(self.run)` hands the instance out with the bound method."""
    if not self_stays(method):
        return False
    params = parameter_args(method)
    me = params[0].arg if params else None
    called = {id(n.func) for n in ast.walk(method) if isinstance(n, ast.Call)}
    for n in ast.walk(method):
        if not isinstance(n, ast.Attribute):
            continue
        if n.attr == "__class__":
            return False
        if n.attr in methods and isinstance(n.value, ast.Name) and n.value.id == me and id(n) not in called:
            return False
    return True


def _kept_in(other: FileContext, name: str, rows: frozenset[int], own: ast.ClassDef | None = None) -> bool:
    """Every load of `name` in the module (on `rows`) builds an instance that stays in its
    function, and no string names it outside `__all__`; `own`: the class's own statement,
    which binds the name."""
    exported = _all_strings(other.tree)
    for body in bodies(other.tree, other.scope, other.cache):
        loads: set[int] = set()
        accepted: set[int] = set()
        for n in body.nodes(rows):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
                loads.add(id(n))
            elif isinstance(n, ast.Attribute) and n.attr == name:
                return False  # `stages.Quantize`: not followed
            elif isinstance(n, ast.Constant) and n.value == name and id(n) not in exported:
                return False  # `getattr(stages, "Quantize")`
            elif isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and builds(n.func.value, name):
                accepted.add(id(n.func.value.func))  # `Stage(q).run(m)`
            elif isinstance(n, ast.Assign) and builds(n.value, name):
                if isinstance(body.node, _FUNCS) and bound_to_receiver(n, body.node):
                    accepted.add(id(n.value.func))  # `stage = Stage(q)`, then `stage.run(m)`
            elif isinstance(n, (ast.Global, ast.Nonlocal)) or (
                isinstance(n, (ast.ClassDef, *_FUNCS)) and n.name == name and n is not own
            ):
                return False  # another binding of the name
        if loads - accepted:
            return False  # the class handed on, subclassed, or an instance used otherwise
    return True


def _all_strings(tree: ast.Module) -> set[int]:
    """The ids of the strings of module-level `__all__ = [...]` (a re-export spells the name)."""
    out: set[int] = set()
    for stmt in tree.body:
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [getattr(stmt, "target", None)]
        if any(isinstance(t, ast.Name) and t.id == "__all__" for t in targets):
            out.update(id(n) for n in ast.walk(stmt) if isinstance(n, ast.Constant))
    return out


__all__ = ["holders"]
