"""The environment the interpreter (`model_interp`) carries from statement to statement
(`Env`: the object each name is bound to, the modes each object may be in, which graphs were
allowed to switch modes or copied), the join of the paths that meet (`join`), and the values
it creates (`new_value`) or merges (`merge_values`).
"""

from __future__ import annotations

import ast
from itertools import islice

from qlint.analysis.flow.model_values import CONSTRUCTED, PRETRAINED, UNKNOWN_MODE, ModeFact, Obj, Origin
from qlint.value_classes import field, value_class


@value_class
class Env:
    vars: dict[str, Obj] = field(default_factory=dict)
    modes: dict[Obj, frozenset[ModeFact]] = field(default_factory=dict)
    patched: frozenset[Obj] = frozenset()
    # Copies of exported graphs (`copy.deepcopy(gm)`): a copy drops the override torch puts on the
    # graph's `train`/`eval` (and `allow_exported_model_train_eval`'s), so switching it raises nothing.
    copied: frozenset[Obj] = frozenset()
    # `self.<attr>` values a method read from its class on some path (`self_attributes.first_read`),
    # with the modes they came in: one dict per function, shared by every path. A path that
    # never read the attribute holds it in that mode, which `join` must count (`if is_qat:
    # self.model.train()` leaves the model as stored on the other arm).
    unread: dict[str, tuple[Obj, frozenset[ModeFact]]] | None = field(default=None, compare=False)
    # A value that is a copy on some paths only (`m = copy.deepcopy(gm) if c else model`) -> the
    # origins it holds through copies alone: no switch of theirs raises, but the value is no copy
    # (`copied`), and its origins stay whole for QL204 and the other readers (`uncopied`). Never
    # changed in place: paths share it, and a new entry replaces the dict.
    partly_copied: dict[Obj, frozenset[Origin]] = field(default_factory=dict)

    def copy(self) -> Env:
        return Env(dict(self.vars), dict(self.modes), self.patched, self.copied, self.unread, self.partly_copied)

    def facts(self, obj: Obj) -> frozenset[ModeFact]:
        return self.modes.get(obj, UNKNOWN_MODE)


def join(envs: list[Env | None], anchor: ast.AST) -> Env | None:
    """Merge the paths that meet at `anchor`: a name bound to different objects becomes a merge."""
    live = [e for e in envs if e is not None]
    if len(live) <= 1:
        return live[0].copy() if live else None
    unread = live[0].unread
    if unread:
        fill_unread(live, unread)
    out = Env(
        modes=dict(live[0].modes),
        patched=frozenset().union(*(e.patched for e in live)),
        copied=frozenset().union(*(e.copied for e in live)),
        unread=unread,
        partly_copied=_joined_partly_copied(live),
    )
    modes = out.modes
    # Paths copied from one environment share most fact sets (the same objects): only the
    # sets that differ are merged, which keeps a join linear in what changed on each path.
    for env in live[1:]:
        theirs = env.modes.items()
        # And they hold the objects they share first, in the same order (a copy keeps its
        # dict's order; a path adds objects at the end or gives one new facts in place): those
        # are walked side by side, each object hashed (its `__hash__` is Python's) only past
        # the first place the two orders part. ~450,000 objects per ExecuTorch QL201 run.
        changed = []
        shared = 0
        for (obj, mine), (other, facts) in zip(modes.items(), theirs, strict=False):
            if obj is not other:
                break
            shared += 1
            if mine is None or (mine is not facts and mine != facts):
                changed.append((obj, facts if mine is None else mine | facts))
        for obj, facts in changed:
            modes[obj] = facts
        for obj, facts in islice(theirs, shared, None):
            mine = modes.get(obj)
            if mine is None:
                modes[obj] = facts
            elif mine is not facts and mine != facts:
                modes[obj] = mine | facts
    # Every name any path binds, in the order first bound (the dicts' keys in turn); most are
    # bound to one object on every path, told apart without a list per name.
    keys = dict(live[0].vars)
    for env in live[1:]:
        keys.update(env.vars)
    every = [e.vars for e in live]
    out_vars = out.vars
    for key in keys:
        first = _ABSENT
        shared = True
        count = 0
        for names in every:
            o = names.get(key, _ABSENT)
            if o is _ABSENT:
                continue
            count += 1
            if first is _ABSENT:
                first = o
            elif o is not first:
                shared = False
        if count < len(every) and partial_key(key):
            continue  # a part of a value (`graph_parts`) that some path did not bind: not known
        if shared:
            out_vars[key] = first
            continue
        bound = [names[key] for names in every if key in names]
        objs = set(bound)
        if len(objs) == 1:
            out.vars[key] = first
            continue
        merged = Obj(
            anchor,
            key,
            frozenset().union(*(o.origins for o in objs)),
            frozenset().union(*(o.captures for o in objs)),
        )
        out.vars[key] = merged
        out.modes[merged] = frozenset().union(*(e.facts(e.vars[key]) for e in live if key in e.vars))
        if any(o in out.patched for o in objs):
            out.patched |= {merged}
        if all(o in out.copied for o in objs):  # a path that hands the graph itself can raise
            out.copied |= {merged}
        elif out.copied or out.partly_copied:
            through_copies = _copied_only(objs, out)
            if through_copies:
                out.partly_copied = {**out.partly_copied, merged: through_copies}
    return out


