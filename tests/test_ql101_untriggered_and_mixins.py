"""QL101 in test modules that hold none of its trigger texts, and through TestCase mixins of
other modules (issue 14, items 6 and 12).

- A module that only calls `assert_nodes(case, gm, {torch.ops.aten.relu: 1})`, a helper of
  another module forwarding the dict to `checkGraphModuleNodes`, writes no `.target` and names
  no sink: the import trigger turned it away on `mentions` before asking about its imports.
  Now a helper it imports by name is looked for (`sinks._untriggered`).
- `class TestOps(OpChecks, unittest.TestCase)` where `OpChecks` (a module naming no sink)
  subclasses `NodeChecks` (one calling `self.checkGraphModuleNodes`) and its `check_ops` calls
  the inherited `self.assert_order(...)`; or where the mixin (`MoreChecks`) only inherits the
  method the test calls. The helper search and the index did not follow a base class into
  another module (`wrapper_chains._links_of`, `wrapper_candidates.candidates`).

Real qlint processes sharing one `--cache-dir` (`test_chain_depth_paths._every_path`): a
whole-tree run, then each test module as `qlint check FILE` (cached and not) and as an
editor's buffer (cached and not), every answer the fresh tree run's."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_chain_depth_paths import _every_path, _write, cached_project
from tests.test_chain_depth_paths import ql101_rows as _found
from tests.test_sink_helper_chains import CHECKS

MIXINS = """\
from pkg.checks import NodeChecks


class OpChecks(NodeChecks):
    def check_ops(self, gm, ops):
        self.assert_order(gm, ops)


class MoreChecks(NodeChecks):
    pass


class CopyChecks(NodeChecks):
    def check_ops(self, gm, ops):
        self.assert_order(gm, [getattr(op, "default", op) for op in ops])


class LoopChecks(NodeChecks):
    def check_ops(self, gm, ops):
        for op in ops:
            self.assertIn(op, gm.ops)
        self.assert_order(gm, None)
"""
# A pass base class naming a sink on another receiver: its subclasses' modules are not read
# for it (`mixin_sinks.calls_sink_on_self`), nor do they need to be to stay quiet.
FINDERS = """\
class Finder:
    def find(self, gm, op):
        return gm.graph.find_nodes(op="call_function", target=op)
"""
# A mixin whose base comes from an installed library (unittest): no helper of the project.
LIB_MIXINS = """\
import unittest


class LibChecks(unittest.TestCase):
    def check_ops(self, gm, ops):
        self.assertEqual(gm.ops, ops)
"""
RELU = "torch.ops.aten.relu"


def _test_class(imports: str, bases: str, body: str) -> str:
    return f"import unittest\n\nimport torch\n\n{imports}\n\n\nclass TestOps({bases}):\n{body}"


def _method(call: str) -> str:
    return f"    def test_relu(self):\n        {call}\n"


USERS = {
    # No trigger text: a function of a module naming the sink, positionally and by keyword.
    "t_plain": (
        "import torch\n\nfrom pkg.checks import assert_nodes\n\n\n"
        f"def test_relu(case, gm):\n    assert_nodes(case, gm, {{{RELU}: 1}})\n\n\n"
        f"def test_relu_by_keyword(case, gm):\n    assert_nodes(case, gm, occ={{{RELU}: 2}})\n"
    ),
    # The mixin's own method calls the base's helper method.
    "t_own": _test_class(
        "from pkg.mixins import OpChecks", "OpChecks, unittest.TestCase", _method(f"self.check_ops(self.gm, [{RELU}])")
    ),
    # The mixin only inherits the method the test calls.
    "t_inherited": _test_class(
        "from pkg.mixins import MoreChecks",
        "MoreChecks, unittest.TestCase",
        _method(f"self.assert_order(self.gm, [{RELU}])"),
    ),
}
LOUD = [("pkg/t_inherited.py", 10), ("pkg/t_own.py", 10), ("pkg/t_plain.py", 7), ("pkg/t_plain.py", 11)]

QUIET = {
    "q_overload": "import torch\n\nfrom pkg.checks import assert_nodes\n\n\n"
    f"def test_relu(case, gm):\n    assert_nodes(case, gm, {{{RELU}.default: 1}})\n",
    "q_copies": _test_class(
        "from pkg.mixins import CopyChecks",
        "CopyChecks, unittest.TestCase",
        _method(f"self.check_ops(self.gm, [{RELU}])"),
    ),
    "q_loops": _test_class(
        "from pkg.mixins import LoopChecks",
        "LoopChecks, unittest.TestCase",
        _method(f"self.check_ops(self.gm, [{RELU}])"),
    ),
    # The test class defines the method the mixin's would be: its own runs.
    "q_overrides": _test_class(
        "from pkg.mixins import OpChecks",
        "OpChecks, unittest.TestCase",
        "    def check_ops(self, gm, ops):\n        print(gm, ops)\n\n" + _method(f"self.check_ops(self.gm, [{RELU}])"),
    ),
    "q_library": _test_class(
        "from pkg.lib_mixins import LibChecks", "LibChecks", _method(f"self.check_ops(self.gm, [{RELU}])")
    ),
    # Imports that reach no sink helper: a plain function, and the pass base's method is
    # called on an instance (`Forwarding.instances` is off for QL101).
    "q_no_helper": "import torch\n\nfrom pkg.finders import Finder\nfrom pkg.m0 import f0\n\n\n"
    f"def test_relu(gm):\n    f0({{{RELU}: 1}})\n    Finder().find(gm, {RELU})\n",
    # The packet only in a string: nothing a matcher compares.
    "q_string": "from pkg.checks import assert_nodes\n\n\n"
    f'def test_relu(case, gm):\n    assert_nodes(case, gm, {{"{RELU}": 1}})\n',
}


@pytest.fixture
def repo(tmp_path) -> Path:
    modules = {"checks": CHECKS, "mixins": MIXINS, "finders": FINDERS, "lib_mixins": LIB_MIXINS}
    repo, found = cached_project(tmp_path, **modules, **USERS, **QUIET)
    assert _found(found) == LOUD
    return repo


def test_modules_without_trigger_text_and_mixins_are_checked_on_every_path(repo):
    assert _found(_every_path(repo, *USERS, buffer_alone=True)) == LOUD


def test_the_look_alikes_stay_quiet_on_every_path(repo):
    assert _found(_every_path(repo, *QUIET, buffer_alone=True)) == LOUD


def test_an_edit_that_stops_the_base_calling_the_sink_is_seen_on_every_path(repo):
    # The base class's method prints what it is given: no mixin reaches a sink any more.
    _write(repo, checks=CHECKS.replace("self.checkGraphModuleNodes(gm, expected_node_list=nodes)", "print(nodes)"))
    assert _found(_every_path(repo, "t_own", "t_inherited")) == [("pkg/t_plain.py", 7), ("pkg/t_plain.py", 11)]


def test_an_edit_that_makes_a_module_without_trigger_text_call_a_helper_is_seen(repo):
    # q_no_helper's function starts handing its dict to the sink helper.
    _write(repo, m0="from pkg.checks import assert_nodes\n\n\ndef f0(occ):\n    assert_nodes(None, None, occ)\n")
    assert _found(_every_path(repo, "q_no_helper")) == sorted([*LOUD, ("pkg/q_no_helper.py", 8)])
