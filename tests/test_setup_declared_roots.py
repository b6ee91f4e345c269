"""Import roots a project's own packaging declares (`setup.py`, `setup.cfg`, `pyproject.toml`),
read without running anything, and the run's directory standing in for the root of a tree
with no marker (issue 14: EVT's `benchmark/` scripts import `gtl`, which `python/setup.py`
installs from `python/` with `package_dir={"": "."}`).

Each form resolves an import of a script outside the package to the module; the quiet cases
(nothing resolves) are a directory that is not there, a value computed at run time, a setup
script that does not parse, one inside a package or deeper than right below the root."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from qlint.analysis import run_roots
from qlint.analysis.names import import_paths, package_map
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.setup_scripts import may_declare, setup_cfg_declarations, setup_py_declarations

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _no_run_roots():
    run_roots.use_directories(())
    yield
    run_roots.use_directories(())


def _setup(**keywords: str) -> bytes:
    args = "".join(f"    {k}={v},\n" for k, v in keywords.items())
    return f"from setuptools import find_packages, setup\n\nsetup(\n    name='gtl',\n{args})\n".encode()


# -- what each file declares ------------------------------------------------------------------


@pytest.mark.parametrize(
    "keywords,expected",
    [
        ({"package_dir": "{'': 'python'}"}, (("", "python", False),)),
        ({"package_dir": "{'': '.'}"}, (("", ".", False),)),  # EVT's, from `python/setup.py`
        ({"package_dir": "dict(gtl='lib/gtl')"}, (("gtl", "lib/gtl", False),)),
        ({"package_dir": "{'gtl': 'lib/gtl', '': 'code'}"}, (("gtl", "lib/gtl", False), ("", "code", False))),
        # a subpackage mapped onto a directory of its own, dotted or as ExecuTorch spelled it
        ({"package_dir": "{'a.b': 'lib'}"}, (("a.b", "lib", False),)),
        ({"package_dir": "{'executorch/backends': 'backends'}"}, (("executorch.backends", "backends", False),)),
        ({"packages": "find_packages('code')"}, (("", "code", True),)),
        ({"packages": "find_packages(where='code', exclude=['tests'])"}, (("", "code", True),)),
        ({"packages": "setuptools.find_namespace_packages(where='code')"}, (("", "code", True),)),
    ],
)
def test_setup_py_keywords_are_read(keywords, expected):
    assert setup_py_declarations(_setup(**keywords), beside_root=True) == expected


@pytest.mark.parametrize(
    "keywords",
    [
        {"package_dir": "PACKAGE_DIR"},  # a variable: computed at run time, not followed
        {"package_dir": "{'': os.path.join('a', 'b')}"},
        {"package_dir": "{NAME: 'lib'}"},
        {"package_dir": "{'a.b-c': 'lib'}"},  # a key that names no package
        {"package_dir": "{'a..b': 'lib'}"},
        {"packages": "find_packages(SRC)"},
        {"packages": "_minimal_packages()"},  # ExecuTorch's: the finder runs inside a helper
        {"packages": "['gtl', 'gtl.ops']"},
    ],
)
def test_values_computed_at_run_time_declare_nothing(keywords):
    assert setup_py_declarations(_setup(**keywords), beside_root=False) == ()


def test_keywords_of_other_calls_and_unparsable_scripts_declare_nothing():
    assert setup_py_declarations(b"configure(package_dir={'': 'python'})\n", beside_root=True) == ()
    assert setup_py_declarations(b"setup(package_dir={'': 'python'}\n", beside_root=True) == ()  # cut short
    assert setup_py_declarations(b"setup(package_dir={'': 'py\0'})\n", beside_root=True) == ()


def test_a_root_setup_script_that_finds_packages_beside_itself_is_not_parsed():
    # The root is an import root already; ExecuTorch's and torchao's scripts are 14-40 ms to parse.
    assert not may_declare(_setup(packages="find_packages(exclude=['benchmarks'])"), beside_root=True)
    helper = b"def _minimal():\n    return find_namespace_packages(\n        where='src')\n\n"
    helper += b"setup(packages=_minimal())\n"
    assert not may_declare(helper, beside_root=True)
    assert may_declare(_setup(packages="find_packages()"), beside_root=False)
    assert setup_py_declarations(_setup(packages="find_packages()"), beside_root=False) == (("", ".", True),)


def test_setup_cfg_options_are_read():
    cfg = b"[metadata]\nname = gtl\n\n[options]\npackage_dir =\n    =code\n    gtl = lib/gtl\npackages = find:\n\n"
    cfg += b"[options.packages.find]\nwhere = code\n"
    assert setup_cfg_declarations(cfg) == (("", "code", False), ("gtl", "lib/gtl", False), ("", "code", True))
    assert setup_cfg_declarations(b"[options\npackage_dir = =code\n") == ()  # not an INI file
    assert setup_cfg_declarations(b"[options]\npackage_dir = =\xff\n") == ()  # not UTF-8


# -- an import of a script outside the package resolves to the module -------------------------


def _forget() -> None:
    package_map._declared.cache_clear()
    import_paths.forget_roots()


def _tree(root: Path, marked: bool = True, package_under: str = "python") -> Path:
    """`<package_under>/gtl/front.py`, a script in `bench/`, and a `.git` when `marked`."""
    package = root / package_under / "gtl"
    package.mkdir(parents=True)
    (package / "__init__.py").touch()
    (package / "front.py").write_text("class FrontEnd: ...\n")
    (root / "bench").mkdir()
    (root / "bench" / "run.py").write_text("from gtl.front import FrontEnd\n")
    if marked:
        (root / ".git").mkdir()
    return root


def _found(root: Path, module: str = "gtl.front") -> str | None:
    return ProjectIndex(track_dependents=False).find_module(module, str(root / "bench" / "run.py"))


FORMS = [
    ("setup.py", _setup(package_dir="{'': 'python'}").decode(), "python"),
    ("setup.py", _setup(package_dir="{'gtl': 'python/gtl'}").decode(), "python"),
    ("setup.py", _setup(packages="find_packages('code')", package_dir="{'': 'code'}").decode(), "code"),
    ("setup.py", _setup(packages="find_packages(where='code')").decode(), "code"),
    ("setup.cfg", "[options]\npackage_dir =\n    =code\n", "code"),
    ("setup.cfg", "[options]\npackages = find:\n\n[options.packages.find]\nwhere = code\n", "code"),
    ("pyproject.toml", '[tool.setuptools.package-dir]\n"" = "code"\n', "code"),
    ("pyproject.toml", '[tool.setuptools.packages.find]\nwhere = ["code"]\n', "code"),
    ("python/setup.py", _setup(package_dir="{'': '.'}").decode(), "python"),  # EVT's
    ("python/setup.py", _setup(packages="find_packages()").decode(), "python"),
    ("python/setup.cfg", "[options]\npackage_dir =\n    =.\n", "python"),
]


@pytest.mark.parametrize("name,text,under", FORMS)
def test_each_packaging_form_resolves_the_import(tmp_path, name, text, under):
    root = _tree(tmp_path, package_under=under)
    assert _found(root) is None  # nothing declared: the package is not the script's to import
    _forget()  # what a project declares is read once per process
    (root / name).write_text(text)
    assert _found(root) == str(root / under / "gtl" / "front.py")


@pytest.mark.parametrize(
    "name,text",
    [
        ("setup.py", _setup(package_dir="{'': 'nowhere'}").decode()),  # points nowhere
        ("setup.py", _setup(package_dir="{'': '../python'}").decode()),  # out of the checkout
        ("setup.py", _setup(package_dir="PACKAGE_DIR").decode()),  # computed at run time
        ("setup.py", "setup(package_dir={'': 'python'}\n"),  # does not parse
        ("setup.cfg", "[options]\npackage_dir =\n    =nowhere\n"),
        ("tools/sub/setup.py", _setup(package_dir="{'': '../../python'}").decode()),  # deeper than a level
    ],
)
def test_declarations_that_name_no_directory_here_resolve_nothing(tmp_path, name, text, capfd):
    root = _tree(tmp_path)
    (root / name).parent.mkdir(parents=True, exist_ok=True)
    (root / name).write_text(text)
    assert _found(root) is None
    assert capfd.readouterr().err == ""  # only a root `pyproject.toml`'s package directory is warned about


def test_a_setup_script_inside_a_package_declares_nothing(tmp_path):
    root = _tree(tmp_path)
    (root / "tools").mkdir()
    (root / "tools" / "__init__.py").touch()
    (root / "tools" / "setup.py").write_text(_setup(package_dir="{'': '../python'}").decode())
    assert _found(root) is None


def test_a_named_package_dir_wins_over_the_root_entry(tmp_path):
    # As setuptools maps a package: by its own `package_dir` entry before the `""` one.
    root = _tree(tmp_path, package_under="code")
    (root / "lib" / "gtl").mkdir(parents=True)
    (root / "lib" / "gtl" / "front.py").write_text("")
    (root / "setup.py").write_text(_setup(package_dir="{'': 'code', 'gtl': 'lib/gtl'}").decode())
    assert _found(root) == str(root / "lib" / "gtl" / "front.py")


def test_the_root_package_of_the_same_name_comes_first(tmp_path):
    # Run from the root (`python -m`, pytest's rootdir), `gtl/` there shadows the installed
    # `python/gtl`: directories between the file and the root come before declared ones.
    root = _tree(tmp_path)
    (root / "gtl").mkdir()
    (root / "gtl" / "__init__.py").touch()
    (root / "gtl" / "front.py").write_text("")
    (root / "setup.py").write_text(_setup(package_dir="{'': 'python'}").decode())
    assert _found(root) == str(root / "gtl" / "front.py")


def test_the_root_files_win_over_a_subdirectory(tmp_path):
    root = _tree(tmp_path, package_under="code")
    (root / "python" / "gtl").mkdir(parents=True)
    (root / "python" / "gtl" / "front.py").write_text("")
    (root / "python" / "setup.py").write_text(_setup(package_dir="{'': '.'}").decode())
    (root / "setup.cfg").write_text("[options]\npackage_dir =\n    =code\n")
    assert _found(root) == str(root / "code" / "gtl" / "front.py")


# -- a tree with no marker: the run's directory -------------------------------------------------


def test_an_unmarked_tree_reads_the_packaging_of_the_runs_directory(tmp_path):
    root = _tree(tmp_path / "tree", marked=False)
    (root / "python" / "setup.py").write_text(_setup(package_dir="{'': '.'}").decode())
    assert _found(root) is None  # no run: no root
    run_roots.use_directories([str(root / "bench")])  # a run of `bench/` alone: not the tree's
    assert _found(root) is None
    run_roots.use_directories([str(tmp_path / "elsewhere"), str(root)])
    assert _found(root) == str(root / "python" / "gtl" / "front.py")


def test_the_runs_directories_are_its_directory_arguments_or_its_cwd(tmp_path):
    (tmp_path / "a").mkdir()
    run_roots.use([str(tmp_path / "a")], cwd=str(tmp_path))
    assert run_roots.root_for(str(tmp_path / "a" / "x")) == str(tmp_path / "a")
    assert run_roots.root_for(str(tmp_path / "b")) is None
    run_roots.use([str(tmp_path / "a" / "f.py")], cwd=str(tmp_path))  # a file: the cwd
    assert run_roots.root_for(str(tmp_path / "b")) == str(tmp_path)
    run_roots.use([], cwd=os.path.expanduser("~"))  # the home directory is no project's
    assert run_roots.root_for(os.path.join(os.path.expanduser("~"), "x")) is None


# -- the EVT false alarm, end to end ----------------------------------------------------------

SCRIPT = """
    import torch
    from gtl.front import FrontEnd

    def count_relus(gm):
        return sum(n.target == torch.ops.aten.relu for n in gm.graph.nodes)

    def compile_fn(gm):
        frontend = FrontEnd()
        gm, _ = frontend(gm)
        count_relus(gm)
