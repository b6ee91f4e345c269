"""The project around a file outside any repository: an unpacked archive of a project that has a
`setup.py` or `setup.cfg` but no `pyproject.toml` (Samsung TICO at a commit, as the corpus
materialises it) is searched for a helper's callers as its checkout would be (issue 14).

A setup script inside a package (a build helper shipped with it) or in an installed tree marks
no project: that would cut the package's modules off from the rest of it.
"""

from __future__ import annotations

from pathlib import Path

from qlint.analysis.names.package_map import project_root
from tests.conftest import check_file, rows_of, write_package
from tests.test_ql201_decorator_registry import (
    API,
    CAPTURE_ROW,
    CONFIGS,
    EVAL_FOR_PT2E,
    GPTQ,
    HEAD,
    MODELS,
    PT2E,
    REGISTRY,
)

SETUP = "from setuptools import setup\n\nsetup(name='pkg')\n"


def _archive(root: Path) -> Path:
    """An unpacked tree (no `.git`) whose callers pass the capture only eval-mode models."""
    modules = dict(registry=REGISTRY, configs=CONFIGS, pt2e=PT2E, gptq=GPTQ, api=API, models=MODELS)
    root.mkdir()
    write_package(root, "pkg", callers=HEAD + EVAL_FOR_PT2E, **modules)
    return root


def _rows(root: Path) -> list[int]:
    return rows_of(check_file(root / "pkg" / "pt2e.py", ("QL201",)).diagnostics)


def test_an_archive_with_a_setup_script_is_searched_for_callers(tmp_path):
    root = _archive(tmp_path / "proj")
    (root / "setup.py").write_text(SETUP)
    assert project_root(str(root / "pkg" / "pt2e.py")) == str(root)
    assert _rows(root) == []


def test_an_archive_with_a_setup_cfg_is_searched_for_callers(tmp_path):
    root = _archive(tmp_path / "proj")
    (root / "setup.cfg").write_text("[metadata]\nname = pkg\n")
    assert _rows(root) == []


def test_an_archive_without_a_project_marker_keeps_its_callers_unknown(tmp_path):
    root = _archive(tmp_path / "proj")
    assert project_root(str(root / "pkg" / "pt2e.py")) is None
    assert _rows(root) == [CAPTURE_ROW]


def test_a_train_mode_caller_in_an_archive_with_a_setup_script_is_reported(tmp_path):
    root = _archive(tmp_path / "proj")
    (root / "setup.py").write_text(SETUP)
    (root / "pkg" / "train.py").write_text(HEAD + "\n\ndef run():\n    prepare(ConvBn(), PT2EConfig(), args=(None,))\n")
    assert _rows(root) == [CAPTURE_ROW]


def test_a_setup_script_inside_a_package_marks_no_project(tmp_path):
    root = _archive(tmp_path / "proj")
    (root / "pkg" / "setup.py").write_text(SETUP)
    assert project_root(str(root / "pkg" / "pt2e.py")) is None
    assert _rows(root) == [CAPTURE_ROW]


def test_a_pyproject_further_up_wins_over_a_nearer_setup_script(tmp_path):
    # The answer where a `pyproject.toml` is found stays what it was.
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'outer'\n")
    inner = tmp_path / "vendored"
    inner.mkdir()
    (inner / "setup.py").write_text(SETUP)
    assert project_root(str(inner / "mod.py")) == str(tmp_path)


def test_a_setup_script_in_an_installed_tree_marks_no_project(tmp_path):
    tree = tmp_path / "lib" / "site-packages" / "tool"
    tree.mkdir(parents=True)
    (tree / "setup.py").write_text(SETUP)
    assert project_root(str(tree / "mod.py")) is None
