"""QL101/QL102 and graphs a function builds by hand and keeps, or feeds only to a pass that
runs on Dynamo's output graph (TorchAir's test of `replace_stream_event_pass`: it builds a
graph shaped like Dynamo's, with the streams packet Dynamo creates, runs the pass and looks
for the packet the pass set). Nothing traces such a graph, so it holds what was put there.
Each quiet case has loud look-alikes: a graph handed to another pass, returned, or not
built here."""

from __future__ import annotations

from pathlib import Path

from tests.test_dynamo_graph_passes import BACKEND, PASS, _project, _rows

TEST = """
    import torch
    import torch.fx

    from pkg.passes import rewrite_events


    def test_rewrite():
        gm = torch.fx.GraphModule(torch.nn.Module(), torch.fx.Graph())
        x = gm.graph.placeholder("x")
        gm.graph.call_function(torch.ops.streams.record_event, (x, 0))
        gm.graph.output((x,))
        gm.recompile()
        gm = rewrite_events(gm)
        found = [n for n in gm.graph.nodes if n.target == torch.ops.mine.tagged_record]
        assert len(found) == 1, f"{gm.graph}"
"""


def _tree(tmp_path: Path, test: str, passes: str = PASS) -> Path:
    return _project(
        tmp_path,
        {"pkg/__init__.py": "", "pkg/passes.py": passes, "pkg/backend.py": BACKEND, "tests/test_events.py": test},
    )


# -- quiet: a graph built here, fed to nothing but a Dynamo-graph pass -------------------------


def test_a_test_of_a_dynamo_graph_pass_is_quiet(tmp_path):
    assert _rows(_tree(tmp_path, TEST), "tests/test_events.py") == []


def test_the_pass_imported_in_the_function_and_a_loop_matcher_are_quiet(tmp_path):
    # TorchAir's shape: the pass is imported inside the test, the graph built apart first.
    test = """
        import torch
        from torch.fx import Graph, GraphModule


        def test_rewrite():
            from pkg.passes import rewrite_events

            g = Graph()
            x = g.placeholder("x")
            g.call_function(torch.ops.streams.record_event, (x, 0))
            g.output((x,))
            gm = GraphModule(torch.nn.Module(), g)
            gm = rewrite_events(gm)
            for node in gm.graph.nodes:
                if node.target == torch.ops.mine.tagged_record:
                    return
            raise AssertionError(str(gm.graph))
    """
    assert _rows(_tree(tmp_path, test), "tests/test_events.py") == []


def test_a_graph_kept_to_the_function_and_run_is_quiet(tmp_path):
    test = """
        import torch
        import torch.fx


        def test_run():
            g = torch.fx.Graph()
            x = g.placeholder("x")
            y = g.call_function(torch.ops.aten.relu, (x,))
            g.output(y)
            gm = torch.fx.GraphModule(torch.nn.Module(), g)
            assert len(g.nodes) == 3
            gm(torch.ones(2))
    """
    assert _rows(_tree(tmp_path, test), "tests/test_events.py") == []


# -- loud: the graph leaves the function, or was not built here --------------------------------
#
# Written as functions of a script beside the package, whose callers qlint cannot see: a test the
# runner collects is no entry users reach, so QL102 asks no users' matchers about what it inserts
# (`packet_distinguishers`), and the look-alikes below would say nothing about the graph leaving.


def _loud(tmp_path: Path, test: str, passes: str = PASS, select=("QL101", "QL102"), lowering: bool = False):
    """Rows of the look-alike `test`, moved to a script `checks.py` beside the package (no test
    module: the runner collects nothing there) with its tests renamed."""
    files = {"pkg/__init__.py": "", "pkg/passes.py": passes, "pkg/backend.py": BACKEND}
    if lowering:
        files = {
            "pkg/__init__.py": "",
            "pkg/lowering.py": passes,
            "pkg/backend.py": BACKEND.replace("gm = rewrite_events(gm)\n", ""),
        }
        test = test.replace("pkg.passes", "pkg.lowering")
    files["checks.py"] = test.replace("def test_", "def check_")
    return _rows(_project(tmp_path, files), "checks.py", select=select)


def test_a_graph_fed_to_a_pass_no_backend_runs_on_dynamo_graphs_is_reported(tmp_path):
    assert _loud(tmp_path, TEST, lowering=True) == [11, 15]


def test_a_graph_also_handed_to_another_function_is_reported(tmp_path):
    test = TEST.replace("gm = rewrite_events(gm)", "gm = rewrite_events(gm)\n        lower(gm)")
    test = test.replace("from pkg.passes import rewrite_events", "from pkg.passes import lower, rewrite_events")
    passes = PASS + "\n    def lower(gm):\n        return gm\n"
    assert _loud(tmp_path, test, passes) == [11, 16]


def test_a_graph_returned_is_reported(tmp_path):
    test = TEST.replace("        assert len(found) == 1", "        return gm")
    assert _loud(tmp_path, test) == [11, 15]


def test_a_traced_graph_or_a_parameter_is_reported(tmp_path):
    test = """
        import torch
        import torch.fx

        from pkg.passes import rewrite_events


        def test_exported(model, args):
            gm = torch.export.export(model, args).module()
            gm.graph.call_function(torch.ops.streams.record_event, ())
            gm = rewrite_events(gm)


        def test_check(gm):
            gm.graph.call_function(torch.ops.streams.record_event, ())
            gm = rewrite_events(gm)
            return [n for n in gm.graph.nodes if n.target == torch.ops.mine.tagged_record]
    """
    assert _loud(tmp_path, test) == [10, 15, 17]


def test_a_graph_rebound_to_something_else_is_reported(tmp_path):
    test = TEST.replace("gm = rewrite_events(gm)", "gm = torch.export.export(gm, (torch.ones(1),)).module()")
    assert _loud(tmp_path, test) == [11, 15]


def test_a_function_that_spells_an_overload_of_the_op_is_reported(tmp_path):
    check = "        assert torch.ops.streams.record_event.default not in found\n"
    test = TEST.replace("        assert len(found)", check + "        assert len(found)")
    assert _loud(tmp_path, test, select=("QL102",)) == [11]


def test_a_matcher_over_another_graph_is_reported(tmp_path):
    test = TEST.replace("def test_rewrite():", "def test_rewrite(other):")
    test = test.replace("for n in gm.graph.nodes", "for n in other.graph.nodes")
    assert _rows(_tree(tmp_path, test), "tests/test_events.py", select=("QL101",)) == [15]


def test_the_pass_and_backend_modules_are_dependencies_of_the_check(tmp_path):
    from qlint.analysis.names.project import ProjectIndex
    from qlint.engine import check_source
    from tests.conftest import settings_for

    root = _tree(tmp_path, TEST)
    path = root / "tests" / "test_events.py"
    result = check_source(path.read_bytes(), str(path), settings_for(("QL101", "QL102")), ProjectIndex())
    assert result.diagnostics == []
    assert {str(root / "pkg" / n) for n in ("passes.py", "backend.py")} <= set(result.dependencies)
