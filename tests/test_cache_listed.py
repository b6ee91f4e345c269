"""A result's dependencies on a whole listing, set aside behind one fingerprint (issue 13).

A whole-project scan's cached result depends on every module under its root; a warm run
compares one fingerprint of the listing's stats instead of loading and checking thousands
of digests. Every way the listing can change must still reach the per-file check: a touch
(same content: still a hit, and the entry is refreshed), an edit, a deletion, a new file
with or without the scan's needles, an edit too recent for its stat to be trusted.
"""

from __future__ import annotations

import os
import time

import pytest

from qlint import listed_dependencies
from qlint.analysis.project_files import listing_dependency
from qlint.cache import Cache
from qlint.results import FileResult, content_hash
from tests.conftest import old_file

NEEDLE = "helper_name"


def _project(tmp_path, n: int = 5):
    root = tmp_path / "proj"
    (root / "sub").mkdir(parents=True)
    checked = old_file(root / "checked.py", "x = 1\n")
    modules = [old_file(root / ("sub" if i % 2 else "") / f"m{i}.py", f"X = {i}\n") for i in range(n)]
    return root, checked, modules


def _store(tmp_path, root, checked, roots=None) -> Cache:
    """Store `checked` as a project scan of each of `roots` would: every module under them
    read, plus the listing dependency."""
    c = Cache(tmp_path / "cache", "fp")
    deps = {}
    for scan_root in roots or [root]:
        for directory, _, names in os.walk(scan_root):
            for name in names:
                path = os.path.join(directory, name)
                if name.endswith(".py") and path != str(checked):
                    with open(path, "rb") as fh:
                        deps[path] = content_hash(fh.read())
        deps[listing_dependency(str(scan_root), True, [NEEDLE])] = "listing"
    st = checked.stat()
    c.store(
        FileResult(str(checked), [], dependencies=deps), st.st_size, st.st_mtime_ns, content_hash(checked.read_bytes())
    )
    c.save()
    return c


@pytest.fixture
def side_reads(monkeypatch):
    reads: list[str] = []
    real = listed_dependencies.read
    monkeypatch.setattr(listed_dependencies, "read", lambda d, path, m: reads.append(path) or real(d, path, m))
    return reads


def _hit(tmp_path, checked) -> bool:
    return Cache(tmp_path / "cache", "fp").lookup(str(checked)) is not None


def test_the_listing_leaves_the_entry_behind_one_marker(tmp_path, side_reads):
    root, checked, modules = _project(tmp_path)
    c = _store(tmp_path, root, checked)
    deps = c.entries[str(checked)][4]
    markers = [d for d in deps if d.startswith(listed_dependencies.LISTED_PREFIX)]
    assert len(markers) == 1 and not any(str(m) in deps for m in modules)
    assert listed_dependencies.side_file(c.shards, str(checked)).is_file()
    assert _hit(tmp_path, checked) and side_reads == []  # one fingerprint said it all


def test_a_touched_module_reads_the_side_file_once_then_the_entry_is_refreshed(tmp_path, side_reads):
    root, checked, modules = _project(tmp_path)
    _store(tmp_path, root, checked)
    past = time.time_ns() - 7200 * 10**9
    os.utime(modules[2], ns=(past, past))  # same content, another stat
    warm = Cache(tmp_path / "cache", "fp")
    assert warm.lookup(str(checked)) is not None
    assert side_reads == [str(checked)]
    warm.save()
    assert _hit(tmp_path, checked) and side_reads == [str(checked)]  # the fingerprint again


def test_a_touched_checked_file_is_still_a_hit(tmp_path):
    root, checked, _ = _project(tmp_path)
    _store(tmp_path, root, checked)
    past = time.time_ns() - 7200 * 10**9
    os.utime(checked, ns=(past, past))  # its stat is in the listing's fingerprint too
    assert _hit(tmp_path, checked)


def test_an_edited_module_misses(tmp_path):
    root, checked, modules = _project(tmp_path)
    _store(tmp_path, root, checked)
    old_file(modules[3], "X = 'changed'\n")
    assert not _hit(tmp_path, checked)


def test_a_same_size_edit_in_the_same_mtime_tick_is_noticed(tmp_path):
    # A module written just before the check: its stat cannot vouch for its digest, so the
    # listing is not set aside and the module's content is compared on every lookup.
    root, checked, modules = _project(tmp_path)
    modules[1].write_text("X = 1\n")
    c = _store(tmp_path, root, checked)
    assert str(modules[1]) in c.entries[str(checked)][4]
    assert not any(d.startswith(listed_dependencies.LISTED_PREFIX) for d in c.entries[str(checked)][4])
    assert _hit(tmp_path, checked)
    mtime = modules[1].stat().st_mtime_ns
    modules[1].write_text("X = 7\n")
    os.utime(modules[1], ns=(mtime, mtime))
    assert not _hit(tmp_path, checked)


def test_a_deleted_module_misses(tmp_path):
    root, checked, modules = _project(tmp_path)
    _store(tmp_path, root, checked)
    modules[4].unlink()
    assert not _hit(tmp_path, checked)


