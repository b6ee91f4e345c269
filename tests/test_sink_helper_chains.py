"""QL101 through sink-helper chains of two or more modules that name no sink (issue 14 item 12):
`test.py` -> `link_a.check_ops(case, gm, occ)` -> `link_b.check_nodes(case, gm, occ)` ->
`checks.assert_nodes(case, gm, occ)`, whose `case.checkGraphModuleNodes(gm,
expected_node_occurrence=occ)` compares the dict's keys with node targets. Before, the chain's
last step (`forwarding_texts.module_wrappers`) read only insertion wrappers (QL102's kind) in the
module naming the sink, and QL101's search stopped one module deep on every path.

Real qlint processes sharing one `--cache-dir` (`test_chain_depth_paths`): a whole-tree run,
then each test module as `qlint check FILE` (cached and not) and as an editor's buffer, every
answer the fresh tree run's. Each test module writes `case.target_dtype` (one of QL101's trigger
texts: a module holding none is never checked, see rules/QL101.md)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_chain_depth_paths import _every_path, _write, cached_project
from tests.test_chain_depth_paths import ql101_rows as _found

CHECKS = """\
def assert_nodes(case, gm, occ):
    case.checkGraphModuleNodes(gm, expected_node_occurrence=occ)


class NodeChecks:
    def assert_order(self, gm, nodes):
        self.checkGraphModuleNodes(gm, expected_node_list=nodes)
