"""Names whose objects a class stores as its own parts without building them: a module the
class holds that its calls do not show.

The content reading (`class_contents`) reads the calls of a class: what they build is what the
model holds. A method that stores an object made elsewhere (`self.inner = inner` of the
function the class is written in, `self.head = HEAD` of a module-level model, `nn.Sequential(
backbone)`) gives the model a part no call of the class builds: a fresh model from outside is
in train mode, with whatever batch norm or dropout it holds. Such a class wrapped a train-mode
batch norm and was judged mode-free, its capture unreported.

Read here, from the tree alone: the names, free in the method (no parameter, nor a local
whose values come from none of them), that the values stored into `self` or handed to a
torch.nn container stand for. A parameter of `__init__` is what the construction passes
(`Built._arguments` reads it there). `stored_models` then asks what each name is bound to in
the class's module: a constant, a function or class, an import of torch or the standard
library holds no model; anything else (a variable of the enclosing function, a module-level
model, an import from elsewhere) may.

A loop's target (of a `for` or of a comprehension) holds the items of what it loops over:
the names of that iterable, through the calls that pass items on (`enumerate(ms)`,
`zip(a, b)`, `ms.items()`); `range(...)` gives numbers. A comprehension's targets are its own
(`[Block(i) for i in range(n)]` binds no `i` of the method).

The same holds for what a method hands a class of the project it builds (`self.b = Block(BN)`,
`handed_names`): the part built keeps its arguments, and a class is read without them, so
`Block` alone was judged. Its arguments' free names are read the same way; `stored_models`
counts them for the calls that build a class of the project, or run a function of it whose
result may keep them (`self.b = make_block(BN)`, read with `make_block`'s body alone).
"""

from __future__ import annotations

import ast

from qlint.analysis import tree_walk
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.node_memo import kept_on_node

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# torch.nn's containers and the list methods that put their arguments into the model.
_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"})
_ADDS = frozenset({"append", "extend", "insert", "update", "__setitem__"})
_KEY = "_qlint_stored_values"
_HANDED_KEY = "_qlint_handed_values"


def stored_names(cls: ast.ClassDef) -> tuple[ast.Name, ...]:
    """The free names (see the module docstring) whose objects the class's methods store as parts."""
    return kept_on_node(cls, _KEY, _stored_names)


def _stored_names(cls: ast.ClassDef) -> tuple[ast.Name, ...]:
    out: list[ast.Name] = []
    for method in cls.body:
        if isinstance(method, _FUNCTIONS):
            out.extend(_method_names(method))
    return tuple(out)


def handed_names(cls: ast.ClassDef) -> tuple[tuple[ast.Call, tuple[Slot, ...]], ...]:
    """The calls of the class's methods (no torch.nn container's, nor a list method's on a part:
    those store) handed a free name, each with its arguments' slots that are: `Block(BN)`, whose
    built part keeps `BN`. Which calls build a class is the caller's to resolve."""
    return kept_on_node(cls, _HANDED_KEY, _handed_names)


# An argument's position (None for a keyword, or after a `*args`), its keyword, its free names.
Slot = tuple[int | None, str | None, tuple[ast.Name, ...]]


def _handed_names(cls: ast.ClassDef) -> tuple[tuple[ast.Call, tuple[Slot, ...]], ...]:
    out: list[tuple[ast.Call, tuple[Slot, ...]]] = []
    for method in cls.body:
        if not isinstance(method, _FUNCTIONS):
            continue
        nodes = tree_walk.own_nodes(method)
        params = _parameters(method)
        scoped = comprehension_targets(nodes)
        bound: list[dict[str, list[ast.expr]]] = []  # the method's locals, read once if needed
        for node in nodes:
            if type(node) is not ast.Call or not (node.args or node.keywords) or _handed_values(node):
                continue
            starred = any(isinstance(a, ast.Starred) for a in node.args)
            slots = [
                *((None if starred else i, None, a) for i, a in enumerate(node.args)),
                *((None, k.arg, k.value) for k in node.keywords),
            ]
            found: list[Slot] = []
            for position, keyword, value in slots:
                names = [n for n in object_names(value) if _maybe_free(n, params, scoped)]
                if not names:
                    continue
                if not bound:
                    bound.append(local_values(nodes))
                free = _free(names, params, bound[0], nodes, scoped)
                if free:
                    found.append((position, keyword, tuple(free)))
            if found:
                out.append((node, tuple(found)))
    return tuple(out)