def uncopied(obj: Obj, env: Env) -> frozenset[Origin]:
    """The origins `obj` may hold as they were made, not only through a copy."""
    copies = env.partly_copied.get(obj) if env.partly_copied else None
    return obj.origins - copies if copies else obj.origins


def _copied_only(objs, env: Env) -> frozenset[Origin]:
    """The origins the values `objs` (merged into one) hold only through copies: an origin one
    of them holds uncopied (`m = gm if c else copy.deepcopy(gm)`) is no such origin."""
    copied: set[Origin] = set()
    kept: set[Origin] = set()
    for o in objs:
        through = o.origins if o in env.copied else env.partly_copied.get(o, frozenset())
        copied |= through
        kept |= o.origins - through
    return frozenset(copied - kept)


def _joined_partly_copied(live: list[Env]) -> dict[Obj, frozenset[Origin]]:
    """The paths' `partly_copied` facts: most paths share one dict (often empty)."""
    first = live[0].partly_copied
    for env in live[1:]:
        if env.partly_copied is not first and (first or env.partly_copied):
            return _each_path_says(live)
    return first


def _each_path_says(live: list[Env]) -> dict[Obj, frozenset[Origin]]:
    """The origins of a value that every path knowing the value holds only through copies: one
    value met on two paths (a loop body walked twice) may be a copy on one and not on the other."""
    out = {}
    for obj in {obj for env in live for obj in env.partly_copied}:
        through = None
        for env in live:
            facts = env.partly_copied.get(obj)
            if facts is None and obj in env.modes:  # known there, with no copy in it
                through = frozenset()
                break
            if facts is not None:
                through = facts if through is None else through & facts
        if through:
            out[obj] = through
    return out


_ABSENT = object()  # a name a path does not bind (`join`)


def fill_unread(live: list[Env], unread: dict[str, tuple[Obj, frozenset[ModeFact]]]) -> None:
    """Paths that never read a `self.<attr>` another path read from the class hold it as the
    class left it: bound to the same value, in the mode it came in."""
    for name, (obj, facts) in unread.items():
        if any(name in e.vars for e in live):
            for env in live:
                if name not in env.vars:
                    env.vars[name] = obj
                    env.modes.setdefault(obj, facts)


def partial_key(name: str) -> bool:
    """A name of a part of a value (`graph_parts`: `holder.gm`, `pair[0]`): a path that does not
    bind it leaves it unknown where paths join. `self.<attr>` is read from the class instead."""
    return "[" in name or ("." in name and not name.startswith("self."))


def new_value(env: Env, anchor: ast.AST, name: str, origin: Origin, facts=None, captures=frozenset()) -> Obj:
    """A value created at `anchor`; modules start in train mode, `from_pretrained` in eval mode."""
    obj = Obj(anchor, name, frozenset((origin,)), frozenset(captures))
    if facts is None:
        env.modes[obj] = frozenset((ModeFact(_STARTS_IN.get(origin.kind, "unset"), origin.node, origin),))
    else:
        env.modes[obj] = frozenset(facts)
    return obj


# The mode a new value starts in, by its origin's kind ("unset": as it came).
_STARTS_IN = {CONSTRUCTED: "train", PRETRAINED: "eval"}


def merge_values(objs: list[Obj], env: Env, anchor: ast.AST) -> Obj:
    """One value for `a if c else b` or a helper with several returns."""
    if len(set(objs)) == 1:
        return objs[0]
    paths = [Env({"value": o}, env.modes, env.patched, env.copied, partly_copied=env.partly_copied) for o in objs]
    merged = join(paths, anchor)
    env.modes.update(merged.modes)
    env.copied, env.partly_copied = merged.copied, merged.partly_copied
    return merged.vars["value"]
