"""Module- and function-level name bindings, collected once per file with the stdlib `ast`.

Flow-insensitive on purpose: a name bound to several different values is ambiguous and
resolves to nothing, which keeps the rules quiet rather than wrong.

The tables of a scope that tell a watcher which bodies were read, and how a class scope is
made one that does (`WatchedClassScope`), are in `watched_scopes`; which statements bind a
module's names, in `module_bindings`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from qlint.analysis.names.module_bindings import fallback_definitions, top_level_bindings
from qlint.analysis.names.modules import resolve_relative
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import CHILD_FIELDS as _CHILD_FIELDS
from qlint.analysis.tree_walk import child_fields
from qlint.value_classes import field, value_class


@value_class
class ClassScope:
    node: ast.ClassDef
    assigns: dict[str, list[ast.expr]] = field(default_factory=dict)
    methods: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    bases: list[ast.expr] = field(default_factory=list)

    @classmethod
    def build(cls, node: ast.ClassDef) -> ClassScope:
        """Methods, class-level assignments and bases of a class body (the one way to build it)."""
        scope = cls(node, bases=list(node.bases))
        for item in node.body:
            if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scope.methods[item.name] = item
            else:
                for name, value in assignments(item):
                    scope.assigns.setdefault(name, []).append(value)
        return scope

    def key_node(self) -> ast.ClassDef:
        """The class's node, read for its identity and name only, never walked: a flow kept
        across checks (`carried_flows`) does not depend on the class's bodies through it."""
        return self.node


class WatchedClassScope(ClassScope):
    """A class of the checked module whose node (its bodies) counts as read when taken: the
    node is kept under `_node`, each read told to `_hook` (`qlint.analysis.flow.carried_flows`
    turns a module's class scopes into these)."""

    @property
    def node(self) -> ast.ClassDef:
        node = self.__dict__["_node"]
        self.__dict__["_hook"].read(node)
        return node

    @node.setter
    def node(self, value: ast.ClassDef) -> None:
        self.__dict__["_node"] = value

    def key_node(self) -> ast.ClassDef:
        return self.__dict__["_node"]


# Where analyses keep on a module's scope what they worked out from its content, for every
# later check that meets the same scope (`flow.shared_flows`). A kept flow refers back to the
# scope (its resolver), so the scope and everything the flows hold (statements, values) make
# a cycle that only the cyclic collector frees: `let_go` breaks it when the project index
# drops the scope.
KEPT_FLOWS = "_qlint_shared_flows"


@value_class
class ModuleScope:
    module: str | None
    path: str
    # local name -> fully qualified dotted name ("t" -> "torch", "DQ" -> "pkg.qdq.DQ_OPS")
    imports: dict[str, str] = field(default_factory=dict)
    assigns: dict[str, list[ast.expr]] = field(default_factory=dict)
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef] = field(default_factory=dict)
    classes: dict[str, ClassScope] = field(default_factory=dict)
    # Every module named by an import (`import torch.export._trace` binds only `torch`).
    imported_modules: set[str] = field(default_factory=set)
    # Functions written as a stand-in for an import that failed: `try: from lib import f /
    # except ImportError: def f(...)`. Where the import succeeds the name is the library's.
    import_fallbacks: set[str] = field(default_factory=set)

    @classmethod
    def build(cls, tree: ast.Module, module: str | None, path: str) -> ModuleScope:
        scope = cls(module, path)
        for stmt, sure in top_level_bindings(tree.body):
            scope._bind(stmt, sure)
        if scope.imports.keys() & scope.functions.keys():  # both kept only when bound in branches
            for stmt in tree.body:
                if isinstance(stmt, ast.Try):
                    scope.import_fallbacks |= fallback_definitions(stmt)
        return scope

    def _bind(self, stmt: ast.stmt, sure: bool = False) -> None:
        """`sure`: the statement runs whenever the module does (not in an `if`/`try`
        branch), so its binding replaces whatever an import, `def` or `class` bound the
        name to before: a later `def f` shadows `from m import f`, and the other way round.
        A binding in a branch may not happen: both stay known, as before."""
        if isinstance(stmt, ast.Import):
            self.imported_modules.update(alias.name for alias in stmt.names)
            for alias in stmt.names:
                if alias.asname:
                    self._import(alias.asname, alias.name, sure)
                else:
                    top = alias.name.split(".")[0]
                    self._import(top, top, sure)
        elif isinstance(stmt, ast.ImportFrom):
            base = resolve_relative(self.module, self.path, stmt.level, stmt.module)
            if base is None:
                return
            self.imported_modules.add(base)
            for alias in stmt.names:
                if alias.name != "*":
                    self._import(alias.asname or alias.name, f"{base}.{alias.name}", sure)
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if sure:
                self.imports.pop(stmt.name, None)
                self.classes.pop(stmt.name, None)
            self.functions[stmt.name] = stmt
        elif isinstance(stmt, ast.ClassDef):
            if sure:
                self.imports.pop(stmt.name, None)
                self.functions.pop(stmt.name, None)
            self.classes[stmt.name] = ClassScope.build(stmt)
        else:
            for name, value in assignments(stmt):
                self.assigns.setdefault(name, []).append(value)

    def _import(self, name: str, full: str, sure: bool) -> None:
        if sure:
            self.functions.pop(name, None)
            self.classes.pop(name, None)
        self.imports[name] = full

    def unique(self, name: str) -> ast.expr | None:
        values = self.assigns.get(name)
        return _unique(values)

    def let_go(self) -> None:
        """The project index holds this scope no more: the flows kept on it go now, not when
        the cyclic collector next runs (ExecuTorch -j1: ~85,000 objects, a set-aside module's
        statements and flows, were left to it). An analysis still holding the scope analyses
        again what it would have reused, as a check meeting a new scope does."""
        self.__dict__.pop(KEPT_FLOWS, None)


