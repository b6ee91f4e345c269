"""QL204 convert-without-calibration: `convert_pt2e` on a PTQ-prepared model that never ran."""

from __future__ import annotations

import textwrap

import pytest

from qlint.diagnostic import Applicability
from tests.conftest import lint, write_package

HEAD = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e
from torchao.quantization.pt2e import move_exported_model_to_eval
"""
ROWS = HEAD.count("\n")


def ql204(src: str, path: str = "snippet.py", **options):
    return lint(HEAD + textwrap.dedent(src), path=path, select=("QL204",), **options)


def body(lines: str) -> str:
    """`lines` between a prepare and a convert in one function."""
    return (
        "def quantize(model, quantizer, x, data):\n"
        "    prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)\n"
        + textwrap.indent(textwrap.dedent(lines), "    ")
        + "    return convert_pt2e(prepared)\n"
    )


def test_prepare_then_convert_is_flagged_with_the_prepare_call_related():
    (d,) = ql204(body(""))
    assert d.code == "QL204" and d.name == "convert-without-calibration"
    assert (d.range.start.row, d.range.start.col) == (ROWS + 3, 11)
    assert d.message.startswith("`prepared` is converted without calibration")
    assert f"after `prepare_pt2e` (line {ROWS + 2})" in d.message
    assert "scale 1.0 and zero point 0" in d.help
    (rel,) = d.related
    assert rel.message == "prepared here" and rel.range.start.row == ROWS + 2
    assert d.fix.applicability is Applicability.DISPLAY_ONLY and not d.fix.edits
    assert "for batch in calibration_data: prepared(*batch)" in d.fix.message
    assert d.evidence["prepare"]["row"] == ROWS + 2 and d.evidence["convert"]["row"] == ROWS + 3


@pytest.mark.parametrize(
    "between",
    [
        "alias = prepared\nprepared = alias\n",
        "prepared = move_exported_model_to_eval(prepared)\n",
        "prepared = prepared.to('cpu')\n",
        "print(prepared)\n",
        "print(prepared.graph)\n",
        "prepared.graph.print_tabular()\n",
        "prepared.print_readable()\n",
        "n = len(list(prepared.named_modules()))\n",
        "logger.info('prepared %s', prepared)\n",
        "assert isinstance(prepared, torch.fx.GraphModule)\n",
        "for node in prepared.graph.nodes:\n    print(node)\n",
    ],
)
def test_uses_that_run_nothing_keep_the_finding(between):
    assert [d.code for d in ql204(body(between))] == ["QL204"]


@pytest.mark.parametrize(
    "between",
    [
        "prepared(x)\n",
        "prepared(*data[0])\n",
        "for batch in data:\n    prepared(*batch)\n",
        "[prepared(b) for b in data]\n",
        "any(prepared(b) is None for b in data)\n",
        "prepared.forward(x)\n",
        "if data:\n    prepared(x)\n",
        "while data:\n    prepared(data.pop())\n",
        "with torch.no_grad():\n    out = prepared(x)\n",
        "try:\n    prepared(x)\nexcept RuntimeError:\n    pass\n",
        "run = lambda: prepared(x)\nrun()\n",
        "def run():\n    prepared(x)\nrun()\n",
        "self_models = [prepared]\n",
        "cache = {}\ncache['m'] = prepared\n",
        "holder.model = prepared\n",
        "torch.export.export(prepared, (x,))\n",
        "evaluate(prepared, data)\n",
        "from mylib import calibrate\ncalibrate(prepared, data)\n",
        "sub = prepared.linear\n",
    ],
)
def test_anything_that_may_run_it_quiets(between):
    assert ql204(body(between)) == []


def test_a_helper_of_the_module_that_calibrates_quiets_one_that_only_prints_does_not():
    src = """
    def calibrate(m, data):
        for batch in data:
            m(*batch)

    def describe(m):
        print(m.graph)

    def good(model, q, data):
        p = prepare_pt2e(model, q)
        calibrate(p, data)
        return convert_pt2e(p)

    def bad(model, q, data):
        p = prepare_pt2e(model, q)
        describe(p)
        return convert_pt2e(p)
    """
    (d,) = ql204(src)
    assert d.range.start.row == ROWS + 17


def test_a_method_that_calibrates_through_self():
    src = """
    class Flow:
        def calibrate(self, m):
            for b in self.data:
                m(b)

        def run(self, model, q):
            p = prepare_pt2e(model, q)
            self.calibrate(p)
            return convert_pt2e(p)

        def skip(self, model, q):
            p = prepare_pt2e(model, q)
            self.describe(p)
            return convert_pt2e(p)

        def describe(self, m):
            print(m)
    """
    (d,) = ql204(src)
    assert d.range.start.row == ROWS + 15


def test_prepared_by_one_helper_converted_by_another():
    src = """
    def build(model, q, x):
        return prepare_pt2e(torch.export.export(model, (x,)).module(), q)

    def finish(p):
        return convert_pt2e(p)

    def main(model, q, x):
        p = build(model, q, x)
        return finish(p)

    def direct(model, q, x):
        p = build(model, q, x)
        return convert_pt2e(p)
    """
    first, second = ql204(src)
    assert first.range.start.row == ROWS + 10
    assert first.message.startswith("`finish` converts `p` without calibration")
    assert "after `prepare_pt2e` in `build` (line 6)" in first.message
    assert [r.message for r in first.related] == ["prepared here", "converted here"]
    assert first.related[1].range.start.row == ROWS + 6
    assert second.range.start.row == ROWS + 14


def test_a_helper_that_calibrates_before_converting_quiets():
    src = """
    def finish(p, data):
        for b in data:
            p(b)
        return convert_pt2e(p)

    def main(model, q, data):
        return finish(prepare_pt2e(model, q), data)
    """
    assert ql204(src) == []


def test_convert_of_a_parameter_without_callers_is_unknown_provenance():
    assert ql204("def finish(prepared):\n    return convert_pt2e(prepared)\n") == []


@pytest.mark.parametrize(
    "src",
    [
        # QAT: the training loop runs the model.
        "def f(m, q, data):\n    p = prepare_qat_pt2e(m, q)\n    train(p, data)\n    return convert_pt2e(p)\n",
        "def f(m):\n    q = XNNPACKQuantizer()\n    q.set_global(get_symmetric_quantization_config(is_qat=True))\n"
        "    return convert_pt2e(prepare_pt2e(m, q))\n",
        "def f(m, is_qat):\n    cfg = get_config(is_qat=is_qat)\n    q = Quantizer().set_global(cfg)\n"
        "    p = prepare_pt2e(m, q)\n    return convert_pt2e(p)\n",
        # Which prepare a helper returns depends on the flag; a QAT model is trained.
        "def prep(m, is_qat):\n    if is_qat:\n        return prepare_qat_pt2e(m, Q(is_qat=True))\n"
        "    return prepare_pt2e(m, Q())\n\ndef f(m):\n    return convert_pt2e(prep(m, True))\n",
        # Stored on self: another method may calibrate it.
        "class A:\n    def f(self, m, q):\n        self.p = prepare_pt2e(m, q)\n        return convert_pt2e(self.p)\n",
        # A generator hands it out and resumes after the caller ran it.
        "def f(m, q):\n    p = prepare_pt2e(m, q)\n    yield p\n    yield convert_pt2e(p)\n",
    ],
)
def test_look_alikes_that_stay_quiet(src):
    assert ql204(src) == []


def test_dynamic_and_weight_only_configs_still_need_one_forward_pass():
    src = """
    def f(m, x):
        q = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_dynamic=True))
        p = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
        return convert_pt2e(p)
    """
    assert [d.code for d in ql204(src)] == ["QL204"]


def test_only_the_uncalibrated_of_two_prepared_models():
    src = """
    def f(a, b, q, x):
        pa = prepare_pt2e(a, q)
        pb = prepare_pt2e(b, q)
        pa(x)
        return convert_pt2e(pa), convert_pt2e(pb)
    """
    (d,) = ql204(src)
    assert "`pb`" in d.message and f"(line {ROWS + 4})" in d.message


def test_module_level_script():
    src = "prepared = prepare_pt2e(gm, quantizer)\n# calibrate with a sample dataset\n"
    src += "converted = convert_pt2e(prepared)\n"
    (d,) = ql204(src)
    assert d.range.start.row == ROWS + 3


GRAPH_TEST = """
def test_graph(self):
    m = prepare_pt2e(gm, quantizer)
    m = convert_pt2e(m)
    self.checkGraphModuleNodes(m, expected_node_occurrence=counts)
    for n in m.graph.nodes:
        assert n.target is not None
