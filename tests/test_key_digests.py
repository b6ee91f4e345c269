"""The cache key's inputs by content (`qlint.key_digests`): qlint's own files, the project's
packaging files and the plugins' modules. A stat that moves with no change (a reinstall, a
fresh clone, a `touch`) keeps the key; a changed content moves it; and the digests are kept
by stat, so a warm run reads no file of qlint's to make its key."""

from __future__ import annotations

import hashlib
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qlint import key_digests, registry
from qlint.analysis import run_roots
from qlint.analysis.names.run_layout import layout_key
from qlint.cache_keys import cache_key
from qlint.key_digests import KeyDigests
from qlint.settings import Settings
from tests.plugin_support import rule_source, write_plugin

PAST = 1_600_000_000  # an mtime long before any run: a stat of it may be kept


def _age(*paths: Path, seconds: int = PAST) -> None:
    for path in paths:
        os.utime(path, (seconds, seconds))


def _package(tmp_path: Path) -> Path:
    pkg = tmp_path / "qlint"
    for rel in ("key_digests.py", "rules/r.py", "data/ops.json", "lsp/server.py", "runtime/w.py", "notes.md"):
        (pkg / rel).parent.mkdir(parents=True, exist_ok=True)
        (pkg / rel).write_text("x\n")
        _age(pkg / rel)
    os.symlink(pkg / "rules", pkg / "linked")  # a link to a directory is not entered (as os.walk)
    return pkg


@pytest.fixture
def package(tmp_path, monkeypatch):
    """A package of qlint's shape in `tmp_path`, taken for qlint's own."""
    pkg = _package(tmp_path)
    monkeypatch.setattr(key_digests, "__file__", str(pkg / "key_digests.py"))
    key_digests.package_stamps.cache_clear()
    yield pkg
    key_digests.package_stamps.cache_clear()


def _digest(memo: Path | None = None) -> str:
    key_digests.package_stamps.cache_clear()  # a new process
    digests = KeyDigests(memo)
    found = key_digests.package_digest(digests)
    digests.save()
    return found


def test_the_package_files_are_those_of_a_walk_but_the_server_and_runtime(package):
    by_walk = []
    newest = 0
    for directory, subdirs, files in os.walk(package):
        subdirs[:] = [d for d in subdirs if d not in ("runtime", "lsp", "__pycache__")]
        for name in files:
            if name.endswith((".py", ".json")):
                st = os.stat(os.path.join(directory, name))
                rel = os.path.relpath(os.path.join(directory, name), package).replace(os.sep, "/")
                by_walk.append(f"{rel}:{st.st_size}:{st.st_mtime_ns}")
                newest = max(newest, st.st_mtime_ns)
    assert key_digests.package_stamps(str(package)) == (str(package), "\n".join(sorted(by_walk)), newest)
    assert {line.split(":")[0] for line in by_walk} == {"key_digests.py", "rules/r.py", "data/ops.json"}


def test_the_package_digest_follows_contents_not_stats(package):
    first = _digest()
    _age(*package.rglob("*.py"), *package.rglob("*.json"), seconds=PAST + 100)  # a reinstall of the same files
    (package / "rules" / "r.py").write_text("x\n")  # written again as it was
    assert _digest() == first
    (package / "lsp" / "server.py").write_text("changed\n")
    (package / "notes.md").write_text("changed\n")
    assert _digest() == first
    (package / "data" / "ops.json").write_text("changed\n")  # a regenerated op table
    assert _digest() != first
    (package / "data" / "ops.json").write_text("x\n")
    assert _digest() == first
    (package / "rules" / "new.py").write_text("")  # a new module, empty or not
    assert _digest() != first


