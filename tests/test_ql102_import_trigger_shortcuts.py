"""The shortcuts of QL102's import trigger (`imports_a_wrapper`) keep it exact.

It asks only about imported names the file may call (a wrapper never called inserts
nothing, and the check would not look it up), and it remembers whether a name is a wrapper
per module file it is imported from, which several import roots of one tree share, while
two roots that each have their own `utils` module keep their own answers.
"""

from __future__ import annotations

import os

from qlint.analysis.graphs.forwarding_memos import IMPORTED
from qlint.analysis.graphs.wrapper_index import imports_a_wrapper
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import settings_for, write_package
from tests.test_ql102_imported_wrappers import GRAPH_UTILS

PLAIN = "def insert_op(graph, op, args):\n    return None\n"


def _check(path, text: str):
    path = str(path)
    with open(path, "w") as fh:
        fh.write(text)
    project = ProjectIndex()
    project.begin_check()
    triggered = imports_a_wrapper(text, path, project)
    result = check_source(text, path, settings_for(("QL102",)), ProjectIndex())
    assert not result.errors, result.errors
    return triggered, [d.code for d in result.diagnostics], result


def _passes(imports: str, body: str) -> str:
    return f"import functools\n\nimport torch\n{imports}\n\n\ndef rewrite(gm, node):\n    {body}\n"


def test_wrapper_used_only_through_partial_triggers(tmp_path):
    pkg = write_package(tmp_path, "pkg", graph_utils=GRAPH_UTILS)
    body = "relu = functools.partial(\n        insert_op, gm.graph, torch.ops.aten.relu)\n    relu((node,))"
    triggered, codes, _ = _check(pkg / "passes.py", _passes("from pkg.graph_utils import insert_op", body))
    assert triggered and codes == ["QL102"]


def test_wrapper_imported_but_never_called_is_not_asked_about(tmp_path):
    # Only stored (a table of handlers): no call of the name inserts anything here.
    pkg = write_package(tmp_path, "pkg", graph_utils=GRAPH_UTILS)
    body = "HANDLERS = [insert_op]\n    return HANDLERS"
    triggered, codes, result = _check(pkg / "passes.py", _passes("from pkg.graph_utils import insert_op", body))
    assert not triggered and codes == [] and not result.parsed


def test_aliased_wrapper_is_asked_about_under_its_local_name(tmp_path):
    pkg = write_package(tmp_path, "pkg", graph_utils=GRAPH_UTILS)
    imports = "from pkg.graph_utils import insert_op as add"
    triggered, codes, _ = _check(pkg / "passes.py", _passes(imports, "add(gm.graph, torch.ops.aten.relu, (node,))"))
    assert triggered and codes == ["QL102"]
    # The original name spelled as a call in a string calls nothing: the alias is not called.
    body = 'return "insert_op(gm.graph, op)", add'
    triggered, codes, result = _check(pkg / "other.py", _passes(imports, body))
    assert not triggered and codes == [] and not result.parsed


def test_re_exported_wrapper_triggers(tmp_path):
    pkg = write_package(tmp_path, "pkg", graph_utils=GRAPH_UTILS)
    (pkg / "__init__.py").write_text("from .graph_utils import insert_op as add_node\n")
    text = _passes("from pkg import add_node", "add_node(gm.graph, torch.ops.aten.relu, (node,))")
    triggered, codes, _ = _check(pkg / "passes.py", text)
    assert triggered and codes == ["QL102"]


def test_wrapper_module_shared_by_two_import_roots_is_read_once(tmp_path):
    # `tools/` and `scripts/` (no `__init__.py`) are import roots of their own; both find
    # `pkg.graph_utils` at the top of the project: one answer, kept under that file.
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    write_package(tmp_path, "pkg", graph_utils=GRAPH_UTILS)
    text = _passes("from pkg.graph_utils import insert_op", "insert_op(gm.graph, torch.ops.aten.relu, (node,))")
    utils = os.path.realpath(tmp_path / "pkg" / "graph_utils.py")
    for root in ("tools", "scripts"):
        (tmp_path / root).mkdir()
        triggered, codes, _ = _check(tmp_path / root / "passes.py", text)
        assert triggered and codes == ["QL102"]
    (shared,) = [v for k, v in IMPORTED.items() if k[:2] == (utils, "insert_op")]
    roots = {os.path.realpath(tmp_path / root) for root in ("tools", "scripts")}
    rooted = [v for k, v in IMPORTED.items() if k[0] == "pkg.graph_utils.insert_op" and k[1] in roots]
    # Worked out once: each root's entry is the file's answer (its trail, then the root's own
    # lookup of the module, which it holds only while that finds the same file), not one of its own.
    assert shared[0] is True and len(rooted) == 2
    assert all(v[0] is True and v[1][: len(shared[1])] == shared[1] for v in rooted)


def test_same_module_name_in_two_import_roots_keeps_two_answers(tmp_path):
    # Each root has its own `utils`: a wrapper in one, a plain function in the other.
    text = _passes("from utils import insert_op", "insert_op(gm.graph, torch.ops.aten.relu, (node,))")
    found = {}
    for root, utils in (("one", GRAPH_UTILS), ("two", PLAIN), ("three", GRAPH_UTILS)):
        (tmp_path / root).mkdir()
        (tmp_path / root / "utils.py").write_text(utils)
        found[root] = _check(tmp_path / root / "passes.py", text)[:2]
    assert found == {"one": (True, ["QL102"]), "two": (False, []), "three": (True, ["QL102"])}


def test_class_constructed_from_an_inserting_module_is_a_link(tmp_path):
    # `Rewriter().insert(...)` calls the class's wrapper method on an instance it builds (a
    # class as a link of the chain): the trigger keeps the file and the check reports it.
    pkg = write_package(tmp_path, "pkg", graph_utils=GRAPH_UTILS)
    body = "return Rewriter().insert(gm.graph, torch.ops.aten.relu, ())"
    triggered, codes, _ = _check(pkg / "passes.py", _passes("from pkg.graph_utils import Rewriter", body))
    assert triggered and codes == ["QL102"]
    # The class built, but none of its wrapper methods called: the file is not parsed.
    body = "return Rewriter().run(gm.graph, torch.ops.aten.relu, ())"
    triggered, codes, result = _check(pkg / "other.py", _passes("from pkg.graph_utils import Rewriter", body))
    assert not triggered and codes == [] and not result.parsed


def test_function_defined_beside_a_class_of_the_module_is_still_a_wrapper(tmp_path):
    utils = GRAPH_UTILS.replace("def insert_op", "class Options:\n    pass\n\n\nasync def insert_op")
    pkg = write_package(tmp_path, "pkg", graph_utils=utils)
    text = _passes("from pkg.graph_utils import insert_op", "insert_op(gm.graph, torch.ops.aten.relu, (node,))")
    triggered, codes, _ = _check(pkg / "passes.py", text)
    assert triggered and codes == ["QL102"]
