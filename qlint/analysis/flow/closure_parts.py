"""A class written in a function whose `__init__` takes its modules from that function's names
(issue 14, voyager-compiler `test/test_codegen.py:508`):

    elif args.model == "llm_prefill":
        model = AutoModelForCausalLM.from_pretrained(...)    # transformers: eval mode
        class LlamaWrapper(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.model = model.model                      # the enclosing `model`
                self.lm_head = model.lm_head
            def forward(self, h, ...):
                for layer in self.model.layers: ...
        gm = export_model(LlamaWrapper(), example_args)

`__init__` reads `model` when it runs, at the construction: the value the enclosing function's
walk holds for the name there, on that path (other branches binding `model` are other paths).
So the construction wraps that module as `LlamaWrapper(model)` of a class storing it would, and
`constructed_values.construct` reads it so, with the same guards (`given_modes.keeps_given_modes`:
no mode-dependent module of its own, no switch in `__init__`), when every module read so is in
eval mode on every path; else the construction stays a fresh module in train mode, reported
with the message it had.

Read only where it is sure: the construction is in the function the class is written in (a
class body of undecorated methods only, no function or lambda written in them); every name a
method reads that this function binds is not bound by the method too (a comprehension's
target), nor declared `global`/`nonlocal` anywhere in the function; the walk holds a value
for each name `__init__` reads, a module or a value of a call or attribute it does not read
(`outputs.past_key_values`, counted as holding nothing found, as an unread argument is), not
a container written there, a parameter of the function or a graph; no module so read handed
bare to a call (`calibrate(model)`: a helper of unknown code may switch it), run through
`.apply(...)` or bound to another name on a path through the construction (the function's
code but the other arm of each `if` holding it; `evaluated_wrappers` asks the same). Another
method of the class (`forward`) reads such a name when it runs, at the capture: only for its
truth (`if args.flag:`), or a name the function binds once, which then holds the object it
held at the construction (`return net.body(x)` runs the very module `__init__` would have
stored), read as `__init__`'s reads are. Else nothing is read: the construction is a fresh
module in train mode, as before.

The class holds the parts its methods read (`self.body = net.body`: `net`'s `body`), the very
objects, so a `.train(...)` of such a name, or of a part of it, reaches them (lane
closuremode): the mode the parts are in at the capture is what the last switch on every path
left. One before the construction, on the name or a chain of its attributes and items, and in
no loop holding the construction, is in the value the walk holds there. One after it that is a
statement of the function's own body (`net.train()`, `net.body.train()`) is handed to the
wrapper by `held_parts`, which is given what the class holds (`HeldParts.hold`), and undone by
a later `net.eval()`. Any other (in a branch, a loop, through a loop over `net.children()`)
must be followed by a statement `net.eval()` of the function's own body before anything reads
the name the construction is bound to (`w = W()`: nothing captured `w` in between); one in a
function or class written in the function (a method of the class too) runs when that is
called: then nothing is read (`closure_part_switches` tells which switches are followed).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.closure_part_switches import switch_not_followed
from qlint.analysis.flow.enclosing_names import binding_table
from qlint.analysis.flow.model_values import ATTRIBUTE, CALL, UNKNOWN
from qlint.analysis.flow.stored_values import object_names
from qlint.analysis.names.scope import own_init, parameter_args
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import parents, walk_kinds

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_NAMES = frozenset({ast.Name})
_DECLARED = frozenset({ast.Global, ast.Nonlocal})
_SCOPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda})
_KEPT = "_qlint_closure_reads"
_BOUND = "_qlint_bound_names"
_READ_AS_NOTHING = frozenset({UNKNOWN, CALL, ATTRIBUTE})
_LITERALS = (ast.List, ast.Tuple, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp)
# Where a name's value is read only for its truth.
_TESTS = (ast.If, ast.While, ast.IfExp, ast.Assert)


def closure_objects(sem, built, env, is_module) -> tuple[list, list, bool, bool] | None:
    """The objects the walk holds for the names of the walked function that the methods of
    `built`'s class (written in that function) read, the paths (object, attribute names) of
    what the class holds of each module among them, whether a method other than `__init__`
    reads one of these modules (`forward` running `net.body`), and whether their modes there
    are the walk's (no switch or helper it does not follow: else read nothing); None when the
    class is not such a class, or when what it reads is not known (see the module's
    docstring). `is_module`:
    `constructed_values.is_module`, which imports this module."""
    cls = built.cls
    func = sem.walk.func
    if cls is None or cls.summarised or not isinstance(func, _FUNCTIONS):
        return None
    node = cls.node
    if sem.classes is None or sem.classes.get(node.name) is not node:
        return None  # not a class written in this function (or two of that name)
    reads = kept_on_node(node, _KEPT, lambda n: _closure_reads(n, func))
    if reads is None:
        return None
    out = []
    for name in reads:
        obj = env.vars.get(name)
        if obj is None or obj.is_graph or not (is_module(obj, env) or _read_as_nothing(obj)):
            return None  # a binding the walk holds no value for: anything may be held
        out.append(obj)
    modules = frozenset(n for n, o in zip(reads, out, strict=True) if is_module(o, env))
    if not modules:
        return out, [], False, True
    # Handed to a helper or aliased on a path through the construction, or `model.train()`
    # where the walk does not hand it to the wrapper: not followed.
    followed = not _handed_on(func, built.call, modules) and not switch_not_followed(func, built.call, modules)
    paths = [(o, steps) for n, o in zip(reads, out, strict=True) if n in modules for steps in reads[n][0]]
    return out, paths, any(reads[n][1] for n in modules), followed


def runs_closure(sem, built) -> bool:
    """A method of `built`'s class (written in the walked function) other than `__init__` runs,
    stores or hands on a name the function binds once (`return net.body(x)`)."""
    func = sem.walk.func
    node = built.cls.node
    if sem.classes is None or sem.classes.get(node.name) is not node or not isinstance(func, _FUNCTIONS):
        return False
    reads = kept_on_node(node, _KEPT, lambda n: _closure_reads(n, func))
    return reads is not None and any(late for _, late in reads.values())


def _handed_on(func: ast.AST, call: ast.AST, names: frozenset[str]) -> bool:
    """One of `names` is handed bare to a call (`calibrate(inner)`), has `.apply(...)` run on it,
    or is bound to another name (`alias = inner`) in a statement on a path through `call`: the
    function's code but the other arm of each `if` holding `call`."""
    up = parents(func)
    skipped: set[int] = set()
    child, parent = call, up.get(id(call))
    while parent is not None and parent is not func:
        if isinstance(parent, ast.If):
            other = parent.orelse if any(child is s for s in parent.body) else parent.body
            skipped.update(id(s) for s in other if child is not s)
        child, parent = parent, up.get(id(parent))
    stack = list(func.body)
    while stack:
        node = stack.pop()
        if id(node) in skipped:
            continue
        if isinstance(node, ast.Call):
            handed = [*node.args, *(k.value for k in node.keywords)]
            if any(_bare(a, names) for a in handed):
                return True
            f = node.func
            if isinstance(f, ast.Attribute) and f.attr == "apply" and _bare(f.value, names):
                return True
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and _aliased(node.value, names):
            return True
        stack.extend(ast.iter_child_nodes(node))
    return False


