"""The whole-run record (`qlint.run_record`): a warm run over an unchanged tree is answered
from one record, byte for byte as the per-file cache path answers it; anything that could
change an answer (a touched, edited, new or removed file, another config, other arguments,
another qlint version) falls back to the per-file path, whose answer is the cold run's."""

from __future__ import annotations

import marshal
import os
import textwrap
import time
from pathlib import Path

import pytest

from qlint import checksummed_files, run_record
from qlint.cli import main
from tests.snippets import PACKET_MATCHER as QL101_MATCHER
from tests.test_ql201_project_callers import BN_CALLER, EVAL_CALLER, HEAD, _repo

_PAST = 1_600_000_000


def _age(root: Path, when: int = _PAST) -> None:
    """Stats old enough for the caches to trust them."""
    for directory, _, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(directory, name), (when, when))


def _age_dirs(root: Path) -> None:
    """Directories old enough for a listing kept of them to vouch for it (`project_files`):
    the record keeps the stat of one the walk did not list only then."""
    for directory, _, _ in os.walk(root):
        os.utime(directory, (_PAST, _PAST))


@pytest.fixture
def tree(tmp_path):
    """A repository where QL201 (the helper's finding depends on which callers exist) and
    QL101 report, every file old."""
    root = _repo(tmp_path, a=EVAL_CALLER)
    (root / "pkg" / "matchers.py").write_text(QL101_MATCHER)
    (root / "pkg" / "clean.py").write_text("x = 1\n")
    _age(root)
    return root


@pytest.fixture(autouse=True)
def no_wait(monkeypatch):
    """Directories made by a test have a ctime of now, which nothing moves back: the record's
    window for changes after the walk began is shortened, so a test need not sleep 2 s. (The
    files' own stats are aged by `_age` and keep the full window.)"""
    monkeypatch.setattr(run_record, "RACY_NS", 1)


@pytest.fixture
def answers(monkeypatch):
    """What each run's `run_record.answer` returned: True when the record answered."""
    seen: list[bool] = []
    monkeypatch.setattr(run_record, "answer", _spy(seen))
    return seen


def _spy(seen: list[bool]):
    real = run_record.answer

    def spy(*args, **kwargs):
        out = real(*args, **kwargs)
        seen.append(out is not None)
        return out

    return spy


FORMATS = (
    ["--output-format", "full"],
    ["--output-format", "json"],
    ["--output-format", "concise", "--statistics"],
    ["--output-format", "sarif"],
)


def _run(capsys, cache: Path, paths: list[Path], *extra: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["check", *extra, "--cache-dir", str(cache), *map(str, paths)])
    out, err = capsys.readouterr()
    return code, out, err


def _cold(capsys, paths: list[Path], *extra: str) -> tuple[int, str, str]:
    capsys.readouterr()
    code = main(["check", *extra, "--no-cache", *map(str, paths)])
    out, err = capsys.readouterr()
    return code, out, err


def _warm_up(capsys, cache, paths, *extra) -> None:
    _run(capsys, cache, paths, *extra)  # cold: fills the cache, and records the run


def _records(cache: Path) -> list[Path]:
    return list(cache.glob("*/*.run"))


@pytest.mark.parametrize("fmt", FORMATS, ids=lambda f: "-".join(f[1:]))
def test_the_record_answers_byte_for_byte_as_the_per_file_path(tmp_path, tree, capsys, answers, fmt):
    cache = tmp_path / "cache"
    cold = _cold(capsys, [tree], *fmt)
    assert _run(capsys, cache, [tree], *fmt) == cold  # fresh results, recorded
    assert answers == [False] and _records(cache)
    assert _run(capsys, cache, [tree], *fmt) == cold
    assert answers == [False, True]
    for record in _records(cache):
        record.unlink()
    assert _run(capsys, cache, [tree], *fmt) == cold  # the per-file path, every file a hit
    assert answers == [False, True, False] and _records(cache)
    assert _run(capsys, cache, [tree], *fmt) == cold
    assert answers == [False, True, False, True]
    assert cold[0] == 1 and "QL101" in cold[1]


