"""QL201: a helper whose PTQ branch its callers' arguments decide (issue 14, items 7 and 16).

Three constructs, each quiet where every call path rules the PTQ branch out or passes an
eval-mode model, and loud on the look-alikes where one path does not:

- a branch on an enum member (`if qmode == QuantizationMode.NONE: return gm`), the shape of
  ExecuTorch's Vulkan `get_exported_graph`;
- a condition carried past an early `if ...: return` to the `prepare_pt2e` after it;
- callers whose arguments decide the branch, followed up through callers that forward their own
  parameters (`qmode=qmode`, `is_qat=is_qat`), also in other modules and through a test base
  class's method (torchao's `_generate_ref_quantized_model` called by `_test_common`).
"""

from __future__ import annotations

import textwrap

from tests.conftest import check_file, lint, package_repository, rows_of

HEAD = """\
from enum import Enum, auto

import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3)
        self.bn = torch.nn.BatchNorm2d(3)


class QuantizationMode(Enum):
    NONE = auto()
    INT8_STATIC_PER_CHANNEL = auto()
"""


def rows(src: str, tmp_path) -> list[int]:
    """The rows QL201 reports in `src`, checked as the one module of a repository (the project
    scan for other callers then sees nothing else)."""
    root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
    (root / ".git").mkdir(parents=True)
    path = str(root / "helpers.py")
    return [d.range.start.row for d in lint(HEAD + textwrap.dedent(src), path=path, select=("QL201",))]


def row(src: str, text: str) -> int:
    lines = (HEAD + textwrap.dedent(src)).splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


# -- an enum member decides the branch, at a caller two levels up --------------------------------
VULKAN = """
def get_exported_graph(model, sample_inputs, qmode=QuantizationMode.NONE):
    graph = export(model, sample_inputs, strict=True).module()
    if qmode == QuantizationMode.NONE:
        return graph
    prepared = prepare_pt2e(graph, Quantizer())
    prepared(*sample_inputs)
    return convert_pt2e(prepared)


def export_model_to_vulkan(model, sample_inputs, qmode=QuantizationMode.NONE):
    return lower(get_exported_graph(model, sample_inputs, qmode=qmode))


def export_model_to_xnnpack(model, sample_inputs, dynamic_shapes=None, qmode=QuantizationMode.NONE):
    return lower(get_exported_graph(model, sample_inputs, qmode=qmode))


def lower_module_and_test_output(model, sample_inputs, xnnpack=False):
    if xnnpack:
        return export_model_to_xnnpack(model, sample_inputs, None)
    return export_model_to_vulkan(model, sample_inputs)


def save_bundled_program(model, sample_inputs):
    return export_model_to_vulkan(model, sample_inputs)
"""


def test_every_caller_leaving_the_enum_default_two_levels_up_is_quiet(tmp_path):
    assert rows(VULKAN, tmp_path) == []


def test_a_caller_asking_for_the_quantized_mode_with_a_train_mode_model_is_reported(tmp_path):
    src = VULKAN + "\n\ndef test_quantized(x):\n    export_model_to_vulkan(Net(), (x,), qmode={mode})\n"
    assert rows(src.format(mode="QuantizationMode.INT8_STATIC_PER_CHANNEL"), tmp_path) == [
        row(VULKAN, "graph = export(")
    ]
    assert rows(src.format(mode="QuantizationMode.NONE"), tmp_path) == []  # the default, spelled out
    # The quantized mode with an eval-mode model is right too.
    evaluated = src.replace("Net(), (x,)", "Net().eval(), (x,)")
    assert rows(evaluated.format(mode="QuantizationMode.INT8_STATIC_PER_CHANNEL"), tmp_path) == []


def test_an_enum_member_passed_from_another_module_is_read_there(tmp_path):
    root = package_repository(tmp_path / "repo")
    helper = root / "pkg" / "vk_utils.py"
    helper.write_text(HEAD + textwrap.dedent(VULKAN))
    script = (
        "from pkg.vk_utils import Net, export_model_to_vulkan\n"
        "from pkg.vk_utils import QuantizationMode as QM\n\n\n"
        "def main(x):\n    export_model_to_vulkan(Net(), (x,), qmode=QM.{member})\n"
    )

    def check(member: str) -> list[int]:
        (root / "run.py").write_text(script.format(member=member))
        return rows_of(check_file(helper, ("QL201",)).diagnostics)

    assert check("NONE") == []
    assert check("INT8_STATIC_PER_CHANNEL") == [row(VULKAN, "graph = export(")]


