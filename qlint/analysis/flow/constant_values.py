"""Arguments that hold constants, read through loops over lists written in the function
(issue 14, item 7).

ExecuTorch's Qualcomm index_put test writes

    skip_mutable_buffer = [False, True]
    total_test_combo = []
    total_test_combo.append(list(itertools.product(skip_mutable_buffer, sample_inputs)))
    ...
    for i, test_combo in enumerate(total_test_combo):
        for j, combo in enumerate(test_combo):
            module = self.get_qdq_module(IndexPut(skip_mutable_buffer=combo[0], mode=i), combo[1])

`combo[0]` is one of `False, True` and `i` an index: neither can be a module the class
stores, so what the model holds is read from its class alone (`built_models.Built`), as for
a constant written in place. Without this the construction's content was unknown and the
helper had a caller it could not classify.

What a value may be is worked out from the function's syntax, as a shape: a constant
(`CONST`: what a literal, an index, `len` or arithmetic on constants gives), a tuple of
shapes by position, a sequence of elements of one shape (a list, or what `enumerate`, `zip`,
`itertools.product`, `range`, `list` and the other builtins that only walk their argument
give), or anything (`ANY`). A name is any of the values its bindings in the function give
(each assignment, loop target and comprehension target that binds it, unpacked by position);
one bound in any other way (a parameter, `+=`, `with`, an import, `:=`, `global`/`nonlocal`,
a name of an enclosing scope) may be anything. A sequence can change after it was written:
every read of a name that may hold one (and of an item of it that may be one) must only walk
it, index it, hand it to those builtins, bind it to another such name, or fill a list literal
it is bound to by `append`, `insert` or `extend`, whose values join its elements. Any other
use (handed to a call, a method, returned, stored into) leaves the function's values unknown.
The shapes and their join are `value_shapes`'; the bindings of the function's names are
`function_bindings`'.
"""

from __future__ import annotations

import ast
import weakref

from qlint.analysis.flow.function_bindings import (
    COMPREHENSIONS,
    SCOPES,
    all_bindings,
    fills_list,
    name_targets,
    target_binds,
)
from qlint.analysis.flow.value_shapes import (
    ANY,
    CONST,
    NOTHING,
    SEQ,
    TUPLE,
    TUPLES,
    constant_shape,
    element_shape,
    join_shapes,
    mutable_shape,
    unpacked_shapes,
)
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.tree_walk import names_by_id, parents, walk

_MAX_DEPTH = 24

# Builtins whose result only walks their argument: (the shape of an element of the result).
_WALKERS = frozenset({"list", "tuple", "sorted", "reversed", "iter"})
_NUMBERS = frozenset({"len", "int", "float", "bool", "str", "min", "max", "sum"})
_IN_SCOPE = "in-scope"
# Calls that reach the function's names without naming them.
_REFLECTION = frozenset({"locals", "vars", "eval", "exec", "globals"})