def test_exit_zero_and_quiet_runs_read_the_same_record(tmp_path, tree, capsys, answers):
    cache = tmp_path / "cache"
    _warm_up(capsys, cache, [tree])
    for extra in (["--exit-zero"], ["--quiet"], ["--exit-zero", "--output-format", "json-lines"]):
        assert _run(capsys, cache, [tree], *extra) == _cold(capsys, [tree], *extra)
    assert answers == [False, True, True, True]


def test_the_record_stats_its_files_in_one_flat_list(tmp_path, tree, capsys, answers, monkeypatch):
    """The files the walk found are stat'ed and compared as one flat list of integers (in C),
    not by a Python call and a tuple each: only the other paths the lookups looked at (a
    dependency, an absent module) go through `_stat`."""
    cache = tmp_path / "cache"
    cold = _cold(capsys, [tree])
    _warm_up(capsys, cache, [tree])
    calls: list[str] = []
    real = run_record._stat
    monkeypatch.setattr(run_record, "_stat", lambda path: calls.append(path) or real(path))
    assert _run(capsys, cache, [tree]) == cold
    assert answers == [False, True]
    files = {str(p) for p in tree.rglob("*.py")}
    assert calls and not files & set(calls)


def _after(tmp_path, tree, capsys, answers, change) -> None:
    """After `change` the record does not answer, and the run matches a cold run."""
    cache = tmp_path / "cache"
    _warm_up(capsys, cache, [tree])
    _run(capsys, cache, [tree])
    assert answers == [False, True]
    answers.clear()
    paths = change(tree) or [tree]
    cold = _cold(capsys, paths)
    assert _run(capsys, cache, paths) == cold
    assert answers == [False]
    assert _run(capsys, cache, paths) == cold  # recorded again by the fallback
    assert answers == [False, True]
    return cold


def test_a_touched_file_falls_back(tmp_path, tree, capsys, answers):
    _after(tmp_path, tree, capsys, answers, lambda root: os.utime(root / "pkg" / "clean.py", (_PAST + 5, _PAST + 5)))


def test_an_edit_that_keeps_the_size_falls_back_and_is_seen(tmp_path, tree, capsys, answers):
    def edit(root):
        path = root / "pkg" / "matchers.py"
        path.write_text(QL101_MATCHER.replace("n.target ==", "n.target !="))  # same size
        os.utime(path, (_PAST + 7, _PAST + 7))

    cold = _after(tmp_path, tree, capsys, answers, edit)
    assert "QL101" in cold[1]


def test_a_caller_edited_elsewhere_changes_the_helpers_finding(tmp_path, tree, capsys, answers):
    def edit(root):
        path = root / "scripts" / "a.py"
        path.write_text(HEAD + textwrap.dedent(BN_CALLER))
        os.utime(path, (_PAST + 9, _PAST + 9))

    cold = _after(tmp_path, tree, capsys, answers, edit)
    assert "QL201" in cold[1]


def test_a_new_file_falls_back(tmp_path, tree, capsys, answers):
    def add(root):
        (root / "scripts" / "b.py").write_text(HEAD + textwrap.dedent(BN_CALLER))
        _age(root)

    _after(tmp_path, tree, capsys, answers, add)


def test_a_new_file_that_is_not_checked_still_falls_back(tmp_path, tree, capsys, answers):
    """Excluded from the check, yet listed for the project scans: the walk lists it."""

    def add(root):
        (root / "pyproject.toml").write_text('[tool.qlint]\nextend-exclude = ["skipped_*.py"]\n')
        _age(root)

    cache = tmp_path / "cache"
    add(tree)
    _warm_up(capsys, cache, [tree])
    assert _run(capsys, cache, [tree]) == _cold(capsys, [tree])
    assert answers == [False, True]
    answers.clear()
    (tree / "scripts" / "skipped_b.py").write_text(HEAD + textwrap.dedent(BN_CALLER))
    _age(tree)
    cold = _cold(capsys, [tree])
    assert _run(capsys, cache, [tree]) == cold
    assert answers == [False]
    assert "skipped_b" not in cold[1]


