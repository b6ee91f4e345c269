"""A check of one file, a cached run with few files to check again and an editor's buffer
follow wrapper chains (QL102's insertion wrappers, QL101's sink helpers) as deep as a fresh
tree run does (`wrapper_chains.CHAIN_LINKS`): how deep is the root's (`index_roots`), not the
wrapper-name index's, which only spares the lookups of names it rules out. Before, a run
without the index (fewer than `runner.MIN_PARALLEL_FILES` files to check, `qlint check FILE`,
`--stdin-filename`) followed one module, and pre-commit, a second cached run and the editor
lost what CI reported.

Real qlint processes sharing one `--cache-dir`: a whole-tree run first, then an edit on disk,
then each path, every answer compared with `qlint check --no-cache` over the tree as it is."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.conftest import json_findings, old_file
from tests.test_ql102_imported_wrappers import GRAPH_UTILS

# graph_utils <- mid <- b <- passes: two modules that insert nothing between the pass and
# the wrapper.
MID = "from pkg.graph_utils import insert_op\n\n\ndef add_mid(graph, op):\n    return insert_op(graph, op, ())\n"
B = "from pkg.mid import add_mid\n\n\ndef add_b(graph, op):\n    return add_mid(graph, op)\n"
PASSES = """\
import torch

from pkg.b import add_b


def rewrite(gm):
    add_b(gm.graph, torch.ops.aten.relu)
"""
# QL101: test -> chain -> impl's sink helper (one module naming no sink; longer chains in
# tests/test_sink_helper_chains.py).
IMPL = "def check_nodes(case, m, occurrence):\n    case.checkGraphModuleNodes(m, None, None, occurrence)\n"
CHAIN = "from pkg.impl import check_nodes\n\n\ndef expect(case, m, occ):\n    check_nodes(case, m, occ)\n"
USER = """\
import torch

from pkg.chain import expect


def test(case, m):
    case.target_dtype = torch.int8
    expect(case, m, {torch.ops.aten.hardtanh: 1})
"""
OTHERS = {f"m{i}": f"import os\n\n\ndef f{i}(x):\n    return os.path.join(x)\n" for i in range(30)}


def _qlint(repo: Path, *args: str, stdin: str | None = None) -> list[tuple]:
    found = json_findings(repo, "--select", "QL101,QL102", *args, stdin=stdin)
    return sorted((os.path.relpath(d["filename"], repo), d["location"]["row"], d["code"]) for d in found)


def _write(repo: Path, **modules: str | None) -> None:
    for name, text in modules.items():
        path = repo / "pkg" / f"{name}.py"
        if text is None:
            path.unlink()
        else:
            old_file(path, text)


def cached_project(tmp_path: Path, **modules: str) -> tuple[Path, list[tuple]]:
    """`tmp_path/repo`, a project of package `pkg` holding `modules` and `OTHERS` (enough
    modules for a tree run to make the index), and what a first whole-tree run found, its
    answers kept in `cache`."""
    repo = tmp_path / "repo"
    (repo / "pkg").mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    _write(repo, __init__="", **modules, **OTHERS)
    return repo, _qlint(repo, "--cache-dir", "cache", "pkg")


def ql101_rows(findings: list[tuple]) -> list[tuple[str, int]]:
    """(module, row) of each finding, which must all be QL101's."""
    assert {code for _, _, code in findings} <= {"QL101"}
    return [(path, row) for path, row, _ in findings]


@pytest.fixture
def repo(tmp_path) -> Path:
    """A project with both chains, after a whole-tree run that kept its answers in `cache`."""
    modules = {"graph_utils": GRAPH_UTILS, "mid": MID, "b": B, "passes": PASSES}
    repo, found = cached_project(tmp_path, **modules, impl=IMPL, chain=CHAIN, user=USER)
    assert found == [("pkg/passes.py", 7, "QL102"), ("pkg/user.py", 8, "QL101")]
    return repo


