"""QL103 weight-quantize-matcher-after-fold: matchers flagged against the project's convert calls."""

from __future__ import annotations

import textwrap

import pytest

from qlint.diagnostic import Applicability
from tests.conftest import lint, write_package

SEL = ("QL103",)

HEAD = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e

Q = torch.ops.quantized_decomposed.quantize_per_channel.default
DQ = torch.ops.quantized_decomposed.dequantize_per_channel.default
"""

MATCHER = """
def weights(gm):
    out = []
    for node in gm.graph.nodes:
        if node.target == Q and node.args[0].op == "get_attr":
            out.append(node.args[0])
    return out
"""


@pytest.fixture(autouse=True)
def _alone(tmp_path, monkeypatch):
    # A snippet's project is its directory: keep it away from files that call convert_pt2e.
    monkeypatch.chdir(tmp_path)


def ql103(src: str, **kw):
    return [d for d in lint(src, select=SEL, preview=True, **kw) if d.code == "QL103"]


def test_matcher_with_default_convert_in_the_file_is_flagged_and_names_the_call():
    src = HEAD + MATCHER + "\n\ndef lower(p):\n    return weights(convert_pt2e(p))\n"
    (d,) = ql103(src)
    assert "`weights`" in d.message and "line 16" in d.message
    assert "fold_quantize=False" in d.message and "dequantize" in d.message
    assert d.fix.applicability is Applicability.DISPLAY_ONLY
    assert d.related and d.related[0].range.start.row == 16


def test_explicit_fold_true_is_flagged():
    src = HEAD + MATCHER + "\n\ndef lower(p):\n    return weights(convert_pt2e(p, fold_quantize=True))\n"
    assert len(ql103(src)) == 1


def test_no_visible_call_is_flagged_on_the_default():
    (d,) = ql103(HEAD + MATCHER)
    assert "no `convert_pt2e` call is visible" in d.message


@pytest.mark.parametrize(
    "matcher",
    [
        # early exit on the quantize comparison, weight test after it
        """
        def weights(gm):
            for node in gm.graph.nodes:
                if node.target != Q:
                    continue
                if node.args[0].op == "get_attr":
                    yield node
        """,
        # nested if, helper from torch._export.utils, an alias of the edge dialect
        """
        from torch._export.utils import is_param
        from executorch.exir.dialects._ops import ops as exir_ops

        def weights(ep):
            for node in ep.graph.nodes:
                if node.target in (exir_ops.edge.quantized_decomposed.quantize_per_tensor.default,):
                    if is_param(ep, node.args[0]):
                        yield node
        """,
        # a module-level collection of quantize ops
        """
        QUANTIZE_OPS = {Q, torch.ops.quantized_decomposed.quantize_per_tensor.default}

        def weights(gm):
            return [n for n in gm.graph.nodes if n.target in QUANTIZE_OPS and n.args[0].op == "get_attr"]
        """,
    ],
)
def test_matcher_shapes_are_flagged(matcher):
    assert len(ql103(HEAD + textwrap.dedent(matcher))) == 1


@pytest.mark.parametrize(
    "matcher",
    [
        # takes the folded form as well: the weight test runs without a quantize node
        """
        def weights(gm):
            for node in gm.graph.nodes:
                if node.target != DQ:
                    continue
                source = node.args[0]
                if source.target == Q:
                    source = source.args[0]
                if source.op == "get_attr":
                    yield source
        """,
        # a matcher of activations: no weight test
        """
        def activations(gm):
            return [n for n in gm.graph.nodes if n.target == Q and n.args[0].op == "call_function"]
        """,
        # an annotator that runs before convert: weights, but no quantize op to compare
        """
        def annotate(gm):
            for node in gm.graph.nodes:
                if node.target == torch.ops.aten.conv2d.default and node.args[1].op == "get_attr":
                    node.meta["quantization_annotation"] = None
        """,
        # the dequantize of a weight: the folded form itself
        """
        def weights(gm):
            return [n for n in gm.graph.nodes if n.target == DQ and n.args[0].op == "get_attr"]
        """,
        # a quantize comparison and a weight test that do not depend on each other
        """
        def count(gm):
            q = sum(1 for n in gm.graph.nodes if n.target == Q)
            w = sum(1 for n in gm.graph.nodes if n.op == "get_attr")
            return q, w
        """,
        # inserting a quantize op (an eager reference, not a comparison)
        """
        def insert(gm, weight):
            with gm.graph.inserting_after(weight):
                return gm.graph.call_function(Q, (weight,)) if weight.op == "get_attr" else None
        """,
    ],
)
def test_look_alikes_stay_quiet(matcher):
    assert ql103(HEAD + textwrap.dedent(matcher)) == []


@pytest.mark.parametrize("setting", ["fold_quantize=False", "fold_quantize=fold", "**kwargs"])
def test_convert_calls_that_may_not_fold_keep_it_quiet(setting):
    src = HEAD + MATCHER + f"\n\ndef lower(p, fold=False, **kwargs):\n    return weights(convert_pt2e(p, {setting}))\n"
    assert ql103(src) == []


def test_calls_elsewhere_in_the_package_count(tmp_path):
    pkg = write_package(
        tmp_path,
        "backend",
        matchers=HEAD + MATCHER,
        lowering="from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e\n\n\n"
        "def lower(p):\n    return convert_pt2e(p)\n",
    )
    path = str(pkg / "matchers.py")
    (d,) = ql103((pkg / "matchers.py").read_text(), path=path)
    assert "lowering.py:5" in d.message
    assert d.related[0].path.endswith("lowering.py")
    (pkg / "lowering.py").write_text(
        "from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e\n\n\n"
        "def lower(p):\n    return convert_pt2e(p, fold_quantize=False)\n"
    )
    assert ql103((pkg / "matchers.py").read_text(), path=path) == []


def test_quantize_ops_imported_from_a_sibling_module(tmp_path):
    # ExecuTorch's Qualcomm FoldQDQ (v0.2-v0.6): the ops live in `.utils`, the matcher file
    # never spells a quantize op, so the text prefilter must not ask for one.
    pkg = write_package(
        tmp_path,
        "qnn",
        utils="import torch\n\nq_ops = {torch.ops.quantized_decomposed.quantize_per_channel.default}\n",
        fold="from .utils import q_ops\n\n\ndef fold(gm):\n    for n in gm.graph.nodes:\n"
        "        if n.target not in q_ops:\n            continue\n"
        "        if n.args[0].op == 'get_attr':\n            n.args[0].meta['tag'] = 1\n",
    )
    path = str(pkg / "fold.py")
    (d,) = ql103((pkg / "fold.py").read_text(), path=path)
    assert "`fold`" in d.message and d.range.start.row == 6


def test_a_cached_finding_is_dropped_when_another_module_stops_folding(tmp_path):
    """The finding depends on every module of the project (any may convert with
    `fold_quantize=False`): the results cache must see them as its dependencies."""
    import os

    from qlint.config import Overrides, load_settings
    from qlint.runner import run_check

    pkg = write_package(
        tmp_path,
        "backend",
        matchers=HEAD + MATCHER,
        lowering="from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e\n\n\n"
        "def lower(p):\n    return convert_pt2e(p)\n",
    )
    past = 1_600_000_000
    for f in pkg.iterdir():
        os.utime(f, (past, past))
    (tmp_path / "pyproject.toml").write_text("[tool.qlint]\npreview = true\nselect = ['QL103']\n")
    settings = load_settings([str(pkg)], overrides=Overrides(cache_dir=str(tmp_path / "cache")))

    def found():
        run = run_check([str(pkg)], settings, use_cache=True, jobs=1)
        return run.cached, [d.code for r in run.results for d in r.diagnostics]

    assert found() == (0, ["QL103"])
    assert found() == (3, ["QL103"])
    (pkg / "lowering.py").write_text(
        "from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e\n\n\n"
        "def lower(p):\n    return convert_pt2e(p, fold_quantize=False)\n"
    )
    assert found() == (1, [])  # __init__.py; lowering.py changed, matchers.py depends on it


def test_an_unsaved_buffer_of_another_module_counts(tmp_path):
    """The editor holds `lowering.py` with `fold_quantize=False`, unsaved: the matcher's
    check reads the buffer, not the file (and no answer remembered from the file is reused)."""
    from qlint.analysis.names.project import ProjectIndex
    from qlint.config import Overrides, load_settings
    from qlint.engine import check_source

    lowering = "from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e\n\n\ndef lower(p):\n"
    folding = lowering + "    return convert_pt2e(p)\n"
    pkg = write_package(tmp_path, "backend", matchers=HEAD + MATCHER, lowering=folding)
    settings = load_settings([str(pkg)], overrides=Overrides(preview=True, select=("QL103",)))
    path = str(pkg / "matchers.py")
    project = ProjectIndex()
    assert [d.code for d in check_source((pkg / "matchers.py").read_text(), path, settings, project).diagnostics] == [
        "QL103"
    ]
    project.update(str(pkg / "lowering.py"), lowering + "    return convert_pt2e(p, fold_quantize=False)\n")
    assert check_source((pkg / "matchers.py").read_text(), path, settings, project).diagnostics == []
