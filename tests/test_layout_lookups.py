"""Module lookups of a run whose files stay put (`ProjectIndex.fixed_layout`): each base is
looked at once per run, from its directory's listing (`layout_lookups`), and
must find what the lookup of a single check (`find_module`, a few `stat`s per base) finds."""

from __future__ import annotations

import os

import pytest

from qlint.analysis.names.project import ProjectIndex


@pytest.fixture
def tree(tmp_path):
    """Two checkouts side by side, one with every layout a lookup meets."""
    repo = tmp_path / "repo"
    files = {
        "pkg/__init__.py": "",
        "pkg/graph_utils.py": "def insert_op(): ...\n",
        "pkg/sub/__init__.py": "",
        "pkg/sub/deep.py": "",
        "pkg/stubbed.pyi": "X: int\n",  # a stub alone
        "pkg/both.py": "",  # a module and its stub: the module is taken
        "pkg/both.pyi": "",
        "pkg/not_a_module.py/keep.txt": "",  # a directory named like a module file
        "tests/helpers.py": "",  # a namespace directory: imported from the checkout's root
        "tests/quant/test_x.py": "",
        "real/target.py": "",
        "src/mapped/__init__.py": "",  # `pyproject.toml` maps the package `mapped` here
        "src/mapped/inner.py": "",
        "elsewhere/extra/__init__.py": "",  # a subpackage's own key maps `mapped.extra` here
        "elsewhere/extra/mod.py": "",
    }
    for name, text in files.items():
        path = repo / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    (repo / ".git").mkdir()
    (repo / "pyproject.toml").write_text(
        '[tool.setuptools.package-dir]\nmapped = "src/mapped"\n"mapped.extra" = "elsewhere/extra"\n'
    )
    os.symlink(repo / "real", repo / "pkg" / "linked")  # a package directory behind a link
    (repo / "real" / "__init__.py").write_text("")
    other = tmp_path / "other"
    (other / ".git").mkdir(parents=True)
    (other / "neighbour.py").write_text("")
    return repo


LOOKUPS = [
    ("pkg.graph_utils", "pkg/sub/deep.py"),
    ("pkg.sub", "pkg/graph_utils.py"),
    ("pkg.sub.deep", "tests/quant/test_x.py"),
    ("pkg.stubbed", "pkg/graph_utils.py"),
    ("pkg.both", "pkg/graph_utils.py"),
    ("pkg.not_a_module", "pkg/graph_utils.py"),
    ("pkg.linked.target", "pkg/graph_utils.py"),
    ("tests.helpers", "tests/quant/test_x.py"),
    ("helpers", "tests/quant/test_x.py"),
    ("mapped", "tests/quant/test_x.py"),
    ("mapped.inner", "pkg/sub/deep.py"),
    ("torch.nn.functional", "pkg/sub/deep.py"),
    ("pkg.missing", "pkg/sub/deep.py"),
    ("neighbour", "pkg/graph_utils.py"),  # in the checkout beside: not this project's
    ("mapped.extra.mod", "pkg/sub/deep.py"),  # below a subpackage's key: past both its parts
]


def _answers(repo, index: ProjectIndex) -> list[str | None]:
    return [index.find_module(module, str(repo / requester)) for module, requester in LOOKUPS]


def test_a_run_finds_what_a_single_check_finds(tree):
    exact = _answers(tree, ProjectIndex(track_dependents=False))
    assert exact[0] == str(tree / "pkg" / "graph_utils.py")
    assert exact[3] == str(tree / "pkg" / "stubbed.pyi") and exact[4] == str(tree / "pkg" / "both.py")
    assert exact[6] == str(tree / "real" / "target.py") and exact[9] == str(tree / "src" / "mapped" / "__init__.py")
    assert exact[5] is None and exact[11] is None and exact[13] is None
    assert exact[14] == str(tree / "elsewhere" / "extra" / "mod.py")
    ProjectIndex.fix_layout(True)
    try:
        index = ProjectIndex(track_dependents=False)
        assert _answers(tree, index) == exact
        assert _answers(tree, index) == exact  # answered from what the run saw
    finally:
        ProjectIndex.fix_layout(False)


def test_each_directory_is_listed_once_per_run_and_again_in_the_next(tree, monkeypatch):
    listed: list[str] = []
    real_listdir = os.listdir

    def listdir(path):
        listed.append(str(path))
        return real_listdir(path)

    monkeypatch.setattr(os, "listdir", listdir)
    requesters = ["pkg/sub/deep.py", "tests/quant/test_x.py", "pkg/graph_utils.py"]
    ProjectIndex.fix_layout(True)
    try:
        index = ProjectIndex(track_dependents=False)
        for requester in requesters:  # three import roots
            assert index.find_module("pkg.late", str(tree / requester)) is None
            assert index.find_module("torch.nn", str(tree / requester)) is None
        assert len(listed) == len(set(listed))
        # `torch` is under no root: no directory below one is listed for it.
        assert not any(os.sep + "torch" in path for path in listed)
        (tree / "pkg" / "late.py").write_text("")  # made between two runs
        ProjectIndex.fix_layout(True)
        assert index.find_module("pkg.late", str(tree / "pkg/sub/deep.py")) == str(tree / "pkg" / "late.py")
    finally:
        ProjectIndex.fix_layout(False)


def test_a_module_found_under_a_root_two_requesters_share_is_looked_at_once(tree, monkeypatch):
    looked: list[str] = []
    real_isfile = os.path.isfile
    monkeypatch.setattr(os.path, "isfile", lambda path: looked.append(str(path)) or real_isfile(path))
    ProjectIndex.fix_layout(True)
    try:
        index = ProjectIndex(track_dependents=False)
        helpers = str(tree / "tests" / "helpers.py")
        assert index.find_module("tests.helpers", str(tree / "tests/quant/test_x.py")) == helpers
        assert [p for p in looked if "helpers" in p] == [helpers]  # (import roots are asked too)
        # From a package under the checkout's root: another import root, the same base.
        assert index.find_module("tests.helpers", str(tree / "pkg/sub/deep.py")) == helpers
        assert [p for p in looked if "helpers" in p] == [helpers]
    finally:
        ProjectIndex.fix_layout(False)


def test_a_buffer_of_the_editor_is_found_as_before(tree):
    # The language server's unsaved buffers are no files: the exact lookup answers.
    ProjectIndex.fix_layout(True)
    try:
        index = ProjectIndex({str(tree / "pkg" / "fresh.py"): "x = 1\n"}, track_dependents=False)
        assert index.find_module("pkg.fresh", str(tree / "pkg/graph_utils.py")) == str(tree / "pkg" / "fresh.py")
    finally:
        ProjectIndex.fix_layout(False)
