"""QL102's help names the module as Python imports it when its callers are unknown because no
package is read around it (issue 14, item 6).

A directory without `__init__.py` inside a regular package (`pkg/__init__.py`, then
`pkg/passes/insert.py`) is a namespace package (PEP 420): Python imports the module as
`pkg.passes.insert`. qlint reads no package through such a directory (`scan_root`), so the
pass's callers are unknown and it is reported; the help said "qlint sees no package around this
module", which is wrong there. It now names `pkg.passes.insert` and the directory without
`__init__.py`; a module outside any package is named as the top-level module it imports as, and
a file whose name is no module name as not imported.
"""

from __future__ import annotations

import textwrap

from qlint.analysis.names.modules import namespace_import
from tests.conftest import check_file

INSERTER = """
    import torch


    def insert_quantize(gm, node):
        with gm.graph.inserting_after(node):
            gm.graph.call_function(torch.ops.torchao.quantize_affine, (node,))
"""


def _help(path) -> str:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(INSERTER))
    [found] = check_file(path, ("QL102",)).diagnostics
    assert "`insert_quantize`'s callers are unknown" in found.message
    return found.help


def _repo(tmp_path):
    (tmp_path / ".git").mkdir()
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    return tmp_path


def test_a_module_in_a_namespace_directory_of_a_package_is_named_as_python_imports_it(tmp_path):
    root = _repo(tmp_path)
    help_ = _help(root / "pkg" / "passes" / "insert.py")
    assert "Python imports this module as `pkg.passes.insert`" in help_
    assert "`pkg/passes` has no `__init__.py`" in help_
    assert "sees no package" not in help_


def test_a_package_below_a_namespace_directory_keeps_its_whole_name(tmp_path):
    root = _repo(tmp_path)
    (root / "pkg" / "passes" / "deep").mkdir(parents=True)
    (root / "pkg" / "passes" / "deep" / "__init__.py").write_text("")
    help_ = _help(root / "pkg" / "passes" / "deep" / "more" / "insert.py")
    assert "`pkg.passes.deep.more.insert`" in help_
    assert "`pkg/passes/deep/more` has no `__init__.py`" in help_


def test_a_module_outside_any_package_imports_as_a_top_level_module(tmp_path):
    (tmp_path / ".git").mkdir()
    # A directory without `__init__.py` and no package above it: a script's directory.
    help_ = _help(tmp_path / "tools" / "insert.py")
    assert "sees no package around this module (it imports as top-level `insert`)" in help_
    help_ = _help(tmp_path / "my-pass.py")
    assert "its file name is no module name: it is not imported" in help_


def test_namespace_import():
    assert namespace_import("/nowhere/pkg/passes/insert.py", "/nowhere") is None  # no `pkg/__init__.py`


def test_namespace_import_on_disk(tmp_path):
    root = _repo(tmp_path)
    (root / "pkg" / "core.py").write_text("")
    (root / "pkg" / "passes").mkdir()
    (root / "pkg" / "passes" / "insert.py").write_text("")
    (root / "tools").mkdir()
    (root / "tools" / "run.py").write_text("")
    top = str(root)
    assert namespace_import(str(root / "pkg" / "passes" / "insert.py"), top) == (
        "pkg.passes.insert",
        str(root / "pkg" / "passes"),
    )
    # A module of the package itself, and one of a directory no package holds: no namespace way in.
    assert namespace_import(str(root / "pkg" / "core.py"), top) is None
    assert namespace_import(str(root / "tools" / "run.py"), top) is None
    # A package above the project's root is not looked for.
    assert namespace_import(str(root / "pkg" / "passes" / "insert.py"), str(root / "pkg" / "passes")) is None
