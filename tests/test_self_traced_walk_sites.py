"""The questions `self_traced_graphs` asks of one module read each function's call sites in
the project once: a caller that returns a value is asked where its graph comes from and, for
every local it is followed for, where what it returns goes (`_callers_stay`), the same search
of every module naming it; each matcher of the module asks along the same callers. ao's
qat_utils.py read `convert_pt2e`'s four caller modules twice per question, for each of its two
matchers (issue 13: an edited check of it spent ~0.2 s in QL101). The answers stay those of
`test_self_traced_graphs` (run there); this asserts the search is not repeated."""

from __future__ import annotations

from qlint.analysis.graphs import self_traced_graphs
from tests.test_self_traced_graphs import _package, _rows, _view_row


def _searches(monkeypatch, pkg, module: str, rule: str) -> tuple[list, list[list]]:
    """The rows reported, and the call-site searches made meanwhile, one list per module the
    questions were asked of (the walks of one module's questions together)."""
    homes: dict[str, list] = {}
    current: list[list] = []
    search = self_traced_graphs.pass_call_sites
    start = self_traced_graphs._Walk.__init__

    def begun(self, *home):
        current[:] = [homes.setdefault(home[0].path if home else str(len(homes)), [])]
        start(self, *home)

    def searched(ctx, name):
        if current:
            current[0].append((ctx.path, name))
        return search(ctx, name)

    monkeypatch.setattr(self_traced_graphs._Walk, "__init__", begun)
    monkeypatch.setattr(self_traced_graphs, "pass_call_sites", searched)
    return _rows(pkg, module, rule), list(homes.values())


def test_the_questions_of_a_module_read_each_function_s_callers_once(tmp_path, monkeypatch):
    # `shard` is handed `compile_step`'s graph as `traced` and again as `sharded`: the step
    # returns the compiled object, so where that goes (its callers) is read for each local.
    pkg = _package(tmp_path, after="sharded = shard(sharded)")
    rows, walks = _searches(monkeypatch, pkg, "compile", "QL102")
    assert rows == []  # quiet as easydist's own step: nothing exports the graph
    searched = [key for walk in walks for key in walk]
    assert any(name == "compile_step" for _, name in searched)  # the question was asked
    assert all(len(walk) == len(set(walk)) for walk in walks)


def test_the_exported_graph_is_still_found_through_the_returned_holder(tmp_path, monkeypatch):
    # What the caller reads is the same search's answer: an export by `compile_step`'s caller
    # still makes the ZeRO pass's views loud (both its calls, one row: the insertion).
    pkg = _package(
        tmp_path, after="sharded = shard(sharded)", api_after="torch.export.export(self.compiled.graph, args)"
    )
    rows, walks = _searches(monkeypatch, pkg, "compile", "QL102")
    assert rows == [_view_row(pkg)]
    assert all(len(walk) == len(set(walk)) for walk in walks)