def holds_constant(func: ast.AST | None, expr: ast.expr, resolver: Resolver) -> bool:
    """`expr`, an expression in `func`'s own code, can only be a constant (or a tuple or
    sequence of constants): never a module."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False  # a module's names can be changed from other modules
    # What the function's names hold is worked out once per walk (its resolver) and function:
    # a big test asks for every construction it makes.
    kept = _KEPT.get(resolver)
    if kept is None:
        kept = _KEPT[resolver] = {}
    shapes = kept.get(id(func))
    if shapes is None or shapes.func is not func:
        shapes = kept[id(func)] = _Shapes(func)
    shapes.resolver = resolver
    try:
        return constant_shape(shapes.of(expr, 0))
    finally:
        shapes.resolver = None  # no reference from the kept shapes to the walk


# Per resolver (one walk), held weakly: {id(function): its shapes}.
_KEPT: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()


class _Shapes:
    """The shapes of one function's values, worked out for one question."""

    def __init__(self, func: ast.AST):
        self._func = weakref.ref(func)  # kept beside the walk, not holding its tree
        self.resolver: Resolver | None = None  # the walk's, while a question is asked
        self.parents = parents(func)
        self.names: dict[str, object] = {}  # the function's own names: their shapes
        self.busy: set[str] = set()
        self.cycled = False  # a name being worked out was read while it was
        self.sound: bool | None = None  # every read of a sequence only walks it
        self._bound: dict[str, list | None] | None = None  # `_bindings`, for every name at once

    @property
    def func(self) -> ast.AST | None:
        return self._func()

    def of(self, e: ast.expr, depth: int):
        if depth > _MAX_DEPTH:
            return ANY
        if isinstance(e, (ast.Constant, ast.JoinedStr)):
            return CONST
        if isinstance(e, ast.Name):
            return self._name(e, depth)
        if isinstance(e, ast.Tuple):
            if any(isinstance(x, ast.Starred) for x in e.elts):
                return ANY
            return (TUPLE, tuple(self.of(x, depth + 1) for x in e.elts))
        if isinstance(e, (ast.List, ast.Set)):
            return self._listed(e, depth)
        if isinstance(e, ast.UnaryOp):
            return CONST if self.of(e.operand, depth + 1) == CONST else ANY
        if isinstance(e, ast.BinOp):
            return CONST if self.of(e.left, depth + 1) == self.of(e.right, depth + 1) == CONST else ANY
        if isinstance(e, ast.Compare):
            shapes = [self.of(x, depth + 1) for x in (e.left, *e.comparators)]
            return CONST if all(s == CONST for s in shapes) else ANY
        if isinstance(e, ast.BoolOp):
            out = NOTHING
            for x in e.values:
                out = join_shapes(out, self.of(x, depth + 1))
            return out
        if isinstance(e, ast.IfExp):
            return join_shapes(self.of(e.body, depth + 1), self.of(e.orelse, depth + 1))
        if isinstance(e, ast.Subscript):
            return self._item(e, depth)
        if isinstance(e, (ast.ListComp, ast.GeneratorExp, ast.SetComp)):
            return (SEQ, self.of(e.elt, depth + 1))
        if isinstance(e, ast.Call):
            return self._call(e, depth)
        return ANY

    def _listed(self, e: ast.List | ast.Set, depth: int):
        out = NOTHING
        for x in e.elts:
            if isinstance(x, ast.Starred):
                return ANY
            out = join_shapes(out, self.of(x, depth + 1))
        return (SEQ, out)

    def _item(self, e: ast.Subscript, depth: int):
        shape = self.of(e.value, depth + 1)
        if isinstance(e.slice, ast.Slice):
            return (SEQ, element_shape(shape)) if shape != ANY else ANY
        index = _index(e.slice)
        if isinstance(shape, tuple) and shape[0] == TUPLE and index is not None:
            items = shape[1]
            return items[index] if -len(items) <= index < len(items) else NOTHING
        return element_shape(shape)

    def _call(self, e: ast.Call, depth: int):
        name = self._builtin(e.func)
        if name is None or e.keywords or any(isinstance(a, ast.Starred) for a in e.args):
            return ANY
        args = [self.of(a, depth + 1) for a in e.args]
        if name == "enumerate" and len(args) == 1:
            return (SEQ, (TUPLE, (CONST, element_shape(args[0]))))
        if name in ("zip", "itertools.product") and args:
            return (SEQ, (TUPLE, tuple(element_shape(a) for a in args)))
        if name == "range":
            return (TUPLES, CONST)  # ints, whatever it is given (or it raises)
        if name in _WALKERS and len(args) == 1:
            return (SEQ, element_shape(args[0])) if args[0] != ANY else ANY
        if name in _NUMBERS and name not in ("min", "max", "sum") and len(args) == 1:
            return CONST  # `len(x)`, `int(x)`, `str(x)`: a number or a string whatever `x` is
        if name in _NUMBERS and args and all(constant_shape(a) for a in args):
            return CONST
        return ANY

    def _builtin(self, func: ast.expr) -> str | None:
        """The builtin (or `itertools.product`) `func` names, when nothing rebinds it."""
        if isinstance(func, ast.Attribute):
            return "itertools.product" if self.resolver.qualname(func) == "itertools.product" else None
        if not isinstance(func, ast.Name):
            return None
        name = func.id
        if name not in ("enumerate", "zip", "range", *_WALKERS, *_NUMBERS):
            return None
        if name in self.resolver.local or _bound_in_module(self.resolver, name):
            return None
        return name

    # -- names ------------------------------------------------------------------------------
    def _name(self, e: ast.Name, depth: int):
        if not self._only_walked():
            return ANY
        comp = self._comprehension_binding(e)
        if comp is _IN_SCOPE:
            return ANY  # a name of a nested function or lambda: maybe its own parameter
        if comp is not None:
            gen, target = comp
            return self._bound_by(target, e.id, element_shape(self.of(gen.iter, depth + 1)))
        return self._own(e.id, depth)

    def _comprehension_binding(self, e: ast.Name):
        """The generator of an enclosing comprehension whose target binds `e` there (with the
        target), None for a name of the function's own, `_IN_SCOPE` for one read in a nested
        function, lambda or class."""
        node: ast.AST = e
        while True:
            parent = self.parents.get(id(node))
            if parent is None or parent is self.func:
                return None
            if isinstance(parent, SCOPES):
                return _IN_SCOPE
            if isinstance(parent, COMPREHENSIONS):
                gens = parent.generators
                # The first generator's iterable is evaluated outside; a later one's sees the
                # targets before it; the element and the conditions see them all.
                visible = gens
                if isinstance(node, ast.comprehension):
                    at = next(i for i, g in enumerate(gens) if g is node)
                    visible = gens[: at if node.iter is _inner(e, node, self.parents) else at + 1]
                for gen in reversed(visible):
                    if target_binds(gen.target, e.id):
                        return gen, gen.target
            node = parent

    def _own(self, name: str, depth: int):
        if name in self.names:
            return self.names[name]
        if name in self.busy:
            self.cycled = True
            return ANY  # a value made from itself
        self.busy.add(name)
        out = NOTHING
        bindings = self._bindings(name)
        if bindings is None:
            out = ANY
        else:
            for kind, node, value in bindings:
                if kind == "fill":
                    out = self._filled(out, node, value, depth)
                elif kind == "for":
                    out = join_shapes(
                        out, self._bound_by(node.target, name, element_shape(self.of(node.iter, depth + 1)))
                    )
                else:
                    out = join_shapes(out, self._bound_by(node, name, self.of(value, depth + 1)))
        self.busy.discard(name)
        if not self.busy:
            self.cycled = False
        if not self.cycled:
            # A shape worked out inside a cycle read the name at its head as `ANY`: asked
            # again from the top, it is worked out again.
            self.names[name] = out
        return out

    def _filled(self, shape, call: ast.Call, list_name: str, depth: int):
        attr = call.func.attr
        arg = call.args[-1]
        added = self.of(arg, depth + 1)
        if attr == "extend":
            added = element_shape(added) if added != ANY else ANY
        return join_shapes(shape, (SEQ, added))

    def _bound_by(self, target: ast.expr, name: str, shape):
        """The shape `target` (a name, or a tuple of targets) gives `name` for a value of `shape`."""
        if isinstance(target, ast.Name):
            return shape if target.id == name else NOTHING
        if isinstance(target, (ast.Tuple, ast.List)):
            if any(isinstance(t, ast.Starred) for t in target.elts):
                return ANY
            out = NOTHING
            for t, s in zip(target.elts, unpacked_shapes(shape, len(target.elts)), strict=True):
                if target_binds(t, name):
                    out = join_shapes(out, self._bound_by(t, name, s))
            return out
        return NOTHING

    def _bindings(self, name: str) -> list[tuple[str, ast.AST, object]] | None:
        """("assign", target, value), ("for", loop, None) and ("fill", call, name) for each
        way the function's own code binds `name` or fills the list it holds; None when it is
        bound some other way (or not at all: a name of an enclosing scope)."""
        if self._bound is None:
            self._bound = all_bindings(self.func)
        out = self._bound.get(name)
        return out if out is not None and any(kind != "fill" for kind, _, _ in out) else None

    # -- reads ------------------------------------------------------------------------------
    def _only_walked(self) -> bool:
        """Every read of a name that may hold a sequence only walks it (or fills a list literal
        it is bound to): nothing the walk cannot see changes what a sequence holds."""
        if self.sound is None:
            self.sound = True  # asked again while deciding: the shapes are read as if it holds
            self.sound = self._reads_sound()
        return self.sound

    def _reads_sound(self) -> bool:
        for node in walk(self.func):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in _REFLECTION:
                return False
        for key, loads in names_by_id(self.func).items():
            if not isinstance(key, tuple):
                continue
            for load in loads:
                if mutable_shape(self.of(load, 0)) and (self._nested(load) or not self._walked(load, key[0])):
                    return False
        return True

    def _walked(self, e: ast.expr, name: str) -> bool:
        """`e` (which may be a sequence) is only walked where it is read."""
        parent = self.parents.get(id(e))
        if isinstance(parent, ast.comprehension) and parent.iter is e:
            return name_targets(parent.target)  # the comprehension's own: their reads are checked
        if isinstance(parent, (ast.For, ast.AsyncFor)) and parent.iter is e:
            return self._checked_names(parent.target, element_shape(self.of(e, 0)))
        if isinstance(parent, ast.Call) and e in parent.args:
            called = self._builtin(parent.func)
            if called == "len":
                return True
            if called in ("enumerate", "zip", "itertools.product", *_WALKERS):
                return self._walked(parent, name)
            # Handed to a fill of a list written here: it is one of its items (or they are),
            # whose reads are those of the list.
            owner = parent.func.value if isinstance(parent.func, ast.Attribute) else None
            return isinstance(owner, ast.Name) and fills_list(parent, owner.id) and self._literal(owner.id)
        if isinstance(parent, ast.Subscript) and parent.value is e and isinstance(parent.ctx, ast.Load):
            return not mutable_shape(self.of(parent, 0)) or self._walked(parent, name)
        if isinstance(parent, ast.Assign) and parent.value is e:
            return all(self._checked_names(t, self.of(e, 0)) for t in parent.targets)
        if isinstance(parent, ast.Attribute) and parent.value is e and isinstance(e, ast.Name):
            call = self.parents.get(id(parent))
            return isinstance(call, ast.Call) and call.func is parent and fills_list(call, e.id) and self._literal(e.id)
        return False

    def _nested(self, e: ast.AST) -> bool:
        """`e` is read in a function, lambda or class nested in the function: a name of its own
        there may share the identifier, so its reads are not told apart from the function's."""
        node = self.parents.get(id(e))
        while node is not None and node is not self.func:
            if isinstance(node, SCOPES):
                return True
            node = self.parents.get(id(node))
        return False

    def _checked_names(self, target: ast.expr, shape) -> bool:
        """`target`, bound to a value of `shape`, binds names of the function: each that may
        get a sequence from it has a shape whose reads are checked (not `ANY`)."""
        if isinstance(target, ast.Name):
            return not mutable_shape(shape) or self._own(target.id, 0) != ANY
        if isinstance(target, (ast.Tuple, ast.List)) and not any(isinstance(t, ast.Starred) for t in target.elts):
            shapes = unpacked_shapes(shape, len(target.elts))
            return all(self._checked_names(t, s) for t, s in zip(target.elts, shapes, strict=True))
        return not mutable_shape(shape)

    def _literal(self, name: str) -> bool:
        """`name` is bound only to list literals (what `append` fills is then what was written)."""
        bindings = self._bindings(name) or []
        assigned = [b for b in bindings if b[0] != "fill"]
        return bool(assigned) and all(
            kind == "assign" and isinstance(target, ast.Name) and isinstance(value, ast.List)
            for kind, target, value in assigned
        )


def _inner(e: ast.AST, gen: ast.comprehension, parents) -> ast.AST | None:
    """The child of `gen` that holds `e`."""
    node = e
    while True:
        parent = parents.get(id(node))
        if parent is None:
            return None
        if parent is gen:
            return node
        node = parent


def _index(e: ast.expr) -> int | None:
    if isinstance(e, ast.Constant) and type(e.value) is int:
        return e.value
    if isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.USub) and isinstance(e.operand, ast.Constant):
        value = e.operand.value
        return -value if type(value) is int else None
    return None


def _bound_in_module(resolver: Resolver, name: str) -> bool:
    scope = resolver.scope
    return name in scope.imports or name in scope.functions or name in scope.classes or bool(scope.assigns.get(name))


__all__ = ["holds_constant"]
