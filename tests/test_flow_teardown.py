"""A check's model-flow objects are freed when the check ends, not by the cyclic collector:
the interpreter owns its call semantics (which own the builds, callback and result trackers),
and the checked module's analysis owns the memo that holds the other modules' analyses. Parts
refer back to their owner weakly, so no cycle keeps a check's trees and flows alive."""

from __future__ import annotations

import gc

from qlint.analysis.names import set_asides
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.scope import KEPT_FLOWS
from tests.test_mode_free_helper_arguments import NET
from tests.test_shared_flows import HEAD, SCRIPT, _library, _repo, _rows


def _cyclic_garbage_of(check) -> int:
    gc.collect()
    gc.disable()
    try:
        check()
        return gc.collect()
    finally:
        gc.enable()


def test_a_check_that_follows_helpers_across_modules_leaves_no_cycles(tmp_path):
    # scripts/a.py -> lib.helpers (build) -> lib.nets (Net): two other modules' analyses.
    root = _library(tmp_path, a=SCRIPT, c=HEAD)
    project = ProjectIndex()
    # Once per repository (not per check): its package map, built by a recursive closure.
    assert _rows(root, "scripts/c.py", project) == []
    rows: list[list[int]] = []
    assert _cyclic_garbage_of(lambda: rows.append(_rows(root, "scripts/a.py", project))) == 0
    assert rows == [[9]]  # the helper was followed: the finding still comes through it


def test_a_second_check_reusing_kept_helper_flows_leaves_no_cycles(tmp_path):
    root = _library(tmp_path, a=SCRIPT, b=SCRIPT)
    project = ProjectIndex()
    assert _rows(root, "scripts/a.py", project) == [9]
    rows: list[list[int]] = []
    assert _cyclic_garbage_of(lambda: rows.append(_rows(root, "scripts/b.py", project))) == 0
    assert rows == [[9]]


def _dropped_garbage(drop) -> int:
    """The objects the cyclic collector frees after `drop()` lets the index's entries go."""
    gc.collect()
    gc.disable()
    try:
        drop()
        return gc.collect()
    finally:
        gc.enable()


def test_an_edited_module_s_kept_flows_go_with_its_old_scope(tmp_path):
    # The helper's flow is kept on lib/helpers.py's scope and refers back to it (its resolver).
    root = _library(tmp_path, a=SCRIPT)
    project = ProjectIndex()
    assert _rows(root, "scripts/a.py", project) == [9]
    helpers = str(root / "lib" / "helpers.py")
    old = project.scope_at(helpers)
    assert old.__dict__.get(KEPT_FLOWS)  # something to let go
    edited = (root / "lib" / "helpers.py").read_text() + "\n"
    assert _dropped_garbage(lambda: project.update(helpers, edited)) == 0
    assert KEPT_FLOWS not in old.__dict__
    assert _rows(root, "scripts/a.py", project) == [9]  # analysed again, as a new scope is


def _set_aside_garbage(project: ProjectIndex) -> int:
    """`_dropped_garbage` of enough checks that use no module for the index to set them aside."""

    def unused_for_a_while():
        for _ in range(set_asides.UNUSED_CHECKS + set_asides.EVERY):
            project.begin_check()

    return _dropped_garbage(unused_for_a_while)


def test_a_set_aside_module_s_kept_flows_go_with_its_scope(tmp_path):
    root = _library(tmp_path, a=SCRIPT)
    project = ProjectIndex(track_dependents=False)
    assert _rows(root, "scripts/a.py", project) == [9]
    helpers = str(root / "lib" / "helpers.py")
    assert project.entries[helpers][1].__dict__.get(KEPT_FLOWS)

    assert _set_aside_garbage(project) == 0
    assert helpers not in project.entries
    assert _rows(root, "scripts/a.py", project) == [9]


# `held_slots`: each call binds the container `make_block` (of another module) builds around
# its parameter to what it passes, and keeps the modes it was handed back in; only
# `make_block(Net())` is reported.
BLOCKS = """\
from torch import nn


def make_block(m):
    return nn.Sequential(m, nn.Linear(3, 3))
"""
SLOTS = (
    """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from lib.blocks import make_block


"""
    + NET
    + """

def run(q, x):
    for model in (make_block(Net().eval()), make_block(nn.ReLU()), make_block(Net())):
        prepare_pt2e(torch.export.export(model, (x,)).module(), q)
"""
)


def test_a_set_aside_helper_s_bound_containers_go_with_its_scope(tmp_path):
    root = _repo(tmp_path, {"lib/__init__.py": "", "lib/blocks.py": BLOCKS, "scripts/a.py": SLOTS})
    project = ProjectIndex(track_dependents=False)
    assert _rows(root, "scripts/a.py", project) == [19]
    blocks = str(root / "lib" / "blocks.py")
    assert project.entries[blocks][1].__dict__.get(KEPT_FLOWS)

    assert _set_aside_garbage(project) == 0
    assert blocks not in project.entries
