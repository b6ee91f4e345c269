"""A wrapper's part switched back to train through another name after the wrapper is built.

`w = Wrapper(m.encoder)` with `Wrapper.__init__` storing its parameter (`self.encoder =
encoder`, or `encoder.eval()`) keeps the very object `m.encoder` names: a later `m.train()`
(`Module.train` reaches every submodule) or `m.encoder.train()`, or `enc.train()` after `enc =
m.encoder`, puts what the wrapper holds in train mode, and a capture of `w` bakes that in.
The walk judged the wrapper by its parts as they were at the construction (an evaled part: an
eval-mode wrapper, `evaled_parts`); this follows the part afterwards.

Only what can be shown to be the stored object counts: a local value (or `self.<attr>`) and the
attribute names taken from it (`m.encoder`, or a name bound to it), the same root value at the
construction and at the switch (a name rebound between them is another object), and a switch of
that value, of a module on the way to it (`m.train()` for a stored `m.encoder`; not
`m.decoder.train()`), or of a part of it (`m.encoder.train()` for a stored `m`: what the switch
reached is what the message names). A class keeps the argument only when its `__init__` stores
the parameter as it came, once, and no method reassigns, aliases or hands it on
(`stored_fields.held_fields`), or evals every part it stores (`evaled_parts`): a deep copy
(`self.m = copy.deepcopy(m)`) is another object. It keeps a part of the argument when its
`__init__` stores that attribute of the parameter (`self.body = net.body`, under the same
conditions: `stored_fields.held_part_fields`): `W(net)`, then `net.train()`, holds `net.body`
in train mode. Storing a new module on the path (`m.encoder = Other()`, `setattr(m, ...)`,
`m.add_module(...)`) forgets the link. Only an unconditional switch of the function's own
body is followed (no branch, loop or `try` around it): `.train()`, `m.apply(fn)` or a loop
over `m.children()`/`m.modules()` training every module (`loop_effects`), a helper leaving
`m` in train mode on every path (`helper_calls`). A switch reaching only parts known to hold
nothing whose behaviour depends on the mode changes nothing. An `.eval()` of the part is not
read back into the wrapper, whose other content may still be in train mode, except to undo
such a switch (`net.train()`, training, then `net.eval()`, or an `apply`, loop or helper
evaling every module of `net`: the wrapper is as it was built).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow import evaled_holders
from qlint.analysis.flow.built_models import Built
from qlint.analysis.flow.class_facts import evals_parts
from qlint.analysis.flow.evaled_parts import stored_build
from qlint.analysis.flow.model_apis import key
from qlint.analysis.flow.model_env import Env
from qlint.analysis.flow.model_torch_nn import MODE_KEEPING_METHODS
from qlint.analysis.flow.model_values import CONSTRUCTED, ModeFact, Obj
from qlint.analysis.flow.part_modes import taken_out
from qlint.analysis.flow.stored_fields import held_part_fields, passed_for
from qlint.analysis.flow.switched_parts import PART_SETTERS
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import own_init
from qlint.value_classes import replace

_SEQUENTIAL = frozenset({"torch.nn.Sequential", "torch.nn.modules.container.Sequential"})
# Calls that return the module they are called on.
_SAME = MODE_KEEPING_METHODS | {"eval"}
_CONDITIONAL = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.Try, ast.Match, getattr(ast, "TryStar", ast.Try))

Path = tuple[Obj, tuple[str, ...]]


class HeldParts:
    """The wrappers one function's walk built around parts it can still name."""

    __slots__ = ("closures", "holders", "mirrors", "names", "owner", "set")

    def __init__(self):
        self.owner = None  # the module's flow, given with the first wrapper (`part_build`)
        self.names: dict[Obj, Path] = {}  # `enc = m.encoder`: enc's value -> (m's value, ("encoder",))
        self.holders: dict[tuple[int, Path], tuple[Obj, Built | None]] = {}  # -> (wrapper, the part's build)
        # The modes `switched` gave a wrapper, with the paths of the parts the switch reached and
        # the modes before, so an `.eval()` of those parts undoes them.
        self.set: dict[Obj, list[tuple[tuple[Path, ...], frozenset, frozenset]]] = {}
        self.closures: set[int] = set()  # the wrappers `hold` was given
        self.mirrors: dict[Obj, tuple] = {}  # wrappers of whole modules only (`evaled_holders`)

    def path(self, expr: ast.expr, env: Env, items: bool = False) -> Path | None:
        """The root value and attribute names `expr` reaches (`m.encoder.eval()`: m, ("encoder",);
        `getattr(m, "encoder")` names it too). With `items`, an item of a part is a step as well
        (`m.layers[0]`: m, ("layers", "[0]"); `[]` for an index not written as a constant)."""
        steps: list[str] = []
        while True:
            if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _SAME:
                expr = expr.func.value
                continue
            if _named_getattr(expr):
                steps.append(expr.args[1].value)
                expr = expr.args[0]
                continue
            if items and isinstance(expr, ast.Subscript):
                index = expr.slice
                constant = isinstance(index, ast.Constant) and isinstance(index.value, (int, str))
                steps.append(f"[{index.value!r}]" if constant else "[]")
                expr = expr.value
                continue
            name = key(expr)
            if name is not None and name in env.vars:
                obj = env.vars[name]
                root, before = self.names.get(obj, (obj, ()))
                return root, (*before, *reversed(steps))
            if not isinstance(expr, ast.Attribute):
                return None
            steps.append(expr.attr)
            expr = expr.value

    def bound(self, name: str, path: Path | None, env: Env) -> None:
        """`name` was just bound to what `path` reached before the binding."""
        obj = env.vars.get(name)
        if obj is not None and path is not None and path[1] and path[0] != obj:
            self.names[obj] = path

    def built(self, owner, wrapper: Obj, built: Built, node: ast.Call, env: Env) -> None:
        """`wrapper` was built at `node` from `built.cls`: the arguments it keeps as parts."""
        cls = built.cls
        self.owner = owner
        if any(isinstance(a, ast.Starred) for a in node.args):
            return
        if not any(_chain_or_name(a) for a in (*node.args, *(kw.value for kw in node.keywords))):
            return  # nothing passed that a later switch could name: the class is not read
        if cls is None:
            # `nn.Sequential(n)` holds the very modules it is given, positionally.
            if built.resolver.qualname(node.func) in _SEQUENTIAL:
                held = [p for p in (self.path(arg, env) for arg in node.args) if p is not None]
                for path in held:
                    self.holders[(id(wrapper), path)] = (wrapper, part_build(owner, path))
                evaled_holders.candidate(self.mirrors, wrapper, built, node, held, self.path, env)
            return
        fields = owner.stored_fields(cls, held=True)
        if evals_parts(cls):
            fields = {**fields, **_evaled_stores(cls.node)}
        keywords = tuple((kw.arg, kw.value) for kw in node.keywords if kw.arg)
        taken = ((spec, ()) for spec in fields.values())
        # `self.body = net.body`: the part of what was passed at that path (`held_part_fields`).
        held = []
        for spec, steps in (*taken, *held_part_fields(cls.node).values()):
            arg = passed_for(spec, tuple(node.args), keywords)
            path = self.path(arg, env) if arg is not None else None
            if path is not None:
                path = (path[0], (*path[1], *steps))
                self.holders[(id(wrapper), path)] = (wrapper, part_build(owner, path))
                held.append(path)
        evaled_holders.candidate(self.mirrors, wrapper, built, node, held, self.path, env)

    def hold(self, owner, wrapper: Obj, paths: list[Path]) -> None:
        """`wrapper`, a class written in the function, holds the parts at `paths` of the
        function's modules its methods read (`closure_parts`: `self.body = net.body`)."""
        self.owner = owner
        self.closures.add(id(wrapper))
        for path in paths:
            self.holders[(id(wrapper), path)] = (wrapper, part_build(owner, path))

    def replaced(self, expr: ast.expr, env: Env) -> None:
        """A part on `expr`'s path was replaced (`m.encoder = Other()`): forget wrappers of it,
        and the mode a switch of the old part gave it (`part_modes`)."""
        path = self.path(expr, env)
        if path is None:
            return
        root, steps = path
        self.mirrors.pop(root, None)  # it may hold something else now
        if steps and any(f.parts for f in env.facts(root)):
            env.modes[root] = frozenset(taken_out(f, steps) for f in env.facts(root))
        for k in list(self.holders):
            held_root, held_steps = k[1]
            if held_root == root and (held_steps[: len(steps)] == steps or steps[: len(held_steps)] == held_steps):
                del self.holders[k]

    def replacing(self, node: ast.Call, env: Env) -> None:
        """`setattr(m, ...)`, `m.add_module(...)`: a part of `m` may be replaced."""
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in PART_SETTERS:
            self.replaced(func.value, env)
        elif isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and node.args:
            self.replaced(node.args[0], env)

    def switched(self, node: ast.Call, walk, env: Env) -> None:
        """An unconditional `.train()` at `node`: every wrapper holding the switched module, or a
        part of it, now holds a train-mode part (through wrappers of wrappers too)."""
        if not self.holders:
            return
        if _unconditional(node, walk):
            only = None
        elif self.closures and _unconditional(node, walk, guarded=True):
            # A statement of the function's own body after an early exit (`if not x: return`):
            # it runs on every path the walk holds there; for the classes written here whose
            # reading `closure_parts` made on the promise that it is followed.
            only = self.closures
        else:
            return
        path = self.path(node.func.value, env)
        if path is not None:
            self.trained(path, node, env, only)

    def trained_at(self, at: ast.AST, over: ast.expr, anchor: ast.AST, walk, env: Env) -> None:
        """Every module of what `over` names was put in train mode by the call or loop `at`
        (`m.apply(lambda mod: mod.train())`, `for p in m.children(): p.train()`, a helper
        training `m`), run unconditionally: as `switched` for `m.train()`; `anchor` is the node
        the message names."""
        if not self.holders or not _unconditional(at, walk):
            return
        path = self.path(over, env)
        if path is not None:
            self.trained(path, anchor, env)

    def trained(self, path: Path, node: ast.AST, env: Env, only: set[int] | None = None) -> None:
        """The module at `path` was put in train mode at `node`: the wrappers holding it, or a
        part of it (those of `only`, when given), with it."""
        todo, done = [path], set()
        while todo:
            root, steps = todo.pop()
            for wrapper, (held, parts) in self._holding(root, steps).items():
                if id(wrapper) in done or _mode_free(parts) or (only is not None and id(wrapper) not in only):
                    continue  # (a switch of parts holding nothing mode-dependent changes nothing)
                done.add(id(wrapper))
                facts = frozenset({ModeFact("train", node, _with_part(wrapper, parts))})
                self.set.setdefault(wrapper, []).append((held, facts, env.facts(wrapper)))
                env.modes[wrapper] = facts
                todo.append((wrapper, ()))

    def restored(self, node: ast.Call, env: Env, walk=None) -> None:
        """An `.eval()` (or `.train(flag)`) at `node` of every part a `.train()` that `switched`
        followed reached in a wrapper, or of a module they are parts of: the wrapper (and the
        wrappers holding it) are back as they were, unless something set them since (an
        `.eval()` of one part leaves a wrapper whose other part is in train mode as it is).
        Run unconditionally (`walk`), it evals a wrapper of nothing else (`evaled_holders`)."""
        if self.set:
            self.restored_at(node.func.value, env)
        if self.mirrors and walk is not None and _unconditional(node, walk):
            evaled_holders.evaled(self.mirrors, node, env)

    def restored_at(self, over: ast.expr, env: Env) -> None:
        """Every module of what `over` names was put in eval mode (`m.apply(lambda mod:
        mod.eval())`, a loop, a helper): as `restored` for `m.eval()`."""
        path = self.path(over, env) if self.set else None
        if path is None:
            return
        todo, done = [path], set()
        while todo:
            root, steps = todo.pop()
            for wrapper, records in self.set.items():
                if id(wrapper) in done:
                    continue
                # The switch that set the modes the wrapper has here (the latest such).
                now = env.modes.get(wrapper)
                record = next((r for r in reversed(records) if r[1] == now), None)
                if record is None:
                    continue
                held, _, before = record
                if all(r == root and s[: len(steps)] == steps for r, s in held):
                    done.add(id(wrapper))
                    env.modes[wrapper] = before
                    todo.append((wrapper, ()))

    def _holding(self, root: Obj, steps: tuple[str, ...]) -> dict[Obj, tuple[tuple[Path, ...], tuple]]:
        """The wrappers holding the module at (`root`, `steps`) or a part of it: the paths of
        what each holds there, and what each of them was built as (None: not known)."""
        found: dict[Obj, tuple[tuple[Path, ...], tuple]] = {}
        inside = None  # what a switch of a part of a held module reached (`m.encoder.train()`)
        for (_, held), (wrapper, part) in self.holders.items():
            if held[0] != root:
                continue
            if held[1][: len(steps)] != steps:
                if steps[: len(held[1])] != held[1]:
                    continue
                if inside is None:
                    inside = part_build(self.owner, (root, steps))
                held, part = (root, steps), inside
            paths, parts = found.get(wrapper, ((), ()))
            found[wrapper] = ((*paths, held), (*parts, part))
        return found