def _aliased(value: ast.expr | None, names: frozenset[str]) -> bool:
    """`alias = inner` (or `[inner]`, `a or inner`): not a value read off it (`inner.cfg`), which
    is another object, nor a call's result."""
    if value is None or isinstance(value, ast.Attribute | ast.Subscript | ast.Call):
        return False
    return any(n.id in names for n in object_names(value))


def _bare(expr: ast.expr, names: frozenset[str]) -> bool:
    if isinstance(expr, ast.Starred):
        expr = expr.value
    return isinstance(expr, ast.Name) and expr.id in names


def _read_as_nothing(obj) -> bool:
    """Not a module, but a value of a call or attribute the walk does not read
    (`outputs.past_key_values`), which a wrapper's reading counts as holding nothing found, as
    for an argument (`given_modes`). Not a parameter of the function (its callers' module), a
    container written there (`[Net()]`: the walk knows what it holds, and a module in it is
    not wrapped), or another part of a construction."""
    origins = obj.origins
    return bool(origins) and all(o.kind in _READ_AS_NOTHING and not isinstance(o.node, _LITERALS) for o in origins)


def _closure_reads(cls: ast.ClassDef, func: ast.AST) -> dict[str, tuple[tuple[tuple[str, ...], ...], bool]] | None:
    """The names of `func` that `cls`'s methods read, sorted, each with the attribute names read
    off it (`self.body = net.body`: `("body",)`; `net(x)`: `()`) and whether a method other
    than `__init__` reads it (at the capture); None when where a name is
    bound is not known (`global`, `nonlocal`, a comprehension's target beside a name of
    `func`), when a method other than `__init__` runs, stores or hands on a name `func` binds
    more than once (it reads it when it runs, at the capture: then maybe another object;
    reading it only for its truth, `if args.flag:`, is fine), when the class body holds more
    than undecorated methods (a class attribute, a function or lambda written in a method:
    names read at other times), or when `cls` has no `__init__` of its own."""
    init = own_init(cls)
    if init is None or cls.decorator_list or cls.keywords:
        return None
    outer = kept_on_node(func, _BOUND, _bound_names)
    params = {a.arg for m in cls.body if isinstance(m, _FUNCTIONS) for a in parameter_args(m)}
    if outer.isdisjoint(n.id for n in walk_kinds(cls, _NAMES) if n.id not in params):
        return {}  # reads no name of the function (most classes written in tests): none below can
    if any(not isinstance(b, ast.Name | ast.Attribute) or _root(b) in outer for b in cls.bases):
        return None  # a base the function binds: what it is was not read
    declared = {n for d in walk_kinds(func, _DECLARED) for n in d.names}
    found: dict[str, set[tuple[str, ...]]] = {}
    late: set[str] = set()
    bindings = None
    for method in cls.body:
        if isinstance(method, ast.Expr) and isinstance(method.value, ast.Constant):
            continue  # the docstring
        if not isinstance(method, _FUNCTIONS) or method.decorator_list:
            return None
        if walk_kinds(method, _SCOPES) != [method]:
            return None
        up = parents(method)
        own = binding_table(method)
        for name in walk_kinds(method, _NAMES):
            if not isinstance(name.ctx, ast.Load):
                continue
            bound = own.get(name.id, ())
            if any(_own_binding(b, up) for b in bound):
                continue  # a parameter or a local of the method
            if name.id not in outer:
                continue  # the module's (or an outer function's): read as any construction reads it
            if bound or name.id in declared:
                return None  # a comprehension's target beside it, or `global`/`nonlocal`
            if method is not init and _truth_only(name, up):
                continue
            if method is not init:
                bindings = binding_table(func) if bindings is None else bindings
                if len(bindings.get(name.id, ())) != 1:
                    return None  # read at the capture: maybe another object than at the construction
            found.setdefault(name.id, set()).add(_steps(name, up))
            if method is not init:
                late.add(name.id)
    return {name: (tuple(sorted(found[name])), name in late) for name in sorted(found)}


