"""A helper's forwarded parameters are the same whichever file asked about it first.

`forwarding.SHARED` keeps, per process, which parameters a function of another module hands
on to a sink, for every later check. An answer worked out under conditions of the first
asker (how deep in a chain of helpers it was met; a cycle through two helpers, entered from
one side) was read by the next check as if it had been worked out there: `b.py`'s QL102
depended on whether `a.py` had been checked before it in the process (the file order, `-j`,
`qlint check b.py` alone).
"""

from __future__ import annotations

import pytest

from qlint.analysis.graphs import forwarding
from qlint.analysis.names.project import ProjectIndex
from tests.conftest import check_file

CALLER = (
    "import torch\n\nfrom pkg.helpers import {name}\n\n\ndef rewrite(gm):\n    {name}(gm.graph, torch.ops.aten.relu)\n"
)


def _tree(tmp_path, helpers: str, first: str, second: str):
    (tmp_path / ".git").mkdir()
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "helpers.py").write_text(helpers)
    (pkg / "a.py").write_text(CALLER.format(name=first))
    (pkg / "b.py").write_text(CALLER.format(name=second))
    return pkg


def _rows(pkg, name: str, project: ProjectIndex) -> list[tuple[str, int]]:
    path = pkg / name
    result = check_file(path, ("QL102",), project)
    return [(d.code, d.range.start.row) for d in result.diagnostics]


def _after_and_alone(pkg, monkeypatch) -> tuple[list, list]:
    project = ProjectIndex()
    _rows(pkg, "a.py", project)
    after = _rows(pkg, "b.py", project)
    monkeypatch.setattr(forwarding, "SHARED", {})  # a fresh process
    return after, _rows(pkg, "b.py", ProjectIndex())


def _chain(length: int) -> str:
    """h1 -> h2 -> ... -> h<length>, which inserts what it is given."""
    last = f"def h{length}(graph, op):\n    return graph.call_function(op, ())\n"
    links = [f"def h{i}(graph, op):\n    return h{i + 1}(graph, op)\n" for i in range(1, length)]
    return "\n\n".join([*links, last])


@pytest.mark.parametrize("length", [6, 9])
def test_a_chain_asked_from_its_head_first_then_from_its_middle(tmp_path, monkeypatch, length):
    # `a.py` enters at h1, `b.py` at h3: the answers for h3.. were worked out five and more
    # helpers down from `a.py`, where a depth limit had cut them off.
    pkg = _tree(tmp_path, _chain(length), "h1", "h3")
    after, alone = _after_and_alone(pkg, monkeypatch)
    assert after == alone == [("QL102", 7)]
    assert _rows(pkg, "a.py", ProjectIndex()) == [("QL102", 7)]


CYCLE = """\
def h1(graph, op, stop=False):
    if stop:
        return graph.call_function(op, ())
    return h2(graph, op)


def h2(graph, op):
    return h1(graph, op, True)
"""


def test_a_cycle_entered_from_either_side(tmp_path, monkeypatch):
    # From h1, h2 is worked out while h1 is in progress (forwarding nothing yet): that answer
    # of h2's is this check's only.
    pkg = _tree(tmp_path, CYCLE, "h1", "h2")
    after, alone = _after_and_alone(pkg, monkeypatch)
    assert after == alone == [("QL102", 7)]


SELF_CALLING = """\
def h1(graph, op, n=0):
    if n:
        return h1(graph, op, n - 1)
    return graph.call_function(op, ())
"""


def test_a_helper_calling_itself_is_still_shared(tmp_path, monkeypatch):
    # Its answer is the same from anywhere: kept for the next check.
    monkeypatch.setattr(forwarding, "SHARED", {})
    pkg = _tree(tmp_path, SELF_CALLING, "h1", "h1")
    project = ProjectIndex()
    assert _rows(pkg, "a.py", project) == [("QL102", 7)]
    assert [result for _, result, _ in forwarding.SHARED.values()] == [frozenset({"op"})]
    assert _rows(pkg, "b.py", project) == [("QL102", 7)]