def _unique(values: list[ast.expr] | None) -> ast.expr | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return values[0] if all(same_tree(values[0], v) for v in values[1:]) else None


def same_tree(a: object, b: object) -> bool:
    """What `ast.dump(a) == ast.dump(b)` says (positions ignored), stopping at the first
    difference instead of printing both trees."""
    if type(a) is not type(b):
        return False
    if isinstance(a, ast.AST):
        return all(same_tree(getattr(a, f, None), getattr(b, f, None)) for f in a._fields)
    if isinstance(a, list):
        return len(a) == len(b) and all(same_tree(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, (float, complex)):
        return repr(a) == repr(b)  # as printed: -0.0 is not 0.0, nan is nan
    return a == b


def assignments(stmt: ast.AST) -> Iterator[tuple[str, ast.expr]]:
    """`name = value` pairs a statement binds (plain, annotated, and `a = b = value`)."""
    if isinstance(stmt, ast.Assign):
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                yield target.id, stmt.value
            elif (
                isinstance(target, (ast.Tuple, ast.List))
                and isinstance(stmt.value, (ast.Tuple, ast.List))
                and len(target.elts) == len(stmt.value.elts)
            ):
                for t, v in zip(target.elts, stmt.value.elts, strict=True):
                    if isinstance(t, ast.Name):
                        yield t.id, v
    elif isinstance(stmt, ast.AnnAssign) and stmt.value is not None and isinstance(stmt.target, ast.Name):
        yield stmt.target.id, stmt.value


def function_assigns(func: ast.AST) -> dict[str, list[ast.AST]]:
    """Names bound in a function body (not in nested functions or classes), parameters included.

    Kept on the node: the model-flow and calibration analyses, the call graph and the
    language server each ask for the same bodies, and each answer is a walk of the body.
    The dict is shared, so callers must not change it."""
    return kept_on_node(func, _ASSIGNS, _function_assigns)


_ASSIGNS = "_qlint_function_assigns"


def _function_assigns(func: ast.AST) -> dict[str, list[ast.AST]]:
    found = parameters(func)
    stack = list(ast.iter_child_nodes(func))
    pop, append = stack.pop, stack.append
    # Node types, not isinstance chains, and only the fields that can hold nodes: most of a
    # body is expressions, visited here only to find the comprehensions and `:=` in them.
    while stack:
        node = pop()
        cls = type(node)
        if cls is _ATTRIBUTE:
            # A chain of attributes binds nothing: only what it hangs from can (`f(x := 1).a`),
            # and a name or a constant there holds nothing (`torch.nn.functional.relu`).
            while cls is _ATTRIBUTE:
                node = node.value
                cls = type(node)
            if cls in _LEAF_TYPES:
                continue
        if cls in _OWN_SCOPE_TYPES:
            continue
        if cls in _BINDER_TYPES:
            bind_local(found, node)
        # Children in `ast.iter_child_nodes` order; leaves bind nothing and hold nothing.
        for name in _CHILD_FIELDS.get(cls) or child_fields(cls):
            value = getattr(node, name, None)
            if type(value) is list:
                for v in value:
                    if isinstance(v, _AST) and type(v) not in _LEAF_TYPES:
                        append(v)
            elif isinstance(value, _AST) and type(value) not in _LEAF_TYPES:
                append(value)
    return found


_AST = ast.AST
_ATTRIBUTE = ast.Attribute
_OWN_SCOPE_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})
# What `bind_local` records something for.
_BINDER_TYPES = frozenset(
    {
        ast.Assign,
        ast.AnnAssign,
        ast.For,
        ast.AsyncFor,
        ast.comprehension,
        ast.NamedExpr,
        ast.AugAssign,
        ast.With,
        ast.AsyncWith,
    }
)
# Names, constants and the token singletons (`Load`, `Add`, ...: subclasses of these bases).
_TOKEN_BASES = (ast.expr_context, ast.operator, ast.cmpop, ast.unaryop, ast.boolop)
_LEAF_TYPES = frozenset({ast.Name, ast.Constant} | {t for base in _TOKEN_BASES for t in base.__subclasses__()})