def _parameters(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    return {a.arg for a in parameter_args(fn)}


def _method_names(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> list[ast.Name]:
    nodes = tree_walk.own_nodes(fn)
    params = _parameters(fn)
    stored: list[ast.expr] = []
    for node in nodes:
        kind = type(node)
        if kind is ast.Call:
            stored.extend(_handed_values(node))
        elif (kind is ast.Assign or kind is ast.AnnAssign) and node.value is not None:
            targets = node.targets if kind is ast.Assign else [node.target]
            if any(_into_self(t) for t in targets):
                stored.append(node.value)
    if not stored:
        return []
    scoped = comprehension_targets(nodes)
    todo = [n for value in stored for n in object_names(value) if _maybe_free(n, params, scoped)]
    if not todo:
        return []  # most methods store only what their calls build: no local is read
    return _free(todo, params, local_values(nodes), nodes, scoped)


def _maybe_free(name: ast.Name, params: set[str], scoped: dict[int, list[ast.expr]]) -> bool:
    """`name` may stand for a name free in the method: a comprehension's target (it stands
    for what its loop walks), or any name but a parameter and `self`."""
    return id(name) in scoped or (name.id not in params and name.id != "self")


def _free(
    todo: list[ast.Name],
    params: set[str],
    bound: dict[str, list[ast.expr]],
    nodes: list[ast.AST],
    scoped: dict[int, list[ast.expr]],
) -> list[ast.Name]:
    """The names free in the method (`nodes`) that `todo` stand for: a local only through what
    it was bound to (`m = inner; self.m = m`; a loop's target through what the loop walks), a
    comprehension's target (`scoped`, `comprehension_targets`) through what it walks, a
    parameter or `self` not at all."""
    out: list[ast.Name] = []
    seen: set[str] = set()
    loops: set[int] | None = None  # the ids of the method's `for` iterables, read once if needed
    while todo:
        name = todo.pop()
        iterables = scoped.get(id(name))
        if iterables is not None:
            # Before `seen`: the comprehension's `i` is not the method's `i`.
            todo.extend(n for iterable in iterables for n in iterated_names(iterable))
            continue
        if name.id in seen or name.id in params or name.id == "self":
            continue
        seen.add(name.id)
        if name.id in bound:
            if loops is None:
                loops = {id(n.iter) for n in nodes if isinstance(n, (ast.For, ast.AsyncFor))}
            for value in bound[name.id]:
                todo.extend(iterated_names(value) if id(value) in loops else object_names(value))
        else:
            out.append(name)
    return out


_COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)


def comprehension_targets(nodes: list[ast.AST]) -> dict[int, list[ast.expr]]:
    """For each name read inside a comprehension of `nodes` that one of its own loops binds,
    by the name's id: the iterables of the loops binding it. The innermost comprehension
    binding a name is its scope; the first iterable is read in the enclosing one, each later
    iterable and condition sees the targets of the loops before it."""
    out: dict[int, list[ast.expr]] = {}
    for node in nodes:  # pre-order: an inner comprehension comes after the outer, and wins
        if type(node) not in _COMPREHENSIONS:
            continue
        bound: dict[str, list[ast.expr]] = {}
        for k, generator in enumerate(node.generators):
            if k:
                _bind_reads(generator.iter, bound, out)
            for target in tree_walk.walk(generator.target):
                if type(target) is ast.Name:
                    bound.setdefault(target.id, []).append(generator.iter)
            for condition in generator.ifs:
                _bind_reads(condition, bound, out)
        items = [node.key, node.value] if type(node) is ast.DictComp else [node.elt]
        for item in items:
            _bind_reads(item, bound, out)
    return out


def _bind_reads(expr: ast.expr, bound: dict[str, list[ast.expr]], out: dict[int, list[ast.expr]]) -> None:
    if not bound:
        return
    for node in tree_walk.walk(expr):
        if type(node) is ast.Name and node.id in bound:
            out[id(node)] = list(bound[node.id])


def iterated_names(iterable: ast.expr) -> list[ast.Name]:
    """The names whose objects the items of looping over `iterable` may be (or hold): as
    `object_names`, and through a call, its object and every argument (`enumerate(ms)`,
    `zip(a, b)`, `ms.items()`, `sorted(ms, key=k)`), except `range`'s, whose items are numbers."""
    if isinstance(iterable, ast.Call):
        func = iterable.func
        if isinstance(func, ast.Name) and func.id == "range":
            return []
        out = iterated_names(func.value) if isinstance(func, ast.Attribute) else []
        for arg in [*iterable.args, *(k.value for k in iterable.keywords)]:
            out.extend(iterated_names(arg.value if isinstance(arg, ast.Starred) else arg))
        return out
    if isinstance(iterable, ast.IfExp):
        return [*iterated_names(iterable.body), *iterated_names(iterable.orelse)]
    if isinstance(iterable, ast.BoolOp):
        return [n for v in iterable.values for n in iterated_names(v)]
    return object_names(iterable)


def _into_self(target: ast.expr) -> bool:
    """`self.x`, `self.x[k]`, `self.x.y`: a store the instance keeps."""
    while isinstance(target, (ast.Attribute, ast.Subscript)):
        target = target.value
    return isinstance(target, ast.Name) and target.id == "self"


def _handed_values(call: ast.Call) -> list[ast.expr]:
    """The arguments a call puts into the model: a torch.nn container's, or those of
    `self.x.append(v)` and the like on one of the instance's own parts."""
    func = call.func
    last = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if last in _CONTAINERS or (last in _ADDS and isinstance(func, ast.Attribute) and _into_self(func.value)):
        return [*(a.value if isinstance(a, ast.Starred) else a for a in call.args), *(k.value for k in call.keywords)]
    return []


def local_values(nodes: list[ast.AST]) -> dict[str, list[ast.expr]]:
    """What each local name of the method is bound to: assigned values, and the iterable of a
    loop or the context of a `with` for their targets. Names bound other ways (an import, an
    exception) hold no object from outside and map to nothing."""
    out: dict[str, list[ast.expr]] = {}

    def bind(target: ast.expr, value: ast.expr | None) -> None:
        for node in tree_walk.walk(target):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                values = out.setdefault(node.id, [])
                if value is not None:
                    values.append(value)

    for node in nodes:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                bind(target, node.value)
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign, ast.NamedExpr)):
            bind(node.target, node.value)
        elif isinstance(node, (ast.For, ast.AsyncFor)):
            bind(node.target, node.iter)
        elif isinstance(node, (ast.With, ast.AsyncWith)):
            for item in node.items:
                if item.optional_vars is not None:
                    bind(item.optional_vars, item.context_expr)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            for alias in node.names:
                out.setdefault((alias.asname or alias.name).split(".")[0], [])
        elif isinstance(node, ast.ExceptHandler) and node.name:
            out.setdefault(node.name, [])
        elif isinstance(node, (*_FUNCTIONS, ast.ClassDef)):
            out.setdefault(node.name, [])  # written here: read with the class
    return out