def _named_getattr(expr: ast.expr) -> bool:
    """`getattr(m, "encoder")`, with no default: the attribute `m.encoder`."""
    return (
        isinstance(expr, ast.Call)
        and isinstance(expr.func, ast.Name)
        and expr.func.id == "getattr"
        and len(expr.args) == 2
        and not expr.keywords
        and isinstance(expr.args[1], ast.Constant)
        and isinstance(expr.args[1].value, str)
    )


def _chain_or_name(expr: ast.expr) -> bool:
    """`net`, `m.encoder`, `m.encoder.eval()`: what `HeldParts.path` may follow."""
    while True:
        if isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute) and expr.func.attr in _SAME:
            expr = expr.func.value
        elif isinstance(expr, ast.Attribute):
            expr = expr.value
        else:
            return isinstance(expr, ast.Name)


def _evaled_stores(cls: ast.ClassDef) -> dict:
    """`self.a = p.eval()` in `__init__` of a class that evals every part it stores; and each
    parameter named in a call whose result is stored evaled (`self.a = Holder(p).to(d).eval()`,
    or `self.a = Holder(p)` evaled by a later statement: `stored_build`), which may hold what
    was passed for it."""
    init = own_init(cls)
    if init is None:
        return {}
    params = [a.arg for a in (*init.args.posonlyargs, *init.args.args[1:])]
    keyword_only = {a.arg for a in init.args.kwonlyargs}

    def spec(name: str) -> tuple[int | None, str]:
        return (params.index(name) if name in params else None, name)

    found = {}
    for stmt in init.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1):
            continue
        target, value = stmt.targets[0], stmt.value
        if not (isinstance(target, ast.Attribute) and isinstance(value, ast.Call)):
            continue
        receiver = value.func.value if isinstance(value.func, ast.Attribute) else None
        if isinstance(receiver, ast.Name) and (receiver.id in params or receiver.id in keyword_only):
            found[target.attr] = spec(receiver.id)
        elif stored_build(value):  # evaled there or later: the class evals every part it stores
            named = {n.id for n in ast.walk(value) if isinstance(n, ast.Name)} & {*params, *keyword_only}
            # Keyed apart from the stored fields: only the values are read.
            found.update((f"{target.attr}/{name}", spec(name)) for name in sorted(named))
    return found


