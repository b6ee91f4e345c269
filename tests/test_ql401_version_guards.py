"""QL401 under torch-version checks: named constants are read like direct checks, the branch
torch 2.13 takes is judged like any other code, and only real version checks count."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint, write_package

OLD = "from torch.ao.quantization.quantize_pt2e import prepare_pt2e"


def ql401(src: str, **kw) -> list[int]:
    """Rows of the QL401 findings."""
    return [d.range.start.row for d in lint(textwrap.dedent(src), select=("QL401",), **kw) if d.code == "QL401"]


# -- named constants ------------------------------------------------------------------------
CONSTANT_IN_MODULE = """\
import torch

_IS_TORCH_OLDER_THAN_2_4 = tuple(map(int, torch.__version__.split(".")[:2])) < (2, 4)
if _IS_TORCH_OLDER_THAN_2_4:
    from torch.ao.quantization.pt2e.utils import get_aten_graph_module
else:
    from torch.ao.quantization.pt2e.utils import _get_aten_graph_module_for_pattern
"""


def test_constant_of_this_module_quiets_the_branch_2_13_skips_and_not_the_one_it_takes():
    # coremltools' _coreml_quantizer_utils.py: the else branch runs on torch 2.13 and fails.
    assert ql401(CONSTANT_IN_MODULE) == [7]


def test_negated_constant_and_constants_bound_to_constants():
    src = """\
        import torch
        from packaging import version

        _TORCH = version.parse(torch.__version__)
        _NEW_TORCH = _TORCH >= version.parse("2.6")
        if not _NEW_TORCH:
            from torch.ao.quantization.quantize_pt2e import prepare_pt2e
        """
    assert ql401(src) == []
    assert ql401(src.replace('"2.6"', '"2.99"')) == [7]


def test_constant_imported_from_another_module_of_the_project(tmp_path):
    pkg = write_package(
        tmp_path,
        "mylib",
        compat="import torch\nTORCH_OLDER_THAN_2_5 = tuple(int(p) for p in torch.__version__.split('.')[:2]) < (2, 5)\n",  # noqa: E501
        utils="from packaging.version import Version\nimport torch\nTORCH_VERSION_2_11_0 = Version('2.11.0')\n",
    )
    src = f"from mylib.compat import TORCH_OLDER_THAN_2_5\nif TORCH_OLDER_THAN_2_5:\n    {OLD}\n"
    assert ql401(src, path=str(pkg / "flow.py")) == []
    # neural-compressor's spelling: a call compared with an imported Version constant.
    src = (
        "from mylib.utils import TORCH_VERSION_2_11_0\nfrom packaging.version import Version\n"
        "import torch\n"
        "if Version(torch.__version__) >= TORCH_VERSION_2_11_0:\n"
        "    from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\n"
        f"else:\n    {OLD}\n"
    )
    assert ql401(src, path=str(pkg / "flow2.py")) == []
    assert ql401(src.replace(">=", "<"), path=str(pkg / "flow3.py")) == [5 + 2]


def test_names_inside_an_imported_constant_are_read_in_their_own_module(tmp_path):
    pkg = write_package(
        tmp_path,
        "mylib",
        compat="import torch\n_V = torch.__version__\nOLD_TORCH = _V < '2.4'\n",
    )
    # `_V` here means something else: the constant's `_V` is the one of mylib.compat.
    src = f"_V = '99.0'\nfrom mylib.compat import OLD_TORCH\nif OLD_TORCH:\n    {OLD}\n"
    assert ql401(src, path=str(pkg / "flow.py")) == []
    assert ql401(src.replace("if OLD_TORCH", "if not OLD_TORCH"), path=str(pkg / "flow2.py")) == [4]


@pytest.mark.parametrize(
    "binding",
    [
        "import os\n_LEGACY = os.environ.get('USE_LEGACY') == '1'\n",  # a switch, not a version check
        "from somewhere_else import _IS_TORCH_OLD\n_LEGACY = _IS_TORCH_OLD\n",  # unknown package
        "_LEGACY = True\n_LEGACY = False\n",  # bound twice: no single value
    ],
)
def test_constants_that_are_no_version_check_do_not_guard(binding):
    assert ql401(f"{binding}if _LEGACY:\n    {OLD}\n") == [binding.count("\n") + 2]


# -- only real version checks -----------------------------------------------------------------
@pytest.mark.parametrize(
    "test",
    [
        "sys.version_info >= (3, 8)",
        "sys.version_info < (3, 12)",
        "sys.version.startswith('3.')",
        "platform.python_version() >= '3.8'",
        "version_info >= (3, 9)",
        "args.version",
        "self.version == 2",
        "use_new_version_api",
    ],
)
def test_tests_that_mention_version_but_check_no_torch_version_do_not_guard(test):
    src = f"import sys, platform\nfrom sys import version_info\nif {test}:\n    {OLD}\n"
    assert ql401(src) == [4]


@pytest.mark.parametrize(
    "test",
    [
        "torch.__version__ < '2.5'",  # a TorchVersion compares as a version: False on 2.13
        "version.parse(torch.__version__) < version.parse('2.5')",
        "not TORCH_VERSION_AT_LEAST_2_5",
        "is_fbcode_version_ok()",  # a version check qlint cannot read: compatibility code
        "get_torch_version() < TORCH_VERSION_2_11_0",  # an unresolved constant: cannot read it
        "transformers.__version__ < '4.40'",  # another package's version: cannot weigh it
    ],
)
def test_branches_2_13_does_not_take_or_qlint_cannot_read_stay_quiet(test):
    src = f"import torch, transformers\nfrom packaging import version\nif {test}:\n    {OLD}\n"
    assert ql401(src) == []


@pytest.mark.parametrize(
    "test",
    [
        "torch.__version__ >= '2.5'",
        "TORCH_VERSION_AT_LEAST_2_5",
        "tuple(map(int, torch.__version__.split('.')[:2])) >= (2, 4)",
        "torch.__version__.split('+')[0] < '2.5'",  # a plain str: "2.13.0" < "2.5" as text
    ],
)
def test_the_branch_2_13_takes_is_judged_like_any_code(test):
    src = f"import torch\nif {test}:\n    {OLD}\n"
    assert ql401(src) == [3]


def test_fallback_under_the_branch_2_13_takes_still_counts():
    src = f"""\
        import torch
        if torch.__version__ >= "2.0":
            try:
                {OLD}
            except ImportError:
                from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
        """
    assert ql401(src) == []


def test_attribute_probe_in_a_conditional_expression_stays_quiet():
    src = """\
        import torch
        to_eval = (
            torch.ao.quantization.move_exported_model_to_eval
            if hasattr(torch.ao.quantization, "move_exported_model_to_eval")
            else None
        )
        """
    assert ql401(src) == []
    assert ql401(src.replace('hasattr(torch.ao.quantization, "move_exported_model_to_eval")', "ready")) == [3]


# -- blocks no run reaches ------------------------------------------------------------------
@pytest.mark.parametrize("test", ["False", "0", "None", "not True", "not 1"])
def test_an_import_in_a_literal_false_block_is_quiet(test):
    # TI edgeai-tensorlab's onnx2torchmodel `main_modelzoo.py`: its QAT trial sits under `if False:`.
    src = f"""\
        def run(model):
            if {test}:
                {OLD}
                prepare_pt2e(model, None)
        """
    assert ql401(src) == []


@pytest.mark.parametrize(
    ("test", "row"),
    [
        ("True", 3),  # the block every run takes
        ("flag", 3),  # a name: not a literal
        ("not False", 3),
    ],
)
def test_an_import_in_a_block_that_runs_is_reported(test, row):
    src = f"""\
        def run(model, flag=False):
            if {test}:
                {OLD}
                prepare_pt2e(model, None)
        """
    assert ql401(src) == [row]


def test_the_else_of_a_literal_true_test_is_quiet_and_its_body_is_not():
    src = f"""\
        def run(model):
            if True:
                {OLD}
            else:
                from torch.ao.quantization.quantize_pt2e import convert_pt2e
        """
    assert ql401(src) == [3]


# -- fallbacks for installs without torchao -------------------------------------------------
@pytest.mark.parametrize("probe", ["import torchao", "from torchao.quantization import quantize_"])
@pytest.mark.parametrize("handler", ["except:", "except ImportError:", "except Exception:"])
def test_a_handler_of_a_torchao_import_is_a_fallback(probe, handler):
    # TI edgeai-tensorlab's tidlrt_quantizer_basic_predispatch.py: `try: import torchao`,
    # then the torch.ao imports in the handler, which runs only where torchao is missing.
    src = f"""\
        try:
            {probe}
        {handler}
            {OLD}
        """
    assert ql401(src) == []


@pytest.mark.parametrize(
    ("src", "rows"),
    [
        # the import in the try body itself runs on torch 2.13
        (f"try:\n    import torchao\n    {OLD}\nexcept ImportError:\n    pass\n", [3]),
        # a handler that does not catch a failed import
        (f"try:\n    import torchao\nexcept KeyError:\n    {OLD}\n", [4]),
        # another package's probe
        (f"try:\n    import executorch\nexcept ImportError:\n    {OLD}\n", [4]),
        # a name that only starts like torchao
        (f"try:\n    import torchaudio\nexcept ImportError:\n    {OLD}\n", [4]),
    ],
)
def test_imports_beside_a_torchao_import_are_still_judged(src, rows):
    assert ql401(src) == rows