def test_an_edited_gitignore_falls_back(tmp_path, tree, capsys, answers):
    """Its directory keeps its stat when only its content changes: its own stat tells."""
    (tree / ".gitignore").write_text("build/\n")
    _age(tree)

    def ignore(root):
        (root / ".gitignore").write_text("matchers.py\n")
        os.utime(root / ".gitignore", (_PAST + 3, _PAST + 3))

    cold = _after(tmp_path, tree, capsys, answers, ignore)
    assert "matchers.py" not in cold[1]


def test_a_removed_file_falls_back(tmp_path, tree, capsys, answers):
    cold = _after(tmp_path, tree, capsys, answers, lambda root: os.remove(root / "pkg" / "matchers.py"))
    assert "QL101" not in cold[1]


def test_a_changed_config_falls_back(tmp_path, tree, capsys, answers):
    def configure(root):
        (root / "pyproject.toml").write_text('[tool.qlint]\nignore = ["QL101"]\n')
        _age(root)

    cold = _after(tmp_path, tree, capsys, answers, configure)
    assert "QL101" not in cold[1]


def test_other_paths_fall_back_and_replace_the_record(tmp_path, tree, capsys, answers):
    _after(tmp_path, tree, capsys, answers, lambda root: [root / "scripts", root])
    assert _run(capsys, tmp_path / "cache", [tree]) == _cold(capsys, [tree])
    assert answers == [False, True, False]


def test_other_selected_rules_fall_back(tmp_path, tree, capsys, answers):
    cache = tmp_path / "cache"
    _warm_up(capsys, cache, [tree])
    answers.clear()
    assert _run(capsys, cache, [tree], "--select", "QL101") == _cold(capsys, [tree], "--select", "QL101")
    assert answers == [False]


def test_another_qlint_version_falls_back(tmp_path, tree, capsys, answers, monkeypatch):
    cache = tmp_path / "cache"
    _warm_up(capsys, cache, [tree])
    (record,) = cache.glob("*/*.run")
    monkeypatch.setattr(run_record, "__version__", "0.0.0-other")
    answers.clear()
    assert _run(capsys, cache, [tree]) == _cold(capsys, [tree])
    assert answers == [False]
    # A record of another fingerprint where this one's belongs is not read either.
    monkeypatch.undo()
    monkeypatch.setattr(run_record, "answer", _spy(answers))
    header = b"".join(record.read_bytes().splitlines(keepends=True)[:2])  # the format's and the key's
    assert header.startswith(run_record._HEADER)
    payload = checksummed_files.read_marshalled(record, header)
    payload["fingerprint"] = "0" * 16
    checksummed_files.write(record, header, marshal.dumps(payload))
    answers.clear()
    assert _run(capsys, cache, [tree]) == _cold(capsys, [tree])
    assert answers == [False]


def test_a_damaged_record_is_ignored(tmp_path, tree, capsys, answers):
    cache = tmp_path / "cache"
    _warm_up(capsys, cache, [tree])
    (record,) = cache.glob("*/*.run")
    record.write_bytes(record.read_bytes()[:-10])
    answers.clear()
    assert _run(capsys, cache, [tree]) == _cold(capsys, [tree])
    assert answers == [False]


def test_recently_modified_files_are_not_recorded(tmp_path, tree, capsys, answers):
    """A second edit in the same tick as the stat would keep the stat: no proof of content.
    (A file stamped in the future is as recent as it gets; the directories are not.)"""
    cache = tmp_path / "cache"
    soon = int(os.stat(tree / "pkg" / "clean.py").st_mtime) + 10**9
    os.utime(tree / "pkg" / "clean.py", (soon, soon))
    _warm_up(capsys, cache, [tree])
    assert not list(cache.glob("*/*.run"))


def test_a_directory_changed_after_the_walk_began_is_not_recorded(tmp_path, tree, capsys, answers, monkeypatch):
    """Its listing may predate the change: the window covers the walk (and a clock tick)."""
    monkeypatch.setattr(run_record, "RACY_NS", 3_600 * 10**9)
    _warm_up(capsys, tmp_path / "cache", [tree])
    assert not list((tmp_path / "cache").glob("*/*.run"))