def test_unknown_callers_keep_the_finding(tmp_path):
    capture = row(VULKAN, "graph = export(")
    # A mode the analysis cannot read, handed on by a caller nobody calls.
    assert rows(
        VULKAN + "\n\ndef run(model, x, mode):\n    export_model_to_vulkan(model, (x,), qmode=mode)\n", tmp_path
    ) == [capture]
    # `**options` may hold the mode.
    assert rows(
        VULKAN + "\n\ndef run(x, **options):\n    export_model_to_vulkan(Net(), (x,), **options)\n", tmp_path
    ) == [capture]
    # The helper handed on as a callback: whoever calls it is not known.
    assert rows(VULKAN + "\n\ndef run(x):\n    return apply(export_model_to_vulkan, Net(), (x,))\n", tmp_path) == [
        capture
    ]
    # A helper nobody calls is there for callers qlint cannot see.
    alone = VULKAN.split("\n\ndef export_model_to_vulkan")[0]
    assert rows(alone, tmp_path) == [capture]


def test_a_parameter_rebound_on_the_way_is_not_forwarded(tmp_path):
    rebound = VULKAN.replace(
        "    return lower(get_exported_graph(model, sample_inputs, qmode=qmode))\n\n\ndef export_model_to_xnnpack",
        "    qmode = CONFIG.qmode or qmode\n"
        "    return lower(get_exported_graph(model, sample_inputs, qmode=qmode))\n\n\ndef export_model_to_xnnpack",
    )
    assert rows(rebound, tmp_path) == [row(VULKAN, "graph = export(")]


def test_enum_members_that_may_alias_decide_nothing(tmp_path):
    # `OFF = 0` is an alias of `NONE = 0`: `qmode == NONE` holds for it, so neither member rules anything out.
    src = """
    class Mode(Enum):
        NONE = 0
        OFF = 0
        INT8 = 1


    def get_graph(model, x, qmode=Mode.NONE):
        graph = export(model, (x,)).module()
        if qmode == Mode.NONE:
            return graph
        return prepare_pt2e(graph, Quantizer())


    def main(x):
        get_graph(Net(), x, qmode=Mode.{member})
    """
    assert rows(src.format(member="OFF"), tmp_path) == [row(src, "graph = export(")]
    distinct = src.replace("OFF = 0", "OFF = 2")
    assert rows(distinct.format(member="NONE"), tmp_path) == []  # values all distinct: NONE decides
    assert rows(distinct.format(member="OFF"), tmp_path) == [row(src, "graph = export(")]  # OFF takes the PTQ branch


def test_a_class_that_is_no_enum_decides_nothing(tmp_path):
    src = """
    class Mode:
        NONE = 0
        INT8 = 1


    def get_graph(model, x, qmode=Mode.NONE):
        graph = export(model, (x,)).module()
        if qmode == Mode.NONE:
            return graph
        return prepare_pt2e(graph, Quantizer())


    def main(x):
        get_graph(Net(), x)
    """
    assert rows(src, tmp_path) == [row(src, "graph = export(")]


def test_an_enum_branch_inside_one_function_pairs_the_mode_with_the_prepare(tmp_path):
    src = """
    def main(x, mode):
        model = Net()
        if mode == QuantizationMode.NONE:
            model.eval()
        graph = export(model, (x,)).module()
        if mode == QuantizationMode.NONE:
            prepare_pt2e(graph, Quantizer())
        else:
            prepare_qat_pt2e(graph, Quantizer())
    """
    assert rows(src, tmp_path) == []
    # The other arm captures in train mode for PTQ: reported.
    flipped = textwrap.dedent(src).replace(
        "if mode == QuantizationMode.NONE:\n        prepare_pt2e",
        "if mode != QuantizationMode.NONE:\n        prepare_pt2e",
    )
    assert rows(flipped, tmp_path) == [row(src, "graph = export(")]


# -- a condition carried past an early return ------------------------------------------------------
EARLY = """
def get_graph(model, x, quantize=False):
    graph = export(model, (x,)).module()
    if not quantize:
        return graph
    return prepare_pt2e(graph, Quantizer())


def main(x):
    return get_graph(Net(), x)
"""