def _every_path(repo: Path, *targets: str, buffer_alone: bool = False) -> list[tuple]:
    """The findings of a fresh `--no-cache` tree run, after asserting that the cached tree
    run, and for each of `targets` `qlint check FILE` (cached and not) and the check of its
    text as an editor's buffer (cached; `buffer_alone`: not too), answer the same."""
    fresh = _qlint(repo, "--no-cache", "pkg")
    assert _qlint(repo, "--cache-dir", "cache", "pkg") == fresh
    for target in targets:
        mine = [f for f in fresh if f[0] == f"pkg/{target}.py"]
        path = f"pkg/{target}.py"
        text = (repo / path).read_text()
        assert _qlint(repo, "--cache-dir", "cache", path) == mine, path
        assert _qlint(repo, "--no-cache", path) == mine, path
        assert _qlint(repo, "--cache-dir", "cache", "--stdin-filename", path, "-", stdin=text) == mine, path
        if buffer_alone:
            assert _qlint(repo, "--no-cache", "--stdin-filename", path, "-", stdin=text) == mine, path
    return fresh


BOTH = [("pkg/passes.py", 7, "QL102"), ("pkg/user.py", 8, "QL101")]


def test_a_module_added_that_calls_the_pass_keeps_the_chains(repo):
    # The bug: one module added, a cached run checks it alone (fewer than MIN_PARALLEL_FILES).
    _write(repo, m40="from pkg import passes\n\n\ndef via(graph, op):\n    return passes.ins(graph, op)\n")
    assert _every_path(repo, "passes", "user", buffer_alone=True) == BOTH


def test_an_unrelated_module_edited(repo):
    _write(repo, m3="import os\n\n\ndef f3(x):\n    return os.sep\n")
    assert _every_path(repo, "passes", "user", "m3") == BOTH


def test_an_edit_that_adds_a_wrapper(repo):
    # b now calls a new module's wrapper through one more link: found alike on every path.
    _write(repo, extra="def put(graph, op):\n    return graph.call_function(op, ())\n")
    _write(repo, mid="from pkg.extra import put\n\n\ndef add_mid(graph, op):\n    return put(graph, op)\n")
    assert _every_path(repo, "passes", "mid") == BOTH


def test_an_edit_that_removes_the_wrapper(repo):
    # graph_utils stops inserting what it is given: no path reports the pass any more.
    _write(repo, graph_utils=GRAPH_UTILS.replace("graph.call_function(op, args)", "graph.call_function(print, args)"))
    assert _every_path(repo, "passes", "graph_utils") == [("pkg/user.py", 8, "QL101")]


def test_a_module_renamed(repo):
    _write(repo, mid=None, mid_renamed=MID, b=B.replace("pkg.mid ", "pkg.mid_renamed "))
    assert _every_path(repo, "passes", "b") == BOTH
    # Renamed again without the importer following: the chain is broken everywhere.
    _write(repo, mid_renamed=None, mid_other=MID)
    assert _every_path(repo, "passes") == [("pkg/user.py", 8, "QL101")]


def test_a_link_deleted_and_added_back(repo):
    _write(repo, chain=None)
    assert _every_path(repo, "user") == [("pkg/passes.py", 7, "QL102")]
    _write(repo, chain=CHAIN)
    assert _every_path(repo, "user") == BOTH


# ------------------------------------------------------------------ quiet look-alikes


def test_one_link_more_than_chain_links_is_followed_nowhere(repo):
    # passes -> b -> mid -> mid2 -> mid3 -> graph_utils: four modules that insert nothing.
    def link(name: str, to: str) -> str:
        return f"from pkg.{to} import add_{to}\n\n\ndef add_{name}(graph, op):\n    return add_{to}(graph, op)\n"

    mid3 = MID.replace("add_mid", "add_mid3")
    _write(repo, mid=link("mid", "mid2"), mid2=link("mid2", "mid3"), mid3=mid3)
    assert _every_path(repo, "passes") == [("pkg/user.py", 8, "QL101")]
    # Entered one module further down, the same chain is followed everywhere.
    lower = PASSES.replace("from pkg.b import add_b", "from pkg.mid import add_mid").replace("add_b(", "add_mid(")
    _write(repo, passes=lower)
    assert _every_path(repo, "passes") == BOTH


def test_chains_that_hand_on_no_parameter_stay_quiet(repo):
    # The middle link hands the wrapper a fixed overload; the sink helper's link prints.
    fixed = "import torch\nfrom pkg.graph_utils import insert_op\n\n\n"
    fixed += "def add_mid(graph, op):\n    return insert_op(graph, torch.ops.aten.relu.default, (op,))\n"
    _write(repo, mid=fixed, chain="def expect(case, m, occ):\n    print(occ)\n")
    assert _every_path(repo, "passes", "user") == []
