"""The project words a parallel run's child cuts for every process, or a run of one process for
itself (`shared_words`), answer what each process's own reading answers (`project_words`),
spare those reads, and never answer for a module at a content key other than the one they
were cut at."""

from __future__ import annotations

import functools
import os
import random

import pytest

from qlint import runner
from qlint.analysis.names import content_keys, project_words, shared_words
from qlint.analysis.project_files import python_files
from qlint.diagnostic import Range
from qlint.rules import RULES
from qlint.rules.base import Rule
from qlint.settings import Settings
from tests.test_project_words import TEXTS, WORDS, _by_reading, _keys, _spelling, _tree

pytestmark = pytest.mark.usefixtures("fresh_project_words")


def _shared(root, limit=project_words.MAX_BYTES, here: bool = False) -> shared_words.SharedWords:
    """The words of the modules under `root`, cut by a parallel run's child (`start`) or, with
    `here`, by a run of one process for itself (`cut_here`), and shared."""
    paths = python_files(str(root))
    if here:
        words = shared_words.cut_here(paths, limit, project_words.module_words)
    else:
        pending = shared_words.start(paths, limit, project_words.module_words)
        assert pending is not None
        words = pending.wait()
    assert words is not None
    project_words.share(words)
    return words


@pytest.fixture(params=["a child", "this process"])
def shared(request):
    """`_shared`, both ways: each answers what reading answers."""
    return functools.partial(_shared, here=request.param == "this process")


def test_the_shared_words_answer_what_reading_answers_without_a_read(tmp_path, shared):
    root = _tree(tmp_path)
    words = shared(root)
    assert len(words) == len(TEXTS)
    keys = _keys(root)
    for word in WORDS:
        assert project_words.holding({}, keys, word) == _by_reading(keys, word), word
        assert _spelling(keys, word) == _by_reading(keys, word, whole=True), word
    # Words with other characters (a dash, a dot, non-ASCII) read the texts, as before; no
    # module was cut into words by this process.
    assert project_words.reads() == 0


