"""The walk of loops for `model_interp`: `for`, `while` and comprehensions (read as the loop
they spell, `comprehension_loops`), each body walked twice so that the second pass sees what
the first leaves for the next iteration; what the loop target is bound to (a factory, an item
of a container written here, a part of the iterated value).

`walk` is the function's walk (`model_interp.Interpreter`, not imported: it imports this).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow import comprehension_loops
from qlint.analysis.flow.binding_walk import bind_unknown
from qlint.analysis.flow.loop_effects import modules_switched
from qlint.analysis.flow.looped_switches import looped_modules
from qlint.analysis.flow.model_apis import key
from qlint.analysis.flow.model_env import Env, join


def loop(walk, s, env: Env) -> Env | None:
    items = walk.expr(s.test if isinstance(s, ast.While) else s.iter, env)
    continues: list[Env] = []
    breaks: list[Env] = []
    walk.loops.append((continues, breaks))
    entry, outs = env, []
    for second in (False, True):  # the second pass sees what the first leaves for the next iteration
        start = entry.copy()
        if not isinstance(s, ast.While) and not bind_factories(walk, s, start) and not bind_items(walk, s, start):
            bind_unknown(walk, s.target, s, start, items)
        outs.append(walk.block(s.body, start))
        # A `break` starts no next iteration: `if x is None: m.train(); break` leaves the
        # capture after it in the body in the mode the loop found. No pass starts after
        # the second: its entry is not made, unless a `self.<attr>` read on some path
        # must be filled into the others (`fill_unread`, which the join does in place).
        if not second or env.unread:
            entry = join([env, outs[-1], *continues], s)
    walk.loops.pop()
    ended = join([env, *outs, *continues], s)  # the loop ran out: its `else` runs
    walked = looped_modules(s) if not isinstance(s, ast.While) else None
    if walked is not None and ended is not None:  # `for mod in m.modules(): mod.eval()`
        over, reach, found = walked
        modules_switched(walk.calls, over, reach, found, found.switch, ended, walk.qualname, s)
    if s.orelse and ended is not None:
        ended = walk.block(s.orelse, ended)
    return join([ended, *breaks], s) if breaks else ended


def bind_factories(walk, s: ast.For | ast.AsyncFor, env: Env) -> bool:
    """`for make in MODELS`, `for name, make in MODELS.items()`: the loop variable is a factory."""
    it, target = s.iter, s.target
    method = it.func.attr if isinstance(it, ast.Call) and isinstance(it.func, ast.Attribute) else None
    if method in ("items", "values") and not it.args:
        it = it.func.value
    elif method is not None:
        return False
    makes = walk.calls.builds.callables(it)
    if not makes:
        return False
    if method == "items":
        if not (isinstance(target, ast.Tuple) and len(target.elts) == 2):
            return False
        bind_unknown(walk, target.elts[0], s, env)
        target = target.elts[1]
    if key(target) is None:
        return False
    env.vars[key(target)] = walk.calls.builds.factory(s, makes, env)
    return True


def bind_items(walk, s: ast.For | ast.AsyncFor, env: Env) -> bool:
    """`for m in [A(), B().eval()]`, `for i, m in enumerate(models)` over a container written
    here: the target is bound to the models it holds (`loop_items`)."""
    items = walk.containers.loop(s, env)
    if items is None:
        return False
    for name, item in items:
        if item is None:
            bind_unknown(walk, name, s, env)
        else:
            env.vars[name.id] = item
    rows = walk.containers.rows(s, env)
    if rows is not None:  # `for case in cases:` over dicts read as `case[KEY]` (`keyed_rows`)
        target, dicts = rows
        walk.containers.keyed.bind(s, env.vars.get(target.id), dicts, env)
    return True


def comprehension(walk, e: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp, env: Env) -> None:
    """`[f(m) for m in ms if c]`, read as the loop `for m in ms: if c: f(m)` would be
    (`comprehension_loops`); its targets are its own: the function's names keep their
    values after it."""
    own = comprehension_loops.targets(e)
    hidden = {name: env.vars[name] for name in own if name in env.vars}
    after = loop(walk, comprehension_loops.as_loop(e), env)
    if after is None:  # (a comprehension has no statement that leaves the loop)
        return
    env.vars, env.modes, env.patched, env.copied = after.vars, after.modes, after.patched, after.copied
    env.partly_copied = after.partly_copied
    for name in own:
        env.vars.pop(name, None)
    env.vars.update(hidden)