def object_names(value: ast.expr) -> list[ast.Name]:
    """The names whose objects `value` may be (or hold): the root of `a.b[i]`, both sides of
    `x if c else y` and `a or b`, the items of a literal or a comprehension, the arguments of a
    torch.nn container. Any other call builds its result, which the content reading reads."""
    if isinstance(value, ast.Name):
        return [value] if isinstance(value.ctx, ast.Load) else []
    if isinstance(value, (ast.Attribute, ast.Subscript, ast.Starred)):
        return object_names(value.value)
    if isinstance(value, ast.IfExp):
        return [*object_names(value.body), *object_names(value.orelse)]
    if isinstance(value, ast.BoolOp):
        return [n for v in value.values for n in object_names(v)]
    if isinstance(value, (ast.List, ast.Tuple, ast.Set)):
        return [n for v in value.elts for n in object_names(v)]
    if isinstance(value, ast.Dict):
        return [n for v in value.values for n in object_names(v)]
    if isinstance(value, (ast.ListComp, ast.SetComp, ast.GeneratorExp)):
        return _comprehension_names(value, [value.elt])
    if isinstance(value, ast.DictComp):
        return _comprehension_names(value, [value.value])
    if isinstance(value, ast.Call):
        return [n for v in _handed_values(value) for n in object_names(v)]
    return []


def _comprehension_names(value, items: list[ast.expr]) -> list[ast.Name]:
    """A comprehension's items: its own targets stand for the items of what they loop over."""
    targets = {n.id for g in value.generators for n in tree_walk.walk(g.target) if isinstance(n, ast.Name)}
    out = [n for item in items for n in object_names(item) if n.id not in targets]
    out.extend(n for g in value.generators for n in iterated_names(g.iter))
    return out