def _unconditional(node: ast.Call, walk, guarded: bool = False) -> bool:
    """The switch runs whenever the function reaches it: its statement is under no branch,
    loop or `try`, and the call is the statement's own (`m.train()`, `m.train().to(d)`), or
    `node` is that statement (a loop over the model's modules, after it ran). With `guarded`,
    also after an early exit (the walk's guards)."""
    if (walk.guards and not guarded) or walk.loops or walk.contexts or not walk.stmt_stack:
        return False
    *outer, stmt = walk.stmt_stack
    if any(isinstance(s, _CONDITIONAL) for s in outer):
        return False
    if stmt is node:
        return True  # a loop switching the modules it walks, as a whole (`for p in m.children()`)
    if isinstance(stmt, _CONDITIONAL):
        return False
    expr = stmt.value if isinstance(stmt, (ast.Expr, ast.Assign)) else None
    while expr is not None and expr is not node:
        is_chain = isinstance(expr, ast.Call) and isinstance(expr.func, ast.Attribute)
        expr = expr.func.value if is_chain else None
    return expr is node


def part_build(owner, path: Path) -> Built | None:
    """What the stored part was built as, for the message: the root's construction, or the
    construction its class's `__init__` stores under each attribute name of the path."""
    root, steps = path
    builts = [o.built for o in root.origins if o.kind == CONSTRUCTED and o.built is not None]
    built = builts[0] if len(builts) == 1 else None
    for step in steps:
        if built is None or built.cls is None:
            return None
        built = _stored_build(owner, built, step)
    return built


