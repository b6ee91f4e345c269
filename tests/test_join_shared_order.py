"""`model_env.join` walks the objects two paths share side by side, in the order both hold
them (a copy keeps its dict's order), and hashes an object only past the first place the
orders part. The merge is the one a lookup of every object gives: the same fact sets, the
same objects, in the same order, whether the paths were copied from one environment, added
objects of their own, or hold the same objects in another order.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_env import Env, join
from qlint.analysis.flow.model_values import CONSTRUCTED, ModeFact, Obj, Origin

_ANCHOR = ast.parse("x = 1").body[0]


def _obj(name: str) -> Obj:
    node = ast.Name(id=name)
    return Obj(node, name, frozenset({Origin(CONSTRUCTED, node)}))


def _facts(*states: str) -> frozenset[ModeFact]:
    return frozenset(ModeFact(s, None) for s in states)


def _looked_up(envs: list[Env]) -> dict:
    """The merge by a lookup of every object of every later path (the walk before)."""
    modes = dict(envs[0].modes)
    for env in envs[1:]:
        for obj, facts in env.modes.items():
            mine = modes.get(obj)
            if mine is None:
                modes[obj] = facts
            elif mine is not facts and mine != facts:
                modes[obj] = mine | facts
    return modes


def _same(envs: list[Env]) -> None:
    out = join(envs, _ANCHOR)
    expected = _looked_up(envs)
    assert list(out.modes.items())[: len(expected)] == list(expected.items())
    # Beyond them, only the merges of names bound to other objects on each path.
    assert all(k.anchor is _ANCHOR for k in list(out.modes)[len(expected) :])


def test_paths_copied_from_one_environment():
    a, b, c, d, e = (_obj(n) for n in "abcde")
    base = Env(modes={a: _facts("unset"), b: _facts("unset"), c: _facts("eval")})
    then, orelse = base.copy(), base.copy()
    then.modes[b] = _facts("train")  # new facts in place
    then.modes[d] = _facts("eval")  # an object of its own, at the end
    orelse.modes[c] = _facts("eval")  # equal facts, another set
    orelse.modes[e] = _facts("train")
    _same([then, orelse])
    out = join([then, orelse], _ANCHOR)
    assert out.modes[b] == _facts("unset", "train")
    assert out.modes[c] is then.modes[c]  # equal sets: the first path's is kept
    assert list(out.modes) == [a, b, c, d, e]


def test_paths_holding_the_shared_objects_in_another_order():
    a, b, c = (_obj(n) for n in "abc")
    first = Env(modes={a: _facts("eval"), b: _facts("unset"), c: _facts("train")})
    second = Env(modes={a: _facts("eval"), c: _facts("unset"), b: _facts("unset")})
    _same([first, second])
    out = join([first, second], _ANCHOR)
    assert out.modes[c] == _facts("train", "unset")
    assert list(out.modes) == [a, b, c]


def test_three_paths_merge_into_the_facts_of_each():
    a, b, c = (_obj(n) for n in "abc")
    base = Env(modes={a: _facts("unset"), b: _facts("unset")})
    paths = [base.copy(), base.copy(), base.copy()]
    paths[0].modes[a] = _facts("eval")
    paths[1].modes[a] = _facts("train")
    paths[2].modes[c] = _facts("eval")
    paths[2].modes[b] = _facts("eval")
    _same(paths)
    out = join(paths, _ANCHOR)
    assert out.modes[a] == _facts("eval", "train", "unset")
    assert out.modes[b] == _facts("unset", "eval")


def test_a_later_path_shorter_than_the_first():
    a, b, c = (_obj(n) for n in "abc")
    base = Env(modes={a: _facts("unset")})
    longer, shorter = base.copy(), base.copy()
    longer.modes[b] = _facts("eval")
    longer.modes[c] = _facts("train")
    shorter.modes[a] = _facts("eval")
    _same([longer, shorter])
    assert join([longer, shorter], _ANCHOR).modes[a] == _facts("unset", "eval")
