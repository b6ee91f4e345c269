"""QL401 after a shim's old import in the same `try` body.

A book's chapter script (Efficient-AI-in-Practice, ch6) tries the torch.ao PT2E imports
first, the prepare/convert import and then the XNNPACK quantizer's, and falls back to
torchao's prepare/convert. On torch 2.13 the first import raises, so the second never runs:
only the handler's imports run there. The import after a working shim's old import is quiet;
what runs on 2.13 (the handler) is judged as ever, and an earlier import that is itself broken
quiets nothing.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint

SHIM = "from torch.ao.quantization.quantize_pt2e import prepare_pt2e, convert_pt2e"
NEW = "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, convert_pt2e"
XNNPACK = "from torch.ao.quantization.quantizer.xnnpack_quantizer import XNNPACKQuantizer"


def ql401(src: str) -> list[int]:
    """Rows of the QL401 findings."""
    return [d.range.start.row for d in lint(textwrap.dedent(src), select=("QL401",)) if d.code == "QL401"]


def test_import_after_the_shim_import_is_quiet_and_the_handler_repeating_it_is_reported():
    src = f"""\
        HAS_PT2E = False
        try:
            {SHIM}
            {XNNPACK}
            HAS_PT2E = True
        except ImportError:
            try:
                {NEW}
                {XNNPACK}
                HAS_PT2E = True
            except ImportError:
                pass
        """
    assert ql401(src) == [9]


def test_multi_line_and_plain_imports_after_the_shim_import_are_quiet():
    src = f"""\
        try:
            {SHIM}
            from torch.ao.quantization.quantizer.xnnpack_quantizer import (
                XNNPACKQuantizer,
                get_symmetric_quantization_config,
            )
            import torch.ao.quantization.quantizer.xnnpack_quantizer as xq
        except ImportError:
            {NEW}
        """
    assert ql401(src) == []


def test_earlier_old_import_without_a_working_alternative_quiets_nothing():
    # The handler only turns the feature off: the first import is reported, and fixing it
    # makes the second one run, so it is reported too.
    src = f"""\
        try:
            {SHIM}
            {XNNPACK}
        except ImportError:
            HAS_PT2E = False
        """
    assert ql401(src) == [2, 3]


def test_old_import_before_the_shim_import_is_reported():
    src = f"""\
        try:
            {XNNPACK}
            {SHIM}
        except ImportError:
            {NEW}
        """
    assert ql401(src) == [2]


def test_earlier_import_that_works_on_torch_2_13_quiets_nothing():
    src = f"""\
        try:
            {NEW}
            {XNNPACK}
        except ImportError:
            {NEW}
        """
    assert ql401(src) == [3]


def test_handler_that_catches_something_else_keeps_the_report():
    src = f"""\
        try:
            {SHIM}
            {XNNPACK}
        except KeyError:
            {NEW}
        """
    assert ql401(src) == [2, 3]


def test_import_in_a_nested_block_after_the_shim_import_is_judged_as_ever():
    # Only the statements of the same body follow the failing import directly.
    src = f"""\
        try:
            {SHIM}
        except ImportError:
            {NEW}
        try:
            {XNNPACK}
        except ImportError:
            pass
        """
    assert ql401(src) == [6]
