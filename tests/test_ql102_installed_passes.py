"""QL102 and another library's pass run on the graph between the insertion and the strip,
read from the library's installed source (SHARK's importer: `transform_fx` inserts
`aten.zero_` into the brevitas make_fx graph, then brevitas's `replace_call_fn_target` retargets
the nodes whose target is the placeholder it is handed, then the importer strips the graph).
Quiet: an installed pass that can key only on what it is handed, directly or re-exported by
its package, and an installed strip helper. Loud look-alikes: the library not installed, its
pass keyed on the op's overload, handing the graph on (to another function, to a save), handed
the op, an installed "strip" that strips only some nodes."""

from __future__ import annotations

import textwrap

import pytest

from qlint.analysis.flow import installed_classes
from qlint.analysis.names.project import ProjectIndex
from qlint.summary_cache import SummaryStore
from tests.test_ql102_strip_loops import ROW, _module
from tests.test_ql102_stripped_later import _rows

# brevitas's shape: a loop that retargets only the nodes calling the function it is handed.
RETARGET = """
def replace_call_fn_target(graph_model, src, target):
    for node in graph_model.graph.nodes:
        if node.op == "call_function" and node.target is src:
            node.target = target
    graph_model.graph.lint()
    graph_model.recompile()
"""

CALL = "replace_call_fn_target(gm, src=copy.copy, target=torch.ops.quant.matmul)\nstrip_overloads(gm)\n"
IMPORT = "from lib.export import replace_call_fn_target\n"


@pytest.fixture
def site(tmp_path, monkeypatch):
    """A site directory holding package `lib` (files written by the test), as the interpreter's."""
    directory = tmp_path / "site-packages"
    (directory / "lib").mkdir(parents=True)
    (directory / "lib" / "__init__.py").touch()
    monkeypatch.setattr(installed_classes, "site_dirs", lambda: (str(directory),))
    monkeypatch.setattr(ProjectIndex, "store", SummaryStore(tmp_path / "summaries"))
    installed_classes.module_file.cache_clear()
    yield directory / "lib"
    installed_classes.module_file.cache_clear()
    for path in list(installed_classes._SCOPES):
        if path.startswith(str(directory)):
            del installed_classes._SCOPES[path]


def _installed(lib, source: str, name: str = "export.py") -> None:
    (lib / name).write_text(textwrap.dedent(source))


def _check(tmp_path, body: str, imports: str = IMPORT) -> list[int]:
    project = tmp_path / "project"
    project.mkdir(parents=True)
    return _rows(project, imports + textwrap.dedent(_module(body)))


# -- quiet: the installed pass can key only on what it is handed ------------------------------


def test_installed_pass_keyed_on_what_it_is_handed_is_quiet(tmp_path, site):
    _installed(site, RETARGET)
    assert _check(tmp_path, CALL) == []


def test_installed_pass_re_exported_by_its_package_is_quiet(tmp_path, site):
    _installed(site, RETARGET)
    _installed(site, "from .export import replace_call_fn_target\n", "__init__.py")
    assert _check(tmp_path, CALL, "from lib import replace_call_fn_target\n") == []


def test_installed_strip_helper_is_quiet(tmp_path, site):
    strip = "import torch\n\n\ndef normalise(gm):\n    for node in gm.graph.nodes:\n"
    strip += "        if isinstance(node.target, torch._ops.OpOverload):\n"
    strip += "            node.target = node.target.overloadpacket\n"
    _installed(site, strip)
    assert _check(tmp_path, "normalise(gm)\n", "from lib.export import normalise\n") == []


# -- loud: what the installed pass does may read the packet's overload, or is unknown ----------


def test_library_not_installed_is_loud(tmp_path, site):
    # Nothing to read: the same call is unknown (one row lower: the import).
    assert _check(tmp_path, CALL) == [ROW + 1]


def test_installed_pass_keyed_on_the_overload_is_loud(tmp_path, site):
    _installed(site, RETARGET.replace("node.target is src", "node.target == torch.ops.aten.zero_.default"))
    assert _check(tmp_path, CALL) == [ROW + 1]


def test_installed_pass_handing_the_graph_on_is_loud(tmp_path, site):
    saved = RETARGET.replace("    graph_model.recompile()\n", "    torch.save(graph_model, 'g.pt')\n")
    legalised = RETARGET.replace("    graph_model.recompile()\n", "    legalize(graph=graph_model.graph)\n")
    for number, source in enumerate((saved, legalised)):
        _installed(site, source)
        installed_classes._SCOPES.clear()  # a new process: the file changed
        assert _check(tmp_path / str(number), CALL) == [ROW + 1], source


def test_installed_pass_handed_the_op_is_loud(tmp_path, site):
    _installed(site, RETARGET)
    body = CALL.replace("src=copy.copy", "src=torch.ops.aten.zero_.default")
    assert _check(tmp_path, body) == [ROW + 1]


def test_installed_strip_of_some_nodes_is_loud(tmp_path, site):
    partial = "import torch\n\n\ndef normalise(gm):\n    for node in gm.graph.nodes:\n"
    partial += "        if node.target == torch.ops.aten.add.Tensor:\n"
    partial += "            node.target = node.target.overloadpacket\n"
    _installed(site, partial)
    assert _check(tmp_path, "normalise(gm)\n", "from lib.export import normalise\n") == [ROW + 1]