def test_a_kept_digest_spares_reading_the_package(package, tmp_path, monkeypatch):
    memo = tmp_path / "cache" / "key.digests"
    memo.parent.mkdir()
    first = _digest(memo)
    assert memo.is_file()
    reads = []
    real = key_digests._package_content
    monkeypatch.setattr(key_digests, "_package_content", lambda *args: reads.append(1) or real(*args))
    assert _digest(memo) == first and reads == []  # the stats are the kept ones: nothing read
    _age(package / "rules" / "r.py", seconds=PAST + 100)
    assert _digest(memo) == first and reads == [1]  # a stat moved: read once, kept again
    assert _digest(memo) == first and reads == [1]
    # A stat moved and the content too: never the kept digest.
    (package / "rules" / "r.py").write_text("y\n")
    _age(package / "rules" / "r.py", seconds=PAST + 200)
    assert _digest(memo) != first and reads == [1, 1]


def test_a_stat_taken_in_its_mtime_tick_is_not_kept(package, tmp_path, monkeypatch):
    """A file edited now may be edited again within the tick, same size, same mtime."""
    memo = tmp_path / "cache" / "key.digests"
    memo.parent.mkdir()
    (package / "rules" / "r.py").write_text("y\n")  # mtime: now
    reads = []
    real = key_digests._package_content
    monkeypatch.setattr(key_digests, "_package_content", lambda *args: reads.append(1) or real(*args))
    _digest(memo)
    _digest(memo)
    assert reads == [1, 1] and not memo.exists()


def test_kept_digests_of_other_runs_stay_and_the_oldest_go(tmp_path, monkeypatch):
    memo = tmp_path / "key.digests"
    one, two = KeyDigests(memo), KeyDigests(memo)  # two runs side by side
    assert one.digest("a", 1, PAST, lambda: "da") == "da"
    one.save()
    assert two.digest("b", 1, PAST, lambda: "db") == "db"
    two.save()
    kept = KeyDigests(memo)
    assert kept.digest("a", 1, PAST, lambda: "read") == "da" and kept.digest("b", 1, PAST, lambda: "read") == "db"
    assert kept.digest("a", 2, PAST, lambda: "da2") == "da2"  # another stat: read
    monkeypatch.setattr(key_digests, "_MAX_KEPT", 2)
    kept.digest("c", 1, PAST, lambda: "dc")
    kept.save()
    again = KeyDigests(memo)
    assert again.digest("b", 1, PAST, lambda: "read") == "read"  # the oldest kept went
    assert again.digest("c", 1, PAST, lambda: "read") == "dc"
    memo.write_bytes(memo.read_bytes()[:-3])  # cut short: as absent
    assert KeyDigests(memo).digest("c", 1, PAST, lambda: "read") == "read"


def test_a_file_that_went_is_unreadable_and_not_kept(tmp_path):
    memo = tmp_path / "key.digests"
    digests = KeyDigests(memo)
    path = tmp_path / "setup.py"
    path.write_text("x\n")
    _age(path)
    st = os.stat(path)
    path.unlink()
    assert digests.file_digest(str(path), st) == key_digests.UNREADABLE
    path.write_text("x\n")
    _age(path)
    assert digests.file_digest(str(path), st) == hashlib.sha256(b"x\n").hexdigest()[:16]


@pytest.fixture
def project(tmp_path):
    root = tmp_path / "proj"
    (root / "python").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (root / "python" / "setup.py").write_text("from setuptools import setup\nsetup(package_dir={'': '.'})\n")
    _age(root / "pyproject.toml", root / "python" / "setup.py")
    run_roots.use([str(root)])
    yield root
    run_roots.use_directories(())


@pytest.mark.parametrize("memo", [False, True])
def test_the_layout_follows_the_packaging_files_contents_not_stats(project, tmp_path, memo):
    def key() -> str:
        return layout_key(KeyDigests(tmp_path / "key.digests").file_digest if memo else None)

    first = key()
    setup = project / "python" / "setup.py"
    setup.write_text(setup.read_text())  # a fresh clone writes it again
    _age(project / "pyproject.toml", setup, seconds=PAST + 100)
    assert key() == first
    setup.write_text(setup.read_text() + "# changed\n")
    assert key() != first
    setup.write_text(setup.read_text().replace("# changed\n", ""))
    _age(setup, seconds=PAST + 200)
    assert key() == first
    (project / "setup.cfg").write_text("")  # a marker's mere presence counts
    assert key() != first