"""
# The end of a chain that names the sink only in a string: it compares nothing.
LOG_CHECKS = 'def assert_nodes(case, gm, occ):\n    print("checkGraphModuleNodes would compare", occ)\n'


def _link(to: str, name: str, called: str, body: str | None = None, keyword: bool = False) -> str:
    """A module naming no sink whose `name(case, gm, occ)` hands `occ` on to `to.called`."""
    passed = "occ=occ" if keyword else "occ"
    body = body or f"{to}.{called}(case, gm, {passed})"
    return f"from pkg import {to}\n\n\ndef {name}(case, gm, occ):\n    {body}\n"


LINKS = {
    # checks <- link_b <- link_a <- link_0 <- link_00, each naming no sink.
    "checks": CHECKS,
    "link_b": _link("checks", "check_nodes", "assert_nodes"),
    "link_a": _link("link_b", "check_ops", "check_nodes", keyword=True),
    "link_0": _link("link_a", "run_checks", "check_ops"),
    "link_00": _link("link_0", "verify", "run_checks"),
    # A TestCase mixin of a module naming no sink, whose method starts a chain.
    "mixins": (
        "from pkg import link_b\n\n\nclass OpChecks:\n"
        "    def check_ops(self, gm, occ):\n        link_b.check_nodes(self, gm, occ)\n"
    ),
    # Look-alikes, each two modules naming no sink deep.
    "copy_b": _link(
        "checks", "check_nodes", "", "checks.assert_nodes(case, gm, {k.default: v for k, v in occ.items()})"
    ),
    "consume_b": _link(
        "checks",
        "check_nodes",
        "",
        "for op, count in occ.items():\n        case.assertGreater(count, 0, str(op))\n"
        "    checks.assert_nodes(case, gm, None)",
    ),
    "rebound_b": _link(
        "checks",
        "check_nodes",
        "",
        "occ = {getattr(k, 'default', k): v for k, v in occ.items()}\n    checks.assert_nodes(case, gm, occ)",
    ),
    "deleted_b": _link("checks", "check_nodes", "", "del occ\n    occ = {}\n    checks.assert_nodes(case, gm, occ)"),
    "log_checks": LOG_CHECKS,
    "log_b": _link("log_checks", "check_nodes", "assert_nodes"),
    # The module-level name the link calls is its own function, defined after the import.
    "shadow_b": (
        "from pkg.checks import assert_nodes\n\n\n"
        "def assert_nodes(case, gm, occ):  # noqa: F811\n    print(gm, occ)\n\n\n"
        "def check_nodes(case, gm, occ):\n    assert_nodes(case, gm, occ)\n"
    ),
    **{f"{k}_a": _link(f"{k}_b", "check_ops", "check_nodes") for k in ("copy", "consume", "rebound", "deleted", "log")},
    "shadow_a": _link("shadow_b", "check_ops", "check_nodes"),
}


def _test_module(imports: str, *calls: str) -> str:
    """A test module calling `calls`, each in a test of its own after the trigger row."""
    tests = "".join(
        f"\n\ndef test_{i}(case, gm):\n    case.target_dtype = torch.int8\n    {call}\n" for i, call in enumerate(calls)
    )
    return f"import torch\n\n{imports}\n{tests}"


RELU = "{torch.ops.aten.relu: 1}"
USERS = {
    # Two modules naming no sink: positional, by keyword, and the overload (quiet).
    "t_two": _test_module(
        "from pkg.link_a import check_ops",
        f"check_ops(case, gm, {RELU})",
        f"check_ops(case, gm, occ={RELU})",
        "check_ops(case, gm, {torch.ops.aten.relu.default: 1})",
    ),
    "t_three": _test_module("from pkg import link_0", f"link_0.run_checks(case, gm, {RELU})"),
    "t_four": _test_module("from pkg.link_00 import verify", f"verify(case, gm, {RELU})"),
    "t_mixin": (
        "import unittest\n\nimport torch\n\nfrom pkg.mixins import OpChecks\n\n\n"
        "class TestOps(OpChecks, unittest.TestCase):\n    def test_relu(self):\n"
        "        self.target_dtype = torch.int8\n"
        f"        self.check_ops(self.gm, {RELU})\n"
    ),
    "t_quiet": _test_module(
        "from pkg import consume_a, copy_a, deleted_a, log_a, rebound_a, shadow_a",
        *(f"{k}_a.check_ops(case, gm, {RELU})" for k in ("copy", "consume", "rebound", "deleted", "log", "shadow")),
    ),
}
# (module, row) of each finding, the same on every path.
LOUD = [("pkg/t_mixin.py", 11), ("pkg/t_three.py", 8), ("pkg/t_two.py", 8), ("pkg/t_two.py", 13)]


@pytest.fixture
def repo(tmp_path) -> Path:
    repo, found = cached_project(tmp_path, **LINKS, **USERS)
    assert _found(found) == LOUD
    return repo


def test_chains_of_two_and_three_modules_naming_no_sink_are_followed_on_every_path(repo):
    assert _found(_every_path(repo, "t_two", "t_three", "t_mixin", buffer_alone=True)) == LOUD


def test_one_module_past_the_limit_and_the_look_alikes_stay_quiet_on_every_path(repo):
    assert _found(_every_path(repo, "t_four", "t_quiet", buffer_alone=True)) == LOUD


def test_the_chain_entered_one_module_further_down_is_followed(repo):
    # t_four's chain, one module shorter (link_0 -> ... -> checks), is within the limit.
    _write(
        repo,
        t_four=USERS["t_four"]
        .replace("link_00 import verify", "link_0 import run_checks")
        .replace("verify(", "run_checks("),
    )
    assert _found(_every_path(repo, "t_four")) == sorted([*LOUD, ("pkg/t_four.py", 8)])


def test_an_edit_that_breaks_the_middle_link_is_seen_on_every_path(repo):
    # link_b stops handing `occ` on: the chains through it report nothing, whatever the cache held.
    _write(repo, link_b=LINKS["link_b"].replace("assert_nodes(case, gm, occ)", "assert_nodes(case, gm, None)"))
    assert _found(_every_path(repo, "t_two", "t_three", "t_mixin")) == []


def test_an_edit_that_makes_the_last_module_a_sink_helper_is_seen_on_every_path(repo):
    # The look-alike's end starts comparing what it is given: the log chain is reported.
    _write(
        repo,
        log_checks=LOG_CHECKS.replace(
            'print("checkGraphModuleNodes would compare", occ)', "case.checkGraphModuleNodes(gm, None, None, occ)"
        ),
    )
    assert _found(_every_path(repo, "t_quiet")) == sorted([*LOUD, ("pkg/t_quiet.py", 28)])
