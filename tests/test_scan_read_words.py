"""A project scan's third read of a module at one content key cuts its words
(`project_words.keep_read`), so the next scans ask the words instead of reading it again: an
installed package has no words cut before the checks (torch's QL101/QL102 scans read each of
its modules a dozen times). The answers are the ones a read gives."""

from __future__ import annotations

import pytest

from qlint.analysis.graphs import project_scan
from qlint.analysis.names import content_keys, project_words
from qlint.analysis.names.project import ProjectIndex

pytestmark = pytest.mark.usefixtures("fresh_project_words")


def _module(tmp_path, text: str | bytes):
    path = tmp_path / "mod.py"
    if isinstance(text, str):
        path.write_text(text)
    else:
        path.write_bytes(text)
    return str(path), content_keys.content_key({}, str(path), True)


def _counting_opens(monkeypatch) -> list[str]:
    opened: list[str] = []

    def counting(path, *args, **kwargs):
        opened.append(path)
        return open(path, *args, **kwargs)

    monkeypatch.setattr(project_scan, "open", counting, raising=False)
    return opened


def test_a_module_read_three_times_is_not_read_for_a_word_it_lacks(tmp_path, monkeypatch):
    path, key = _module(tmp_path, "def alpha():\n    return beta\n")
    opened = _counting_opens(monkeypatch)
    project = ProjectIndex()
    for _ in range(3):
        assert project_scan.text_holding(project, path, key, (b"alpha",))[0].startswith("def alpha")
    assert project_scan.text_holding(project, path, key, (b"gamma",)) is None
    assert project_scan.text_holding(project, path, key, (b"gamma", b"delta")) is None
    assert len(opened) == 3
    # A word it holds is read for, as before.
    assert project_scan.text_holding(project, path, key, (b"beta",)) is not None
    assert len(opened) == 4
    # The caller searches answer from the same words, without a read of their own.
    assert project_words.holding({}, {path: key}, "beta") == [path]
    assert project_words.reads() == 0


def test_two_reads_cut_nothing(tmp_path, monkeypatch):
    # A check that asks two questions does not pay for the cut: the next question reads again.
    path, key = _module(tmp_path, "alpha = 1\n")
    opened = _counting_opens(monkeypatch)
    project = ProjectIndex()
    for _ in range(2):
        assert project_scan.text_holding(project, path, key, (b"alpha",)) is not None
    assert not project_words.known_to_lack(path, key, (b"gamma",))
    assert project_scan.text_holding(project, path, key, (b"gamma",)) is None
    assert len(opened) == 3


def test_a_new_content_is_read_again(tmp_path):
    path, key = _module(tmp_path, "alpha = 1\n")
    project = ProjectIndex()
    for _ in range(3):
        project_scan.text_holding(project, path, key, (b"alpha",))
    assert project_words.known_to_lack(path, key, (b"gamma",))
    new = (key[0] + 1, key[1] + 10)  # another content key: the words cut at the old one do not answer
    (tmp_path / "mod.py").write_text("gamma = 1\nalpha = 2\n")
    assert not project_words.known_to_lack(path, new, (b"gamma",))
    assert project_scan.text_holding(project, path, new, (b"gamma",))[0].startswith("gamma")


def test_a_module_past_the_words_limit_is_read_at_every_question(tmp_path, monkeypatch):
    # Its words are not kept (a caller search passes over it, as when it reads it itself), and
    # the scan reads it for each question, finding what it finds in its bytes.
    body = b"alpha = 1\n" + b"#" * (project_words.MAX_BYTES + 1) + b"\nomega = 2\n"
    path, key = _module(tmp_path, body)
    opened = _counting_opens(monkeypatch)
    project = ProjectIndex()
    for _ in range(3):
        assert project_scan.text_holding(project, path, key, (b"alpha",)) is not None
    assert not project_words.known_to_lack(path, key, (b"gamma",))
    assert project_scan.text_holding(project, path, key, (b"omega",)) is not None
    assert project_scan.text_holding(project, path, key, (b"gamma",)) is None
    assert len(opened) == 5
    assert project_words.holding({}, {path: key}, "alpha") == []


def test_words_shared_at_the_key_are_not_cut_again(tmp_path, monkeypatch):
    path, key = _module(tmp_path, "alpha = 1\n")

    class Shared:
        def holds_key(self, p, k):
            return p == path and k == key

        def lacks(self, p, needles):
            return b"alpha" not in needles

        def holding(self, needle):
            return [path] if needle == b"alpha" else []

    project_words.share(Shared())
    project = ProjectIndex()
    for _ in range(4):
        assert project_scan.text_holding(project, path, key, (b"alpha",)) is not None
    assert path not in project_words._MODULES
