"""Reading torch-version checks against a release (QL402's compatibility-path test)."""

from __future__ import annotations

import ast

import pytest

from qlint.analysis.version_gates import is_version_test, taken


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
        ("torch.__version__ >= '2.5'", False),  # compared as strings, as Python does
        ("torch.__version__ < '2.5'", True),
        ("TORCH_VERSION_AT_LEAST_2_5 and has_cuda", None),
        ("TORCH_VERSION_AT_LEAST_2_14 and has_cuda", False),
        ("TORCH_VERSION_AT_LEAST_2_5 or has_cuda", True),
        ("torch_version_ok()", None),
    ],
)
def test_taken_on_2_13(test, expected):
    assert taken(ast.parse(test, mode="eval").body, (2, 13)) is expected


def test_version_tests_are_recognized():
    assert is_version_test(ast.parse("torch.__version__ > '2'", mode="eval").body)
    assert not is_version_test(ast.parse("HAS_XNNPACK", mode="eval").body)