def test_a_prepare_after_an_early_return_the_callers_take_is_quiet(tmp_path):
    assert rows(EARLY, tmp_path) == []
    raising = EARLY.replace("        return graph\n", "        raise ValueError('float only')\n")
    assert rows(raising, tmp_path) == []


def test_a_caller_passing_the_ptq_flag_with_a_train_mode_model_is_reported(tmp_path):
    assert rows(EARLY.replace("get_graph(Net(), x)", "get_graph(Net(), x, quantize=True)"), tmp_path) == [
        row(EARLY, "graph = export(")
    ]
    assert rows(EARLY.replace("get_graph(Net(), x)", "get_graph(Net().eval(), x, quantize=True)"), tmp_path) == []


def test_an_identity_test_is_not_decided_by_an_equal_value(tmp_path):
    # `0 is False` is false where `0 == False` is not: a caller passing 0 reaches the prepare.
    src = EARLY.replace("if not quantize:", "if quantize is False:")
    assert rows(src, tmp_path) == []
    zero = src.replace("get_graph(Net(), x)", "get_graph(Net(), x, quantize=0)")
    assert rows(zero, tmp_path) == [row(EARLY, "graph = export(")]
    assert rows(src.replace("get_graph(Net(), x)", "get_graph(Net(), x, quantize=False)"), tmp_path) == []


def test_an_early_exit_holds_only_for_the_rest_of_its_block(tmp_path):
    src = """
    def get_graph(model, x, quantize=False):
        graph = export(model, (x,)).module()
        for _ in range(1):
            if not quantize:
                break
        return prepare_pt2e(graph, Quantizer())


    def main(x):
        return get_graph(Net(), x)
    """
    assert rows(src, tmp_path) == [row(src, "graph = export(")]
    # An arm that does not end carries nothing either.
    assert rows(EARLY.replace("        return graph\n", "        graph = graph\n"), tmp_path) == [
        row(EARLY, "graph = export(")
    ]


# -- the PTQ/QAT flag of a shared helper, matched caller by caller across modules -----------------
HELPER = """\
import contextlib

import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e


def _generate_ref_quantized_model(mod, inputs, is_qat=False, is_fp8=False):
    maybe_no_grad = contextlib.nullcontext() if is_qat else torch.no_grad()
    with maybe_no_grad:
        if is_fp8:
            return fp8_convert_(mod)
        export_model = torch.export.export(mod, inputs, strict=True).module()
        prepare_model = prepare_qat_pt2e(export_model, Q()) if is_qat else prepare_pt2e(export_model, Q())
        prepare_model(*inputs)
        return convert_pt2e(prepare_model)
"""
TESTS = """\
import unittest

import torch
from torchao.testing.pt2e.utils import _generate_ref_quantized_model


class M(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = torch.nn.Conv2d(3, 3, 3)
        self.bn = torch.nn.BatchNorm2d(3)


class TestPatternMatcherBase(unittest.TestCase):
    def _test_common(self, mod, inputs, check_quantization=False, is_qat=False, is_fp8=False):
        if check_quantization:
            mod = _generate_ref_quantized_model(mod, inputs, is_qat, is_fp8)
        return mod(*inputs)


class TestPatternMatcher(TestPatternMatcherBase):
    def _qlinear_test_helper(self, inputs, is_qat=False):
        mod = M().eval()
        self._test_common(mod, inputs, check_quantization=True, is_qat=is_qat)

    def test_qconv2d(self):
        self._test_common(M().eval(), (torch.randn(1, 3, 8, 8),), check_quantization=True)

    def test_qat_qconv2d(self):
        mod = M().train()
        self._test_common(mod, (torch.randn(1, 3, 8, 8),), check_quantization=True, is_qat=True)

    def test_qlinear(self):
        self._qlinear_test_helper((torch.randn(2, 4),))

    def test_fp8(self):
        self._test_common(M(), (torch.randn(2, 4),), check_quantization=True, is_fp8=True)
"""


