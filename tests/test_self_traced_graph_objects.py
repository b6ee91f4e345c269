"""QL102 and QL101 on an object the project builds around the graph a `torch.compile` backend of
the repository keeps to itself (`graph_objects`, through `self_traced_graphs`; issue 14,
pytorch-shir's `QuantOpRewrite`): `rewrite_ops(gm)` builds `Rewriter(gm)`, which keeps the
graph module in `self.gm`, and calls its `rewrite()`; its methods insert `aten.pad` packets
into `self.gm.graph`, and the backend's simplifier (and the rewriter itself) folds them by the
packet. The quantizer beside them keys on `aten.pad.default`, but only ever sees the graphs
`prepare_pt2e` is handed. Loud again when the object is built around an exported graph, handed
to AOT or anywhere else, returned, its attribute rebound, `self` handed on, or the class
subclassed. And a node of the pass's graph retargeted to a packet (`n.target = aten.view`, the
simplifier's permute that moves no data), read as an insertion into that graph."""

from __future__ import annotations

import pytest

from tests.conftest import lint, package_repository
from tests.test_self_traced_compile_backend import EMIT, REGISTERED
from tests.test_self_traced_compile_backend import RUN as _RUN

REWRITER = """\
import torch

aten = torch.ops.aten


class Rewriter:
    def __init__(self, gm):
        self.counter = 0
        self.gm = gm

    def rewrite(self):
        for n in list(self.gm.graph.nodes):
            self._rewrite_pool(n)
        self._fold()
        {method_extra}

    def _rewrite_pool(self, n):
        if n.target == aten.pad.default:
            return  # a pad the exported model had: left as it is
        if n.op == "call_function" and n.target == aten.max_pool2d.default:
            graph = self.gm.graph
            with graph.inserting_before(n):
                padded = graph.call_function(aten.pad, (n.args[0], [0, 1, 0, 1]))
            n.replace_input_with(n.args[0], padded)

    def _fold(self):
        for n in list(self.gm.graph.nodes):
            if n.op == "call_function" and n.target == aten.pad and not any(n.args[1]):
                n.replace_all_uses_with(n.args[0])
{class_extra}

def rewrite_ops(gm):
    {construct}
"""

BUILT = "obj = Rewriter(gm)\n    obj.rewrite()"

BACKEND = (
    """\
import torch

from pkg.rewrites import rewrite_ops


def simpl(gm):
    graph = gm.graph
    for n in graph.nodes:
        if n.op == "call_function" and n.target == torch.ops.aten.pad and not any(n.args[1]):
            n.replace_all_uses_with(n.args[0])
            gm.graph.erase_node(n)
        elif n.op == "call_function" and n.target == torch.ops.aten.permute.default and n.args[1] == [0, 1]:
            {retarget}
    gm.recompile()


"""
    + EMIT
    + """

def compiler(gm, example_inputs):
    rewrite_ops(gm)
    simpl(gm)
    emit(gm)
    {after}
    return gm.forward
"""
)

RETARGET = "n.target = torch.ops.aten.view"

QUANTIZER = """\
import torch


def annotate_shared(gm):
    for n in gm.graph.nodes:
        if n.op == "call_function" and n.target in (torch.ops.aten.pad.default, torch.ops.aten.view.default):
            n.meta["shared"] = True
"""

RUN = _RUN.replace("{registration}", REGISTERED)


def _repo(tmp_path, construct=BUILT, method_extra="pass", class_extra="", after="pass", retarget=RETARGET, **extra):
    rewriter = (
        REWRITER.replace("{construct}", construct)
        .replace("{method_extra}", method_extra)
        .replace("{class_extra}", class_extra)
    )
    backend = BACKEND.replace("{after}", after).replace("{retarget}", retarget)
    root = package_repository(tmp_path, rewrites=rewriter, backend=backend, quantizer=QUANTIZER, **extra)
    (root / "scripts").mkdir()
    (root / "scripts" / "run.py").write_text(RUN)
    return root


def _rows(root, module: str, rule: str) -> list[int]:
    path = root / "pkg" / f"{module}.py"
    return [d.range.start.row for d in lint(path.read_text(), path=str(path), select=(rule,))]


