"""QL101/QL102 and a script that runs a renaming front end of a package on a graph, then a pass
of its own on it (EVT's `benchmark/subgraphs/bert/selfattention.py`: `frontend = GTLFrontend();
fx_module, _ = frontend(fx_module)` then `pass_clean_backward_permute(fx_module, ...)`): the
pass sees packets. The script is outside the package, so no project scan reaches it (issue 14,
item 14). Each quiet case has loud look-alikes where the pass may see overloads."""

from __future__ import annotations

import textwrap

import pytest

from tests.test_front_end_renames import FRONT_END

RENAME_FUNCTION = """
    import torch

    def rename(gm):
        for node in gm.graph.nodes:
            name = node.target.__name__.split(".")[0]
            node.target = getattr(torch.ops.aten, name)
        return gm
"""

OTHER_NAMESPACE = FRONT_END.replace("torch.ops.aten", "torch.ops.quantized_decomposed")

# The pass of the script's own, on the row the tests expect a finding at.
PASS = """
    import torch
    {imports}

    def count_relus(gm):
        return sum(n.target == torch.ops.aten.relu for n in gm.graph.nodes)

    def insert_relu(gm, node):
        return gm.graph.call_function(torch.ops.aten.relu, (node,))

    def compile_fn(gm, gm2):
    {body}
"""
MATCH_ROW = 6
INSERT_ROW = 9


def _rows(tmp_path, body, imports="from pkg.front import FrontEnd", front=FRONT_END, select=("QL101",)):
    from qlint.engine import check_source
    from tests.conftest import settings_for, write_package

    # The script sits beside the package, in no package itself: no project scan reaches it.
    pkg = write_package(tmp_path, "pkg", front=textwrap.dedent(front))
    (pkg / "__init__.py").write_text("from pkg.front import *\n")
    script = tmp_path / "run.py"
    script.write_text(textwrap.dedent(PASS).format(imports=imports, body=textwrap.indent(body, "    ")))
    return [d.range.start.row for d in check_source(script.read_bytes(), str(script), settings_for(select)).diagnostics]


@pytest.mark.parametrize(
    "body,imports",
    [
        # EVT's form: an instance of the front end class, its result unpacked back to the name.
        ("frontend = FrontEnd()\ngm, _ = frontend(gm)\ncount_relus(gm)\n", "from pkg.front import FrontEnd"),
        ("FrontEnd()(gm)\nif gm is not None:\n    count_relus(gm)\n", "from pkg.front import FrontEnd"),
        # Through the package's re-export, as EVT's `gtl.compiler.passes` has it.
        ("frontend = FrontEnd()\ngm = frontend(gm)\ncount_relus(gm)\n", "from pkg import FrontEnd"),
    ],
)
def test_a_pass_run_after_the_front_end_is_quiet(tmp_path, body, imports):
    assert _rows(tmp_path, body, imports) == []


def test_a_pass_run_after_a_renaming_function_is_quiet(tmp_path):
    body = "gm = rename(gm)\ncount_relus(gm)\n"
    assert _rows(tmp_path, body, "from pkg.front import rename", front=RENAME_FUNCTION) == []


def test_an_insertion_after_the_front_end_is_quiet(tmp_path):
    body = "FrontEnd()(gm)\ninsert_relu(gm, None)\n"
    assert _rows(tmp_path, body, select=("QL102",)) == []


@pytest.mark.parametrize(
    "body",
    [
        # The pass runs first, on overloads.
        "count_relus(gm)\nFrontEnd()(gm)\n",
        # Only one branch renames.
        "if gm2:\n    FrontEnd()(gm)\ncount_relus(gm)\n",
        # The name is bound to another graph in between.
        "FrontEnd()(gm)\ngm = gm2\ncount_relus(gm)\n",
        # Another graph is handed to the pass.
        "FrontEnd()(gm)\ncount_relus(gm2)\n",
        # Constructed, never run.
        "frontend = FrontEnd()\ncount_relus(gm)\n",
        # One call is excused, another is not.
        "FrontEnd()(gm)\ncount_relus(gm)\ncount_relus(gm2)\n",
        # Handed on as a callback: who runs it on what is not read.
        "FrontEnd()(gm)\ncallbacks = [count_relus]\n",
        "FrontEnd()(gm)\ncount_relus(gm)\nlater = lambda g: count_relus(g)\n",
        "FrontEnd()(gm)\ncount_relus(gm)\ndef inner(g=count_relus):\n    return g\n",
    ],
)
def test_a_pass_the_front_end_may_not_precede_is_reported(tmp_path, body):
    assert _rows(tmp_path, body) == [MATCH_ROW]


def test_a_front_end_of_another_namespace_is_no_excuse(tmp_path):
    assert _rows(tmp_path, "FrontEnd()(gm)\ncount_relus(gm)\n", front=OTHER_NAMESPACE) == [MATCH_ROW]


def test_a_call_at_module_level_is_no_excuse(tmp_path):
    from qlint.engine import check_source
    from tests.conftest import settings_for

    _rows(tmp_path, "FrontEnd()(gm)\ncount_relus(gm)\n")
    script = tmp_path / "run.py"
    script.write_text(script.read_text() + "\ncount_relus(None)\n")
    found = check_source(script.read_bytes(), str(script), settings_for(("QL101",))).diagnostics
    assert [d.range.start.row for d in found] == [MATCH_ROW]


def test_a_class_that_renames_nothing_is_no_excuse(tmp_path):
    front = "class FrontEnd:\n    def __call__(self, gm):\n        return gm\n"
    assert _rows(tmp_path, "FrontEnd()(gm)\ncount_relus(gm)\n", front=front) == [MATCH_ROW]


def test_an_insertion_before_the_front_end_is_reported(tmp_path):
    body = "insert_relu(gm, None)\nFrontEnd()(gm)\n"
    assert _rows(tmp_path, body, select=("QL102",)) == [INSERT_ROW]


def test_a_pass_the_text_names_only_at_its_def_is_judged_without_walking_the_module(tmp_path, monkeypatch):
    # Asked for every finding in a function of the module, at each keystroke in an editor: the
    # benchmark's 2,000-line module spent 50 ms a check walking it for passes nothing calls.
    from qlint.analysis.graphs import front_end_calls

    walked = []
    real = front_end_calls._own_nodes
    monkeypatch.setattr(front_end_calls, "_own_nodes", lambda stmt: walked.append(stmt) or real(stmt))
    assert _rows(tmp_path, "FrontEnd()(gm)\n") == [MATCH_ROW]
    assert walked == []
    # Called after the front end: read, and quiet.
    (tmp_path / "b").mkdir()
    assert _rows(tmp_path / "b", "FrontEnd()(gm)\ncount_relus(gm)\n") == []
    assert walked


def test_a_call_spelled_with_compatibility_characters_is_read_as_the_tree_has_it(tmp_path):
    # `\uff43ount_relus` (a fullwidth c) is the name `count_relus` once parsed (NFKC): the text names
    # the pass once, the tree twice.
    assert _rows(tmp_path, "FrontEnd()(gm)\n\uff43ount_relus(gm)\n") == []
    (tmp_path / "b").mkdir()
    assert _rows(tmp_path / "b", "\uff43ount_relus(gm)\nFrontEnd()(gm)\n") == [MATCH_ROW]
