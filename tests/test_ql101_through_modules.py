"""QL101 in test modules holding none of its trigger texts that reach a sink helper through a
module they import, or a TestCase mixin two modules away (issue 14, items 6 and 12).

- `from pkg import checks` (or `import pkg.checks as checks`), then `checks.assert_nodes(case,
  gm, {torch.ops.aten.relu: 1})`, or `class TestOps(mixins.MoreChecks, unittest.TestCase)`:
  stop 66 checked such a module only when it called a helper, or subclassed a mixin, by the
  name it imported. The index now keeps the stems of the modules defining helpers
  (`sink_index.helper_module_stems`), and an import ending in one sends the module on to the
  helper search (`helper_modules`, `sinks._through_modules`).
- `class TestOps(FarChecks, unittest.TestCase)` where `FarChecks(MoreChecks)` and
  `MoreChecks(NodeChecks)` are each of another module, `NodeChecks` calling the sink on `self`:
  the index read the subclasses' modules one round down, the search one base down
  (`mixin_sinks.MIXIN_ROUNDS`, `wrapper_candidates.candidates`, `wrapper_chains._mixed_in_by`).

Real qlint processes sharing one `--cache-dir` (`test_chain_depth_paths._every_path`): a
whole-tree run, then each test module as `qlint check FILE` (cached and not) and as an
editor's buffer (cached and not), every answer the fresh tree run's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_chain_depth_paths import _every_path, _write, cached_project
from tests.test_chain_depth_paths import ql101_rows as _found
from tests.test_ql101_untriggered_and_mixins import CHECKS, MIXINS, RELU, _method, _test_class

CHECKS_MORE = (
    CHECKS
    + """

def describe(gm, occ):
    print(gm, occ)


def assert_copied(case, gm, occ):
    case.checkGraphModuleNodes(gm, expected_node_occurrence={getattr(k, "default", k): v for k, v in occ.items()})
"""
)
# Two modules away from `checks`: FarChecks(MoreChecks), MoreChecks(NodeChecks).
FAR = """\
from pkg.mixins import CopyChecks, MoreChecks


class FarChecks(MoreChecks):
    pass


class FarCopyChecks(CopyChecks):
    pass
"""
# An installed library's module with the stem of a project module holding a helper
# (`pkg/case.py`): its attributes are none of the project's.
CASE = "def assert_nodes(case, gm, occ):\n    case.checkGraphModuleNodes(gm, expected_node_occurrence=occ)\n"


def _function(imports: str, call: str) -> str:
    return f"import torch\n\n{imports}\n\n\ndef test_relu(case, gm):\n    {call}\n"


USERS = {
    "t_from_module": _function("from pkg import checks", f"checks.assert_nodes(case, gm, {{{RELU}: 1}})"),
    "t_module_alias": _function("import pkg.checks as chk", f"chk.assert_nodes(case, gm, occ={{{RELU}: 2}})"),
    "t_mixin_module": _test_class(
        "from pkg import mixins",
        "mixins.MoreChecks, unittest.TestCase",
        _method(f"self.assert_order(self.gm, [{RELU}])"),
    ),
    "t_mixin_own_method": _test_class(
        "import pkg.mixins as mx", "mx.OpChecks, unittest.TestCase", _method(f"self.check_ops(self.gm, [{RELU}])")
    ),
    "t_far": _test_class(
        "from pkg.far import FarChecks",
        "FarChecks, unittest.TestCase",
        _method(f"self.assert_order(self.gm, [{RELU}])"),
    ),
}
LOUD = [
    ("pkg/t_far.py", 10),
    ("pkg/t_from_module.py", 7),
    ("pkg/t_mixin_module.py", 10),
    ("pkg/t_mixin_own_method.py", 10),
    ("pkg/t_module_alias.py", 7),
]

QUIET = {
    "q_overload": _function("from pkg import checks", f"checks.assert_nodes(case, gm, {{{RELU}.default: 1}})"),
    # The name is bound again, to something else, before the call.
    "q_rebound": _function(
        "from pkg import checks\nfrom pkg.m0 import f0 as checks", f"checks.assert_nodes(case, gm, {{{RELU}: 1}})"
    ),
    "q_parameter": "import torch\n\nfrom pkg import checks\n\n\n"
    f"def test_relu(checks, case, gm):\n    checks.assert_nodes(case, gm, {{{RELU}: 1}})\n",
    "q_library": _function("from unittest import case", f"case.assert_nodes(case, None, {{{RELU}: 1}})"),
    "q_not_the_helper": _function("from pkg import checks", f"checks.describe(gm, {{{RELU}: 1}})"),
    "q_copies": _function("from pkg import checks", f"checks.assert_copied(case, gm, {{{RELU}: 1}})"),
    "q_far_copies": _test_class(
        "from pkg.far import FarCopyChecks",
        "FarCopyChecks, unittest.TestCase",
        _method(f"self.check_ops(self.gm, [{RELU}])"),
    ),
    "q_string": "from pkg import checks\n\n\n"
    f'def test_relu(case, gm):\n    checks.assert_nodes(case, gm, {{"{RELU}": 1}})\n',
}


@pytest.fixture
def repo(tmp_path) -> Path:
    modules = {"checks": CHECKS_MORE, "mixins": MIXINS, "far": FAR, "case": CASE}
    repo, found = cached_project(tmp_path, **modules, **USERS, **QUIET)
    assert _found(found) == LOUD
    return repo


def test_helpers_reached_through_their_modules_and_far_mixins_are_checked_on_every_path(repo):
    assert _found(_every_path(repo, *USERS, buffer_alone=True)) == LOUD


def test_the_look_alikes_stay_quiet_on_every_path(repo):
    assert _found(_every_path(repo, *QUIET, buffer_alone=True)) == LOUD


def test_an_edit_that_stops_the_base_calling_the_sink_is_seen_on_every_path(repo):
    _write(repo, checks=CHECKS_MORE.replace("self.checkGraphModuleNodes(gm, expected_node_list=nodes)", "print(nodes)"))
    found = _every_path(repo, "t_far", "t_mixin_module", "t_from_module")
    assert _found(found) == [("pkg/t_from_module.py", 7), ("pkg/t_module_alias.py", 7)]


def test_an_edit_that_makes_the_attribute_called_a_helper_is_seen_on_every_path(repo):
    _write(repo, checks=CHECKS_MORE.replace("print(gm, occ)", "assert_nodes(None, gm, occ)"))
    assert _found(_every_path(repo, "q_not_the_helper")) == sorted([*LOUD, ("pkg/q_not_the_helper.py", 7)])


def test_an_edit_that_moves_the_helper_to_another_module_is_seen_on_every_path(repo):
    # The index's names stay; the module defining the helper is another one.
    _write(repo, checks="from pkg.case import assert_nodes\n", far=None, mixins=None)
    found = _every_path(repo, "t_from_module", "t_module_alias")
    assert _found(found) == [("pkg/t_from_module.py", 7), ("pkg/t_module_alias.py", 7)]
