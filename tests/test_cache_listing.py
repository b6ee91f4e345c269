"""Cached results of whole-project scans depend on which files exist (issue 13).

QL101's packet scan, QL102's consumers, QL103's convert calls and QL201's callers each read
the project's files, and a file created after the first run can change their answer. The
results cache must then check again (a warm run that served the old answer would hide or
invent a finding); a new file that holds none of what the scan looks for keeps the hit.
"""

from __future__ import annotations

import os
import textwrap

from qlint.analysis.project_files import disk_files, listing_dependency, parse_listing_dependency
from qlint.config import Overrides, load_settings
from qlint.runner import run_check
from tests.conftest import write_package
from tests.test_ql101_freshness import LEGACY_INSERTER, MATCHER
from tests.test_ql102_consumers import ADD, TABLE
from tests.test_ql201_project_callers import BN_CALLER, EVAL_CALLER, HEAD, _repo

_PAST = 1_600_000_000
UNRELATED = "def unrelated():\n    return 1\n"


def _age(root) -> None:
    """Old stats, so the cache trusts them (as it would files not touched for a while)."""
    for directory, _, names in os.walk(root):
        for name in names:
            os.utime(os.path.join(directory, name), (_PAST, _PAST))


def _runner(tmp_path, checked, select: tuple[str, ...], preview: bool = False):
    settings = load_settings(
        [str(checked)], overrides=Overrides(cache_dir=str(tmp_path / "cache"), select=select, preview=preview)
    )

    def run():
        result = run_check([str(checked)], settings, use_cache=True, jobs=1)
        assert result.all_errors == []
        return result.cached, [(d.code, d.range.start.row) for r in result.results for d in r.diagnostics]

    return run


def test_a_new_caller_of_the_helper_refreshes_a_cached_ql201_result(tmp_path):
    root = _repo(tmp_path, a=EVAL_CALLER)
    _age(root)
    run = _runner(tmp_path, root / "pkg" / "utils" / "export_utils.py", ("QL201",))
    assert run() == (0, [])
    assert run() == (1, [])
    (root / "scripts" / "unrelated.py").write_text(UNRELATED)
    assert run() == (1, [])  # names no helper: the cached answer still holds
    (root / "scripts" / "b.py").write_text(HEAD + BN_CALLER)
    cached, found = run()
    assert cached == 0 and [c for c, _ in found] == ["QL201"]
    os.remove(root / "scripts" / "b.py")  # and gone again: the recorded caller's digest decides
    assert run() == (0, [])


def test_a_new_inserting_module_refreshes_a_cached_ql101_result(tmp_path):
    pkg = write_package(tmp_path, "pkg", matcher=MATCHER, other="x = 1\n")
    _age(tmp_path)
    run = _runner(tmp_path, pkg / "matcher.py", ("QL101",))
    assert run() == (0, [("QL101", 5)])
    assert run() == (1, [("QL101", 5)])
    (pkg / "unrelated.py").write_text(UNRELATED)
    assert run() == (1, [("QL101", 5)])
    (pkg / "inserter.py").write_text(textwrap.dedent(LEGACY_INSERTER))
    assert run() == (0, [])


def test_a_new_consumer_module_refreshes_a_cached_ql102_result(tmp_path):
    pkg = write_package(tmp_path, "pkg", add=ADD)
    _age(tmp_path)
    run = _runner(tmp_path, pkg / "add.py", ("QL102",))
    first = run()
    assert first[0] == 0 and [c for c, _ in first[1]] == ["QL102"]
    assert run() == (1, first[1])
    (pkg / "unrelated.py").write_text(UNRELATED)
    assert run() == (1, first[1])
    (pkg / "table.py").write_text(TABLE)  # registers the packet beside its overload
    assert run() == (0, [])


