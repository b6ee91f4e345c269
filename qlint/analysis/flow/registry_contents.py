"""The classes a lookup of a decorator-filled registry can build, for a model's content
(issue 14, item 8; ExecuTorch's Qualcomm static llama).

    NORM_REGISTRY: Dict[str, Type[Norm]] = {}

    def register_norm(name):
        def decorator(cls):
            NORM_REGISTRY[name] = cls
            return cls
        return decorator

    @register_norm("rmsnorm")
    class RMSNorm(torch.nn.RMSNorm, Norm): ...

    class LlamaModel(nn.Module):
        def __init__(self, config):
            self.norm = NORM_REGISTRY[config.norm_type](config.dim)      # or `.get(k, Default)(...)`

When nothing but the decorator writes the registry, a lookup hands out one of the classes the
decorator was put on (or raises): the call builds one of them. A constant key narrows them to
the classes registered under it; any other key may be any of them, which is what a content
reading asks (does some class the model may hold depend on the mode?), and `.get(k, D)` adds
`D`. The registry is closed when:

- its module binds it once, at module level, to an empty dict, and the only other appearances
  of the name there are the decorator's store and reads;
- the decorator has the one shape `decorator_registries` reads (`REG[key] = cls; return cls`);
- every other module of the project that names the registry only reads it (a lookup, `.get`,
  `.keys()`/`.values()`/`.items()`, `in`, a loop over it);
- every use of the decorator in the project is `@decorator("constant")` on a top-level class
  statement: a call of it by hand, an alias, an attribute, a class written in a function
  registers what we do not read.

Anything else (a registry also filled elsewhere, a project that cannot be searched, a check
whose context is not known here) and the lookup stays unknown. The project search is the
checked file's (`project_search.paths_naming`): the modules it read are its dependencies.
"""

from __future__ import annotations

import ast
import os
import weakref

from qlint.analysis.flow.decorator_registries import decorators_of, empty_dict
from qlint.analysis.flow.project_search import paths_naming, tree_at
from qlint.analysis.tree_walk import Parents
from qlint.analysis.tree_walk import parents as tree_parents

UNKNOWN = "unknown"  # a registry lookup whose classes are not known
_READ_METHODS = frozenset({"get", "keys", "values", "items"})
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_HOPS = 4  # re-exports followed from the name used to the module binding it
# (project, its check count, a weak reference to the checked file's context): the check whose
# project search a content reading may use. Weak: the context holds the analyses that read.
_CHECK: tuple | None = None


def checking(ctx) -> None:
    """The check of `ctx` runs now: registry lookups read while it runs search its project."""
    global _CHECK
    _CHECK = (ctx.project, getattr(ctx.project, "checks", None), weakref.ref(ctx))


def _context(project):
    check = _CHECK
    if check is None or check[0] is not project or check[1] != getattr(project, "checks", None):
        return None
    return check[2]()


def lookup_parts(node: ast.expr) -> tuple[ast.expr, ast.expr | None, ast.expr | None] | None:
    """(registry, key, default) of `REG[key]` or `REG.get(key[, default])`; None otherwise."""
    if type(node) is ast.Subscript and isinstance(node.ctx, ast.Load):
        return node.value, node.slice, None
    if type(node) is ast.Call and isinstance(node.func, ast.Attribute) and node.func.attr == "get":
        if node.keywords or not 1 <= len(node.args) <= 2:
            return None
        return node.func.value, node.args[0], node.args[1] if len(node.args) == 2 else None
    return None


