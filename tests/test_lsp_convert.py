"""The language server's conversions and edits, in process: positions between code points
and the editor's code units, the diagnostic round trip through `data`, `# noqa` edits, and
whole-file fixes turned into minimal edits."""

from __future__ import annotations

import pytest

pytest.importorskip("pygls")

from lsprotocol import types
from lsprotocol.converters import get_converter

from qlint.diagnostic import Applicability, Diagnostic, Edit, Fix, Position, Range, RelatedInfo
from qlint.lsp.actions import noqa_edit, quick_fix, workspace_edit
from qlint.lsp.convert import UTF8, DocumentText, diff_edits, from_lsp_diagnostic, to_lsp_diagnostic


def apply_text_edits(text: str, edits: list[dict]) -> str:
    """Apply LSP TextEdits (UTF-16 positions), as an editor would."""
    lines = text.split("\n")
    starts = [0]
    for line in lines:
        starts.append(starts[-1] + len(line) + 1)

    def offset(pos: dict) -> int:
        line = lines[pos["line"]]
        prefix = line.encode("utf-16-le")[: 2 * pos["character"]].decode("utf-16-le")
        return starts[pos["line"]] + len(prefix)

    spans = sorted(
        ((offset(e["range"]["start"]), offset(e["range"]["end"]), e["newText"]) for e in edits), reverse=True
    )
    for start, end, new in spans:
        text = text[:start] + new + text[end:]
    return text


def test_positions_convert_both_ways_around_astral_characters():
    doc = DocumentText("a😀b\n🐍x = 1\n")
    assert doc.to_lsp(Position(1, 2)) == types.Position(line=0, character=3)
    assert doc.from_lsp(types.Position(line=0, character=3)) == Position(1, 2)
    assert doc.to_lsp(Position(2, 1)) == types.Position(line=1, character=2)
    # Out-of-range input is clamped, never an exception.
    assert doc.to_lsp(Position(9, 40)) == types.Position(line=2, character=0)
    assert doc.from_lsp(types.Position(line=0, character=99)) == Position(1, 3)
    utf8 = DocumentText("é😀x\n", UTF8)
    assert utf8.to_lsp(Position(1, 2)) == types.Position(line=0, character=6)
    assert utf8.from_lsp(types.Position(line=0, character=6)) == Position(1, 2)


def test_diagnostic_round_trips_through_lsp():
    text = 'x = "😀"; y = torch.ops.aten.relu\n'
    col = text.index("torch")
    fix = Fix(Applicability.UNSAFE, "Use it", (Edit(Range.of(1, col + 19, 1, col + 19), ".default"),))
    related = RelatedInfo("/elsewhere/ops.py", Range.of(2, 3, 2, 5), "written here")
    diag = Diagnostic("QL101", "packet-matcher", "msg", "/ws/m.py", Range.of(1, col, 1, col + 19), fix, 1, (related,))
    doc = DocumentText(text, path="/ws/m.py")
    lsp = to_lsp_diagnostic(diag, doc, 7, text_of=lambda p: "\n😀😀😀ab\n")
    assert lsp.range.start.character == col + 1
    assert lsp.related_information[0].location.range.start == types.Position(line=1, character=6)
    back = from_lsp_diagnostic(lsp, doc, "/ws/m.py", 7)
    assert back == Diagnostic("QL101", "packet-matcher", "msg", "/ws/m.py", diag.range, fix, 1)
    assert from_lsp_diagnostic(lsp, doc, "/ws/m.py", 8) is None  # stale
    lsp.data["fix"]["edits"][0]["range"] = "garbage"
    assert from_lsp_diagnostic(lsp, doc, "/ws/m.py", 7).fix is None


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("x = a == b\n", "x = a == b  # noqa: QL101\n"),
        ("x = a == b   \n", "x = a == b  # noqa: QL101\n"),
        ("x = a == b  # why\n", "x = a == b  # why  # noqa: QL101\n"),
        ("x = a == b  # noqa: QL102\n", "x = a == b  # noqa: QL102, QL101\n"),
        ("x = a == b  # type: ignore  # NOQA:E501\n", "x = a == b  # type: ignore  # noqa: E501, QL101\n"),
        ("x = a == b\r\n", "x = a == b  # noqa: QL101\r\n"),
        ("x = a == b", "x = a == b  # noqa: QL101"),
    ],
)
def test_noqa_edit_appends_or_merges(line: str, expected: str):
    doc = DocumentText(line)
    edit = noqa_edit(doc, 1, "QL101")
    start, end = doc.index.offset(edit.range.start), doc.index.offset(edit.range.end)
    assert line[:start] + edit.content + line[end:] == expected


@pytest.mark.parametrize(
    "text",
    [
        'x = """a\nb"""\n',  # row 1 ends inside a string
        "x = a == \\\n    b\n",  # row 1 ends in a continuation
        "x = a == b  # noqa\n",  # already suppressed
        'x = """abc\n',  # cannot tokenize: the string never ends
    ],
)
def test_noqa_edit_refuses_where_a_comment_cannot_go(text: str):
    assert noqa_edit(DocumentText(text), 1, "QL101") is None


def test_diff_edits_touch_only_changed_lines():
    old = "a = 1\nb = 😀\nc = 3\n"
    new = "a = 1\nb = 😀.default\nc = 3\n"
    doc = DocumentText(old)
    (edit,) = diff_edits(doc, new)
    assert (edit.range.start.line, edit.range.end.line) == (1, 2)
    wire = {"range": get_converter().unstructure(edit.range), "newText": edit.new_text}
    assert apply_text_edits(old, [wire]) == new


def test_unsafe_quick_fix_says_so_and_is_not_preferred():
    text = "x = torch.ops.aten.add\n"
    fix = Fix(Applicability.UNSAFE, "Use `torch.ops.aten.add.Tensor`", (Edit(Range.of(1, 22, 1, 22), ".Tensor"),))
    diag = Diagnostic("QL101", "packet-matcher", "msg", "/ws/m.py", Range.of(1, 4, 1, 22), fix, 1)
    doc = DocumentText(text, path="/ws/m.py")
    lsp = to_lsp_diagnostic(diag, doc, 3)
    action = quick_fix(diag, lsp, doc, lambda edits: workspace_edit("file:///ws/m.py", 3, edits, versioned=False))
    assert action.title == "Use `torch.ops.aten.add.Tensor` (unsafe)"
    assert action.is_preferred is False
    (edit,) = action.edit.changes["file:///ws/m.py"]
    assert (edit.range.start.character, edit.new_text) == (22, ".Tensor")
    display_only = Diagnostic(
        "QL101", "packet-matcher", "msg", "/ws/m.py", diag.range, Fix(Applicability.DISPLAY_ONLY, "m")
    )
    assert quick_fix(display_only, lsp, doc, lambda edits: None) is None
