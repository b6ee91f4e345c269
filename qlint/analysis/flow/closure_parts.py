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
called: then nothing is read.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.enclosing_names import binding_table
from qlint.analysis.flow.model_apis import switch_mode
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
_TRAINED = "_qlint_train_switches"
_BOUND = "_qlint_bound_names"
_CALLS = frozenset({ast.Call})
_TRAIN_NODES = frozenset({ast.Call, ast.For, ast.AsyncFor})
_SCOPE_NODES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While, ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
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
    followed = not _handed_on(func, built.call, modules) and not _switch_not_followed(func, built.call, modules)
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


def _train_switches(func: ast.AST) -> dict[str, tuple[tuple[ast.Call, bool], ...]]:
    """The `.train(...)` calls anywhere in `func` switching the module a name holds, or a part
    of it (`model.train()`, `model.model.layers[0].train()`), also through a loop over what a
    name holds (`for p in model.children(): p.train()`: under `p` and `model`), by name; each
    with whether it is called on a chain of attributes and items of the name itself."""
    out: dict[str, list[tuple[ast.Call, bool]]] = {}
    loops: list[ast.For | ast.AsyncFor] = []
    for node in walk_kinds(func, _TRAIN_NODES):
        if isinstance(node, ast.For | ast.AsyncFor):
            loops.append(node)
        elif _trains(node):
            receiver = _root_name(node.func.value)
            if receiver is not None:
                out.setdefault(receiver, []).append((node, _chain(node.func.value, items=True)))
    for loop in loops:
        over = _root_name(loop.iter)
        targets = {n.id for n in ast.walk(loop.target) if isinstance(n, ast.Name)} & out.keys()
        if over is None or not targets:
            continue
        calls = (n for s in loop.body for n in walk_kinds(s, _CALLS))
        # (`for name, p in model.named_children()` too)
        out.setdefault(over, []).extend((n, False) for n in calls if _trains(n) and _root_name(n.func.value) in targets)
    return {name: tuple(found) for name, found in out.items()}


def _switch_not_followed(func: ast.AST, call: ast.AST, names: frozenset[str]) -> bool:
    """A `.train(...)` of one of `names` (or of a part of it) the walk does not hand to the
    wrapper built at `call`. Handed on: one on the names themselves before the construction on
    every path through it (the walk's value there has its mode); an unconditional `.train()`
    after it, a statement of the function's own body on a chain of attributes of the name
    (`held_parts` switches the wrapper with it, and back at a later `.eval()`); and any other
    (in a branch, a loop, a nested function of the function's code aside) when an `.eval()` of
    the name, a statement of the function's own body, follows it before anything reads the
    name the wrapper is bound to."""
    trains = kept_on_node(func, _TRAINED, _train_switches)
    found = [(name, t) for name in names for t in trains.get(name, ())]
    if not found:
        return False
    up = parents(func)
    built_at = _outer_chain(call, up, func)
    if built_at is None:
        return True
    body = func.body
    index = {id(s): i for i, s in enumerate(body)}
    at = index.get(id(built_at[-1]))
    if at is None:
        return True
    for name, (switch, direct) in found:
        chain = _outer_chain(switch, up, func)
        if chain is None:
            return True  # in a function or class written there: it runs when that is called
        where = index.get(id(chain[-1]))
        if where is None:
            return True  # (a decorator's or a default's)
        if where < at or (where == at and _before(switch, call, chain, built_at)):
            if direct:
                continue  # the walk's value for the name at the construction has its mode
        elif where > at and _statement_switch(switch, chain[-1]):
            continue  # `held_parts` follows it
        if not _evaled_after(body, name, where, at, call, up):
            return True
    return False


def _outer_chain(node: ast.AST, up, func: ast.AST) -> list[ast.AST] | None:
    """The nodes above `node` up to the statement of `func`'s own body holding it (the last);
    None when a function, lambda or class written in `func` holds it."""
    chain = []
    parent = up.get(id(node))
    while parent is not None and parent is not func:
        if isinstance(parent, _SCOPE_NODES):
            return None
        chain.append(parent)
        parent = up.get(id(parent))
    return chain if chain and parent is func else None


def _before(switch: ast.AST, call: ast.AST, chain: list[ast.AST], built_at: list[ast.AST]) -> bool:
    """`switch` runs before `call` whenever both run: written before it, in no loop holding both."""
    around = {id(n) for n in built_at}
    if any(id(n) in around and isinstance(n, _LOOPS) for n in chain):
        return False
    return (switch.lineno, switch.col_offset) < (call.lineno, call.col_offset)


def _statement_switch(switch: ast.Call, stmt: ast.stmt) -> bool:
    """`m.train()` (`m.encoder.train()`, `m.train().to(d)`, `m.train(True)`) is the call of the
    statement `stmt` of the function's own body, on a chain of attributes of a name: a switch
    `held_parts` follows."""
    if switch_mode(switch, "train") != "train" or not _chain(switch.func.value, items=False):
        return False
    expr = stmt.value if isinstance(stmt, ast.Expr | ast.Assign) else None
    while isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr is not switch:
        expr = expr.func.value
    return expr is switch


def _evaled_after(body: list[ast.stmt], name: str, where: int, at: int, call: ast.AST, up) -> bool:
    """A statement `name.eval()` of the function's own body after the statement `where`, and no
    read of the name the construction `call` is bound to (`w = W()`) from the construction's
    statement `at` to it: nothing captured the wrapper in between."""
    end = next((i for i in range(where + 1, len(body)) if _evals(body[i], name)), None)
    if end is None:
        return False
    if end < at:
        return True
    stmt = up.get(id(call))
    if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)):
        return False
    bound = stmt.targets[0].id
    return not any(_reads(s, bound) for s in body[at:end])


def _evals(stmt: ast.stmt, name: str) -> bool:
    """`name.eval()` or `name.train(False)`."""
    call = stmt.value if isinstance(stmt, ast.Expr) else None
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute)):
        return False
    receiver, attr = call.func.value, call.func.attr
    if not (isinstance(receiver, ast.Name) and receiver.id == name and attr in ("eval", "train")):
        return False
    return switch_mode(call, attr) == "eval"


def _reads(stmt: ast.stmt, name: str) -> bool:
    return any(isinstance(n.ctx, ast.Load) and n.id == name for n in walk_kinds(stmt, _NAMES))


def _chain(expr: ast.expr, items: bool) -> bool:
    """`net`, `net.body`, with `items` also `net.layers[0]`: a name and parts read off it."""
    while isinstance(expr, ast.Attribute) or (items and isinstance(expr, ast.Subscript)):
        expr = expr.value
    return isinstance(expr, ast.Name)


def _trains(call: ast.Call) -> bool:
    """`.train(...)`, not `.train(False)`."""
    return isinstance(call.func, ast.Attribute) and call.func.attr == "train" and switch_mode(call, "train") != "eval"


def _root_name(expr: ast.expr) -> str | None:
    """`model` for `model.model.layers[0]`, `model.children()`, ..."""
    while isinstance(expr, ast.Attribute | ast.Subscript | ast.Call):
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    return expr.id if isinstance(expr, ast.Name) else None


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
