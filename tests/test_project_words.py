"""The words of a project's modules (`project_words`) answer exactly what reading each module's
text answers (a substring, an identifier spelled whole), read each module once per content,
and follow edits, new and deleted modules and unsaved buffers."""

from __future__ import annotations

import random

import pytest

from qlint.analysis.identifier_text import normalised_bytes
from qlint.analysis.names import content_keys, project_words
from qlint.analysis.names.references import spells as text_spells
from qlint.analysis.project_files import python_files

pytestmark = pytest.mark.usefixtures("fresh_project_words")


def _keys(root, overlay=None) -> dict:
    overlay = overlay or {}
    return {p: content_keys.content_key(overlay, p, True) for p in python_files(str(root), overlay)}


def _by_reading(keys: dict, word: str, overlay=None, whole=False) -> list[str]:
    """What the searches did before: read each module, test its bytes, and their reading as
    Python reads names (NFKC: `quantize` with a fullwidth `q` is `quantize`)."""
    out = []
    for path, key in keys.items():
        data = content_keys.content_bytes(overlay or {}, path, key, project_words.MAX_BYTES)
        readings = () if data is None else (data, normalised_bytes(data))
        if any(text_spells(d, word) if whole else word.encode() in d for d in readings):
            out.append(path)
    return out


def _spelling(keys: dict, word: str, overlay=None) -> list[str]:
    return [p for p in keys if project_words.spells(overlay or {}, p, keys[p], word)]


TEXTS = {
    "call.py": "from m import quantize_module\n\nquantize_module(x)\n",
    "longer.py": "def quantize_module_v2(m):\n    return my_quantize_module(m)\n",
    "comment.py": "# quantize_module is the helper\nx = 1\n",
    "string.py": "NAME = 'pkg.utils.export_utils'\nimportlib.import_module(NAME)\n",
    "unicode.py": "# é quantize_module« »\nnaïve = 'ünïcode'\ndef \uff51uantize(): pass\n",
    "edge.py": "quantize_module",
    "empty.py": "",
    "crlf.py": "import export_utils\r\nexport_utils.quantize_module(m)\r\n",
    "tabs.py": "\tquantize_module\t(x)\n",
    "dash.py": "open('my-script.py')\nrun('a.b')\n",
}
WORDS = [
    "quantize_module",
    "quantize",
    "module",
    "export_utils",
    "utils",
    "my_quantize_module",
    "quantize_module_v2",
    "naïve",
    "ünïcode",
    "é",
    "my-script",
    "a.b",
    "x",
    "absent_everywhere",
    "_",
    "2",
]


def _tree(tmp_path, texts=TEXTS):
    for name, text in texts.items():
        (tmp_path / name).write_text(text, encoding="utf-8", newline="")
    return tmp_path


def test_the_words_answer_what_reading_the_texts_answers(tmp_path):
    keys = _keys(_tree(tmp_path))
    for word in WORDS:
        assert project_words.holding({}, keys, word) == _by_reading(keys, word), word
        assert _spelling(keys, word) == _by_reading(keys, word, whole=True), word
    # A name in a comment or a string is in the text: found, as reading found it.
    assert {p.rsplit("/", 1)[1] for p in project_words.holding({}, keys, "quantize_module")} >= {
        "comment.py",
        "unicode.py",
        "edge.py",
    }
    assert "string.py" in {p.rsplit("/", 1)[1] for p in _spelling(keys, "export_utils")}
    # Only inside longer words, but for `def quantize()` spelled with a fullwidth `q`.
    assert [p.rsplit("/", 1)[1] for p in _spelling(keys, "quantize")] == ["unicode.py"]