"""


def test_a_test_that_only_inspects_the_converted_graph_is_quiet():
    assert ql204(GRAPH_TEST) == []
    assert ql204(GRAPH_TEST.replace("def test_graph", "def check_graph"), path="tests/test_graph.py") == []


def test_structural_tests_can_be_flagged_too():
    assert [d.code for d in ql204(GRAPH_TEST, **{"QL204": {"structural-tests": False}})] == ["QL204"]


@pytest.mark.parametrize(
    "use",
    ["out = m(x)", "return m", "outs = [m(b) for b in data]", "m.forward(x)"],
)
def test_a_test_that_runs_the_converted_model_is_flagged(use):
    src = "def test_numerics(gm, quantizer, x, data):\n    m = prepare_pt2e(gm, quantizer)\n"
    src += f"    m = convert_pt2e(m)\n    {use}\n"
    assert [d.code for d in ql204(src)] == ["QL204"]


def test_a_test_helper_that_converts_and_runs_is_flagged_at_the_call():
    src = """
    def _convert_and_run(p, x):
        c = convert_pt2e(p)
        return c(x)

    def test_numerics(gm, q, x):
        p = prepare_pt2e(gm, q)
        _convert_and_run(p, x)
    """
    (d,) = ql204(src)
    assert d.range.start.row == ROWS + 8


def test_helpers_in_other_modules(tmp_path):
    pkg = write_package(
        tmp_path,
        "pkg",
        calib="def calibrate(m, data):\n    for b in data:\n        m(b)\n\n\ndef show(m):\n    print(m)\n",
        build=HEAD + "\n\ndef build(model, q):\n    return prepare_pt2e(model, q)\n",
    )
    src = (
        HEAD
        + "from pkg.calib import calibrate, show\nfrom pkg.build import build\n\n\n"
        + "def good(model, q, data):\n    p = build(model, q)\n    calibrate(p, data)\n    return convert_pt2e(p)\n\n\n"
        + "def bad(model, q, data):\n    p = build(model, q)\n    show(p)\n    return convert_pt2e(p)\n"
    )
    (d,) = lint(src, path=str(pkg / "main.py"), select=("QL204",))
    assert d.range.start.row == ROWS + 14
    assert f"in `build` ({pkg / 'build.py'}:{ROWS + 4})" in d.message
    assert d.related[0].path == str(pkg / "build.py") and d.related[0].range.start.row == ROWS + 4


def test_the_bundled_example(root):
    path = root / "examples" / "capture" / "convert_without_calibration.py"
    found = lint(path.read_text(), path=str(path), select=("QL204",))
    assert [d.range.start.row for d in found] == [34]


@pytest.mark.parametrize(
    "src",
    [
        # A closure defined before the prepare reads the prepared model by name when called.
        "def f(model, q, data):\n    def calib():\n        for b in data:\n            model(b)\n"
        "    model = prepare_pt2e(model, q)\n    calib()\n    return convert_pt2e(model)\n",
        "def f(model, q, x):\n    calib = lambda: model(x)\n    model = prepare_pt2e(model, q)\n    calib()\n"
        "    return convert_pt2e(model)\n",
        # A module-level script calibrating through a module function that reads the global.
        "def calibrate():\n    for b in data:\n        model(b)\n\n\nmodel = prepare_pt2e(gm, q)\ncalibrate()\n"
        "model = convert_pt2e(model)\n",
    ],
)
def test_closures_and_globals_that_run_it_quiet(src):
    assert ql204(src) == []


def test_a_module_function_that_reads_another_global_keeps_the_finding():
    src = "def show():\n    print(config)\n\n\nmodel = prepare_pt2e(gm, q)\nshow()\nmodel = convert_pt2e(model)\n"
    assert [d.code for d in ql204(src)] == ["QL204"]


def test_a_quantizer_reassigned_after_a_qat_one_is_ptq_again():
    src = """
    def test_mixed(m, m2, x):
        quantizer = XNNPACKQuantizer().set_global(get_symmetric_quantization_config(is_qat=True))
        m.sub = prepare_qat_pt2e(m.sub, quantizer)
        m(x)
        m.sub = convert_pt2e(m.sub)
        quantizer = XNNPACKQuantizer().set_module_type(torch.nn.Linear, get_symmetric_quantization_config())
        m2 = prepare_pt2e(m2, quantizer)
        m2 = convert_pt2e(m2)
        return m2
    """
    (d,) = ql204(src)
    assert d.range.start.row == ROWS + 9


@pytest.mark.parametrize(
    "src",
    [
        "def f(m, is_qat):\n    if is_qat:\n        q = Q(is_qat=True)\n    else:\n        q = Q()\n"
        "    return convert_pt2e(prepare_pt2e(m, q))\n",
        "def make():\n    return XNNPACKQuantizer().set_global(get_config(is_qat=True))\n\n\n"
        "def f(m):\n    return convert_pt2e(prepare_pt2e(m, make()))\n",
        "QUANTIZER = XNNPACKQuantizer().set_global(get_config(is_qat=True))\n\n\n"
        "def f(m):\n    return convert_pt2e(prepare_pt2e(m, QUANTIZER))\n",
        "def f(m, q):\n    config = get_config(is_qat=True)\n    q.set_global(config)\n"
        "    return convert_pt2e(prepare_pt2e(m, q))\n",
    ],
)
def test_qat_configurations_by_path_helper_global_and_setter(src):
    assert ql204(src) == []


LOWERED_TEST = """
from executorch.exir import to_edge


