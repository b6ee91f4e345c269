"""A bound method handed to a construction whose class's `__init__` calls it only on models it
builds itself, none of which holds anything mode-dependent (issue 14, item 7).

ExecuTorch's Qualcomm multi-context test writes

    module = CompositeDelegateModule(compiler_specs=..., quantize_method=self.get_qdq_module)

and `CompositeDelegateModule.__init__` (tests/models.py) does

    self.modules = [Conv2dSequential(), Conv2dSequential(), Add(), Relu()]
    self.sample_inputs = [(torch.randn([1, 1, 3, 3]),), ...]
    self.lowered_modules = []
    for module, sample_input in zip(self.modules, self.sample_inputs):
        if quantize_method:
            module = quantize_method(module, sample_input)
        ...

The method is then called with those models, and with tuples of tensors: whatever the
method captures, it is handed nothing whose mode changes a graph. The reference was no call
the flow reads, so the method's callers were unknown (`method_references`).

What is followed is strict, so that it holds on every path:

- the construction names a class of the project (through the module's imports, `import *`
  included) whose only base is `torch.nn.Module` and which defines `__init__`; the method is
  one of its arguments, bound to a parameter by keyword or position (no `*` or `**`);
- in `__init__`, the parameter is only tested (`if quantize_method:`) or called, never
  rebound, and not read in a nested function, lambda or comprehension;
- each call passes, by position only, targets of a `for` loop of `__init__`'s own statements
  over `zip(self.a, self.b, ...)` (or `self.a`), whose target is not rebound before the call
  in the body, which reads no `self.<attr>` the loop walks;
- each `self.<attr>` walked is assigned once in `__init__`, by a statement of its own before
  the loop, to a list or tuple literal; the statements between it and the loop assign other
  attributes values that do not name `self`: nothing can change what the list holds;
- each element is a construction, with constant arguments, of a class whose content is known
  and holds nothing mode-dependent (`class_contents`), or a tuple of constants and tensors
  made by `torch` (`torch.randn(...)`).

Anything else: the reference stays one the flow does not read. (A subclass's module that
hands the method on other than as a keyword argument is decided from its text before it is
parsed, `subclass_self_calls.taken_as_value`: its callers stay unknown.)
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_classes import ClassIndex
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import ClassScope, ModuleScope, own_init, parameter_at
from qlint.analysis.tree_walk import parents, walk

_MODULE_BASES = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module"})
# `torch` functions that make a tensor from numbers and shapes: no module, no mode.
_TENSORS = frozenset(
    {"randn", "rand", "randint", "zeros", "ones", "tensor", "arange", "full", "empty", "linspace", "eye"}
)
# Names through which code reaches the instance without naming it.
_REACHES_SELF = frozenset({"super", "locals", "vars", "globals", "eval", "exec"})
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda, ast.ListComp, ast.SetComp)
_NESTED += (ast.DictComp, ast.GeneratorExp)


def mode_free_relay(other, body, node: ast.Attribute, resolver: Resolver) -> bool:
    """`node` (`self.get_qdq_module`, in a body of the module `other`) is an argument of a
    construction whose class's `__init__` calls it only with models that hold nothing
    mode-dependent, and tensors."""
    found = _construction_argument(body.node, node)
    if found is None:
        return False
    call, position, keyword = found
    placed = _project_class(other, call.func, resolver)
    if placed is None:
        return False
    scope, cls = placed
    init = own_init(cls.node)
    if init is None or not _plain_module(cls, Resolver(scope, other.project, other.optable)):
        return False
    param = parameter_at(init.args, 1, position, keyword)  # after `self`
    if param is None:
        return False
    return _calls_mode_free(other, scope, init, param)


def _construction_argument(root: ast.AST, node: ast.expr) -> tuple[ast.Call, int | None, str | None] | None:
    """(the call, the position or the keyword) `node` is passed at, directly."""
    parent = parents(root).get(id(node))
    if isinstance(parent, ast.keyword) and parent.arg is not None:
        call = parents(root).get(id(parent))
        return (call, None, parent.arg) if isinstance(call, ast.Call) else None
    if isinstance(parent, ast.Call) and parent.func is not node and any(a is node for a in parent.args):
        if any(isinstance(a, ast.Starred) for a in parent.args):
            return None
        return parent, next(i for i, a in enumerate(parent.args) if a is node), None
    return None


def _project_class(other, func: ast.expr, resolver: Resolver) -> tuple[ModuleScope, ClassScope] | None:
    qual = resolver.qualname(func) if dotted_parts(func) else None
    if not qual or "." not in qual:
        return None
    module, _, name = qual.rpartition(".")
    scope = other.project.module_scope(module, other.path)
    if scope is None or name in scope.imports or scope.assigns.get(name):
        return None
    cls = scope.classes.get(name)
    return (scope, cls) if cls is not None else None


def _plain_module(cls: ClassScope, resolver: Resolver) -> bool:
    """A class of `torch.nn.Module` alone, without keywords (a metaclass)."""
    node = cls.node
    return (
        len(node.bases) == 1
        and not node.keywords
        and not node.decorator_list
        and resolver.qualname(node.bases[0]) in _MODULE_BASES
    )


def _calls_mode_free(other, scope: ModuleScope, init: ast.FunctionDef, param: str) -> bool:
    """Every use of `param` in `__init__` tests it or calls it with items of lists `__init__`
    wrote that hold nothing mode-dependent; at least one calls it."""
    if not init.args.args or any(isinstance(n, (ast.Global, ast.Nonlocal)) for n in walk(init)):
        return False
    me = init.args.args[0].arg
    tree_parents = parents(init)
    called = False
    for name in (n for n in walk(init) if isinstance(n, ast.Name) and n.id == param):
        if not isinstance(name.ctx, ast.Load) or _nested(name, init, tree_parents):
            return False
        parent = tree_parents.get(id(name))
        if isinstance(parent, ast.Call) and parent.func is name:
            if not _relayed_call(other, scope, init, me, parent, tree_parents):
                return False
            called = True
        elif not _tested(name, tree_parents):
            return False
    return called


def _nested(node: ast.AST, init: ast.AST, tree_parents) -> bool:
    parent = tree_parents.get(id(node))
    while parent is not None and parent is not init:
        if isinstance(parent, _NESTED):
            return True
        parent = tree_parents.get(id(parent))
    return False


def _tested(name: ast.Name, tree_parents) -> bool:
    """`if p:`, `p is None`, `not p`: the value is only tested."""
    parent = tree_parents.get(id(name))
    if isinstance(parent, (ast.If, ast.IfExp, ast.While)) and parent.test is name:
        return True
    return isinstance(parent, ast.Compare) or (isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not))


def _relayed_call(other, scope: ModuleScope, init: ast.FunctionDef, me: str, call: ast.Call, tree_parents) -> bool:
    """`call` passes, by position, targets of a loop of `__init__`'s own statements over lists
    of `self` it wrote, each holding models with nothing mode-dependent, or tensors."""
    if call.keywords or not call.args:
        return False
    loop, head, before = _enclosing_loop(init, call, tree_parents)
    if loop is None:
        return False
    columns = _columns(loop, me)
    if columns is None or not all(isinstance(a, ast.Name) and a.id in columns for a in call.args):
        return False
    # The call reads the loop's items as they were built: the statement's value is the call,
    # and what runs before it in the iteration (statements, an `if`'s test) names no target
    # (so it neither rebinds one nor gives the model a part) and binds nothing by `:=`.
    if any(isinstance(n, ast.NamedExpr) for n in walk(head)):
        return False
    if any(isinstance(n, ast.NamedExpr) or (isinstance(n, ast.Name) and n.id in columns) for n in before):
        return False
    # No method of `self` runs in the body, and it reads no list the loop walks: nothing can
    # change what those hold while the loop walks them.
    if not all(_other_attr_only(s, me, set(columns.values())) for s in loop.body):
        return False
    at = init.body.index(loop)
    return all(_list_mode_free(other, scope, init, me, attr, at) for attr in set(columns.values()))


def _enclosing_loop(init: ast.FunctionDef, call: ast.Call, tree_parents):
    """(the `for` statement of `__init__`'s own body holding `call`, the statement of its body
    whose value is `call`, the nodes that run before it in an iteration): that statement is
    one of the loop's body, or the first of an `if` there (whose test runs before it).
    (None, None, None) otherwise."""
    node: ast.AST = call
    chain = []
    while node is not None and node is not init:
        chain.append(node)
        node = tree_parents.get(id(node))
    loop = next((n for n in chain if isinstance(n, ast.For)), None)
    if loop is None or not any(loop is s for s in init.body) or loop.orelse:
        return None, None, None
    inner = chain[chain.index(loop) - 1]
    at = next((i for i, s in enumerate(loop.body) if s is inner), None)
    if at is None:
        return None, None, None
    before = [n for s in loop.body[:at] for n in walk(s)]
    head = inner
    if isinstance(inner, ast.If) and inner.body and not inner.orelse:
        head = inner.body[0]
        before += walk(inner.test)
    if not any(n is call for n in _value_nodes(head)):
        return None, None, None
    return loop, head, before


def _value_nodes(stmt: ast.stmt) -> list[ast.AST]:
    """The nodes of the value a simple statement evaluates first (`x = call(...)`, `call(...)`)."""
    if isinstance(stmt, (ast.Assign, ast.Expr)) and isinstance(stmt.value, ast.Call):
        return [stmt.value]
    return []


def _columns(loop: ast.For, me: str) -> dict[str, str] | None:
    """{target name: the `self` attribute whose items it takes} of `for a, b in zip(self.x, self.y)`
    or `for a in self.x`."""
    it, target = loop.iter, loop.target
    if _self_attr(it, me) is not None and isinstance(target, ast.Name):
        return {target.id: _self_attr(it, me)}
    if not (isinstance(it, ast.Call) and isinstance(it.func, ast.Name) and it.func.id == "zip" and not it.keywords):
        return None
    attrs = [_self_attr(a, me) for a in it.args]
    if None in attrs or not isinstance(target, ast.Tuple) or len(target.elts) != len(attrs):
        return None
    if not all(isinstance(t, ast.Name) for t in target.elts):
        return None
    return {t.id: a for t, a in zip(target.elts, attrs, strict=True)}


def _self_attr(e: ast.expr, me: str) -> str | None:
    if isinstance(e, ast.Attribute) and isinstance(e.value, ast.Name) and e.value.id == me:
        return e.attr
    return None


def _other_attr_only(node: ast.AST, me: str, attrs: set[str]) -> bool:
    """Every `self` under `node` reads an attribute other than `attrs`, and calls no method of
    it (`self.lowered.append(x)` runs the list's); no `super()`, `locals()` or their kin."""
    tree_parents = parents(node)
    for n in walk(node):
        if not isinstance(n, ast.Name):
            continue
        if n.id in _REACHES_SELF:
            return False
        if n.id != me:
            continue
        parent = tree_parents.get(id(n))
        if not isinstance(parent, ast.Attribute) or parent.attr in attrs:
            return False
        if isinstance(tree_parents.get(id(parent)), ast.Call) and tree_parents.get(id(parent)).func is parent:
            return False  # `self.method()`
    return True


def _list_mode_free(other, scope: ModuleScope, init: ast.FunctionDef, me: str, attr: str, at: int) -> bool:
    """`self.<attr>` is assigned once in `__init__`, by a statement before the loop (at `at`)
    to a list or tuple literal of harmless elements, and nothing between can change it."""
    stores = [
        n
        for n in walk(init)
        if isinstance(n, ast.Attribute) and _self_attr(n, me) == attr and not isinstance(n.ctx, ast.Load)
    ]
    if len(stores) != 1:
        return False
    index = next((i for i, s in enumerate(init.body[:at]) if _assigns(s, me, attr)), None)
    if index is None:
        return False
    value = init.body[index].value
    if not isinstance(value, (ast.List, ast.Tuple)):
        return False
    for between in init.body[index + 1 : at]:
        # Another attribute, from values that do not name `self` (no method of it runs).
        if not (isinstance(between, ast.Assign) and len(between.targets) == 1):
            return False
        target = between.targets[0]
        if _self_attr(target, me) is None or _self_attr(target, me) == attr:
            return False
        if any(isinstance(n, ast.Name) and n.id in (me, *_REACHES_SELF) for n in walk(between.value)):
            return False
    resolver = Resolver(scope, other.project, other.optable)
    return all(_harmless_element(other, scope, resolver, e) for e in value.elts)


def _assigns(stmt: ast.stmt, me: str, attr: str) -> bool:
    return isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and _self_attr(stmt.targets[0], me) == attr


def _harmless_element(other, scope: ModuleScope, resolver: Resolver, e: ast.expr) -> bool:
    if isinstance(e, ast.Tuple):
        return all(_tensor_or_constant(x, resolver) for x in e.elts)
    if not isinstance(e, ast.Call) or not all(_constant(a) for a in [*e.args, *(k.value for k in e.keywords)]):
        return False
    if any(k.arg is None for k in e.keywords):
        return False
    index = ClassIndex(other.project, other.path, getattr(other.project, "checks", None))
    cls = index.resolve(e.func, resolver, {})
    if cls is None:
        return False
    content = index.contents.content(e, cls, resolver, ".".join(dotted_parts(e.func) or ()))
    return content.complete and not content.dependent


def _tensor_or_constant(e: ast.expr, resolver: Resolver) -> bool:
    if _constant(e):
        return True
    if not isinstance(e, ast.Call) or any(k.arg is None for k in e.keywords):
        return False
    qual = resolver.qualname(e.func) or ""
    if not (qual.startswith("torch.") and qual.count(".") == 1 and qual[6:] in _TENSORS):
        return False
    return all(_constant(a) or _dtype(a, resolver) for a in [*e.args, *(k.value for k in e.keywords)])


def _dtype(e: ast.expr, resolver: Resolver) -> bool:
    """`torch.float32`, `torch.int64`: a dtype."""
    qual = resolver.qualname(e) or ""
    return qual.startswith("torch.") and qual.count(".") == 1 and qual[6:].islower() and qual[6:] not in _TENSORS


def _constant(e: ast.expr) -> bool:
    if isinstance(e, (ast.Tuple, ast.List)):
        return all(_constant(x) for x in e.elts)
    if isinstance(e, ast.UnaryOp):
        return _constant(e.operand)
    return isinstance(e, ast.Constant)


__all__ = ["mode_free_relay"]
