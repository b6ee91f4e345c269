"""The QL2 analyses do work in proportion to what a module holds (issue 13).

Counted, not timed: how many function bodies are walked or interpreted per check. Each
shortcut also has a test that it gives the answer the full work gives, and that it is
not stale when what it depends on differs.
"""

from __future__ import annotations

import collections

import pytest

from qlint.rules import capture_content
from tests.test_model_sources import check

_NET = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

"""


def _tests(n: int) -> str:
    """`n` tests, each capturing a model whose mode cannot matter, and `n` unrelated helpers."""
    out = [_NET]
    for i in range(n):
        capture = "    prepare_pt2e(export(model, (x,)).module(), quantizer)\n"
        out.append(f"def test_{i}(quantizer, x):\n    model = Net()\n{capture}")
        out.append(f"def unrelated_{i}(x):\n    return export(x, (x,))\n")
    return "\n".join(out)


@pytest.fixture
def walks(monkeypatch):
    """id(node) -> how many times `capture_content` walked that body."""
    counts: collections.Counter = collections.Counter()
    real = capture_content._own_nodes

    def counting(fn):
        counts[id(fn)] += 1
        return real(fn)

    monkeypatch.setattr(capture_content, "_own_nodes", counting)
    return counts


def test_each_body_is_walked_once_however_many_captures_ask(walks):
    # Every capture is weighed by `mode_free`, which reads the bodies that build or capture it.
    assert check(_tests(6)) == []
    # The module body and the six tests; neither the unrelated helpers nor a test for
    # another test's capture (it was walked once per capture per body: 6 x 13 walks).
    assert sum(walks.values()) == 7
    assert set(walks.values()) == {1}


def test_shared_body_index_answers_for_each_model_it_holds():
    # One body, two models: only the one given parts after it was built is reported.
    src = _NET + (
        "def test_both(quantizer, head, x):\n"
        "    kept = Net()\n"
        "    changed = Net()\n"
        "    changed.head = head\n"
        "    prepare_pt2e(export(kept, (x,)).module(), quantizer)\n"
        "    prepare_pt2e(export(changed, (x,)).module(), quantizer)\n"
    )
    (d,) = check(src)
    assert d.code == "QL201" and d.message.startswith("`changed` is captured")
    # Swapped: the index of the edited module says so.
    (d,) = check(src.replace("changed.head = head", "kept.head = head"))
    assert d.message.startswith("`kept` is captured")


def test_a_construction_in_another_function_is_still_read():
    # Built in one function, handed to the one that captures it: the builder's body is read.
    src = _NET + (
        "def quantize(model, quantizer, x):\n"
        "    return prepare_pt2e(export(model, (x,)).module(), quantizer)\n\n"
        "def main(quantizer, x, head):\n"
        "    m = Net()\n"
        "    quantize(m, quantizer, x)\n"
    )
    assert check(src) == []
    assert len(check(src.replace("    quantize(m,", "    m.head = head\n    quantize(m,"))) == 1
