"""A project scan that reads modules only to search their bytes for a few names
(`project_texts.text_holding`: QL102's consumer and definition scans) asks the words a caller
search cut already (`project_words.known_to_lack`, `SharedWords.lacks`) and skips the read of
a module they show holds none of the names; what it answers is what reading answers. So does
the whole-project scan (`project_scan.scanned_project`) for the modules that hold none of its needles
and insert no packet."""

from __future__ import annotations

import builtins

import pytest

from qlint.analysis.graphs import project_scan, project_texts
from qlint.analysis.names import content_keys, project_words, shared_words
from qlint.analysis.project_files import python_files
from qlint.source import read_source
from tests.test_project_words import TEXTS, WORDS, _keys, _tree

_PLAIN = [w for w in WORDS if w.isascii() and w.replace("_", "a").isalnum()]
_OTHER = [w for w in WORDS if w not in _PLAIN]  # a dash, a dot, non-ASCII


pytestmark = pytest.mark.usefixtures("fresh_project_words")


def _lacks_by_reading(path: str, key: tuple, needles: tuple[bytes, ...]) -> bool:
    data = content_keys.content_bytes({}, path, key, project_words.MAX_BYTES)
    return data is not None and not any(n in data for n in needles)


def _cut(keys: dict) -> None:
    project_words.holding({}, keys, "anything")  # a caller search: every module cut into words


def _counting_opens(monkeypatch) -> list[str]:
    opened: list[str] = []

    def counting(path, *args, **kwargs):
        opened.append(path)
        return builtins.open(path, *args, **kwargs)

    for module in (project_scan, project_texts):
        monkeypatch.setattr(module, "open", counting, raising=False)
    return opened


def test_the_words_tell_exactly_which_modules_lack_the_names(tmp_path):
    keys = _keys(_tree(tmp_path))
    needles_sets = [(w.encode(),) for w in _PLAIN] + [(b"quantize_module", b"absent_everywhere"), ()]
    # Nothing cut yet: the words cannot tell.
    assert not any(project_words.known_to_lack(p, k, (b"absent_everywhere",)) for p, k in keys.items())
    _cut(keys)
    for needles in needles_sets:
        for path, key in keys.items():
            assert project_words.known_to_lack(path, key, needles) == _lacks_by_reading(path, key, needles), (
                path,
                needles,
            )
    # A name with a character outside words is answered by reading, never by the words.
    for word in _OTHER:
        assert not any(project_words.known_to_lack(p, k, (word.encode(),)) for p, k in keys.items()), word


def test_an_edited_module_is_not_answered_from_its_old_words(tmp_path):
    root = _tree(tmp_path)
    keys = _keys(root)
    _cut(keys)
    path = str(root / "empty.py")
    assert project_words.known_to_lack(path, keys[path], (b"quantize_module",))
    (root / "empty.py").write_text("quantize_module(m)\n")
    edited = _keys(root)[path]
    assert edited != keys[path]
    assert not project_words.known_to_lack(path, edited, (b"quantize_module",))
    assert project_texts.text_holding(None, path, edited, (b"quantize_module",)) is not None


def test_a_module_over_the_words_limit_is_still_read(tmp_path, monkeypatch):
    monkeypatch.setattr(project_words, "MAX_BYTES", 64)
    root = _tree(tmp_path, {"big.py": "quantize_module = 1\n" * 10, "small.py": "x = 1\n"})
    keys = _keys(root)
    _cut(keys)
    big, small = str(root / "big.py"), str(root / "small.py")
    # Too large for the words (they hold nothing), not for the scan: the scan reads it.
    assert not project_words.known_to_lack(big, keys[big], (b"quantize_module",))
    opened = _counting_opens(monkeypatch)
    assert project_texts.text_holding(None, big, keys[big], (b"quantize_module",)) is not None
    assert project_texts.text_holding(None, small, keys[small], (b"quantize_module",)) is None
    assert opened == [big]


def test_the_scan_reads_only_modules_whose_words_may_hold_a_name(tmp_path, monkeypatch):
    keys = _keys(_tree(tmp_path))
    _cut(keys)
    opened = _counting_opens(monkeypatch)
    for needles in [(b"quantize_module",), (b"export_utils", b"absent_everywhere"), ("naïve".encode(),)]:
        opened.clear()
        found = {p for p, k in keys.items() if project_texts.text_holding(None, p, k, needles) is not None}
        by_reading = {p for p, k in keys.items() if not _lacks_by_reading(p, k, needles)}
        assert found == by_reading, needles
        if needles[0].isascii():
            assert set(opened) == by_reading, needles  # no module lacking them was read
        else:
            assert len(opened) == len(keys)  # not a word: every module read, as before