def test_a_new_module_misses_only_when_it_holds_a_needle(tmp_path, side_reads):
    root, checked, _ = _project(tmp_path)
    _store(tmp_path, root, checked)
    old_file(root / "sub" / "unrelated.py", "def unrelated():\n    return 1\n")
    assert _hit(tmp_path, checked) and side_reads == [str(checked)]
    old_file(root / "sub" / "caller.py", f"{NEEDLE}(1)\n")
    assert not _hit(tmp_path, checked)


def test_a_new_module_in_a_nested_scan_root_changes_both_fingerprints(tmp_path):
    root, checked, _ = _project(tmp_path)
    c = _store(tmp_path, root, checked, roots=[root, root / "sub"])
    assert sum(d.startswith(listed_dependencies.LISTED_PREFIX) for d in c.entries[str(checked)][4]) == 2
    assert _hit(tmp_path, checked)
    old_file(root / "sub" / "caller.py", f"{NEEDLE}(1)\n")
    assert not _hit(tmp_path, checked)


@pytest.mark.parametrize("damage", ["missing", "garbage", "other-markers"])
def test_a_side_file_that_cannot_be_read_back_is_a_miss_when_needed(tmp_path, damage):
    root, checked, modules = _project(tmp_path)
    c = _store(tmp_path, root, checked)
    side = listed_dependencies.side_file(c.shards, str(checked))
    if damage == "missing":
        side.unlink()
    elif damage == "garbage":
        side.write_bytes(side.read_bytes()[:-5] + b"xxxxx")
    else:
        listed_dependencies.write(c.shards, str(checked), {"qlint-listed:other": "0"}, {}, {})
    assert _hit(tmp_path, checked)  # not needed while the fingerprint holds
    past = time.time_ns() - 7200 * 10**9
    os.utime(modules[0], ns=(past, past))
    assert not _hit(tmp_path, checked)


def test_the_fingerprint_depends_on_every_path_and_stat_not_their_order():
    # Not the order: a listing and a snapshot that vouches for it
    # (`DerivedDependencies._snapshot_files`) hold the same files in different orders.
    base = [("/a.py", (1, 2)), ("/b.py", (3, 4))]
    fp = listed_dependencies.fingerprint(base)
    assert fp == listed_dependencies.fingerprint([("/a.py", [1, 2]), ("/b.py", (3, 4))])
    assert fp != listed_dependencies.fingerprint([("/a.py", (1, 2)), ("/b.py", (3, 5))])
    assert fp != listed_dependencies.fingerprint([("/a.py", (1, 2)), ("/c.py", (3, 4))])
    assert fp != listed_dependencies.fingerprint(base[:1])
    assert fp != listed_dependencies.fingerprint([("/a.py", (3, 4)), ("/b.py", (1, 2))])
    assert fp == listed_dependencies.fingerprint(base[::-1])


def test_a_marker_that_is_not_first_is_never_taken_on_trust(tmp_path):
    # Markers lead the dependencies (a lookup reads them up to the first other key); an
    # entry with one further down was not written by this version, and is a miss.
    root, checked, _ = _project(tmp_path, n=2)
    c = _store(tmp_path, root, checked)
    size, mtime, digest, diagnostics, deps, stats = c.entries[str(checked)]
    marker = next(d for d in deps if d.startswith(listed_dependencies.LISTED_PREFIX))
    assert next(iter(deps)) == marker
    reordered = {d: v for d, v in deps.items() if d != marker}
    reordered[marker] = deps[marker]
    c.entries[str(checked)] = (size, mtime, digest, diagnostics, reordered, stats)
    c.save()
    assert not _hit(tmp_path, checked)


def test_a_side_file_leaves_with_the_entry_that_named_it(tmp_path):
    """Side files are not left behind: when the checked file is gone (its entry forgotten)
    or its result is stored again without markers, its side file is removed at `save`."""
    root, checked, modules = _project(tmp_path)
    c = _store(tmp_path, root, checked)
    side = listed_dependencies.side_file(c.shards, str(checked))
    other = old_file(root / "other.py", "y = 2\n")
    _store(tmp_path, root, other)
    kept = listed_dependencies.side_file(c.shards, str(other))
    assert side.is_file() and kept.is_file()
    # Stored again with no listing among its dependencies: the entry names no side file.
    c = Cache(tmp_path / "cache", "fp")
    st = checked.stat()
    c.store(FileResult(str(checked), []), st.st_size, st.st_mtime_ns, content_hash(checked.read_bytes()))
    c.save()
    assert not side.exists() and kept.is_file()
    assert _hit(tmp_path, checked) and _hit(tmp_path, other)
    # The checked file deleted: a run that walked its directory forgets it, and its side file.
    _store(tmp_path, root, checked)
    assert side.is_file()
    checked.unlink()
    c = Cache(tmp_path / "cache", "fp")
    assert c.entries.get(str(other)) is not None  # the shard a walk of the directory loads
    c.forget_missing([str(root)], {str(other), *map(str, modules)})
    c.save()
    assert not side.exists() and kept.is_file()
    assert sorted(p.name for p in c.shards.glob("*.listed")) == [kept.name]
