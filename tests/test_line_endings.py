"""CRLF and CR-only files: Python runs them, so qlint reads them line for line as the
interpreter does, finds the same things as in the LF version, and its fixes insert lines
with the file's own line ending."""

from __future__ import annotations

import os

import pytest

from qlint.engine import check_source
from qlint.fixes import fix_text
from qlint.rules import RULES
from qlint.source import LineIndex, line_ending, split_lines
from tests.conftest import settings_for
from tests.test_rule_pages import example_options, python_block, sections

ENDINGS = {"crlf": "\r\n", "cr": "\r"}

# One snippet that exercises the inserting fixes: QL201 `model.eval()`, QL202 `model.train()`,
# QL203 an import of `move_exported_model_to_eval`, QL401 a split import with comments, and
# QL101/QL002 with a suppression comment that must be read on the right line.
MIXED = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e
from torch.ao.quantization.quantizer import (
    Quantizer,  # base
    XNNPACKQuantizer,  # the backend
)


def quantize(quantizer, x):
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 3, 3), torch.nn.BatchNorm2d(3))
    ep = export(model, (x,))
    prepared = prepare_pt2e(ep.module(), quantizer)
    prepared.eval()
    return convert_pt2e(prepared)


def qat(quantizer, x):
    model = torch.nn.Sequential(torch.nn.Conv2d(3, 3, 3), torch.nn.Dropout()).eval()
    ep = export(model, (x,))
    return prepare_qat_pt2e(ep.module(), quantizer)


def matcher(gm):
    for node in gm.graph.nodes:
        if node.target == torch.ops.quantized_decomposed.dequantize_per_tensor:  # noqa: QL101
            return node
        if node.target == torch.ops.quantized_decomposed.quantize_per_tensor:
            return node
"""


def found(text: str, **options):
    result = check_source(text, os.path.abspath("snippet.py"), settings_for(preview=True, **options))
    assert not result.errors, result.errors
    return [
        (d.code, d.range.start.row, d.range.start.col, d.range.end.row, d.range.end.col) for d in result.diagnostics
    ]


def snippets():
    for code in sorted(RULES):
        sec = sections(code)
        yield pytest.param(python_block(sec["Example"]), example_options(sec["Example"]), id=code)
    yield pytest.param(MIXED, {}, id="mixed")


@pytest.mark.parametrize(("source", "options"), snippets())
@pytest.mark.parametrize("ending", sorted(ENDINGS))
def test_same_findings_and_fixes_whatever_the_line_ending(source, options, ending):
    nl = ENDINGS[ending]
    other = source.replace("\n", nl)
    expected = found(source, **options)
    assert expected, "the snippet must have findings"
    assert found(other, **options) == expected
    path = os.path.abspath("snippet.py")
    lf_fix = fix_text(source, path, settings_for(**options), True)
    other_fix = fix_text(other, path, settings_for(**options), True)
    assert lf_fix.error is None and other_fix.error is None
    assert other_fix.fixed == lf_fix.fixed.replace("\n", nl)  # every inserted line ends in `nl`
    assert other_fix.applied == lf_fix.applied


def test_mixed_snippet_exercises_every_inserting_fix():
    codes = {c for c, *_ in found(MIXED)}
    assert {"QL201", "QL202", "QL203", "QL401", "QL101"} <= codes
    fixed = fix_text(MIXED, os.path.abspath("snippet.py"), settings_for(), True).fixed
    assert "    model.eval()\n    ep = export(model, (x,))" in fixed
    assert "from torchao.quantization.pt2e import move_exported_model_to_eval\n" in fixed
    assert "    XNNPACKQuantizer,  # the backend\n" in fixed


def test_line_index_counts_lines_as_python_does():
    text = "a = 1\rb = 2\r\nc = 3\n\x0cd = 4\u2028# same line\n"
    index = LineIndex(text)
    assert index.lines == ["a = 1", "b = 2", "c = 3", "\x0cd = 4\u2028# same line", ""]
    assert index.starts == [0, 6, 13, 19, len(text)]
    assert index.line(2) == "b = 2"  # no CR left at the end of a CRLF line
    assert index.position(text.index("c")).row == 3
    assert split_lines(text) == ["a = 1\r", "b = 2\r\n", "c = 3\n", "\x0cd = 4\u2028# same line\n"]
    assert split_lines("x\ry") == ["x\r", "y"]


@pytest.mark.parametrize(("text", "expected"), [("a\r\nb\n", "\r\n"), ("a\rb", "\r"), ("a\nb\r\n", "\n"), ("a", "\n")])
def test_line_ending_is_the_files_first(text, expected):
    assert line_ending(text) == expected


@pytest.mark.parametrize("nl", ["\n", "\r\n", "\r"])
def test_a_decode_error_is_placed_on_the_right_line(nl):
    from qlint.source import DecodeError, decode_source

    data = f"a = 1{nl}b = 2{nl}c = 'x\x80'".encode("latin-1")
    with pytest.raises(DecodeError) as err:
        decode_source(data)
    assert (err.value.row, err.value.col) == (3, 6)  # 0-based, at the bad byte