def looked_up(node: ast.expr, resolver, index, local_classes: dict, make_class):
    """The classes `node` (a lookup, `lookup_parts`) may hand out, as `ModelClass`es (made by
    `make_class(node, scope)`: the class index's own); None when it is no lookup of a registry
    a decorator fills, UNKNOWN when it is one whose classes are not all known (or its default
    is no class we resolve)."""
    parts = lookup_parts(node)
    if parts is None or type(parts[0]) is not ast.Name or parts[0].id in resolver.local:
        return None
    holder, key, default = parts
    home = _home(holder.id, resolver.scope, index)
    if home is None:
        return None
    scope, registry, decorator = home
    registered = _memo_registered(_context(index.project), scope, registry, decorator)
    if registered is None or any(type(cls) is not ast.ClassDef for _, cls, _ in registered):
        return UNKNOWN  # a function registered beside them: what a lookup builds is not read here
    if isinstance(key, ast.Constant):
        classes = [make_class(cls, scope) for k, cls, scope in registered if k == key.value]
    else:
        classes = [make_class(cls, scope) for _, cls, scope in registered]
    if default is not None and not (isinstance(default, ast.Constant) and default.value is None):
        found = index.resolve(default, resolver, local_classes)
        if found is None:
            return UNKNOWN
        classes.append(found)
    return classes


def holds_functions_only(name: str, scope, index) -> bool:
    """`name` in `scope` is a registry the decorator fills with functions alone, as
    `ROTARY_EMB_REGISTRY` beside the norms: what a class stores from it (`self.rope =
    REG["default"]`) is a function of the project, no module, as a function named directly
    is (`stored_models.holds_no_model`). Each registered function carries that decorator
    alone: another one below it would hand the registry what it returns."""
    home = _home(name, scope, index)
    if home is None:
        return False
    home_scope, registry, decorator = home
    registered = _memo_registered(_context(index.project), home_scope, registry, decorator)
    return bool(registered) and all(
        type(node) in _FUNCTIONS and all(_registers(d, decorator) for d in node.decorator_list)
        for _, node, _ in registered
    )


def _memo_registered(ctx, scope, registry: str, decorator: str):
    """`_registered`, once per registry and check; None without a check's context."""
    if ctx is None:
        return None
    memo = ctx.cache.setdefault("registry_contents", {})
    asked = (os.path.abspath(scope.path), registry)
    if asked not in memo:
        memo[asked] = _registered(ctx, scope, registry, decorator)
    return memo[asked]


def _home(name: str, scope, index):
    """(the module scope binding the registry `name` names, its name there, its one decorator), following
    imports and re-exports (`from .layernorm import NORM_REGISTRY` in a package's
    `__init__`); None when it is no registry a decorator of that shape fills."""
    for _ in range(_HOPS):
        if name in scope.assigns and name not in scope.imports:
            decorators = decorators_of(scope, name) if empty_dict(scope.assigns.get(name)) else ()
            return (scope, name, decorators[0]) if len(decorators) == 1 else None
        target = scope.imports.get(name)
        if not target or "." not in target:
            return None
        module, _, name = target.rpartition(".")
        scope = index.module_scope(module)
        if scope is None:
            return None
    return None


def _registered(ctx, home, registry: str, decorator: str):
    """((key, class statement, its module's scope) for each class the decorator registers, in
    the project) when nothing else writes the registry; None otherwise."""
    home_path = os.path.abspath(home.path)
    readers = paths_naming(ctx, registry)
    users = paths_naming(ctx, decorator)
    if readers is None or users is None:
        return None
    checked = os.path.abspath(ctx.path)
    paths = {home_path, checked, *(os.path.abspath(p) for p in (*readers, *users))}
    out = []
    for path in sorted(paths):
        tree = ctx.tree if path == checked else tree_at(ctx, path)
        if tree is None:
            return None
        if not _reads_only(tree, registry, decorator if path == home_path else None):
            return None
        found = _decorated(tree, decorator, path == home_path)
        if found is None:
            return None
        if found:
            scope = ctx.scope if path == checked else ctx.project.scope_at(path)
            if scope is None:
                return None
            out.extend((key, node, scope) for key, node in found)
    return tuple(out)