def test_a_walk_through_symbolic_links_is_recorded(tmp_path, tree, capsys, answers):
    """ExecuTorch links `src/executorch/*` to its top-level packages: a tree walked through
    links is answered by the record as any other."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (elsewhere / "m.py").write_text(QL101_MATCHER)
    _age(elsewhere)
    os.symlink(elsewhere / "m.py", tree / "scripts" / "linked.py")  # a module
    os.symlink("../pkg", tree / "scripts" / "pkg_again")  # a package, by a second path
    os.symlink(tmp_path / "nothing", tree / "scripts" / "dangling")
    cold = _cold(capsys, [tree])
    cache = tmp_path / "cache"
    assert _run(capsys, cache, [tree]) == cold
    assert _run(capsys, cache, [tree]) == cold
    assert answers == [False, True] and "linked.py" in cold[1]


def test_a_dangling_link_whose_target_appears_falls_back(tmp_path, tree, capsys, answers):
    """The walk passed over a link that led nowhere; its target made, it leads to modules to
    check, while the directory holding the link keeps its stat."""
    later = tmp_path / "later"
    os.symlink(later, tree / "scripts" / "vendored")

    def make(root):
        later.mkdir()
        (later / "m.py").write_text(QL101_MATCHER)
        _age(later)

    cold = _after(tmp_path, tree, capsys, answers, make)
    assert os.path.join("vendored", "m.py") in cold[1]


def test_a_link_led_elsewhere_falls_back(tmp_path, tree, capsys, answers):
    """A directory on the way to a link's target put back as another: the link, and the
    directory holding it, are as they were; the modules it leads to are not."""
    (tmp_path / "v1" / "lib").mkdir(parents=True)
    (tmp_path / "v1" / "lib" / "clean.py").write_text("x = 1\n")
    (tmp_path / "v2" / "lib").mkdir(parents=True)
    (tmp_path / "v2" / "lib" / "clean.py").write_text("x = 1\n")
    (tmp_path / "v2" / "lib" / "m.py").write_text(QL101_MATCHER)
    _age(tmp_path / "v1")
    _age(tmp_path / "v2")
    os.symlink("v1", tmp_path / "current")
    os.symlink(tmp_path / "current" / "lib", tree / "scripts" / "lib")

    def switch(root):
        os.rename(tmp_path / "current", tmp_path / "previous")
        os.symlink("v2", tmp_path / "current")

    cold = _after(tmp_path, tree, capsys, answers, switch)
    assert os.path.join("lib", "m.py") in cold[1]


def test_a_package_walked_through_a_link_first_is_recorded(tmp_path, tree, capsys, answers):
    """Its directories are listed by their own paths too (the project scans do not follow
    links): those listings, not the walk's, are what the record keeps their stats for."""
    (tree / "src").mkdir()
    os.symlink("../scripts", tree / "src" / "scripts")
    _age_dirs(tree)
    paths = [tree / "src", tree]  # `src/scripts` walked first: `scripts` is not walked again
    cache = tmp_path / "cache"
    _warm_up(capsys, cache, paths)
    assert _run(capsys, cache, paths) == _cold(capsys, paths)
    assert answers == [False, True]
    answers.clear()
    (tree / "scripts" / "b.py").write_text(HEAD + textwrap.dedent(BN_CALLER))
    _age(tree)
    cold = _cold(capsys, paths)
    assert _run(capsys, cache, paths) == cold
    assert answers == [False] and "QL201" in cold[1]


def test_an_excluded_directory_the_project_scans_list_is_recorded(tmp_path, tree, capsys, answers):
    """Not checked, yet listed for the project scans: a new caller there changes the helper's
    finding, so the record keeps the directory's stat too."""
    (tree / "pyproject.toml").write_text('[tool.qlint]\nextend-exclude = ["vendored"]\n')
    (tree / "vendored").mkdir()
    (tree / "vendored" / "clean.py").write_text("x = 1\n")
    _age(tree)
    _age_dirs(tree)

    def add(root):
        # Aged alone: a new ctime for `pyproject.toml` would give the run another cache key.
        (root / "vendored" / "b.py").write_text(HEAD + textwrap.dedent(BN_CALLER))
        _age(root / "vendored")
        _age_dirs(root / "vendored")  # its listing vouched for again (its ctime still moved)

    cold = _after(tmp_path, tree, capsys, answers, add)
    assert "QL201" in cold[1] and "vendored" not in cold[1]


