"""Whether an attribute of a model a caller switched to eval is still in eval mode at a call,
and whether the helper that captures it left it as it came.

A helper that captures a part of its parameter (`export(model.model, ...)`, the base model of a
Transformers `...ForCausalLM`; `export(net.backbone, ...)`) is right when its callers hand it a
model they switched with `.eval()`: `nn.Module.train(False)` sets every registered submodule,
and a module stored as an attribute of a module is registered. What can undo that is giving the
captured part (or a module on the way to it, or one inside it) a new module or switching it back
(`model.model = Net()`, `setattr(model, "model", ...)`, `model.add_module("model", ...)`,
`model.apply(fn)`, `model.model.train()`), or handing it to a call that may (`freeze(model.model)`).
The part is followed by its attribute names: `model.pt2e_config = ...` or `model.head.train()`
leaves `model.model` alone, as they do for registered submodules (a class whose `__getattr__`
forwards `model` to another attribute is not seen through). A name bound to a part is followed as
that part; one bound to anything else taken from the model (`m.get_submodule(...)`, a loop over
`m.children()`) may be any part.

On the caller's side the body is read as a whole, not in order: any of those anywhere in it,
before or after the switch, keeps the part's mode unknown. On the helper's side only what can run
before the capture counts (earlier in the body, in a loop around it, or in a nested function),
so the helper may store the prepared graph back (`model.model = prepare_pt2e(...)`) afterwards.

Only an explicit switch of the object passed counts (`model.eval()`, `model.train(False)`,
also chained, as in `model.eval().to(device)`): a mode known some other way (a wrapper's, a
method's that switches `self`) is not read back to the object it was set on.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.kept_stores import kept_stores
from qlint.analysis.flow.model_torch_nn import MODE_KEEPING_METHODS
from qlint.analysis.flow.model_values import ATTR, ModeFact
from qlint.analysis.flow.read_only_params import LOOKERS
from qlint.analysis.names.scope import parameter_args

# Methods that give a module parts or run code on each of them (which may switch them); those
# whose first argument, when a constant, names the part they set.
_REBUILDS = frozenset({"add_module", "register_module", "set_submodule", "apply", "__setattr__", "__delattr__"})
PART_SETTERS = frozenset({"add_module", "register_module", "set_submodule", "__setattr__", "__delattr__"})
_SETTERS = frozenset({"setattr", "delattr"})
# Methods that return the module they are called on: a name bound to the result is the same part.
_SAME = MODE_KEEPING_METHODS | {"eval"}
# Calls that take a part without changing it (the capture itself, a copy).
_TAKERS = frozenset({"export", "export_for_training", "draft_export", "capture_pre_autograd_graph", "deepcopy"})
_UNKNOWN = None  # the path of a name bound to some part of the model, which one not known
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)


def eval_switched_part(
    fact: ModeFact,
    path: tuple | None,
    argument: ast.expr | None,
    body: ast.AST | None,
    sites: list = (),
    kept: dict | None = None,
) -> bool:
    """`fact` (what a call passes as `argument`) is a model in eval mode from an explicit
    switch, `path` only takes attributes of it, and nothing in `body` (the caller's function,
    or module) gives that part new modules, switches it back, or hands it to a call, nor does a
    project function `body` hands the whole model to (`sites`: the caller's `CallSite`s).
    `kept`: the body's calls that hand back what they are given in its mode (`kept_calls`)."""
    if not path or any(step[0] != ATTR for step in path) or fact.state != "eval":
        return False
    if not _explicit_switch(fact.node) or argument is None or body is None:
        return False
    if argument is fact.node:
        return True  # `helper(Net().eval())`: no name holds it for anything else to change
    if not isinstance(argument, ast.Name) or not _switches_name(fact.node, argument.id, body):
        return False
    attrs = tuple(step[1] for step in path)
    nodes = list(ast.walk(body))
    held = _aliases(nodes, argument.id, attrs)
    if _changes_part(nodes, held, attrs, (), False, kept, body):
        return False
    return not any(_helper_changes(site, held, attrs) for site in sites)


def _helper_changes(site, held: dict[str, tuple | None], path: tuple) -> bool:
    """A project function handed the model (or a name holding it) whose body changes the part
    of its parameter the path takes (`model.model = torch.compile(model.model)`). What that
    function hands on in turn is not followed, as for a call of a library."""
    callee = site.callee
    if not isinstance(callee, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    params = [a.arg for a in parameter_args(callee, star=False)]
    for index, expr in site.exprs.items():
        found = _chain(expr, held) if isinstance(expr, ast.Name) else False
        if found is False or index >= len(params):
            continue
        rest = path[len(found) :] if found is not _UNKNOWN and _overlaps(found, path) else None
        if found is not _UNKNOWN and rest is None:
            continue  # a part off the way (`setup(model.config)`)
        if rest is None or not rest:
            return True  # some part, or the captured part itself: it may be changed in full
        if not changes_parts(callee, params[index], site.kept):
            continue  # it leaves every part of what it is handed as it came
        nodes = list(ast.walk(callee))
        kept = partial(site.kept, site.itself)
        if _changes_part(nodes, _aliases(nodes, params[index], rest), rest, (), True, kept, callee):
            return True
    return False


def partial(kept: dict | None, itself) -> dict | None:
    """`kept` less a body's calls of itself, for judging what it does to one part: applied to
    another part, the body's changes to the rest of that one may reach this."""
    if not kept or not itself:
        return kept
    return {k: v for k, v in kept.items() if k not in itself}


def changes_parts(func: ast.AST, name: str, kept: dict | None) -> bool:
    """Something in `func` may give parameter `name` (or any part of it) new modules of
    another mode, switch it, or hand a part of it to a call that may (`kept`: its calls that
    hand back what they are given in its mode)."""
    nodes = list(ast.walk(func))
    return _changes_part(nodes, _aliases(nodes, name, ()), (), (), True, kept, func, whole=True)


def kept_until(
    func: ast.AST, name: str, path: tuple, capture: ast.AST, sites: list = (), kept: dict | None = None
) -> bool:
    """The part of parameter `name` that `path` (attributes only) takes is not given new
    modules, switched, nor handed to a call by anything in `func` that can run before
    `capture`, nor by a project function handed the whole model there (`sites`: `func`'s
    `CallSite`s; `kept`: as for `eval_switched_part`)."""
    if not path or any(step[0] != ATTR for step in path):
        return False
    attrs = tuple(step[1] for step in path)
    nodes = list(ast.walk(func))
    before = _before(nodes, func, capture)
    held = _aliases(nodes, name, attrs)
    if _changes_part(before, held, attrs, (capture,), True, kept, func):
        return False
    earlier = {id(n) for n in before}
    return not any(_helper_changes(site, held, attrs) for site in sites if id(site.call) in earlier)


def _before(nodes: list[ast.AST], func: ast.AST, capture: ast.AST) -> list[ast.AST]:
    """The nodes of `func` (`nodes`: its walk) that may run before `capture`: earlier ones,
    those of a loop holding it, and those of nested functions and classes (which may be called
    at any time)."""
    at = (capture.lineno, capture.col_offset)
    inside: set[int] = set()
    for node in nodes:
        if node is not func and (
            isinstance(node, _SCOPES) or (isinstance(node, _LOOPS) and any(n is capture for n in ast.walk(node)))
        ):
            inside.update(id(n) for n in ast.walk(node))
    return [
        n
        for n in nodes
        if n is not capture and hasattr(n, "lineno") and (id(n) in inside or (n.lineno, n.col_offset) < at)
    ]


def _switches_name(switch: ast.Call, name: str, body: ast.AST) -> bool:
    """The switch is of the object `name` holds, not of one a bundle `name` holds was given:
    `name.eval()`, or `name = <the switch>` or a method chain on it (`.eval().to(device)`)."""
    receiver = switch.func.value
    if isinstance(receiver, ast.Name) and receiver.id == name:
        return True
    for node in ast.walk(body):
        if isinstance(node, ast.Assign) and any(isinstance(t, ast.Name) and t.id == name for t in node.targets):
            value = node.value
            while isinstance(value, ast.Call) and value is not switch and isinstance(value.func, ast.Attribute):
                value = value.func.value
            if value is switch:
                return True
    return False


def _explicit_switch(node: ast.AST | None) -> bool:
    """`m.eval()` or `m.train(False)`."""
    if not isinstance(node, ast.Call) or not isinstance(node.func, ast.Attribute) or node.keywords:
        return False
    if node.func.attr == "eval":
        return not node.args
    if node.func.attr == "train" and len(node.args) == 1:
        arg = node.args[0]
        return isinstance(arg, ast.Constant) and arg.value is False
    return False


def _aliases(nodes: list[ast.AST], name: str, part: tuple) -> dict[str, tuple | None]:
    """The names holding the model or a part of it, each with the attributes it takes from the
    model (`_UNKNOWN`: some part), read in a few rounds so that an alias of an alias counts.
    What is taken from a part off the way to `part` (`model.config`) is left out."""
    held: dict[str, tuple | None] = {name: ()}
    for _ in range(3):
        before = dict(held)
        for node in nodes:
            if isinstance(node, (ast.For, ast.AsyncFor, ast.comprehension)):
                if _reaches(node.iter, held, part):
                    for bound in _names(node.target):
                        held[bound] = _UNKNOWN  # an item of the model: any of its parts
            elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.NamedExpr)) and node.value is not None:
                path = _chain(node.value, held, follow=True)
                if path is _UNKNOWN and not _reaches(node.value, held, part):
                    continue  # `qdtype = model.config.get("dtype")`: nothing on the way to the part
                if path is False:
                    continue
                for target in node.targets if isinstance(node, ast.Assign) else [node.target]:
                    for bound in _names(target):
                        if bound == name:
                            continue  # `model = model.eval().to(device)` is the model itself
                        plain = isinstance(target, ast.Name) and held.get(bound, path) == path
                        held[bound] = path if plain else _UNKNOWN
        if held == before:
            break
    return held


