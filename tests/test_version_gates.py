"""Reading torch-version checks against a release (QL402's compatibility-path test)."""

from __future__ import annotations

import ast

import pytest

from qlint.analysis.version_gates import is_version_test, taken
from tests.conftest import lint


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ("TORCH_VERSION_AT_LEAST_2_5", True),
        ("TORCH_VERSION_AT_LEAST_2_14", False),
        ("not TORCH_VERSION_AFTER_2_4", False),
        ("torchao.utils.TORCH_VERSION_AT_LEAST_2_13", True),
        ("is_torch_version_at_least('2.5.0')", True),
        ("version.parse(torch.__version__) >= version.parse('2.5')", True),
        ("version.parse(torch.__version__) < version.parse('2.14')", True),
        ("TORCH_VERSION >= (2, 6)", True),
        ("(2, 14) <= TORCH_VERSION", False),
        # torch.__version__ is a TorchVersion: it compares with strings as a version (checked
        # on torch 2.13: `torch.__version__ >= "2.5"` is True); plain strings compare as text.
        ("torch.__version__ >= '2.5'", True),
        ("torch.__version__ < '2.5'", False),
        ("torch.version.__version__ < '2.5.0'", False),
        ("torch.__version__.split('+')[0] >= '2.5'", False),
        ("str(torch.__version__) < '2.5'", True),
        ("torch.__version__[:3] >= '2.5'", False),
        ("tuple(map(int, torch.__version__.split('.')[:2])) < (2, 4)", False),
        ("sys.version_info >= (3, 10)", None),
        ("transformers.__version__ >= '4.40'", None),
        ("version.parse(torchao.__version__) >= version.parse('0.8')", None),
        ("TORCH_VERSION_AT_LEAST_2_5 and has_cuda", None),
        ("TORCH_VERSION_AT_LEAST_2_14 and has_cuda", False),
        ("TORCH_VERSION_AT_LEAST_2_5 or has_cuda", True),
        ("torch_version_ok()", None),
        # transformers' helpers: named for torch and an ordering, read with a version literal.
        ("is_torch_greater_or_equal('2.5')", True),
        ("is_torch_greater_or_equal('2.14')", False),
        ("import_utils.is_torch_greater_or_equal('2.0')", True),
        ("is_torch_greater_or_equal_than_2_2", True),
        ("is_torch_less_than('2.14')", True),
        ("is_torch_less_than('2.5')", False),
        ("is_torch_greater_or_equal(MIN)", None),  # no literal: unknown
        ("is_torchvision_greater_or_equal('0.20')", None),  # another package
        ("is_greater_or_equal('2.5')", None),  # whose version?
    ],
)
def test_taken_on_2_13(test, expected):
    assert taken(ast.parse(test, mode="eval").body, (2, 13)) is expected


def test_version_tests_are_recognized():
    assert is_version_test(ast.parse("torch.__version__ > '2'", mode="eval").body)
    assert not is_version_test(ast.parse("HAS_XNNPACK", mode="eval").body)


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ("sys.version_info >= (3, 8)", False),  # the interpreter's version
        ("version_info < (3, 12)", False),
        ("args.version", False),
        ("self.version == 2", False),
        ("torch.__version__ == '2.5.0'", True),
        ("is_fbcode_version_ok()", True),
        ("_OLD", True),  # bound below to a torch-version comparison
        ("not _OLD and has_cuda", True),
        ("_SWITCH", False),  # bound to something else
        ("is_torch_greater_or_equal('2.5')", True),
        ("is_torch_greater_or_equal(flag)", False),  # no version to read: not a version check
        ("is_torchvision_greater_or_equal('0.20')", False),
        ("is_greater_or_equal('2.5')", False),
    ],
)
def test_only_real_version_checks_are_version_tests(test, expected):
    module = ast.parse("import torch\n_OLD = torch.__version__ < '2.4'\n_SWITCH = os.environ.get('X')\n")
    values = {t.targets[0].id: t.value for t in module.body if isinstance(t, ast.Assign)}
    lookup = lambda node: values.get(node.id) if isinstance(node, ast.Name) else None  # noqa: E731
    assert is_version_test(ast.parse(test, mode="eval").body, lookup) is expected


# -- QL402 reads the same constants ----------------------------------------------------------
def ql402_rows(src: str, **kw) -> list[int]:
    return [d.range.start.row for d in lint(src, select=("QL402",), **kw) if d.code == "QL402"]


def test_ql402_reads_named_version_constants():
    src = """\
        import torch
        _IS_TORCH_OLDER_THAN_2_5 = tuple(map(int, torch.__version__.split(".")[:2])) < (2, 5)
        if _IS_TORCH_OLDER_THAN_2_5:
            from torch._export import capture_pre_autograd_graph
        else:
            from torch.export import export_for_training
        """
    assert ql402_rows(src) == [6]


def test_ql402_is_not_silenced_by_python_version_checks():
    src = "import sys, torch\nif sys.version_info >= (3, 8):\n    gm = torch.export.export_for_training(m, a)\n"
    assert ql402_rows(src) == [3]


def test_ql402_hasattr_probe_in_a_conditional_expression_stays_quiet():
    # nncf's tests/torch/fx/helpers.py: the removed API only where torch still has it.
    src = """\
        import torch
        export_fn = (
            torch.export.export_for_training if hasattr(torch.export, "export_for_training") else torch.export.export
        )
        """
    assert ql402_rows(src) == []


def test_ql402_reads_an_ordering_helper_named_for_torch():
    # jeffreyyu0602/quantized-training's export_model: the elif branch only runs before torch 2.5.
    src = """\
        from transformers.utils.import_utils import is_torch_greater_or_equal

        def export_model(model, args):
            if is_torch_greater_or_equal("2.5"):
                from torch.export import export_for_training
                return export_for_training(model, args).module()
            elif is_torch_greater_or_equal("2.0"):
                from torch._export import capture_pre_autograd_graph
                return capture_pre_autograd_graph(model, args)
        """
    assert ql402_rows(src) == [5]
    # Another package's ordering says nothing about torch: both removed APIs stay reported.
    assert ql402_rows(src.replace("is_torch_greater", "is_timm_greater")) == [5, 8]