def test_a_link_in_a_directory_the_walk_skipped_is_not_recorded(tmp_path, tree, capsys, answers):
    """The walk saw where its own links led, not where one in an excluded directory does."""
    (tree / "pyproject.toml").write_text('[tool.qlint]\nextend-exclude = ["vendored"]\n')
    (tree / "vendored").mkdir()
    (tmp_path / "elsewhere").mkdir()
    os.symlink(tmp_path / "elsewhere", tree / "vendored" / "inner")
    _age(tree)
    _age_dirs(tree)
    _warm_up(capsys, tmp_path / "cache", [tree])
    assert not list((tmp_path / "cache").glob("*/*.run"))


def test_a_listing_outside_the_walk_is_not_recorded(tmp_path, tree, capsys, answers):
    """Checking one package: the helper's callers are looked for in the whole repository,
    which this run did not walk, so a new caller there would go unseen by the record."""
    cache = tmp_path / "cache"
    _warm_up(capsys, cache, [tree / "pkg"])
    assert not list(cache.glob("*/*.run"))
    (tree / "scripts" / "b.py").write_text(HEAD + textwrap.dedent(BN_CALLER))
    _age(tree)
    assert _run(capsys, cache, [tree / "pkg"]) == _cold(capsys, [tree / "pkg"])


def test_a_run_the_record_answers_imports_neither_openssl_nor_the_walk(tmp_path, tree):
    """`hashlib` loads OpenSSL (~3 ms) and discovery its ignore-file machinery: a warm run the
    record answers needs neither (`qlint.short_digests`)."""
    import subprocess
    import sys

    probe = (
        "import sys\n"
        "from qlint.cli import main\n"
        "main(sys.argv[1:])\n"
        "seen = ('hashlib', '_hashlib', 'qlint.discovery', 'qlint.gitignore')\n"
        "print(sorted(m for m in seen if m in sys.modules), file=sys.stderr)\n"
    )
    argv = [sys.executable, "-c", probe, "check", "--cache-dir", str(tmp_path / "cache"), str(tree)]
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    time.sleep(2.1)  # the tree's directories, made just now, are older than the record's window then
    cold = subprocess.run(argv, capture_output=True, text=True, env=env)
    # It walked the tree and recorded the run (the few small modules hashed without OpenSSL).
    assert "'qlint.discovery'" in cold.stderr
    warm = subprocess.run(argv, capture_output=True, text=True, env=env)
    assert warm.stdout == cold.stdout and "QL101" in warm.stdout
    assert warm.stderr.strip().splitlines()[-1] == "[]"


def test_the_record_is_read_with_the_cyclic_collector_off(tmp_path, tree, capsys, monkeypatch):
    """Decoding it makes thousands of tuples and lists, none in a cycle: a collection over
    them (and every module loaded) would find nothing to free. It is on again after."""
    import gc

    cache = tmp_path / "cache"
    _warm_up(capsys, cache, [tree])
    real = run_record.answer
    collecting: list[bool] = []
    monkeypatch.setattr(run_record, "answer", lambda *a, **k: collecting.append(gc.isenabled()) or real(*a, **k))
    assert gc.isenabled()
    assert _run(capsys, cache, [tree]) == _cold(capsys, [tree])
    assert collecting == [False] and gc.isenabled()


def test_a_record_of_other_paths_is_passed_over_unread(tmp_path, tree, capsys, answers, monkeypatch):
    """The tree's record, when one file is checked next (pre-commit after a run over the tree):
    its header names other paths, so it is not unmarshalled to compare them."""
    cache = tmp_path / "cache"
    _warm_up(capsys, cache, [tree])
    read = {}
    real = checksummed_files.read_marshalled
    monkeypatch.setattr(
        checksummed_files, "read_marshalled", lambda path, header: read.setdefault(path, real(path, header))
    )
    one = tree / "pkg" / "matchers.py"
    answers.clear()
    assert _run(capsys, cache, [one]) == _cold(capsys, [one])
    assert answers == [False]
    (record,) = _records(cache)
    assert record in read and read[record] is None
