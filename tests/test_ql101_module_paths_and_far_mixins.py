"""QL101 through a helper's module bound by a plain import, through TestCase mixins whose own
module names their base through its module, and through mixins three and four modules away
(issue 14, items 6 and 12; stop 67's "not followed" list).

- `import pkg.checks`, then `pkg.checks.assert_nodes(case, gm, {torch.ops.aten.relu: 1})` in a
  module holding none of the rule's trigger texts: `import pkg.checks` binds `pkg`, whose stem
  no helper's module has; the stems are asked of the import's whole dotted name
  (`text_imports.plain_dotted_imports`, `helper_modules.imports_helper_module`).
- `class D1(node_checks.NodeChecks)` (or `pkg.dm1.D1` after `import pkg.dm1`) in a mixin's
  module: the search followed a mixin's base into another module only where it was imported
  by name (`wrapper_chains._mixed_in_by`), and the index read only the modules importing the
  base by name. The index now also reads the modules whose import words spell the mixin's
  module (`mixin_sinks.importing_mixin_modules`) where they spell the mixin, and the search
  follows such a base where the index would read it (`mixin_sinks.imports_as_module`).
- `class Far3Checks(FarChecks)` three modules from the one calling the sink, and a mixin four
  away whose own method calls the inherited helper: `MIXIN_ROUNDS` rounds (2 before) to a
  fixpoint, bounded by the depth the search resolves a class's bases to.

Real qlint processes sharing one `--cache-dir` (`test_chain_depth_paths._every_path`): a
whole-tree run, then each test module as `qlint check FILE` (cached and not) and as an
editor's buffer (cached and not), every answer the fresh tree run's."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qlint.analysis.graphs import helper_lookup, mixin_sinks
from qlint.analysis.graphs.import_words import import_words
from qlint.analysis.names.text_imports import plain_dotted_imports
from tests.test_chain_depth_paths import _every_path, _write, cached_project
from tests.test_chain_depth_paths import ql101_rows as _found
from tests.test_ql101_through_modules import CASE, CHECKS_MORE, FAR
from tests.test_ql101_untriggered_and_mixins import MIXINS, RELU, _method, _test_class

# A module holding a mixin alone (no function at its level): the index reads the modules
# importing it for a name of it only through the mixin's own name.
NODE_CHECKS = """\
class NodeChecks:
    def assert_order(self, gm, nodes):
        self.checkGraphModuleNodes(gm, expected_node_list=nodes)