def _stored_build(owner, built: Built, attr: str) -> Built | None:
    init = own_init(built.cls.node)
    calls = [
        s.value
        for s in (init.body if init is not None else ())
        if isinstance(s, ast.Assign)
        and any(isinstance(t, ast.Attribute) and key(t) == f"self.{attr}" for t in s.targets)
    ]
    if len(calls) != 1 or not isinstance(calls[0], ast.Call) or dotted_parts(calls[0].func) is None:
        return None
    call = calls[0]
    resolver = Resolver(built.cls.scope, owner.project, owner.optable)
    cls = owner.classes.resolve(call.func, resolver, built.cls.around or {})
    return Built(call, cls, resolver, owner.classes, ".".join(dotted_parts(call.func)))


def _mode_free(parts: tuple) -> bool:
    """What the switch reached in a wrapper is known in full and holds nothing whose behaviour
    depends on the mode (`W(net)` storing `self.conv = net.conv`, a Conv2d): the capture of the
    wrapper is the same in either mode."""
    if not parts or None in parts:
        return False
    contents = [p.content() for p in parts]
    return all(c.complete and not c.dependent for c in contents)


def _with_part(wrapper: Obj, parts: tuple) -> object:
    """The wrapper's construction, holding `parts` (what a switch reached in it) when it was
    given one thing and what each of them was built as is known: `W(net)` storing `self.conv =
    net.conv` holds that part of `net`, not the rest of it."""
    origins = [o for o in wrapper.origins if o.kind == CONSTRUCTED and o.built is not None]
    if len(origins) != 1:
        return None
    origin = origins[0]
    built = origin.built
    call = built.call
    single = isinstance(call, ast.Call) and len(call.args) + len(call.keywords) == 1
    if parts and None not in parts and single:
        return replace(origin, built=replace(built, parts=parts))
    return origin