def test_random_texts_agree_with_reading(tmp_path, shared):
    rng = random.Random(13)
    alphabet = ["ab", "a", "b", "_", "1", " ", ".", "\n", "é", "#", "(", "ab_1", "\r\n", "\t"]
    texts = {f"m{i}.py": "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 60))) for i in range(60)}
    root = _tree(tmp_path, texts)
    shared(root)
    keys = _keys(root)
    for word in ["ab", "a", "b", "ab_1", "_", "1", "a_", "b1", "abab", "ba", "ab1"]:
        assert project_words.holding({}, keys, word) == _by_reading(keys, word), word
        assert _spelling(keys, word) == _by_reading(keys, word, whole=True), word
    assert project_words.reads() == 0


def test_a_module_edited_after_the_cut_is_read_again_and_only_it(tmp_path, shared):
    root = _tree(tmp_path)
    shared(root)
    edited = root / "empty.py"
    edited.write_text("quantize_module_v3 = 1\n")
    os.utime(edited, ns=(1, 1))  # another key, whatever the clock's tick
    keys = _keys(root)
    found = project_words.holding({}, keys, "quantize_module_v3")
    assert found == [str(edited)] == _by_reading(keys, "quantize_module_v3")
    assert project_words.reads() == 1
    assert _spelling(keys, "quantize_module") == _by_reading(keys, "quantize_module", whole=True)


def test_a_module_read_before_at_another_key_is_answered_at_the_current_one(tmp_path, shared):
    root = _tree(tmp_path, {"a.py": "old_name = 1\n", "b.py": "x = 1\n"})
    path = str(root / "a.py")
    stale = {path: ("stale", 1)}
    project_words._MODULES[path] = (stale[path], b"\nold_name\n")  # what a read at that key left
    shared(root)
    keys = _keys(root)
    assert project_words.holding({}, keys, "old_name") == [path]
    assert project_words.holding({}, keys, "new_name") == []
    assert path not in project_words._MODULES


class _CountedWords:
    """The shared words, counting the modules asked one by one (`holds_key`)."""

    def __init__(self, words):
        self.words, self.asked = words, 0

    def holds_key(self, path, key):
        self.asked += 1
        return self.words.holds_key(path, key)

    def __getattr__(self, name):
        return getattr(self.words, name)


def test_a_question_for_another_modules_check_walks_no_module_again(tmp_path, shared):
    # Each check passes over its own module (`besides`): answered by the shared words, that
    # module needs no walk over every module for the next check's question, one scan per word.
    root = _tree(tmp_path)
    counted = _CountedWords(shared(root))
    project_words.share(counted)  # type: ignore[arg-type]
    keys = _keys(root)
    call, edge = str(root / "call.py"), str(root / "edge.py")
    assert call not in project_words.holding({}, keys, "quantize_module", besides=call)
    walked = counted.asked
    assert walked >= len(TEXTS) - 1
    questions = 0
    for besides in (edge, call, str(root / "longer.py")):
        for word in ("quantize_module", "export_utils", "absent_everywhere"):
            expected = [p for p in _by_reading(keys, word) if p != besides]
            assert project_words.holding({}, keys, word, besides=besides) == expected, (besides, word)
            questions += 1
    assert counted.asked <= walked + questions  # at most the module passed over; no walk
    assert project_words.reads() == 0


def test_a_module_passed_over_and_edited_after_the_cut_is_read_for_the_next_check(tmp_path, shared):
    # Look-alike: the module passed over is not at the key the words were cut at, so they cannot
    # answer for it; the next check's question reads it.
    root = _tree(tmp_path)
    shared(root)
    edited = root / "empty.py"
    edited.write_text("quantize_module()\n")
    os.utime(edited, ns=(1, 1))
    keys = _keys(root)
    assert str(edited) not in project_words.holding({}, keys, "quantize_module", besides=str(edited))
    found = project_words.holding({}, keys, "quantize_module", besides=str(root / "edge.py"))
    assert str(edited) in found
    assert found == [p for p in _by_reading(keys, "quantize_module") if p != str(root / "edge.py")]
    assert project_words.reads() == 1


def test_a_module_passed_over_and_read_before_at_another_key_is_not_answered_stale(tmp_path, shared):
    # Look-alike: the module passed over was read before at another key (what an edit left):
    # those words are not the current ones, whatever the shared words hold.
    root = _tree(tmp_path, {"a.py": "x = 1\n", "b.py": "y = 1\n", "c.py": "z = 1\n"})
    path = str(root / "a.py")
    shared(root)
    project_words._MODULES[path] = (("stale", 1), b"\nold_name\n")
    keys = _keys(root)
    assert project_words.holding({}, keys, "old_name", besides=path) == []
    assert project_words.holding({}, keys, "old_name", besides=str(root / "b.py")) == []
    assert project_words.holding({}, keys, "x", besides=str(root / "b.py")) == [path]


def test_a_module_changed_while_cut_is_left_to_whoever_asks(tmp_path, monkeypatch, shared):
    root = _tree(tmp_path, {"a.py": "helper_one()\n", "b.py": "helper_two()\n"})
    path = str(root / "a.py")
    real = content_keys.content_key

    def key(overlay, p, normal=False):
        k = real(overlay, p, normal)
        return (k[0], k[1] + 1) if p == path else k  # as if its size changed after its stat

    monkeypatch.setattr(content_keys, "content_key", key)
    words = shared(root)
    monkeypatch.undo()
    assert len(words) == 1 and not words.holds_key(path, key({}, path, True))
    keys = _keys(root)
    assert project_words.holding({}, keys, "helper_one") == [path]
    assert project_words.reads() == 1


def test_a_module_over_the_limit_holds_nothing(tmp_path, monkeypatch, shared):
    monkeypatch.setattr(project_words, "MAX_BYTES", 64)
    root = _tree(tmp_path, {"big.py": "quantize_module = 1\n" * 10, "small.py": "quantize_module\n"})
    shared(root, limit=64)
    keys = _keys(root)
    assert project_words.holding({}, keys, "quantize_module") == [str(root / "small.py")]
    assert not project_words.spells({}, str(root / "big.py"), keys[str(root / "big.py")], "quantize_module")
    assert project_words.reads() == 0


def test_a_child_that_fails_shares_nothing(tmp_path):
    root = _tree(tmp_path)

    def broken(data):
        raise MemoryError

    pending = shared_words.start(python_files(str(root)), project_words.MAX_BYTES, broken)
    assert pending is not None and pending.wait() is None


def test_a_cut_in_this_process_that_fails_keeps_nothing_mapped(tmp_path, monkeypatch):
    # A Ctrl-C while a run of one process cuts the words: the mapping goes with the cut.
    root = _tree(tmp_path)
    made = []
    real = shared_words.mmap.mmap
    monkeypatch.setattr(shared_words.mmap, "mmap", lambda *args: made.append(real(*args)) or made[-1])

    def interrupted(data):
        raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        shared_words.cut_here(python_files(str(root)), project_words.MAX_BYTES, interrupted)
    assert len(made) == 1 and made[0].closed


def test_a_scan_stops_where_the_words_end(tmp_path, shared):
    """Past the words, the mapping's pages were never written: reading them would have the
    system allocate them (shared memory), so a search for a word no module holds stops there."""
    root = _tree(tmp_path)
    words = shared(root)
    assert words._end < len(words._blob)
    assert words.holding(b"absent_everywhere") == set()
    # The last module's words end the scan: found, to their very end.
    assert words.holding(b"pass") == {str(root / "unicode.py")}


class WordsRule(Rule):
    """Test-only: reports, for a file saying WORDS_MARK, how many modules of its directory
    hold the word `shared_helper`, how many modules this process cut into words, and whether
    shared words were there."""

    code = "QL905"
    name = "words"
    summary = "test-only"
    triggers = ("WORDS_MARK",)

    def check(self, ctx):
        keys = _keys(os.path.dirname(ctx.path))
        found = project_words.holding({}, keys, "shared_helper", besides=os.path.abspath(ctx.path))
        shared = project_words._SHARED is not None
        yield ctx.diagnostic(self, Range.of(1, 0, 1, 1), f"{len(found)} {project_words.reads()} {shared}")


def test_a_parallel_run_shares_the_words_and_finds_the_same(tmp_path, monkeypatch):
    monkeypatch.setitem(RULES, WordsRule.code, WordsRule)
    src = tmp_path / "src"
    src.mkdir()
    for i in range(runner.MIN_PARALLEL_FILES + 10):
        (src / f"m{i:03}.py").write_text("# WORDS_MARK\n" + ("shared_helper()\n" if i % 3 else "x = 1\n"))
    # QL102 asks the wrapper index, which the run makes while the child cuts the words.
    s = Settings(root=tmp_path, cache_dir=tmp_path / ".cache", select=("QL102", "QL905"))

    def messages(jobs):
        project_words.forget()  # the workers count from what they inherit
        run = runner.run_check([str(src)], s, use_cache=False, jobs=jobs)
        return [d.message for r in run.results for d in r.diagnostics if d.code == "QL905"]

    serial, parallel = messages(1), messages(2)
    holding = sum(1 for i in range(runner.MIN_PARALLEL_FILES + 10) if i % 3)
    assert [m.split()[0] for m in parallel] == [m.split()[0] for m in serial]
    assert {m.split()[0] for m in serial} == {str(holding), str(holding - 1)}
    # A run of one process cuts the words for itself as the child does for the workers: one
    # mapping, scanned once per word; no module is cut into words one by one.
    assert {m.split(maxsplit=1)[1] for m in serial} == {"0 True"}
    assert {m.split(maxsplit=1)[1] for m in parallel} == {"0 True"}  # no worker cut a module
    assert project_words._SHARED is None  # the run is over: modules may change afterwards