def _reads_only(tree: ast.Module, registry: str, decorator: str | None) -> bool:
    """Every appearance of `registry` in `tree` reads it; in its home module (`decorator`
    given) also its one module-level binding and the decorator's store."""
    parents = None
    store = None
    if decorator is not None:
        deco = next((s for s in tree.body if isinstance(s, ast.FunctionDef) and s.name == decorator), None)
        if deco is None:
            return False
        store = {id(n) for n in ast.walk(deco) if isinstance(n, ast.Subscript) and not isinstance(n.ctx, ast.Load)}
    bindings = 0
    for node in ast.walk(tree):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and registry in node.names:
            return False
        if _names_otherwise(node, registry, ()):
            return False  # `module.REG`, `import REG as R`: what is done with it is not read here
        if not (isinstance(node, ast.Name) and node.id == registry):
            continue
        if parents is None:
            parents = tree_parents(tree)
        parent = parents.get(id(node))
        if not isinstance(node.ctx, ast.Load):
            bindings += 1
            if decorator is None or not any(parent is s for s in tree.body):
                return False
            continue
        if isinstance(parent, ast.Subscript) and parent.value is node:
            if isinstance(parent.ctx, ast.Load) or (store is not None and id(parent) in store):
                continue
            return False
        if not _read(node, parent, parents):
            return False
    return bindings == (1 if decorator is not None else 0)


def _read(node: ast.Name, parent: ast.AST | None, parents: Parents) -> bool:
    """`REG.get(k)`, `REG.values()`, `k in REG`, `for x in REG`: a read that leaves it as it is."""
    if isinstance(parent, ast.Attribute) and parent.value is node and parent.attr in _READ_METHODS:
        call = parents.get(id(parent))
        return isinstance(call, ast.Call) and call.func is parent
    if isinstance(parent, ast.Compare):
        return any(c is node for c in parent.comparators) and all(
            isinstance(o, (ast.In, ast.NotIn)) for o in parent.ops
        )
    if isinstance(parent, (ast.For, ast.AsyncFor, ast.comprehension)):
        return parent.iter is node
    # `__all__ = [REG, ...]` at module level (ExecuTorch's llama model package lists the
    # objects, not their names): held in a list nobody writes through.
    holder = parents.get(id(parent)) if isinstance(parent, (ast.List, ast.Tuple)) else None
    return (
        isinstance(holder, ast.Assign)
        and holder.value is parent
        and [t.id for t in holder.targets if isinstance(t, ast.Name)] == ["__all__"]
        and isinstance(parents.get(id(holder)), ast.Module)
    )


def _decorated(tree: ast.Module, decorator: str, home: bool) -> list[tuple[object, ast.stmt]] | None:
    """(key, class or function) for each `@decorator("key")` on a top-level class or function
    of `tree`; None when the decorator appears in any other way (its own `def` in its home
    module aside)."""
    decorating: dict[int, tuple[object, ast.stmt]] = {}
    for stmt in tree.body:
        if isinstance(stmt, (ast.ClassDef, *_FUNCTIONS)):
            for deco in stmt.decorator_list:
                if _registers(deco, decorator):
                    decorating[id(deco.func)] = (deco.args[0].value, stmt)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Name) and node.id == decorator:
            if id(node) not in decorating:
                return None  # a call by hand, a class written in a function, a rebinding
            found.append(decorating[id(node)])
        elif _names_otherwise(node, decorator, tree.body if home else ()):
            return None
    return found


def _registers(deco: ast.expr, decorator: str) -> bool:
    """`@decorator("key")`: a registration under a constant key."""
    return (
        isinstance(deco, ast.Call)
        and isinstance(deco.func, ast.Name)
        and deco.func.id == decorator
        and len(deco.args) == 1
        and not deco.keywords
        and isinstance(deco.args[0], ast.Constant)
    )


def _names_otherwise(node: ast.AST, name: str, own: list[ast.stmt]) -> bool:
    """`node` names `name` other than as a plain name: an attribute, an import under another
    name, a function defined under it (but for the decorator's own `def`, among `own`)."""
    if isinstance(node, ast.Attribute):
        return node.attr == name
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any(a.asname and a.name.rpartition(".")[2] == name for a in node.names)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name and not any(node is s for s in own)
    return False


__all__ = ["UNKNOWN", "checking", "holds_functions_only", "looked_up", "lookup_parts"]