def _reaches(expr: ast.AST, held: dict[str, tuple | None], part: tuple) -> bool:
    """`expr` is read from the model through the part, a module on the way to it, or one in it
    (`model.children()`, `model.model.layers[0]`): the attributes it takes before its first call
    or subscript (less the method called) overlap the part's; `model.config.get(...)` does not."""
    steps: list[str | ast.AST] = []  # from the outside in; a node: a call or a subscript
    while isinstance(expr, (ast.Attribute, ast.Call, ast.Subscript)):
        steps.append(expr.attr if isinstance(expr, ast.Attribute) else expr)
        expr = expr.func if isinstance(expr, ast.Call) else expr.value
    if not isinstance(expr, ast.Name) or expr.id not in held:
        return False
    steps.reverse()
    attrs: list[str] = []
    for i, step in enumerate(steps):
        after = steps[i + 1] if i + 1 < len(steps) else None
        if not isinstance(step, str) or isinstance(after, ast.Call):
            break  # a call or subscript, or the method a call calls
        attrs.append(step)
    base = held[expr.id]
    return _overlaps(base if base is _UNKNOWN else (*base, *attrs), part)


def _chain(expr: ast.AST, held: dict[str, tuple | None], follow: bool = False):
    """The attributes `expr` takes from the model (`_UNKNOWN`: some part of it), or False when
    it is not read from a name in `held`. With `follow`, also through calls and subscripts:
    a method returning its module (`.to(device)`) keeps the part; any other is some part."""
    attrs: list[str] = []
    known = True
    while True:
        if isinstance(expr, ast.Name):
            if expr.id not in held:
                return False
            base = held[expr.id]
            if base is _UNKNOWN or not known:
                return _UNKNOWN
            return (*base, *reversed(attrs))
        if isinstance(expr, ast.Attribute):
            attrs.append(expr.attr)
            expr = expr.value
        elif follow and isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute):
            if expr.func.attr not in _SAME or attrs:
                known = False
            expr = expr.func.value
        elif follow and isinstance(expr, ast.Subscript):
            known = False
            expr = expr.value
        else:
            return False