def _steps(name: ast.Name, up) -> tuple[str, ...]:
    """The attribute names read off `name` (`net.body.conv`: `("body", "conv")`), up to a
    method called (`net.body.eval()`: `("body",)`)."""
    steps = []
    node: ast.AST = name
    parent = up.get(id(node))
    while isinstance(parent, ast.Attribute) and parent.value is node:
        above = up.get(id(parent))
        if isinstance(above, ast.Call) and above.func is parent:
            break
        steps.append(parent.attr)
        node, parent = parent, above
    return tuple(steps)


def _bound_names(func: ast.AST) -> frozenset[str]:
    """The names `func` binds (kept on it: asked for each class written there)."""
    return frozenset(name for name in binding_table(func) if name is not None)


def _root(expr: ast.expr) -> str:
    while isinstance(expr, ast.Attribute):
        expr = expr.value
    return expr.id if isinstance(expr, ast.Name) else ""


def _own_binding(node: ast.AST, up) -> bool:
    """A binding of the method's own scope: a parameter, or a target not of a comprehension."""
    if isinstance(node, ast.arg):
        return True
    while (parent := up.get(id(node))) is not None and not isinstance(parent, ast.stmt):
        if isinstance(parent, ast.comprehension):
            return False
        node = parent
    return True


def _truth_only(name: ast.Name, up) -> bool:
    """`name` (or `name.attr...`) is read only as the test of an `if`/`while`, through `not`,
    `and`/`or` or a comparison."""
    node: ast.AST = name
    parent = up.get(id(node))
    while isinstance(parent, ast.Attribute) and parent.value is node:
        node, parent = parent, up.get(id(parent))
    while True:
        if isinstance(parent, _TESTS):
            return parent.test is node
        if isinstance(parent, ast.Compare):
            return True  # a truth of its own, whatever it compares
        if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
            return True
        if isinstance(parent, ast.BoolOp):
            node, parent = parent, up.get(id(parent))  # `a or b` is one of its operands' values
            continue
        return False


__all__ = ["closure_objects", "runs_closure"]