def test_a_new_converting_module_refreshes_a_cached_ql103_result(tmp_path):
    from tests.test_ql103 import HEAD as Q_HEAD
    from tests.test_ql103 import MATCHER as Q_MATCHER

    pkg = write_package(tmp_path, "backend", matchers=Q_HEAD + Q_MATCHER)
    _age(tmp_path)
    run = _runner(tmp_path, pkg / "matchers.py", ("QL103",), preview=True)
    first = run()
    assert first[0] == 0 and [c for c, _ in first[1]] == ["QL103"]
    (pkg / "unrelated.py").write_text(UNRELATED)
    assert run() == (1, first[1])
    (pkg / "lowering.py").write_text(
        "from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e\n\n\n"
        "def lower(p):\n    return convert_pt2e(p, fold_quantize=False)\n"
    )
    assert run() == (0, [])


def test_the_listing_dependency_round_trips_and_rejects_anything_else(tmp_path):
    dep = listing_dependency(str(tmp_path), True, ["b", "a", "a"])
    assert parse_listing_dependency(dep) == (str(tmp_path), True, (b"a", b"b"))
    assert parse_listing_dependency(str(tmp_path / "a.py")) is None
    assert parse_listing_dependency(dep[:-3]) is None  # damaged: no listing, a miss


def test_the_kept_listing_sees_files_created_and_removed_in_any_directory(tmp_path):
    write_package(tmp_path, "pkg.sub", a="x = 1\n")
    (tmp_path / "pkg" / ".hidden").mkdir()
    (tmp_path / "pkg" / ".hidden" / "h.py").write_text("")
    (tmp_path / "pkg" / "build").mkdir()
    (tmp_path / "pkg" / "build" / "b.py").write_text("")
    os.symlink(tmp_path / "pkg" / "sub", tmp_path / "pkg" / "linked")
    listed = lambda: sorted(os.path.relpath(p, tmp_path) for p in disk_files(str(tmp_path)))  # noqa: E731
    walked = sorted(
        os.path.relpath(os.path.join(d, n), tmp_path)
        for d, dirs, names in os.walk(tmp_path)
        if not any(part.startswith(".") or part == "build" for part in os.path.relpath(d, tmp_path).split(os.sep))
        for n in names
        if n.endswith(".py")
    )
    assert listed() == walked == ["pkg/__init__.py", "pkg/sub/__init__.py", "pkg/sub/a.py"]
    for directory in (tmp_path, tmp_path / "pkg", tmp_path / "pkg" / "sub"):
        os.utime(directory, (_PAST, _PAST))  # old enough to be trusted without listing it again
    assert listed() == walked
    (tmp_path / "pkg" / "sub" / "new.py").write_text("")
    assert "pkg/sub/new.py" in listed()
    os.remove(tmp_path / "pkg" / "sub" / "a.py")
    os.utime(tmp_path / "pkg" / "sub", (_PAST + 1, _PAST + 1))  # listed again: its mtime moved
    assert "pkg/sub/a.py" not in listed()


def test_an_unchanged_directory_is_not_listed_again(tmp_path, monkeypatch):
    from qlint.analysis import project_files

    write_package(tmp_path, "pkg.sub", a="x = 1\n", b="y = 2\n")
    for directory in (tmp_path, tmp_path / "pkg", tmp_path / "pkg" / "sub"):
        os.utime(directory, (_PAST, _PAST))
    first = sorted(disk_files(str(tmp_path)))
    listed: list[str] = []
    real = os.scandir
    monkeypatch.setattr(project_files.os, "scandir", lambda d: listed.append(d) or real(d))
    assert sorted(disk_files(str(tmp_path))) == first and listed == []
    (tmp_path / "pkg" / "c.py").write_text("")  # only this directory's mtime moves
    assert str(tmp_path / "pkg" / "c.py") in disk_files(str(tmp_path))
    assert listed == [str(tmp_path / "pkg")]


COUNTER = """\
import torch

def count(gm):
    return sum(n.target == torch.ops.aten.hardtanh for n in gm.graph.nodes)
"""
NORMALISING_BACKEND = """\
from torch._functorch.compile_utils import strip_overloads
from pkg import second

def my_backend(gm, example_inputs):
    strip_overloads(gm)
    second.count(gm)
    return gm.forward
"""