def test_the_shared_words_tell_the_same_without_a_read(tmp_path, monkeypatch):
    root = _tree(tmp_path)
    pending = shared_words.start(python_files(str(root)), project_words.MAX_BYTES, project_words.words_of)
    assert pending is not None
    words = pending.wait()
    assert words is not None
    project_words.share(words)
    keys = _keys(root)
    for word in _PLAIN:
        for path, key in keys.items():
            needles = (word.encode(),)
            assert project_words.known_to_lack(path, key, needles) == _lacks_by_reading(path, key, needles)
    opened = _counting_opens(monkeypatch)
    found = {p for p, k in keys.items() if project_texts.text_holding(None, p, k, (b"quantize_module",))}
    assert found == {p for p in keys if "quantize_module" in TEXTS[p.rsplit("/", 1)[1]]}
    assert set(opened) == found
    assert project_words.reads() == 0


# What the whole-project scan (`project_scan.scanned_project`) asks of every module: a needle (it
# inserts or normalises), and `ops` and a marker (a module without either inserts no packet
# into graphs that carry packets: `graph_context.may_carry_packets`). `uses_ops` and `ops_word`
# spell `ops` and no marker; `ops_aot` none, but a word holding `ao`, which `torch.ao` needs.
_SCANNED = {
    "plain.py": "import torch\n\ndef f(x):\n    return x + 1\n",
    "inserts.py": "def f(g, op):\n    return g.call_function(op, ())\n",
    "normalises.py": "def f(n):\n    return n.target.overloadpacket\n",
    "uses_ops.py": "import torch\n\nOP = torch.ops.aten.add\n",
    "ops_word.py": "# see ops elsewhere\n",
    "ops_fx.py": "import torch.fx\n\nOP = torch.ops.aten.add\n",
    "ops_ao.py": "from torch.ao.quantization import x\n\nOP = torch.ops.aten.add\n",
    "ops_aot.py": "from m import aot_function\n\nOP = torch.ops.aten.add\n",
    "longer_word.py": "my_create_node_helper = 1\n",
    "comment.py": "# call_function is mentioned here only\n",
    "empty.py": "",
}


# Read by the scan where the words are cut: the others hold a needle, a marker, or a word
# that may be part of one (`aot_function` for `torch.ao`).
_UNREAD_ONES = {"plain.py", "empty.py", "uses_ops.py", "ops_word.py"}


def _scanned(paths_keys: dict) -> dict:
    """`_read`'s answers for every module: (key, text or marker), and which ones it found unable
    to insert a packet (`_NO_PACKET_INSERTS`)."""
    from qlint.analysis import scan_memo
    from qlint.analysis.names.project import ProjectIndex

    scan_memo.forget()
    project_scan.NO_PACKET_INSERTS.clear()
    project = ProjectIndex(track_dependents=False)
    answers = {p: project_scan._read(project, p, k) for p, k in paths_keys.items()}
    no_packets = {p for p, k in paths_keys.items() if project_scan.NO_PACKET_INSERTS.get(p) == k}
    memo = {p: scan_memo.answers(p, k, [project_scan._QUESTION])[0] for p, k in paths_keys.items()}
    scan_memo.forget()
    project_scan.NO_PACKET_INSERTS.clear()
    return {"answers": answers, "no_packets": no_packets, "memo": memo}


def test_the_project_scan_skips_reading_modules_whose_words_lack_its_needles(tmp_path, monkeypatch):
    keys = _keys(_tree(tmp_path, _SCANNED))
    read = _scanned(keys)  # nothing cut: every module read
    _cut(keys)
    opened = _counting_opens(monkeypatch)
    assert _scanned(keys) == read  # the same answers, memo and skips
    assert {p.rsplit("/", 1)[1] for p in opened} == set(_SCANNED) - _UNREAD_ONES
    assert {p.rsplit("/", 1)[1] for p in read["no_packets"]} >= _UNREAD_ONES