def test_random_texts_agree_with_reading(tmp_path):
    rng = random.Random(14)
    alphabet = ["ab", "a", "b", "_", "1", " ", ".", "\n", "é", "#", "'", "(", "ab_1", "«"]
    texts = {f"m{i}.py": "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40))) for i in range(40)}
    keys = _keys(_tree(tmp_path, texts))
    for word in ["ab", "a", "b", "ab_1", "_", "1", "a_", "b1", "é", "a.b", "abab", "ba"]:
        assert project_words.holding({}, keys, word) == _by_reading(keys, word), word
        assert _spelling(keys, word) == _by_reading(keys, word, whole=True), word


def test_each_module_is_read_once_for_every_question(tmp_path):
    keys = _keys(_tree(tmp_path))
    for word in ["quantize_module", "export_utils", "absent_everywhere", "utils", "x"]:
        project_words.holding({}, keys, word)
        _spelling(keys, word)
    # "dash.py"'s words are read once too; the words with a dash or a dot are not answered
    # from them (and are not asked above).
    assert project_words.reads() == len(TEXTS)


def test_the_module_checked_is_not_read(tmp_path):
    keys = _keys(_tree(tmp_path))
    own = str(tmp_path / "call.py")
    found = project_words.holding({}, keys, "quantize_module", besides=own)
    assert own not in found and str(tmp_path / "edge.py") in found
    assert project_words.reads() == len(TEXTS) - 1


def test_an_edited_module_is_read_again_and_only_it(tmp_path):
    root = _tree(tmp_path)
    keys = _keys(root)
    assert str(root / "empty.py") not in project_words.holding({}, keys, "quantize_module")
    (root / "empty.py").write_text("quantize_module(m)\n")
    keys = _keys(root)
    assert str(root / "empty.py") in project_words.holding({}, keys, "quantize_module")
    assert project_words.reads() == len(TEXTS) + 1
    # Back as it was (another stat): read again, and no longer found.
    (root / "empty.py").write_text("")
    keys = _keys(root)
    assert str(root / "empty.py") not in project_words.holding({}, keys, "quantize_module")


def test_an_unsaved_buffer_is_what_is_searched(tmp_path):
    root = _tree(tmp_path)
    path = str(root / "call.py")
    keys = _keys(root)
    assert path in project_words.holding({}, keys, "quantize_module")
    read = project_words.reads()
    # The editor holds a buffer of call.py that no longer names the helper (keystroke after keystroke).
    for text in ("from m import quantize_modul\n", "from m import quantize_mod\n", "x = 'naïve'\n"):
        overlay = {path: text}
        keys = _keys(root, overlay)
        assert path not in project_words.holding(overlay, keys, "quantize_module")
        assert project_words.holding(overlay, keys, "naïve") == _by_reading(keys, "naïve", overlay)
    assert project_words.reads() == read + 3
    # A buffer that adds a caller is found, with the words of the file on disk unchanged.
    overlay = {str(root / "empty.py"): "quantize_module(m)  # ünïcode\n"}
    keys = _keys(root, overlay)
    assert project_words.holding(overlay, keys, "quantize_module") == _by_reading(keys, "quantize_module", overlay)
    assert str(root / "empty.py") in project_words.holding(overlay, keys, "quantize_module")


def test_a_deleted_module_is_not_found_and_a_new_one_is(tmp_path):
    root = _tree(tmp_path)
    keys = _keys(root)
    assert str(root / "edge.py") in project_words.holding({}, keys, "quantize_module")
    (root / "edge.py").unlink()
    (root / "new.py").write_text("quantize_module()\n")
    keys = _keys(root)
    found = project_words.holding({}, keys, "quantize_module")
    assert str(root / "edge.py") not in found and str(root / "new.py") in found
    # Deleted after it was listed (its key taken before): absent, so it holds nothing.
    stale = dict(keys)
    (root / "new.py").unlink()
    project_words.forget()
    assert str(root / "new.py") not in project_words.holding({}, stale, "quantize_module")
    assert str(root / "new.py") not in _spelling(stale, "quantize_module")


def test_a_module_over_the_limit_holds_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(project_words, "MAX_BYTES", 64)
    root = _tree(tmp_path, {"big.py": "quantize_module = 1\n" * 10, "small.py": "quantize_module\n"})
    keys = _keys(root)
    assert project_words.holding({}, keys, "quantize_module") == [str(root / "small.py")]
    assert project_words.holding({}, keys, "a.b") == []  # read for the text test: still over the limit


def test_known_answers_spare_the_reads(tmp_path):
    root = _tree(tmp_path)
    keys = _keys(root)
    lacking = {str(root / n) for n in ("empty.py", "dash.py", "string.py")}

    found = project_words.holding({}, keys, "quantize_module", dict.fromkeys(lacking, False))
    assert found == [p for p in _by_reading(keys, "quantize_module") if p not in lacking]
    assert project_words.reads() == len(TEXTS) - len(lacking)
    # What is known of a module at its key is its answer, read or not (nothing is read).
    assert project_words.holding({}, keys, "quantize_module", dict.fromkeys(keys, True)) == list(keys)
    assert project_words.reads() == len(TEXTS) - len(lacking)


class _CountedGets(dict):
    def __init__(self):
        super().__init__()
        self.gets = 0

    def get(self, *args):
        self.gets += 1
        return super().get(*args)


def test_a_question_after_another_walks_no_module_again(tmp_path, monkeypatch):
    keys = _keys(_tree(tmp_path))
    kept = _CountedGets()
    monkeypatch.setattr(project_words, "_MODULES", kept)
    project_words.holding({}, keys, "quantize_module")
    walked = kept.gets
    assert walked >= len(TEXTS)
    for word in ("export_utils", "utils", "absent_everywhere"):
        assert project_words.holding({}, keys, word) == _by_reading(keys, word), word
    assert kept.gets == walked  # the same keys, nothing read since: no module asked again


def test_the_module_passed_over_is_read_when_another_is_checked(tmp_path):
    # The first question passes over call.py (the module checked then); the next, asked for
    # another module's check with the same keys, must read it.
    keys = _keys(_tree(tmp_path))
    call, edge = str(tmp_path / "call.py"), str(tmp_path / "edge.py")
    assert call not in project_words.holding({}, keys, "quantize_module", besides=call)
    found = project_words.holding({}, keys, "quantize_module", besides=edge)
    assert call in found and edge not in found
    assert found == [p for p in _by_reading(keys, "quantize_module") if p != edge]


def test_modules_left_to_known_answers_are_read_when_asked_without_them(tmp_path):
    root = _tree(tmp_path)
    keys = _keys(root)
    lacking = {str(root / n) for n in ("empty.py", "call.py")}
    project_words.holding({}, keys, "x", dict.fromkeys(lacking, False))
    # Without those answers, call.py is read and found.
    assert project_words.holding({}, keys, "quantize_module") == _by_reading(keys, "quantize_module")


def test_a_module_edited_between_questions_is_read_again(tmp_path):
    root = _tree(tmp_path)
    keys = _keys(root)
    assert str(root / "empty.py") not in project_words.holding({}, keys, "quantize_module")
    overlay = {str(root / "empty.py"): "quantize_module()\n"}
    keys = _keys(root, overlay)
    assert str(root / "empty.py") in project_words.holding(overlay, keys, "quantize_module")
    project_words.forget()  # everything read is dropped: the next question reads again
    assert project_words.holding(overlay, keys, "quantize_module") == _by_reading(keys, "quantize_module", overlay)