def _row_of(root, module: str, needle: str) -> int:
    text = (root / "pkg" / f"{module}.py").read_text()
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


@pytest.mark.parametrize(
    "variant",
    [
        {},
        {"construct": "Rewriter(gm).rewrite()"},
        {"construct": "obj = Rewriter(gm)\n    obj.rewrite()\n    obj.rewrite()"},
        {"after": "aot_export_module(gm, example_inputs, trace_joint=False)"},
    ],
    ids=["bound-then-called", "called-on-construction", "called-twice", "re-traced-after"],
)
def test_quiet_on_an_object_built_around_the_backends_graph(tmp_path, variant):
    root = _repo(tmp_path, **variant)
    assert _rows(root, "rewrites", "QL102") == []
    assert _rows(root, "rewrites", "QL101") == []  # the rewriter folds its own pads
    assert _rows(root, "backend", "QL101") == []  # the simplifier folds them


EXPORTED = """\


def rewrite_exported(model, x):
    gm = torch.export.export(model, (x,)).module()
    Rewriter(gm).rewrite()
    return gm
"""


@pytest.mark.parametrize(
    "variant",
    [
        {"class_extra": EXPORTED},
        {"construct": "obj = Rewriter(gm)\n    obj.rewrite()\n    aot_export_module(obj, [])"},
        {"construct": "obj = Rewriter(gm)\n    obj.rewrite()\n    aot_export_module(obj.gm, [])"},
        {"construct": "return Rewriter(gm)"},
        {"construct": "obj = Rewriter(gm)\n    obj.gm = gm.copy()\n    obj.rewrite()"},
        {"class_extra": "\n    def rebind(self, other):\n        self.gm = other\n"},
        {"method_extra": "REGISTRY.append(self)"},
        {"method_extra": "CACHE['graph'] = self.gm"},
        {"method_extra": "aot_export_module(self.gm, [])"},
        {"class_extra": "\n\nclass Sub(Rewriter):\n    pass\n"},
        {"construct": "obj = Rewriter(gm.copy())\n    obj.rewrite()"},
    ],
    ids=[
        "exported-graph",
        "object-handed-to-aot",
        "graph-handed-to-aot",
        "object-returned",
        "attribute-reassigned",
        "attribute-rebound-by-a-method",
        "self-handed-on",
        "graph-kept-elsewhere",
        "method-re-traces",
        "subclassed",
        "built-around-a-copy",
    ],
)
def test_loud_when_the_object_or_its_graph_goes_elsewhere(tmp_path, variant):
    root = _repo(tmp_path, **variant)
    assert _rows(root, "rewrites", "QL102") == [_row_of(root, "rewrites", "graph.call_function(aten.pad")]


def test_loud_matchers_when_the_insertion_is_reported(tmp_path):
    # The matchers are right only while the insertion they consume stands.
    root = _repo(tmp_path, construct="return Rewriter(gm)")
    assert _rows(root, "backend", "QL101") == [_row_of(root, "backend", "torch.ops.aten.pad and")]


@pytest.mark.parametrize(
    ("retarget", "loud"),
    [
        (RETARGET, False),
        ("m = n.args[0]\n            m.target = torch.ops.aten.view", True),
        ("for m in gm.meta['other'].graph.nodes:\n                m.target = torch.ops.aten.view", True),
    ],
    ids=["loop-node", "an-argument-node", "another-graphs-node"],
)
def test_a_node_of_the_pass_graph_retargeted_to_a_packet(tmp_path, retarget, loud):
    root = _repo(tmp_path, retarget=retarget)
    expected = [_row_of(root, "backend", "target = torch.ops.aten.view")] if loud else []
    assert _rows(root, "backend", "QL102") == expected


def test_a_retarget_in_an_unregistered_backend_stays_loud(tmp_path):
    root = _repo(tmp_path)
    (root / "scripts" / "run.py").write_text(RUN.replace("backend=pkg.backend.compiler", "backend='inductor'"))
    assert _rows(root, "backend", "QL102") == [_row_of(root, "backend", "target = torch.ops.aten.view")]
