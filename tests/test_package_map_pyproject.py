"""What `pyproject.toml` declares for setuptools (`declared_packages`), and that a file
declaring nothing of it is not handed to the TOML parser (~5 ms of every one-file check)."""

from __future__ import annotations

import subprocess
import sys

from qlint.analysis.names.package_map import declared_packages


def _repo(tmp_path, text: str) -> str:
    (tmp_path / "src" / "pkg").mkdir(parents=True)
    (tmp_path / "pyproject.toml").write_text(text)
    return str(tmp_path)


def test_package_dir_and_find_where_are_read(tmp_path):
    repo = _repo(tmp_path, '[tool.setuptools.package-dir]\npkg = "src/pkg"\n')
    assert declared_packages(repo) == (("pkg", str(tmp_path / "src" / "pkg")),)
    declared_packages.cache_clear()
    (tmp_path / "pyproject.toml").write_text('[tool.setuptools.packages.find]\nwhere = ["src"]\n')
    assert declared_packages(repo) == (("", str(tmp_path / "src")),)


def test_a_key_spelled_with_an_escape_is_still_read(tmp_path):
    repo = _repo(tmp_path, '[tool.setuptools."package\\u002ddir"]\npkg = "src/pkg"\n')
    assert declared_packages(repo) == (("pkg", str(tmp_path / "src" / "pkg")),)


def test_a_pyproject_that_declares_neither_key_is_not_parsed(tmp_path):
    repo = _repo(tmp_path, '[build-system]\nrequires = ["setuptools"]\nbuild-backend = "setuptools.build_meta"\n')
    code = (
        "import sys\nfrom qlint.analysis.names.package_map import declared_packages\n"
        "print(declared_packages(sys.argv[1]), 'tomllib' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code, repo], capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["()", "False"]


def test_a_file_that_is_not_toml_declares_nothing(tmp_path):
    repo = _repo(tmp_path, "[tool.setuptools.package-dir\npkg = \n")
    assert declared_packages(repo) == ()
    declared_packages.cache_clear()
    (tmp_path / "pyproject.toml").write_bytes(b"[tool.setuptools.package-dir]\npkg = '\xff'\n")
    assert declared_packages(repo) == ()


_KEPT = (
    "import sys\nfrom qlint.analysis.names import package_map\nfrom qlint.summary_cache import SummaryStore\n"
    "package_map.use_store(SummaryStore(sys.argv[2]))\n"
    "print(package_map.declared_packages(sys.argv[1]), 'tomllib' in sys.modules)"
)


def _kept_run(repo: str, store) -> list[str]:
    out = subprocess.run([sys.executable, "-c", _KEPT, repo, str(store)], capture_output=True, text=True, check=True)
    return out.stdout.rsplit(" ", 1)


def test_a_later_run_reads_the_declarations_an_earlier_one_kept(tmp_path):
    repo = _repo(tmp_path / "repo", '[tool.setuptools.package-dir]\npkg = "src/pkg"\n')
    expected = str((("pkg", str(tmp_path / "repo" / "src" / "pkg")),))
    store = tmp_path / "store"
    assert _kept_run(repo, store) == [expected, "True\n"]  # parsed, and kept
    assert _kept_run(repo, store) == [expected, "False\n"]  # the TOML parser is not imported again


def test_kept_declarations_are_of_the_bytes_they_were_read_from(tmp_path):
    repo = _repo(tmp_path / "repo", '[tool.setuptools.package-dir]\npkg = "src/pkg"\n')
    store = tmp_path / "store"
    _kept_run(repo, store)
    (tmp_path / "repo" / "other").mkdir()
    (tmp_path / "repo" / "pyproject.toml").write_text('[tool.setuptools.package-dir]\npkg = "other"\n')
    assert _kept_run(repo, store) == [str((("pkg", str(tmp_path / "repo" / "other")),)), "True\n"]


def test_a_kept_directory_that_is_gone_is_not_declared(tmp_path):
    # What is kept is the text's declaration; whether the directory is there is asked each run.
    repo = _repo(tmp_path / "repo", '[tool.setuptools.package-dir]\npkg = "src/pkg"\n')
    store = tmp_path / "store"
    _kept_run(repo, store)
    (tmp_path / "repo" / "src" / "pkg").rmdir()
    assert _kept_run(repo, store) == ["()", "False\n"]


def test_a_damaged_kept_file_is_parsed_again(tmp_path):
    repo = _repo(tmp_path / "repo", '[tool.setuptools.package-dir]\npkg = "src/pkg"\n')
    store = tmp_path / "store"
    _kept_run(repo, store)
    (kept,) = store.glob("*.declared")
    kept.write_bytes(kept.read_bytes()[:-3])
    assert _kept_run(repo, store)[1] == "True\n"