def test_the_project_scan_reads_a_module_the_words_cannot_vouch_for(tmp_path, monkeypatch):
    root = _tree(tmp_path, _SCANNED)
    keys = _keys(root)
    _cut(keys)
    (root / "plain.py").write_text("def f(g, op):\n    return g.create_node('call_function', op)\n")
    edited = _keys(root)
    opened = _counting_opens(monkeypatch)
    answers = _scanned(edited)["answers"]
    plain = str(root / "plain.py")
    # Its words were cut at the old content: read, as are those whose words hold a needle.
    assert {p.rsplit("/", 1)[1] for p in opened} == set(_SCANNED) - _UNREAD_ONES | {"plain.py"}
    assert answers[plain] == (edited[plain], project_scan.UNREAD)  # it inserts now


def test_the_project_scan_asks_the_shared_words_too(tmp_path, monkeypatch):
    root = _tree(tmp_path, _SCANNED)
    keys = _keys(root)
    read = _scanned(keys)
    pending = shared_words.start(python_files(str(root)), project_words.MAX_BYTES, project_words.words_of)
    assert pending is not None
    words = pending.wait()
    assert words is not None
    project_words.share(words)
    opened = _counting_opens(monkeypatch)
    assert _scanned(keys) == read
    assert {p.rsplit("/", 1)[1] for p in opened} == set(_SCANNED) - _UNREAD_ONES
    assert project_words.reads() == 0


def test_a_module_whose_path_is_marked_is_read_for_its_ops(tmp_path, monkeypatch):
    root = _tree(tmp_path, {})
    (root / "_inductor").mkdir()
    lowered = root / "_inductor" / "lowered.py"
    lowered.write_text("OP = torch.ops.aten.add\n")  # no marker in its text, but in its path
    plain = root / "plain.py"
    plain.write_text("OP = torch.ops.aten.add\n")
    keys = _keys(root)
    read = _scanned(keys)
    assert str(lowered) not in read["no_packets"] and str(plain) in read["no_packets"]
    _cut(keys)
    opened = _counting_opens(monkeypatch)
    assert _scanned(keys) == read
    assert opened == [str(lowered)]


_INSERTING = {
    "relu_inserter.py": "def f(g):\n    return g.call_function(torch.ops.aten.relu, ())\n",
    "add_inserter.py": "def f(g):\n    return g.call_function(torch.ops.aten.add, ())\n",
    "relu_named.py": "def f(g, relu_op):\n    return g.create_node('call_function', relu_op)\n",
    "mul_inserter.py": "def f(g):\n    return g.call_function(torch.ops.aten.mul, ())\n",
}


def _probed(keys: dict, needles: tuple[str, ...]) -> dict:
    """What a probe of the scan's kept modules (`module_facts`: their text not read yet in a
    command-line run) finds of each, and what it leaves in the memo."""
    from qlint.analysis import scan_memo

    scan_memo.forget()
    found = {
        p: project_scan.kept_module_holds(
            project_scan._Project(), p, k, project_scan.UNREAD, needles, None, "q", False
        )[0]
        for p, k in keys.items()
    }
    memo = {p: scan_memo.answers(p, k, ["q"])[0] for p, k in keys.items()}
    scan_memo.forget()
    return {"found": found, "memo": memo}


@pytest.mark.parametrize("needles", [("relu",), ("add", "relu"), ("absent_everywhere",)])
def test_a_probe_of_the_kept_modules_reads_only_those_whose_words_may_hold_its_needles(tmp_path, monkeypatch, needles):
    keys = _keys(_tree(tmp_path, _INSERTING))
    read = _probed(keys, needles)  # nothing cut: every module read
    _cut(keys)
    opened = _counting_opens(monkeypatch)
    monkeypatch.setattr(project_scan, "read_source", lambda p: opened.append(p) or read_source(p))
    assert _probed(keys, needles) == read
    holding = {p.rsplit("/", 1)[1] for p, held in read["found"].items() if held}
    assert {p.rsplit("/", 1)[1] for p in opened} == holding
    # A needle that is not a word is answered by reading every module, as before.
    opened.clear()
    dotted = tuple(f"aten.{n}" for n in needles)
    assert _probed(keys, dotted)["found"] == {p: any(d in t for d in dotted) for p, t in _texts(keys).items()}
    assert len(opened) == len(keys)


def _texts(keys: dict) -> dict:
    return {p: read_source(p) for p in keys}
