"""The import triggers of QL101 and QL102 take what the text triggers just found about the same
text (`last_text`): each question is asked once per file, and the file whose finding comes
through an imported packet is still checked and flagged."""

from __future__ import annotations

from qlint.analysis.graphs import insertions, sinks
from qlint.analysis.graphs.last_text import last_text
from qlint.engine import check_source
from tests.conftest import settings_for, write_package

OPS = "import torch\n\nRELU = torch.ops.aten.relu\n"
# No packet spelled here: the text triggers turn both files away, the import triggers keep them.
MATCHER = 'from pkg.ops import RELU\n\n\ndef is_relu(node):\n    return getattr(node, "target") == RELU\n'
INSERTER = "from pkg.ops import RELU\n\n\ndef rewrite(gm, node):\n    return gm.graph.call_function(RELU, (node,))\n"


class _Counted:
    """A pattern whose searches of texts of `size` characters are counted."""

    def __init__(self, pattern, size: int, seen: list):
        self.pattern, self.size, self.seen = pattern, size, seen

    def search(self, text, *args):
        if len(text) == self.size:
            self.seen.append("search")
        return self.pattern.search(text, *args)


def _checked(tmp_path, monkeypatch, name: str, text: str) -> tuple[list[str], list[str]]:
    """(codes found, questions asked of the file's text) of a check of `pkg/<name>.py`."""
    pkg = write_package(tmp_path, "pkg", ops=OPS, **{name: text})
    seen: list[str] = []
    written = insertions.attribute_written

    def attribute_written(asked, *args):
        if asked == text:
            seen.append("writes")
        return written(asked, *args)

    monkeypatch.setattr(insertions, "attribute_written", attribute_written)
    monkeypatch.setattr(sinks, "_GETATTR_TARGET", _Counted(sinks._GETATTR_TARGET, len(text), seen))
    path = pkg / f"{name}.py"
    result = check_source(path.read_bytes(), str(path), settings_for(("QL",)))
    assert not result.errors, result.errors
    return [d.code for d in result.diagnostics], seen


def test_ql101s_import_trigger_asks_no_question_its_text_trigger_answered(tmp_path, monkeypatch):
    codes, seen = _checked(tmp_path, monkeypatch, "matcher", MATCHER)
    assert codes == ["QL101"]
    # `mentions` (its `getattr(x, "target")` search) once, for both triggers.
    assert seen.count("search") == 1


def test_ql102s_import_trigger_asks_no_question_its_text_trigger_answered(tmp_path, monkeypatch):
    codes, seen = _checked(tmp_path, monkeypatch, "inserter", INSERTER)
    assert codes == ["QL102"]
    assert seen.count("writes") == 1  # `writes_insertion`, for both triggers


def test_an_answer_is_kept_for_the_very_text_it_was_asked_of():
    asked: list[str] = []

    @last_text
    def holds_x(text: str) -> bool:
        asked.append(text)
        return "x" in text

    first = "".join(["a", "x"])
    assert holds_x(first) is True
    assert holds_x(first) is True
    assert holds_x("ab") is False  # another text: asked, and its own answer
    assert holds_x(first) is True
    same = "".join(["a", "x"])  # equal, another object: asked again
    assert holds_x(same) is True
    assert asked == ["ax", "ab", "ax", "ax"]