def _changes_part(
    nodes: list[ast.AST],
    held: dict[str, tuple | None],
    path: tuple,
    skip: tuple,
    whole_switch: bool,
    kept: dict | None = None,
    func: ast.AST | None = None,
    whole: bool = False,
) -> bool:
    """Some node gives the part at `path` (or a module on the way to it or inside it) a new
    module, switches it back, or hands it to a call. `whole_switch`: `model.train()` itself
    counts (the helper's own switch; on the caller's side the model's mode says it). A store
    of a kept form of the very module it replaces (`kept_stores`, from `kept` in `func`) and a
    part handed to a call that hands it back in its mode do not count. `whole`: the model
    itself handed to a call counts too (for a function said to hand it back unchanged)."""
    fine = kept_stores(func, nodes, held, kept, _chain)
    for node in nodes:
        if isinstance(node, (ast.Attribute, ast.Subscript)) and isinstance(node.ctx, (ast.Store, ast.Del)):
            if id(node) in fine:
                continue
            found = _chain(node.value, held)
            if found is False:
                continue
            target = found if found is _UNKNOWN or isinstance(node, ast.Subscript) else (*found, node.attr)
            if _overlaps(target, path):
                return True  # `name.model = ...`, `del name.model`, `name.model.layers[0] = ...`
        elif (
            isinstance(node, ast.Call)
            and id(node) not in fine
            and not any(node is s for s in skip)
            and _call_changes(node, held, path, whole_switch, kept.get(id(node)) if kept else None, whole)
        ):
            return True
    return False


