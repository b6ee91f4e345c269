"""A name chased through an import cycle of the project (a imports OP from b, b from a).

The resolver followed `from pkg.b import OP` into b, b's `from pkg.a import OP` back into a,
and so on without end: QL101 and QL102 reported "gave up" on ordinary (if odd) code, and lost
the file's other findings with it. The chase stops at the cycle's first repeat: what the
cycle binds is what one of its modules assigns besides the import (`try: from pkg.a import OP`
/ `except ImportError: OP = aten.relu`, the value every module of it ends up with), and
nothing when none does.
"""

from __future__ import annotations

import pytest

from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import settings_for, write_package

INSERTS = """\
import torch
from pkg.b import OP


def rewrite(gm):
    for node in gm.graph.nodes:
        with gm.graph.inserting_after(node):
            gm.graph.call_function({target}, (node,))
    return gm
"""

MATCHES = """\
import torch
from pkg.b import OP, OPS


def find(gm):
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target in OPS:
            return node
        if node.target == OP:
            return node
"""

FALLBACK = """\
import torch

try:
    from pkg.{source} import OP
except ImportError:
    OP = {value}
"""


def _check(tmp_path, code: str, checked: str = "a", **modules: str):
    pkg = write_package(tmp_path, "pkg", **modules)
    path = str(pkg / f"{checked}.py")
    text = (pkg / f"{checked}.py").read_text()
    result = check_source(text, path, settings_for((code,)), ProjectIndex())
    assert not result.errors, result.errors  # no "gave up"
    return [(d.range.start.row, d.code) for d in result.diagnostics]


# -- QL102: the inserted target chased through the cycle ----------------------------------------


@pytest.mark.parametrize(
    "modules",
    [
        pytest.param({"b": FALLBACK.format(source="a", value="torch.ops.aten.relu")}, id="two-modules"),
        pytest.param(
            {"b": "from pkg.c import OP\n", "c": FALLBACK.format(source="a", value="torch.ops.aten.relu")},
            id="three-modules",
        ),
        pytest.param({"b": FALLBACK.format(source="a", value="RELU") + "RELU = torch.ops.aten.relu\n"}, id="by-name"),
    ],
)
def test_packet_one_module_of_the_cycle_assigns_is_inserted(tmp_path, modules):
    assert _check(tmp_path, "QL102", a=INSERTS.format(target="OP"), **modules) == [(8, "QL102")]


@pytest.mark.parametrize(
    "modules",
    [
        pytest.param({"b": "from pkg.a import OP\n"}, id="two-modules-bind-nothing"),
        pytest.param({"b": "from pkg.c import OP\n", "c": "from pkg.a import OP\n"}, id="three-modules-bind-nothing"),
        pytest.param({"b": FALLBACK.format(source="a", value="torch.ops.aten.relu.default")}, id="overload"),
        pytest.param({"b": FALLBACK.format(source="a", value="lambda x: x")}, id="no-op"),
    ],
)
def test_cycle_binding_no_packet_is_quiet(tmp_path, modules):
    assert _check(tmp_path, "QL102", a=INSERTS.format(target="OP"), **modules) == []


def test_a_cycle_does_not_lose_the_files_other_findings(tmp_path):
    text = INSERTS.format(target="OP").replace(
        "(node,))\n", "(node,))\n            gm.graph.call_function(torch.ops.aten.add, (node,))\n"
    )
    assert _check(tmp_path, "QL102", a=text, b="from pkg.a import OP\n") == [(9, "QL102")]


def test_self_import(tmp_path):
    text = INSERTS.format(target="OP").replace("from pkg.b import OP", "from pkg.a import OP")
    assert _check(tmp_path, "QL102", a=text) == []