def test_a_new_normaliser_refreshes_every_cached_result_that_asked_for_the_normalisers(tmp_path):
    # Both matchers ask which functions the project normalises graphs before calling; the
    # answer is computed once per process (the first check) and served to the second: the
    # second's cached result depends on the listing all the same.
    pkg = write_package(tmp_path, "pkg", first=COUNTER, second=COUNTER)
    _age(tmp_path)
    run = _runner(tmp_path, pkg, ("QL101",))
    cold = run()
    assert cold[0] == 0 and sorted(cold[1]) == [("QL101", 4), ("QL101", 4)]
    assert run() == (3, cold[1])  # first, second and the package's __init__
    (pkg / "unrelated.py").write_text(UNRELATED)
    assert run()[0] == 3  # a module that normalises nothing: every answer still holds
    (pkg / "backend.py").write_text(NORMALISING_BACKEND)
    cached, found = run()
    assert found == [("QL101", 4)]  # `second.count` now sees packets: quiet
    assert cached == 2  # __init__ and unrelated; first and second were checked again


def test_the_listings_file_discovery_made_are_the_listings_the_cache_would_make(tmp_path):
    # The results cache checks listings against the directories discovery scanned this run
    # instead of listing them again: the files, and their order (a listing's fingerprint
    # follows it), must be those `disk_files` finds by itself, whatever discovery skipped.
    from qlint.discovery import discover
    from qlint.settings import Settings

    write_package(tmp_path, "pkg.sub", a="x = 1\n", b="y = 2\n")
    (tmp_path / ".gitignore").write_text("ignored/\n")
    for extra in ("ignored/i.py", ".hidden/h.py", "build/b.py", "pkg/notes.txt", "pkg/sub/c.pyi"):
        (tmp_path / extra).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / extra).write_text("")
    os.symlink(tmp_path / "pkg" / "sub", tmp_path / "pkg" / "linked")
    found = discover([str(tmp_path)], Settings(root=tmp_path))
    assert str(tmp_path / "ignored") not in found.listings  # pruned: the cache lists it itself
    for root in (tmp_path, tmp_path / "pkg"):
        links: list[str] = []
        own: list[str] = []
        assert disk_files(str(root), True, found.listings, links) == disk_files(str(root), True, None, own)
        assert links == own == [str(tmp_path / "pkg" / "linked")]  # met, not walked into
    assert str(tmp_path / "ignored" / "i.py") in disk_files(str(tmp_path), True, found.listings)


def test_links_out_of_the_root_are_told_from_links_inside_it(tmp_path):
    from qlint.analysis.project_files import links_out

    write_package(tmp_path, "pkg.sub", a="x = 1\n")
    outside = tmp_path.parent / f"{tmp_path.name}-out"
    outside.mkdir()
    os.symlink(tmp_path / "pkg" / "sub", tmp_path / "pkg" / "inside")
    links: list[str] = []
    disk_files(str(tmp_path), True, None, links)
    assert links == [str(tmp_path / "pkg" / "inside")] and not links_out(str(tmp_path), links)
    os.symlink(outside, tmp_path / "pkg" / "sub" / "away")
    links.clear()
    disk_files(str(tmp_path), True, None, links)
    assert links_out(str(tmp_path), links)
    assert not links_out(str(tmp_path / "pkg" / "sub"), [])


def test_the_listing_holds_regular_files_only(tmp_path):
    # A named pipe spelled like a module blocked the first project-wide search that opened it.
    (tmp_path / "a.py").write_text("x = 1\n")
    os.mkfifo(tmp_path / "pipe.py")
    (tmp_path / "link.py").symlink_to(tmp_path / "a.py")
    (tmp_path / "dangling.py").symlink_to(tmp_path / "gone.py")
    assert sorted(os.path.basename(p) for p in disk_files(str(tmp_path))) == ["a.py", "link.py"]