"""
OWN_METHOD = "    def check_ops(self, gm, ops):\n        self.assert_order(gm, ops)\n"


def _mixin(imports: str, name: str, base: str, body: str = "    pass\n") -> str:
    return f"{imports}\n\n\nclass {name}({base}):\n{body}"


MODULES = {
    "checks": CHECKS_MORE,
    "mixins": MIXINS,
    "far": FAR,
    "case": CASE,
    "node_checks": NODE_CHECKS,
    # Bases named through their module: a from-import of it, a plain import, an alias, a
    # relative import.
    "dm1": _mixin("from pkg import node_checks", "D1", "node_checks.NodeChecks"),
    "dm2": _mixin("import pkg.dm1", "D2", "pkg.dm1.D1"),
    "dm_own": _mixin("import pkg.node_checks as nc", "OwnChecks", "nc.NodeChecks", OWN_METHOD),
    "dm_rel": _mixin("from . import node_checks", "R", "node_checks.NodeChecks"),
    # Three and four modules from `checks` (far -> mixins -> checks).
    "far3": _mixin("from pkg.far import FarChecks", "Far3Checks", "FarChecks"),
    "far4": _mixin("from pkg import far3", "Far4Checks", "far3.Far3Checks", OWN_METHOD),
    # Look-alikes: the module's name bound again, to a module with no such class; a mixin
    # handing its method a copy.
    "broken": _mixin(
        "from pkg import node_checks\nfrom pkg import m0 as node_checks", "Broken", "node_checks.NodeChecks"
    ),
    # The module reached through its package (`import pkg`, then `pkg.node_checks.NodeChecks`):
    # an import the index cannot tell from its words, followed by neither.
    "dm_package": _mixin("import pkg", "P", "pkg.node_checks.NodeChecks"),
    "dm_copy": _mixin(
        "from pkg import node_checks",
        "CopyD",
        "node_checks.NodeChecks",
        OWN_METHOD.replace("(gm, ops)\n", '(gm, [getattr(op, "default", op) for op in ops])\n'),
    ),
}


def _function(imports: str, call: str) -> str:
    return f"import torch\n\n{imports}\n\n\ndef test_relu(case, gm):\n    {call}\n"


def _inherits(imports: str, base: str, call: str = "assert_order") -> str:
    return _test_class(imports, f"{base}, unittest.TestCase", _method(f"self.{call}(self.gm, [{RELU}])"))


USERS = {
    "t_plain_import": _function("import pkg.checks", f"pkg.checks.assert_nodes(case, gm, {{{RELU}: 1}})"),
    "t_plain_keyword": _function("import pkg.checks", f"pkg.checks.assert_nodes(case, gm, occ={{{RELU}: 2}})"),
    "t_plain_mixin": _inherits("import pkg.mixins", "pkg.mixins.MoreChecks"),
    "t_module_base": _inherits("from pkg.dm1 import D1", "D1"),
    "t_plain_base_chain": _inherits("from pkg.dm2 import D2", "D2"),
    "t_alias_own": _inherits("from pkg.dm_own import OwnChecks", "OwnChecks", "check_ops"),
    "t_relative": _inherits("from pkg.dm_rel import R", "R"),
    "t_far3": _inherits("from pkg.far3 import Far3Checks", "Far3Checks"),
    "t_plain_far3": _inherits("import pkg.far3", "pkg.far3.Far3Checks"),
    "t_far4_own": _inherits("from pkg.far4 import Far4Checks", "Far4Checks", "check_ops"),
}
LOUD = [
    ("pkg/t_alias_own.py", 10),
    ("pkg/t_far3.py", 10),
    ("pkg/t_far4_own.py", 10),
    ("pkg/t_module_base.py", 10),
    ("pkg/t_plain_base_chain.py", 10),
    ("pkg/t_plain_far3.py", 10),
    ("pkg/t_plain_import.py", 7),
    ("pkg/t_plain_keyword.py", 7),
    ("pkg/t_plain_mixin.py", 10),
    ("pkg/t_relative.py", 10),
]

QUIET = {
    "q_overload": _function("import pkg.checks", f"pkg.checks.assert_nodes(case, gm, {{{RELU}.default: 1}})"),
    # `pkg` bound again, to a module with no `checks`, before the call.
    "q_rebound": _function(
        "import pkg.checks\nimport pkg.m0 as pkg", f"pkg.checks.assert_nodes(case, gm, {{{RELU}: 1}})"
    ),
    "q_parameter": "import torch\n\nimport pkg.checks\n\n\n"
    f"def test_relu(pkg, case, gm):\n    pkg.checks.assert_nodes(case, gm, {{{RELU}: 1}})\n",
    # An installed library's module with the stem of a project module holding a helper.
    "q_library": _function("import unittest.case", f"unittest.case.assert_nodes(None, None, {{{RELU}: 1}})"),
    "q_not_the_helper": _function("import pkg.checks", f"pkg.checks.describe(gm, {{{RELU}: 1}})"),
    "q_copies": _function("import pkg.checks", f"pkg.checks.assert_copied(case, gm, {{{RELU}: 1}})"),
    "q_string": "import pkg.checks\n\n\n"
    f'def test_relu(case, gm):\n    pkg.checks.assert_nodes(case, gm, {{"{RELU}": 1}})\n',
    "q_broken": _inherits("from pkg.broken import Broken", "Broken"),
    "q_mixin_copies": _inherits("from pkg.dm_copy import CopyD", "CopyD", "check_ops"),
    "q_plain_broken": _inherits("import pkg.broken", "pkg.broken.Broken"),
    "q_through_package": _inherits("from pkg.dm_package import P", "P"),
}


@pytest.fixture
def repo(tmp_path) -> Path:
    repo, found = cached_project(tmp_path, **MODULES, **USERS, **QUIET)
    assert _found(found) == LOUD
    return repo


def test_plain_imports_module_bases_and_far_mixins_are_checked_on_every_path(repo):
    assert _found(_every_path(repo, *USERS, buffer_alone=True)) == LOUD


def test_the_look_alikes_stay_quiet_on_every_path(repo):
    assert _found(_every_path(repo, *QUIET, buffer_alone=True)) == LOUD


def test_an_edit_that_stops_the_module_named_base_calling_the_sink_is_seen_on_every_path(repo):
    sink = "self.checkGraphModuleNodes(gm, expected_node_list=nodes)"
    _write(repo, node_checks=NODE_CHECKS.replace(sink, "print(nodes)"))
    gone = {"pkg/t_module_base.py", "pkg/t_plain_base_chain.py", "pkg/t_alias_own.py", "pkg/t_relative.py"}
    found = _every_path(repo, "t_module_base", "t_plain_base_chain", "t_alias_own", "t_relative")
    assert _found(found) == [row for row in LOUD if row[0] not in gone]


def test_an_edit_that_names_the_base_through_another_module_is_seen_on_every_path(repo):
    # dm1's base now names a module with no such class: D1, and D2 after it, lead nowhere.
    _write(repo, dm1=MODULES["dm1"].replace("from pkg import node_checks", "from pkg import m1 as node_checks"))
    found = _every_path(repo, "t_module_base", "t_plain_base_chain")
    gone = {"pkg/t_module_base.py", "pkg/t_plain_base_chain.py"}
    assert _found(found) == [row for row in LOUD if row[0] not in gone]


def test_the_mixins_far_away_are_bounded_by_the_depth_the_search_resolves_bases_to():
    assert mixin_sinks.MIXIN_ROUNDS == helper_lookup.MAX_DEPTH


def test_plain_dotted_imports():
    text = "import os\nimport pkg.checks, a.b.c as abc\nimport x.y  # why\nfrom pkg import mixins\n"
    assert plain_dotted_imports(text) == [("pkg", "pkg.checks"), ("x", "x.y")]


def _package(root: Path, *dirs: str) -> None:
    for d in dirs:
        (root / d).mkdir(parents=True, exist_ok=True)
        (root / d / "__init__.py").write_text("")


def test_a_module_is_imported_as_a_module_where_its_stem_and_package_names_are_spelled(tmp_path):
    _package(tmp_path, "top", "top/testing", "top/testing/pt2e", "top/quant", "top/quant/pt2e", "top/quant/pt2e/sub")
    mixin = str(tmp_path / "top/testing/pt2e/utils.py")

    def imports(where: str, statement: str) -> bool:
        return mixin_sinks.imports_as_module(str(tmp_path / where), import_words(statement.encode()), mixin)

    assert imports("top/x.py", "from top.testing.pt2e import utils")
    assert imports("elsewhere/x.py", "from testing.pt2e import utils")  # the top package's name not asked
    assert imports("top/testing/other/x.py", "from ..pt2e import utils")
    assert imports("top/testing/pt2e/x.py", "from . import utils")
    assert not imports("top/quant/pt2e/x.py", "from top.quant.pt2e.utils import f")  # another `pt2e`
    assert not imports("top/quant/pt2e/sub/x.py", "from .. import utils")
    assert not imports("top/x.py", "from top.testing import pt2e")  # then `pt2e.utils.Mixin`: not looked for
    # A module of no package: its stem alone.
    loose = str(tmp_path / "loose/checks.py")
    assert mixin_sinks.imports_as_module(str(tmp_path / "any/x.py"), import_words(b"import checks"), loose)
    rows = [import_words(b"from top.testing.pt2e import utils"), import_words(b"from top.quant.pt2e import utils")]
    paths = [str(tmp_path / "top/a.py"), str(tmp_path / "top/b.py")]
    assert mixin_sinks.importing_mixin_modules(paths, rows, [mixin]) == {0}
    assert os.path.isfile(tmp_path / "top/testing/pt2e/__init__.py")