def own_init(cls: ast.ClassDef) -> ast.FunctionDef | None:
    """The `__init__` a class body defines itself (not an inherited one)."""
    return next((s for s in cls.body if isinstance(s, ast.FunctionDef) and s.name == "__init__"), None)


def parameter_args(func: ast.AST, star: bool = True) -> list[ast.arg]:
    """A function's (or lambda's) parameters in order: positional, keyword-only, then with
    `star` the `*args` and `**kwargs` (which hold no single value a caller passes)."""
    args = getattr(func, "args", None)
    if not isinstance(args, ast.arguments):
        return []
    out = [*args.posonlyargs, *args.args, *args.kwonlyargs]
    if star:
        out += [a for a in (args.vararg, args.kwarg) if a is not None]
    return out


def parameter_at(args: ast.arguments, skip: int, position: int | None, keyword: str | None) -> str | None:
    """The parameter a call's argument binds: the positional one at `position` after the first
    `skip` (`self`: 1), else the one named `keyword` that a keyword can bind (not a
    positional-only one); None when there is no such parameter."""
    positional = [*args.posonlyargs, *args.args][skip:]
    if position is not None:
        return positional[position].arg if position < len(positional) else None
    named = [a.arg for a in [*args.args[max(skip - len(args.posonlyargs), 0) :], *args.kwonlyargs]]
    return keyword if keyword in named else None


# Decorators whose method is read as an attribute: `self.name` is what the getter returns.
_PROPERTIES = frozenset({"property", "cached_property"})


def is_property(func: ast.AST) -> bool:
    """A method under `@property` or `@cached_property` (`functools.cached_property` too)."""
    for decorator in getattr(func, "decorator_list", ()):
        if isinstance(decorator, ast.Attribute):
            name = decorator.attr
        else:
            name = decorator.id if isinstance(decorator, ast.Name) else ""
        if name in _PROPERTIES:
            return True
    return False


def parameters(func: ast.AST) -> dict[str, list[ast.AST]]:
    """Parameters shadow module names and have no value we can know."""
    found: dict[str, list[ast.AST]] = {}
    for arg in parameter_args(func):
        found.setdefault(arg.arg, []).append(arg)
    return found


def bind_local(local: dict[str, list[ast.AST]], node: ast.AST) -> None:
    """Record what one node binds in a function body; loop targets and `+=` make a name unknowable."""
    for name, value in assignments(node):
        local.setdefault(name, []).append(value)
    if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)) and isinstance(node.target, ast.Name):
        local.setdefault(node.target.id, []).append(node)
    elif isinstance(node, ast.NamedExpr):
        local.setdefault(node.target.id, []).append(node.value)
    elif isinstance(node, ast.AugAssign) and isinstance(node.target, ast.Name):
        local.setdefault(node.target.id, []).append(node)
    elif isinstance(node, (ast.With, ast.AsyncWith)):
        for item in node.items:
            if isinstance(item.optional_vars, ast.Name):
                local.setdefault(item.optional_vars.id, []).append(item.context_expr)


unique_value = _unique