def test_package_init_and_its_module(tmp_path):
    pkg = write_package(tmp_path, "pkg", a=INSERTS.format(target="OP").replace("from pkg.b", "from pkg"))
    (pkg / "__init__.py").write_text("from pkg.a import OP\n")
    assert _check(tmp_path, "QL102", a=(pkg / "a.py").read_text()) == []
    (pkg / "__init__.py").write_text(FALLBACK.format(source="a", value="torch.ops.aten.relu"))
    assert _check(tmp_path, "QL102", a=(pkg / "a.py").read_text()) == [(8, "QL102")]


# -- QL101: matcher tables chased through the cycle ---------------------------------------------


def test_matcher_names_bound_nowhere(tmp_path):
    assert _check(tmp_path, "QL101", a=MATCHES, b="from pkg.a import OP, OPS\n") == []


def test_matcher_names_one_module_assigns(tmp_path):
    b = FALLBACK.format(source="a", value="torch.ops.aten.add").replace("import OP", "import OP, OPS")
    b += "    OPS = {torch.ops.aten.relu}\n"
    assert _check(tmp_path, "QL101", a=MATCHES, b=b) == [(7, "QL101"), (9, "QL101")]


# -- QL401: the imports read through the cycle --------------------------------------------------


def test_removed_import_names_through_a_cycle(tmp_path):
    a = "from pkg.b import prepare_pt2e\n\n\ndef run(m, q):\n    return prepare_pt2e(m, q)\n"
    assert _check(tmp_path, "QL401", a=a, b="from pkg.a import prepare_pt2e\n") == []


# -- QL201: a capture whose quantizer and model builder are imported through the cycle ----------


def test_capture_with_names_through_a_cycle(tmp_path):
    a = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

from pkg.b import QUANTIZER, build


def run(data):
    model = build()
    model.{switch}()
    gm = torch.export.export(model, (data,)).module()
    gm = prepare_pt2e(gm, QUANTIZER)
    gm(data)
    return convert_pt2e(gm)
"""
    b = "from pkg.a import QUANTIZER, build\n"
    assert _check(tmp_path, "QL201", a=a.format(switch="train"), b=b) == [(10, "QL201")]
    assert _check(tmp_path, "QL201", a=a.format(switch="eval"), b=b) == []


# -- several modules of the cycle assign the name: their join -----------------------------------


@pytest.mark.parametrize(
    ("b_value", "c_value", "found"),
    [
        pytest.param("torch.ops.aten.relu", "torch.ops.aten.relu", [(8, "QL102")], id="same-op"),
        pytest.param("torch.ops.aten.relu", "RELU", [(8, "QL102")], id="same-op-by-name"),
        pytest.param("torch.ops.aten.relu", "torch.ops.aten.relu.default", [], id="op-and-overload"),
        pytest.param("torch.ops.aten.relu", "torch.ops.aten.add", [], id="two-ops"),
        pytest.param("torch.ops.aten.relu", "lambda x: x", [], id="op-and-no-op"),
    ],
)
def test_several_modules_of_the_cycle_assign(tmp_path, b_value, c_value, found):
    # b and c import OP from each other, each with a fallback: OP is one of their values. When
    # they name the same op, that is OP; when not, no one value (a guess could be the wrong op).
    b = FALLBACK.format(source="c", value=b_value)
    c = FALLBACK.format(source="b", value=c_value) + "RELU = torch.ops.aten.relu\n"
    assert _check(tmp_path, "QL102", a=INSERTS.format(target="OP"), b=b, c=c) == found


def test_several_modules_assign_the_same_matcher_table(tmp_path):
    table = FALLBACK.format(source="SOURCE", value="torch.ops.aten.add").replace("import OP", "import OP, OPS")
    table += "    OPS = {torch.ops.aten.relu}\n"
    b, c = table.replace("SOURCE", "c"), table.replace("SOURCE", "b")
    # OP names the same op in both: matched; OPS is a set literal in each (no one name): not read.
    assert _check(tmp_path, "QL101", a=MATCHES, b=b, c=c) == [(9, "QL101")]
