"""`dead_branches.rebound` is asked for every guard at every call of a helper (and again at
every keystroke in an editor): the names a function's body stores are read once per node."""

from __future__ import annotations

import ast

from qlint.analysis.flow.dead_branches import rebound


def test_the_names_a_body_stores_are_read_once(monkeypatch):
    func = ast.parse(
        "def f(is_qat, m, k):\n    is_qat = not is_qat\n    for k in m:\n        pass\n    return m\n"
    ).body[0]
    assert rebound(func, "is_qat") and rebound(func, "k") and not rebound(func, "m")

    def walked(node):
        raise AssertionError("walked again")

    monkeypatch.setattr(ast, "walk", walked)
    assert rebound(func, "is_qat") and rebound(func, "k") and not rebound(func, "m")
    # Another node is its own question.
    other = ast.parse("def f(is_qat):\n    return is_qat\n").body[0]
    monkeypatch.undo()
    assert not rebound(other, "is_qat")
