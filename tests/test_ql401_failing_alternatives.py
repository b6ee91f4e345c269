"""QL401 on a handler whose `try` body imports from torchao where torchao 0.18 has nothing.

Furnit's SHARP int8 export (android/export_sharp_executorch_int8.py, before fe05611) tries
`from torchao.quantization.pt2e import prepare_pt2e, convert_pt2e` and the XNNPACK quantizer
from `torchao.quantization.pt2e.quantizer.xnnpack_quantizer`, and falls back to torch.ao in
its `except ImportError:` handler. torchao 0.18 exports `prepare_pt2e` from `.quantize_pt2e`
only and has no `xnnpack_quantizer` module (ExecuTorch has the quantizer): the body raises,
the handler runs, and its torch.ao import raises on torch 2.13. The shim is no shim there.

What a torchao (or ExecuTorch XNNPACK quantizer) module holds comes from
`qlint/data/pt2e_moves.json` (`surfaces`, generated from the installed packages). Still
quiet: a body importing from where the names are, from a package the table does not survey
(a project module), or whose only failing import sits inside a nested block.
"""

from __future__ import annotations

import textwrap

from qlint.analysis.edits.pt2e_moves import load_moves
from tests.conftest import lint

OLD = """\
        from torch.ao.quantization.quantize_pt2e import prepare_pt2e, convert_pt2e
        from torch.ao.quantization.quantizer.xnnpack_quantizer import XNNPACKQuantizer"""


def ql401(src: str) -> list[int]:
    """Rows of the QL401 findings."""
    return [d.range.start.row for d in lint(textwrap.dedent(src), select=("QL401",)) if d.code == "QL401"]


def fallback(body: str) -> str:
    return f"""\
try:
    {body}
except ImportError:
{OLD}
"""


def test_handler_after_a_name_torchao_does_not_export_there_is_reported():
    src = fallback("from torchao.quantization.pt2e import prepare_pt2e, convert_pt2e")
    assert ql401(src) == [4, 5]


def test_handler_after_a_torchao_module_that_does_not_exist_is_reported():
    src = fallback("from torchao.quantization.pt2e.quantizer.xnnpack_quantizer import XNNPACKQuantizer")
    assert ql401(src) == [4, 5]


def test_handler_after_a_plain_import_of_a_missing_torchao_module_is_reported():
    src = fallback("import torchao.quantization.pt2e.quantizer.xnnpack_quantizer as xq")
    assert ql401(src) == [4, 5]


def test_one_failing_import_among_working_ones_hands_over_to_the_handler():
    src = """\
        try:
            from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, convert_pt2e
            from torchao.quantization.pt2e.quantizer.xnnpack_quantizer import XNNPACKQuantizer
        except ImportError:
            from torch.ao.quantization.quantize_pt2e import prepare_pt2e, convert_pt2e
        """
    assert ql401(src) == [5]


def test_handler_after_working_torchao_and_executorch_imports_is_quiet():
    src = """\
        try:
            from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, convert_pt2e
            from torchao.quantization.pt2e import move_exported_model_to_eval
            from torchao.quantization.pt2e import quantize_pt2e
            from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import XNNPACKQuantizer
        except ImportError:
            from torch.ao.quantization.quantize_pt2e import prepare_pt2e, convert_pt2e
            from torch.ao.quantization import move_exported_model_to_eval
            from torch.ao.quantization.quantizer.xnnpack_quantizer import XNNPACKQuantizer
        """
    assert ql401(src) == []


def test_a_package_the_table_does_not_survey_proves_nothing():
    src = """\
        try:
            from torchao.quantization import prepare_pt2e
            from mypackage.quant import convert_pt2e
        except ImportError:
            from torch.ao.quantization.quantize_pt2e import prepare_pt2e, convert_pt2e
        """
    assert ql401(src) == []


def test_a_failing_import_inside_a_nested_block_of_the_body_is_not_read():
    src = """\
        import sys
        try:
            from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, convert_pt2e
            if sys.platform == "win32":
                from torchao.quantization.pt2e import prepare_pt2e
        except ImportError:
            from torch.ao.quantization.quantize_pt2e import prepare_pt2e, convert_pt2e
        """
    assert ql401(src) == []


def test_the_table_knows_the_surveyed_modules_and_nothing_else():
    moves = load_moves()
    assert moves.lacks("torchao.quantization.pt2e", "prepare_pt2e")
    assert not moves.lacks("torchao.quantization.pt2e", "move_exported_model_to_eval")
    assert not moves.lacks("torchao.quantization.pt2e", "quantize_pt2e")  # a submodule
    assert not moves.lacks("torchao.quantization.pt2e.quantize_pt2e", "prepare_pt2e")
    assert moves.lacks("torchao.quantization.pt2e.quantizer.xnnpack_quantizer")
    assert not moves.lacks("executorch.backends.xnnpack.quantizer.xnnpack_quantizer", "XNNPACKQuantizer")
    assert not moves.lacks("torchao.quantization", "prepare_pt2e")  # not surveyed: unknown
    assert not moves.lacks("torchao.quantization.pt2e", "*")


def test_the_message_says_why_the_fallback_is_no_fallback():
    src = fallback("from torchao.quantization.pt2e import prepare_pt2e, convert_pt2e")
    messages = [d.message for d in lint(textwrap.dedent(src), select=("QL401",)) if d.code == "QL401"]
    assert len(messages) == 2
    assert all("`try` body's import from `torchao.quantization.pt2e` fails with torchao 0.18" in m for m in messages)


def test_a_reported_import_outside_any_handler_keeps_its_message():
    src = "from torch.ao.quantization.quantize_pt2e import prepare_pt2e\n"
    (message,) = [d.message for d in lint(src, select=("QL401",)) if d.code == "QL401"]
    assert "`try` body" not in message