def _call_changes(
    node: ast.Call, held: dict, path: tuple, whole_switch: bool, given: ast.expr | None, whole: bool = False
) -> bool:
    """`given`: the argument the call hands back in its mode, if it does (`kept_calls`)."""
    func = node.func
    if isinstance(func, ast.Name) and func.id in _SETTERS:
        found = _chain(node.args[0], held) if node.args else False
        return found is not False and _overlaps(_named(found, node.args[1:2]), path)
    if isinstance(func, ast.Attribute):
        owner = _chain(func.value, held)
        if owner is not False:
            if func.attr in _REBUILDS:
                named = _named(owner, node.args[:1]) if func.attr in PART_SETTERS else owner
                return _overlaps(named, path)
            if func.attr == "train" and (owner or owner is _UNKNOWN or whole_switch) and _overlaps(owner, path):
                return True  # `name.model.train()` switches that part back
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
    if name in LOOKERS or name in _TAKERS:
        return False  # `print(name.training)`, `isinstance(name.model, ...)` only look
    # A part handed to a call, which may switch it or replace what it holds.
    for arg in [*node.args, *(kw.value for kw in node.keywords)]:
        if arg is given:
            continue
        found = _chain(arg.value if isinstance(arg, ast.Starred) else arg, held)
        if found is not False and (found != () or whole) and _overlaps(found, path):
            return True
    return False


def _named(owner: tuple | None, key: list[ast.expr]) -> tuple | None:
    """The part a setter names (`setattr(m, "head", ...)`, `m.add_module("head", ...)`,
    `m.set_submodule("a.b", ...)`): under `owner`, or `owner` itself when not a constant."""
    if owner is _UNKNOWN or not key or not isinstance(key[0], ast.Constant) or not isinstance(key[0].value, str):
        return owner
    return (*owner, *key[0].value.split("."))


def _overlaps(found: tuple | None, path: tuple) -> bool:
    """`found` is the part at `path`, a module on the way to it, or one inside it."""
    if found is _UNKNOWN:
        return True
    n = min(len(found), len(path))
    return found[:n] == path[:n]


def _names(target: ast.AST) -> list[str]:
    if isinstance(target, ast.Name):
        return [target.id]
    if isinstance(target, (ast.Tuple, ast.List)):
        return [n for elt in target.elts for n in _names(elt)]
    if isinstance(target, ast.Starred):
        return _names(target.value)
    return []