"""
MATCH_ROW = 6


def _evt_like(root: Path) -> Path:
    from tests.test_front_end_renames import FRONT_END

    _tree(root, marked=False)
    (root / "python" / "gtl" / "front.py").write_text(textwrap.dedent(FRONT_END))
    (root / "python" / "setup.py").write_text(_setup(package_dir="{'': '.'}").decode())
    (root / "bench" / "run.py").write_text(textwrap.dedent(SCRIPT))
    return root


def _check(cwd: Path, *args: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    cmd = [sys.executable, "-m", "qlint", "check", "--no-cache", "--exit-zero", "--select", "QL101"]
    cmd += ["--output-format", "concise", *args]
    run = subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in run.stderr, run.stderr
    return [line for line in run.stdout.splitlines() if "QL101" in line]


def test_a_script_run_after_a_front_end_installed_by_a_sibling_setup_script_is_quiet(tmp_path):
    root = _evt_like(tmp_path / "tree")
    assert _check(root, ".") == []
    assert _check(root, "bench/run.py") == []
    # Run from `bench/` alone, the tree's packaging is not the run's: the import does not
    # resolve, and the pass may see overloads.
    (found,) = _check(root / "bench", ".")
    assert f"run.py:{MATCH_ROW}:" in found


def test_without_the_setup_script_the_script_is_reported(tmp_path):
    root = _evt_like(tmp_path / "tree")
    (root / "python" / "setup.py").unlink()
    (found,) = _check(root, ".")
    assert f"run.py:{MATCH_ROW}:" in found


def test_the_editors_workspace_folder_is_the_root_of_an_unmarked_tree(tmp_path):
    from qlint.lsp.client import LspClient

    root = _evt_like(tmp_path / "tree")
    for folder, expected in ((root, []), (root / "bench", [MATCH_ROW - 1])):  # LSP lines count from 0
        lsp = LspClient(tmp_path)  # the server's working directory is neither
        try:
            lsp.initialize(folder)
            uri = lsp.open(root / "bench" / "run.py", (root / "bench" / "run.py").read_text())
            assert [d["range"]["start"]["line"] for d in lsp.diagnostics(uri, 1) if d["code"] == "QL101"] == expected
        finally:
            lsp.close()


def test_an_unmarked_tree_checked_from_its_top_is_searched_for_callers(tmp_path):
    # As with a `.git` there: the callers of a helper that captures its parameter are read.
    from qlint.analysis.names.package_map import project_root
    from tests.test_project_root_setup import CAPTURE_ROW, _archive, _rows

    root = _archive(tmp_path / "proj")
    assert project_root(str(root / "pkg" / "pt2e.py")) is None
    assert _rows(root) == [CAPTURE_ROW]  # callers unknown: in whatever mode they leave it
    run_roots.use([str(root)])
    assert project_root(str(root / "pkg" / "pt2e.py")) == str(root)
    assert _rows(root) == []
    run_roots.use([str(root / "pkg" / "pt2e.py")], cwd=str(tmp_path / "elsewhere"))  # not holding it
    assert project_root(str(root / "pkg" / "pt2e.py")) is None


def test_an_installed_tree_is_never_the_runs_project(tmp_path):
    from qlint.analysis.names.package_map import project_root

    tree = tmp_path / "lib" / "site-packages" / "tool"
    tree.mkdir(parents=True)
    run_roots.use([str(tree)])
    assert project_root(str(tree / "mod.py")) is None


def test_a_workspace_folder_added_later_becomes_the_root_of_an_unmarked_tree(tmp_path):
    # An editor opened on `bench/` alone, then given the tree's top as a folder (VS Code's
    # "Add Folder to Workspace"): the open buffer is checked again with the tree's packaging,
    # and again without it once the folder is removed.
    from qlint.lsp.client import LspClient

    root = _evt_like(tmp_path / "tree")
    run = root / "bench" / "run.py"
    lsp = LspClient(tmp_path)
    try:
        lsp.initialize(root / "bench")
        uri = lsp.open(run, run.read_text())
        assert [d["code"] for d in lsp.diagnostics(uri, 1)] == ["QL101"]
        for added, removed, expected in (([root], [], []), ([], [root], ["QL101"])):
            seen = len(lsp.received)
            event = {
                "added": [{"uri": p.as_uri(), "name": p.name} for p in added],
                "removed": [{"uri": p.as_uri(), "name": p.name} for p in removed],
            }
            lsp.notify("workspace/didChangeWorkspaceFolders", {"event": event})
            params = lsp.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri, since=seen, timeout=60)
            assert [d["code"] for d in params["diagnostics"]] == expected
    finally:
        lsp.close()


def _cached_check(cwd: Path, *args: str) -> list[str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)
    cmd = [sys.executable, "-m", "qlint", "check", "--exit-zero", "--select", "QL101", "--output-format", "concise"]
    run = subprocess.run([*cmd, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=300)
    assert "Traceback" not in run.stderr, run.stderr
    return [line for line in run.stdout.splitlines() if "QL101" in line]


def test_the_results_cache_is_not_reused_across_layouts(tmp_path):
    # Same files, same settings, same cache directory: what resolves differs with the run's
    # directories and with the packaging files, and so must the results.
    root = _evt_like(tmp_path / "tree")
    assert _cached_check(root, ".") == []
    assert len(_cached_check(root, "bench")) == 1  # `bench/` alone is the unmarked tree's root
    assert _cached_check(root, ".") == []
    setup = root / "python" / "setup.py"
    kept = setup.read_bytes()
    setup.unlink()
    assert len(_cached_check(root, ".")) == 1
    setup.write_bytes(kept)
    assert _cached_check(root, ".") == []
    assert (root / ".qlint_cache").is_dir()


@pytest.mark.parametrize("watching", [True, False], ids=["watched", "saved"])
def test_the_server_follows_a_setup_script_changed_while_it_runs(tmp_path, watching):
    # The packaging files decide the import roots: once read, the server must not keep using
    # what `python/setup.py` declared after it stopped declaring it, whether the client's
    # watcher reports the change or the script is saved from the editor.
    from qlint.lsp.client import LspClient

    root = _evt_like(tmp_path / "tree")
    run, setup = root / "bench" / "run.py", root / "python" / "setup.py"
    lsp = LspClient(tmp_path)
    try:
        capabilities = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}} if watching else {}
        lsp.initialize(root, capabilities=capabilities)
        if watching:
            lsp.server_request("client/registerCapability", timeout=60)
        uri = lsp.open(run, run.read_text())
        assert lsp.diagnostics(uri, 1) == []
        script = lsp.open(setup, setup.read_text())
        setup.write_text(_setup(package_dir="{}").decode())
        seen = len(lsp.received)
        if watching:
            lsp.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": setup.as_uri(), "type": 2}]})
        else:
            lsp.notify("textDocument/didSave", {"textDocument": {"uri": script}})
        params = lsp.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri, since=seen, timeout=60)
        assert [d["code"] for d in params["diagnostics"]] == ["QL101"]
    finally:
        lsp.close()