def _repo(tmp_path, tests: str = TESTS, **extra: str):
    """torchao's layout: the helper in `torchao/testing/pt2e/utils.py`, tests under `test/`."""
    root = tmp_path / "ao"
    (root / ".git").mkdir(parents=True)
    package = root / "torchao" / "testing" / "pt2e"
    package.mkdir(parents=True)
    for d in (root / "torchao", root / "torchao" / "testing", package):
        (d / "__init__.py").touch()
    (package / "utils.py").write_text(HELPER)
    (root / "test").mkdir()
    (root / "test" / "test_fusion.py").write_text(tests)
    for name, text in extra.items():
        (root / "test" / f"{name}.py").write_text(text)
    return root


def _check(root) -> list[int]:
    path = root / "torchao" / "testing" / "pt2e" / "utils.py"
    return rows_of(check_file(path, ("QL201",)).diagnostics)


CAPTURE = next(i for i, line in enumerate(HELPER.splitlines(), 1) if "torch.export.export(" in line)


def test_each_caller_pairs_its_flag_with_its_model_across_modules(tmp_path):
    # PTQ calls pass eval-mode models, the QAT call a train-mode one, fp8 never captures.
    assert _check(_repo(tmp_path)) == []


def test_a_ptq_caller_with_a_train_mode_model_is_reported(tmp_path):
    bad = TESTS + (
        "\n    def test_qconv2d_train(self):\n"
        "        self._test_common(M(), (torch.randn(1, 3, 8, 8),), check_quantization=True, is_qat=False)\n"
    )
    assert _check(_repo(tmp_path, bad)) == [CAPTURE]
    # Through the helper that forwards `is_qat`: a PTQ call of it with a train-mode model.
    forwarded = TESTS.replace("mod = M().eval()\n        self._test_common", "mod = M()\n        self._test_common")
    assert _check(_repo(tmp_path / "f", forwarded)) == [CAPTURE]
    # The same helper, only ever called for QAT: its train-mode model is right.
    qat_only = forwarded.replace(
        "self._qlinear_test_helper((torch.randn(2, 4),))",
        "self._qlinear_test_helper((torch.randn(2, 4),), is_qat=True)",
    )
    assert _check(_repo(tmp_path / "q", qat_only)) == []


def test_callers_of_the_test_helper_that_cannot_all_be_found_keep_the_finding(tmp_path):
    # Another module names `_test_common`: a subclass there may call it with anything.
    other = (
        "from test.test_fusion import TestPatternMatcherBase\n\n\n"
        "class T(TestPatternMatcherBase):\n"
        "    def test_x(self, m, x):\n"
        "        self._test_common(m, x, check_quantization=True)\n"
    )
    assert _check(_repo(tmp_path, other_tests=other)) == [CAPTURE]
    # `super()._test_common(...)` and a call on another object are not read.
    via_super = (
        TESTS
        + "\n    def _test_common(self, mod, inputs, **kw):\n        return super()._test_common(mod, inputs, **kw)\n"
    )
    assert _check(_repo(tmp_path / "s", via_super)) == [CAPTURE]
    on_object = TESTS + "\n\ndef run(tester, m, x):\n    tester._test_common(m, x, check_quantization=True)\n"
    assert _check(_repo(tmp_path / "o", on_object)) == [CAPTURE]


def test_an_inherited_method_call_carries_what_it_passes(tmp_path):
    src = """
    class Base:
        def _quantize(self, model, x, is_qat=False):
            graph = export(model, (x,)).module()
            if is_qat:
                return prepare_qat_pt2e(graph, Quantizer())
            return prepare_pt2e(graph, Quantizer())


    class Tests(Base):
        def test_ptq(self, x):
            self._quantize(Net().eval(), x)

        def test_qat(self, x):
            self._quantize(Net(), x, is_qat=True)
    """
    assert rows(src, tmp_path) == []
    loud = src.replace("Net().eval(), x)", "Net(), x)")
    assert rows(loud, tmp_path) == [row(src, "graph = export(")]
    # The message names the PTQ call, not the QAT one whose `is_qat=True` never reaches `prepare_pt2e`.
    (root,) = [p for p in tmp_path.iterdir() if p.name == "repo1"]
    (d,) = lint(HEAD + textwrap.dedent(loud), path=str(root / "helpers.py"), select=("QL201",))
    ptq, qat = row(src, "self._quantize(Net().eval(), x)"), row(src, "is_qat=True)")
    assert f"the call at line {ptq} passes it built at line {ptq}" in d.message and str(qat) not in d.message
