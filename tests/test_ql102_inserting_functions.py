"""QL102, a packet the inserting module consumes itself: only a call of the function that
inserts it (or of one of the module's functions calling that one) puts the node in a graph,
so an export after a call of the module's other passes is not a re-export between the
insertion and the consumer (tt-xla's backend folds einsums in one branch, exports in the
other, then inserts its argument markers, which the same pass validates by the packet)."""

from __future__ import annotations

import pytest

from tests.conftest import lint, write_package

ADD = """\
import torch


def fold(gm):
    for n in list(gm.graph.nodes):
        if n.op == "call_function" and not n.users:
            gm.graph.erase_node(n)


def mark(gm):
    for node in list(gm.graph.nodes):
        if node.op == "placeholder":
            with gm.graph.inserting_after(node):
                gm.graph.call_function(torch.ops.aten.zeros_like, (node,))
    _check(gm)
    return gm


def _check(gm):
    for n in list(gm.graph.nodes):
        if n.target == torch.ops.aten.zeros_like:
            n.replace_all_uses_with(n.args[0])
            gm.graph.erase_node(n)


def run(gm):
    return mark(gm)
"""

PIPELINE = """\
from torch.export import export

from pkg.add import fold, mark, run


def lower(gm, x, aot):
{body}
"""

EXPORT_ELSE = """\
    if aot:
        fold(gm)
    else:
        gm = export(gm, (x,)).module()
    return mark(gm)
"""


def _ql102(tmp_path, add: str = ADD, body: str = EXPORT_ELSE) -> list[int]:
    pkg = write_package(tmp_path, "pkg", add=add, pipeline=PIPELINE.format(body=body))
    path = pkg / "add.py"
    return [d.range.start.row for d in lint(path.read_text(), path=str(path), select=("QL102",))]


def test_an_export_after_another_pass_of_the_module_is_quiet(tmp_path):
    assert _ql102(tmp_path) == []


@pytest.mark.parametrize(
    "body",
    [
        # exported after the inserting pass itself
        "    gm = mark(gm)\n    return export(gm, (x,)).module()\n",
        # after a function of the module that calls it
        "    gm = run(gm)\n    return export(gm, (x,)).module()\n",
    ],
)
def test_an_export_after_what_inserts_the_packet_stays_loud(tmp_path, body):
    assert _ql102(tmp_path, body=body) == [14]


def test_an_insertion_in_a_method_counts_every_name_of_the_module(tmp_path):
    # `mark` hands the work to a method: the insertion is no longer a module-level
    # function's, so the export after `fold` may follow it
    add = ADD.replace(
        '    for node in list(gm.graph.nodes):\n        if node.op == "placeholder":\n'
        "            with gm.graph.inserting_after(node):\n"
        "                gm.graph.call_function(torch.ops.aten.zeros_like, (node,))\n",
        "    Marker().apply(gm)\n",
    )
    add += (
        "\n\nclass Marker:\n    def apply(self, gm):\n        for node in list(gm.graph.nodes):\n"
        "            with gm.graph.inserting_after(node):\n"
        "                gm.graph.call_function(torch.ops.aten.zeros_like, (node,))\n"
    )
    inserting = [i for i, line in enumerate(add.splitlines(), 1) if "graph.call_function" in line]
    assert _ql102(tmp_path, add=add) == inserting


def test_an_inserting_pass_listed_at_module_level_counts_every_name(tmp_path):
    # a list of passes may run it anywhere: the export after `fold` may follow the insertion
    assert _ql102(tmp_path, add=ADD + "\n\nPASSES = [fold, mark]\n") == [14]