def test_the_cache_key_keeps_over_a_touch_and_moves_with_a_change(project, tmp_path):
    """In process: the packaging files kept by stat in the cache directory (`kept_in`), read
    once per process, and kept once the cache is there (a run that writes no cache makes no
    directory that is not marked as a cache's)."""
    cache = tmp_path / "cache"
    settings = Settings(root=project, cache_dir=cache)
    first = cache_key(settings)
    assert not cache.exists()
    (cache / key_digests.__version__).mkdir(parents=True)  # as the run's `Cache.save`
    key_digests.save_kept(cache)
    kept = KeyDigests(cache / key_digests.__version__ / "key.digests").kept
    assert {str(project / "pyproject.toml"), str(project / "python" / "setup.py")} <= set(kept)
    _age(project / "pyproject.toml", seconds=PAST + 100)
    assert cache_key(settings) == first
    (project / "pyproject.toml").write_text('[project]\nname = "y"\n')
    assert cache_key(settings) != first


@pytest.fixture
def plugin(tmp_path, monkeypatch):
    monkeypatch.syspath_prepend(str(tmp_path))
    write_plugin(tmp_path, "acme-qlint", "acme_rules", rule_source(), {"shout": "acme_rules:Shout"})
    monkeypatch.setattr(registry, "_REGISTRY", registry.Registry())
    yield tmp_path / "acme_rules.py"
    sys.modules.pop("acme_rules", None)


def test_a_plugin_counts_by_its_module_content(plugin, tmp_path):
    def fingerprint() -> str:
        return Settings(root=tmp_path).fingerprint

    assert registry.rule_class("ACME101") is not None
    first = fingerprint()
    _age(plugin, seconds=PAST + 100)  # reinstalled as it was
    assert fingerprint() == first
    plugin.write_text(plugin.read_text() + "# changed\n")
    assert fingerprint() != first


def test_a_reinstalled_qlint_keeps_the_cache_warm_and_a_changed_one_does_not(tmp_path):
    """End to end, as CI installs the same qlint afresh in each job beside a restored cache: a
    copy of the package run from a command line, every file of it stat'ed anew, then one
    changed. The key is the name of the cache's directories."""
    import qlint

    site = tmp_path / "site"
    shutil.copytree(Path(qlint.__file__).parent, site / "qlint", ignore=shutil.ignore_patterns("__pycache__"))
    project = tmp_path / "proj"
    project.mkdir()
    (project / "pyproject.toml").write_text('[project]\nname = "x"\n')
    (project / "m.py").write_text("import torch\nx = node.target == torch.ops.aten.add\n")
    cache = tmp_path / "cache"
    env = {**os.environ, "PYTHONPATH": str(site), "PYTHONDONTWRITEBYTECODE": "1"}

    def keys() -> set[str]:
        argv = [sys.executable, "-m", "qlint", "check", "--exit-zero", "--quiet", "--cache-dir", str(cache), "."]
        subprocess.run(argv, cwd=project, env=env, check=True, capture_output=True)
        return {p.name.split(".")[0] for p in (cache / qlint.__version__).glob("*.results")}

    files = [p for p in site.rglob("*") if p.is_file()] + [project / "pyproject.toml"]
    _age(*files)
    first = keys()
    assert len(first) == 1
    _age(*files, seconds=int(time.time()) - 60)  # installed and cloned again, a minute ago
    assert keys() == first
    rule = site / "qlint" / "rules" / "__init__.py"
    rule.write_text(rule.read_text() + "# changed\n")
    _age(rule, seconds=int(time.time()) - 30)
    assert len(keys() - first) == 1
