"""Imports of packages no import root holds (`os`, `typing`) lead the helper search nowhere:
in a run whose files stay put, `imports_helper` (QL101's and QL102's import triggers) leaves
them out before searching the text for their names (`absent_packages`), with the answers and
lookups of the search that asks about each."""

from __future__ import annotations

import pytest

import qlint.analysis.graphs.imported_helpers as imported_helpers
from qlint.analysis.graphs.wrapper_index import imports_a_wrapper
from qlint.analysis.names.absent_packages import project_imports
from qlint.analysis.names.import_paths import module_roots
from qlint.analysis.names.layout_lookups import holds_none_under
from qlint.analysis.names.project import ProjectIndex
from tests.conftest import write_package
from tests.test_ql102_imported_wrappers import GRAPH_UTILS


@pytest.fixture
def fixed_run():
    ProjectIndex.fix_layout(True)
    try:
        yield
    finally:
        ProjectIndex.fix_layout(False)


@pytest.fixture
def repo(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.setuptools.package-dir]\nmapped = "src/mapped"\n')
    write_package(tmp_path, "pkg", graph_utils=GRAPH_UTILS)
    (tmp_path / "src").mkdir()
    write_package(tmp_path / "src", "mapped", inner="")
    (tmp_path / "stubbed.pyi").write_text("X: int\n")  # a stub alone is a module
    (tmp_path / "loose.py").write_text("")
    (tmp_path / "tests" / "quant").mkdir(parents=True)  # namespace directories
    (tmp_path / "tests" / "helpers.py").write_text("")
    return tmp_path


@pytest.mark.parametrize("requester", ["pkg/passes.py", "tests/quant/test_x.py"])
def test_a_package_no_root_holds_is_one_no_lookup_finds(repo, requester, fixed_run):
    requester = str(repo / requester)
    roots, run = module_roots(requester), ProjectIndex.layouts
    index = ProjectIndex(track_dependents=False)
    for top in ("pkg", "mapped", "stubbed", "loose", "tests"):
        assert not holds_none_under(top, roots, run), top
    for module in ("pkg.graph_utils", "mapped.inner", "stubbed", "loose", "tests.helpers"):
        assert index.find_module(module, requester) is not None, module
    assert holds_none_under("os", roots, run) and holds_none_under("typing", roots, run)
    # Whatever it says of a name, no module under a name it calls absent is found.
    for top in ("os", "typing", "graph_utils", "inner", "helpers", "quant", "src"):
        if holds_none_under(top, roots, run):
            for module in (top, f"{top}.path", f"{top}.graph_utils", f"{top}.inner", f"{top}.helpers"):
                assert index.find_module(module, requester) is None, module


WRAPPED = """\
import os
from collections import OrderedDict
from typing import Any

from pkg.graph_utils import insert_op


def rewrite(gm, node):
    os.path.join("a", "b")
    table = OrderedDict(Any(node))
    {call}
"""


def _asked(monkeypatch) -> list[str]:
    """The names the trigger searches the text for (calls, paths called on them)."""
    asked: list[str] = []
    may_call, called_attributes = imported_helpers.may_call, imported_helpers.called_attributes
    monkeypatch.setattr(imported_helpers, "may_call", lambda text, name: asked.append(name) or may_call(text, name))
    monkeypatch.setattr(
        imported_helpers,
        "called_attributes",
        lambda text, name: asked.append(name) or called_attributes(text, name),
    )
    return asked


@pytest.mark.parametrize(("call", "wraps"), [("insert_op(gm.graph, op, (node,))", True), ("return table", False)])
def test_the_trigger_searches_the_text_for_project_names_only(repo, monkeypatch, fixed_run, call, wraps):
    path = repo / "pkg" / "passes.py"
    text = WRAPPED.format(call=call)
    path.write_text(text)
    asked = _asked(monkeypatch)
    project = ProjectIndex()
    project.begin_check()
    assert imports_a_wrapper(text, str(path), project) is wraps
    assert "insert_op" in asked
    assert not {"os", "OrderedDict", "Any"} & set(asked)


