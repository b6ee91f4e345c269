"""QL102 asks a dozen questions of each packet it would report (`_left_alone`), most of them
about the inserting function: each question's cheap tests of the insertion's receiver come
before its walks of the function. An observer's `convert(self, model, node)` (torch's
observer.py: three insertions into the graph of the module it is handed) is settled by the
receiver alone, and the look-alikes the walks are for stay decided by them."""

from __future__ import annotations

import pytest

from tests.conftest import lint

OBSERVER = """
    import torch

    class Observer:
        def convert(self, model, node):
            with model.graph.inserting_before(node):
                q = model.graph.call_function(torch.ops.aten.relu, (node,))
            return q
"""


@pytest.fixture
def walks(monkeypatch):
    """The walks asked for, by name: an overload's spelling in the function (hand-built
    graphs), a rebinding of the receiver (self-built graphs), the receiver's bindings
    (graphs returned stripped)."""
    from qlint.analysis.graphs import hand_built_graphs, returned_graph_uses, self_built_graphs

    asked: list[str] = []
    for module, name in (
        (hand_built_graphs, "spells_overload"),
        (self_built_graphs, "_rebound"),
        (returned_graph_uses, "_bindings"),
    ):
        real = getattr(module, name)
        monkeypatch.setattr(module, name, lambda *a, real=real, name=name: asked.append(name) or real(*a))
    return asked


def test_an_insertion_into_a_handed_graph_is_reported_without_walking_the_method(walks):
    assert [d.range.start.row for d in lint(OBSERVER, select=("QL102",))] == [7]
    assert walks == []
    # A graph the function builds and keeps is quiet unless the function spells an overload
    # of the op; the walk for that spelling runs for it.
    built = OBSERVER.replace(
        "def convert(self, model, node):\n",
        "def convert(self, node):\n            model = torch.fx.GraphModule(self, torch.fx.Graph())\n",
    ).replace("return q", "model.recompile()")
    assert [d.range.start.row for d in lint(built, select=("QL102",))] == []
    assert "spells_overload" in walks
    spelled = built.replace("model.recompile()", "model.recompile()\n            assert torch.ops.aten.relu.default")
    assert [d.range.start.row for d in lint(spelled, select=("QL102",))] == [8]