class TestLowering:
    def lower_and_compare(self, module, x):
        ref = module.exported_program().module()(*x)
        return ref

    def inspect(self, module, x):
        print(module.exported_program().graph_module.code)

    def test_lowered(self, gm, quantizer, x):
        prepared = prepare_pt2e(gm, quantizer)
        converted = convert_pt2e(prepared)
        edge = to_edge(torch.export.export(converted, x)).transform([])
        self.{helper}(module=edge, x=x)
"""


def test_a_test_that_runs_a_program_lowered_from_the_converted_model_is_flagged():
    # Export, `to_edge` and `.transform()` keep the converted model's numbers: running the
    # lowered program runs them (ExecuTorch's `lower_module_and_test_output`).
    (d,) = ql204(LOWERED_TEST.format(helper="lower_and_compare"))
    assert d.range.start.row == ROWS + 15  # the convert_pt2e call


@pytest.mark.parametrize(
    "helper, chain",
    [
        ("inspect", None),  # the lowered program's graph is only printed
        # A new model exported beside the converted one is not derived from it.
        ("lower_and_compare", "to_edge(torch.export.export(other, x)).transform([])"),
    ],
)
def test_a_lowered_program_only_inspected_or_not_derived_stays_quiet(helper, chain):
    src = LOWERED_TEST.format(helper=helper)
    if chain is not None:
        src = src.replace("to_edge(torch.export.export(converted, x)).transform([])", chain)
        src = src.replace("(self, gm, quantizer, x)", "(self, gm, quantizer, x, other)")
    assert ql204(src) == []
