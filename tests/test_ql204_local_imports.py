"""QL204 reads the PT2E API through imports made inside the function that calls it
(`calibration_walk._with_imports`): a helper that keeps torchao optional imports
`quantize_pt2e` in its body and calls `quantize_pt2e.prepare_pt2e(...)` and
`quantize_pt2e.convert_pt2e(...)` (JuanJoseGonGi/3DDFA_V2's `quantize_tflite_direct.py`, with
torch.ao's module). The module-level import was read; the body's own was not, so an uncalibrated
convert there went unreported."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in lint(textwrap.dedent(src), select=("QL204",))]


def helper(imports: str, *body: str) -> str:
    lines = [
        "import torch",
        "",
        "",
        "def quantize(model, quantizer, x, data):",
        *(f"    {line}" for line in imports.splitlines()),
        "    exported = torch.export.export(model.eval(), (x,)).module()",
        "    prepared = quantize_pt2e.prepare_pt2e(exported, quantizer)",
        *(f"    {line}" for line in body),
        "    return quantize_pt2e.convert_pt2e(prepared)",
        "",
    ]
    return "\n".join(lines)


CONVERT_ROW = 8  # `return quantize_pt2e.convert_pt2e(prepared)` with one import line, no body


@pytest.mark.parametrize(
    "imports",
    [
        "from torchao.quantization.pt2e import quantize_pt2e",
        "from torch.ao.quantization import quantize_pt2e",
        "import torchao.quantization.pt2e.quantize_pt2e as quantize_pt2e",
    ],
)
def test_uncalibrated_convert_through_a_module_imported_in_the_body_is_reported(imports):
    assert rows(helper(imports)) == [CONVERT_ROW]


@pytest.mark.parametrize(
    "imports",
    [
        "from torchao.quantization.pt2e import quantize_pt2e",
        "from torch.ao.quantization import quantize_pt2e",
    ],
)
def test_calibrated_convert_through_a_module_imported_in_the_body_stays_quiet(imports):
    assert rows(helper(imports, "for batch in data:", "    prepared(batch)")) == []


def test_the_import_in_a_branch_of_the_body_counts():
    src = helper("if True:\n    from torchao.quantization.pt2e import quantize_pt2e")
    assert rows(src) == [CONVERT_ROW + 1]


def test_a_module_of_the_same_name_from_another_package_is_not_pt2e():
    # `mylib.quantize_pt2e.convert_pt2e` is not torchao's: nothing is known of what it does.
    assert rows(helper("from mylib import quantize_pt2e")) == []


def test_a_local_variable_of_the_same_name_wins_over_the_import():
    src = helper("from torchao.quantization.pt2e import quantize_pt2e\nquantize_pt2e = make_api()")
    assert rows(src) == []


def test_an_import_in_a_nested_function_does_not_name_the_outer_body_s_calls():
    src = textwrap.dedent(
        """\
        import torch


        def quantize(model, quantizer, x):
            def load():
                from torchao.quantization.pt2e import quantize_pt2e

                return quantize_pt2e
            exported = torch.export.export(model.eval(), (x,)).module()
            prepared = quantize_pt2e.prepare_pt2e(exported, quantizer)
            return quantize_pt2e.convert_pt2e(prepared)
        """
    )
    assert rows(src) == []


def test_the_module_level_import_is_read_as_before():
    src = helper("").replace("import torch\n", "import torch\nfrom torchao.quantization.pt2e import quantize_pt2e\n")
    assert rows(src) == [CONVERT_ROW]