def test_outside_a_run_every_import_is_searched_for_with_the_same_answer(repo, monkeypatch):
    path = repo / "pkg" / "passes.py"
    for call, wraps in (("insert_op(gm.graph, op, (node,))", True), ("return table", False)):
        text = WRAPPED.format(call=call)
        path.write_text(text)
        asked = _asked(monkeypatch)
        project = ProjectIndex()
        project.begin_check()
        assert imports_a_wrapper(text, str(path), project) is wraps
        # (A wrapper called ends the search before the paths called on `os` are asked about.)
        assert {"OrderedDict", "Any"} | ({"os"} if not wraps else set()) <= set(asked)


def test_imports_of_the_project_and_of_its_own_package_are_kept(repo, fixed_run):
    requester = str(repo / "pkg" / "passes.py")
    imports = [("os", "os"), ("insert_op", "pkg.graph_utils.insert_op"), ("Any", "typing.Any"), ("m", "mapped.m")]
    assert project_imports(ProjectIndex(), imports, requester) == [imports[1], imports[3]]
    # An editor's index (an unsaved buffer) looks modules up its own way: nothing is left out.
    assert project_imports(ProjectIndex({requester: "x = 1\n"}), imports, requester) == imports


BUILDERS = "class GraphBuilder:\n    def insert(self, op, args=()):\n        return self.g.call_function(op, args)\n"
BUILT = """\
import torch
from pkg.builders import GraphBuilder
{rebound}

def rewrite(graph, node):
    return GraphBuilder(graph).insert(torch.ops.aten.relu, (node,))
"""


@pytest.mark.parametrize(
    ("rebound", "wraps"),
    [("", True), ("from torch.fx import GraphBuilder", False), ("from typing import GraphBuilder", False)],
)
def test_a_class_built_is_the_one_its_name_was_imported_as_last(tmp_path, rebound, wraps):
    # A later import of torch (or of a package the project lacks) rebinds the name: no
    # helper class is built, though the search leaves that import out.
    write_package(tmp_path, "pkg", builders=BUILDERS)
    path = tmp_path / "pkg" / "passes.py"
    text = BUILT.format(rebound=rebound)
    path.write_text(text)
    for fixed in (False, True):
        ProjectIndex.fix_layout(fixed)
        try:
            project = ProjectIndex()
            project.begin_check()
            assert imports_a_wrapper(text, str(path), project) is wraps, fixed
        finally:
            ProjectIndex.fix_layout(False)


TORCH_ONLY = """\
import torch
import torch.nn as nn
from torch.fx import GraphModule, Node
from torch.fx.passes.infra import pass_base


class Rewrite(pass_base.PassBase):
    def call(self, gm: GraphModule):
        for node in gm.graph.nodes:
            nn.init.zeros_(node.meta["val"])
        return torch.fx.passes.infra.pass_base.PassResult(gm, True)


class Holder(nn.Module):
    pass
"""


def test_a_file_importing_only_torch_gets_no_helper_search(tmp_path, monkeypatch):
    # Every way from an import of torch to a helper ends at it (`helper_imports`): the
    # trigger answers without making the search, in any run.
    import qlint.analysis.graphs.wrapper_index as wrapper_index

    write_package(tmp_path, "pkg", graph_utils=GRAPH_UTILS)
    path = tmp_path / "pkg" / "passes.py"
    made: list[str] = []
    search = wrapper_index.wrapper_search
    monkeypatch.setattr(
        wrapper_index, "wrapper_search", lambda *args, **kw: made.append(args[-1]) or search(*args, **kw)
    )
    for text, searched in ((TORCH_ONLY, False), (TORCH_ONLY + "from pkg.graph_utils import first_user\n", True)):
        path.write_text(text)
        made.clear()
        project = ProjectIndex()
        project.begin_check()
        assert imports_a_wrapper(text, str(path), project) is False
        assert bool(made) is searched
