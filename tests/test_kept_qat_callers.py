"""QL202's answers on each caller module of a helper, kept between runs (`kept_qat_callers`).

As `test_kept_caller_verdicts` does for QL201: each case checks the helper's module in a new
process (every memo forgotten, a new index) with a store, as pre-commit checks one edited
file; an answer is taken while the caller module, every file its reading recorded and the
helper module's text outside the bodies not taken are what they were, and the findings are
always those of a run without the store. `caller_modules.BUILT` counts the caller modules
analysed again.
"""

from __future__ import annotations

import ast

import pytest

from qlint.analysis.context import FileContext
from qlint.analysis.flow import caller_modules
from qlint.analysis.names.project import ProjectIndex
from qlint.optable import load_op_table
from qlint.source import LineIndex
from tests.conftest import kept_store, old_file
from tests.kept_callers_support import (
    HELPER,
    TRAINS,
    callers_repo,
    check_anew,
    check_without_store,
    codes,
    edit,
    new_process,
)

NETS = """\
import torch


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(3)


class Lin(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(3, 3)


def make_net():
    return Net()
"""
# An eval-mode model for PTQ (`is_qat` left False): the QAT branch is ruled out.
PTQ = """\
from pkg.nets import Net
from pkg.utils.qat_utils import quant


def main(q, x):
    quant(Net().eval(), q, x)
"""
# The model comes from another module's function: what it returns is read there.
MADE = """\
from pkg.nets import make_net
from pkg.utils.qat_utils import quant


def main(q, x):
    quant(make_net(), q, x, is_qat=True)
"""


RULES = ("QL202",)


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from kept_store(tmp_path, monkeypatch, new_process)


def _repo(tmp_path, **scripts: str):
    return callers_repo(tmp_path, "qat_utils.py", HELPER, scripts or {"c0": TRAINS, "c1": PTQ}, nets=NETS)


def test_an_edit_of_a_body_no_caller_reads_takes_the_kept_answers(tmp_path, store):
    _, path = _repo(tmp_path)
    assert check_anew(RULES, path, HELPER) == ([], 2)
    edited = edit(HELPER, 'return path + ".pte"', 'return path + ".pte"; edited = 0')
    assert check_anew(RULES, path, edited) == ([], 0)  # no caller module parsed or analysed
    assert check_without_store(RULES, path, edited) == []


def test_a_caller_edited_on_disk_is_read_again(tmp_path, store):
    root, path = _repo(tmp_path)
    assert check_anew(RULES, path, HELPER) == ([], 2)
    old_file(root / "scripts" / "c0.py", edit(TRAINS, "Net()", "Net().eval()"))
    found, analysed = check_anew(RULES, path, HELPER)
    assert codes(found) == ["QL202"] and analysed == 1  # c1 is taken
    assert "c0.py:6 passes it after `Net().eval()`" in found[0][2]
    assert found == check_without_store(RULES, path, HELPER)


def test_another_module_a_caller_reads_edited_on_disk_is_read_again(tmp_path, store):
    root, path = _repo(tmp_path, c0=MADE)
    assert check_anew(RULES, path, HELPER) == ([], 1)
    assert check_anew(RULES, path, HELPER) == ([], 0)
    old_file(root / "pkg" / "nets.py", edit(NETS, "    return Net()", "    return Net().eval()"))
    found, analysed = check_anew(RULES, path, HELPER)
    assert codes(found) == ["QL202"] and analysed == 1
    assert found == check_without_store(RULES, path, HELPER)


def test_an_edit_of_the_helpers_signature_is_read_again(tmp_path, store):
    _, path = _repo(tmp_path)
    assert check_anew(RULES, path, HELPER) == ([], 2)
    # c1's `quant(Net().eval(), q, x)` now takes the QAT branch: a default, outside every body.
    edited = edit(HELPER, "is_qat=False", "is_qat=True")
    found, analysed = check_anew(RULES, path, edited)
    assert codes(found) == ["QL202"] and analysed >= 1
    assert found == check_without_store(RULES, path, edited)
    # c0's answer, kept again with the edited signature, holds for it; c1's is not kept.
    assert check_anew(RULES, path, edited) == (found, 1)


def test_an_edit_of_the_branch_asks_another_question(tmp_path, store):
    _, path = _repo(tmp_path)
    assert check_anew(RULES, path, HELPER) == ([], 2)
    # The QAT branch is now the one c1's flag takes: the answers kept were for `if is_qat:`.
    edited = edit(HELPER, "    if is_qat:\n", "    if not is_qat:\n")
    found, analysed = check_anew(RULES, path, edited)
    assert codes(found) == ["QL202"] and analysed >= 1
    assert found == check_without_store(RULES, path, edited)


def test_a_module_handing_over_an_eval_mode_model_is_not_kept(tmp_path, store):
    # An eval-mode model with nothing mode-dependent is harmless, but judged from what its
    # class holds, read across the project: the module is read again.
    harmless = edit(PTQ, "Net().eval(), q, x)", "Lin().eval(), q, x, is_qat=True)").replace("import Net", "import Lin")
    _, path = _repo(tmp_path, c0=harmless)
    assert check_anew(RULES, path, HELPER) == ([], 1)
    assert check_anew(RULES, path, HELPER) == ([], 1)
    assert check_without_store(RULES, path, HELPER) == []


def test_a_module_a_finding_came_from_is_not_kept(tmp_path, store):
    _, path = _repo(tmp_path, c0=edit(TRAINS, "Net()", "Net().eval()"), c1=PTQ)
    found, analysed = check_anew(RULES, path, HELPER)
    assert codes(found) == ["QL202"] and analysed == 2
    assert check_anew(RULES, path, HELPER) == (found, 1)  # c1 is taken, c0 read again


# Two QAT captures of one helper under different flags: each asks its own question of a caller.
TWO = edit(
    HELPER,
    """    if is_qat:
        return prepare_qat_pt2e(gm, q)
""",
    """    if is_qat:
        return prepare_qat_pt2e(gm, q)
    if mode == "qat":
        return prepare_qat_pt2e(export(model, (x,)).module(), q)
""",
).replace("is_qat=False)", 'is_qat=False, mode="ptq")')
MODE = edit(PTQ, "Net().eval(), q, x)", 'Net().eval(), q, x, mode="qat")')


def test_each_capture_of_the_helper_keeps_its_own_answers(tmp_path, store):
    _, path = _repo(tmp_path, c0=MODE)
    found, analysed = check_anew(RULES, path, TWO)
    assert analysed == 1
    # `is_qat` left False rules out the first capture's branch (kept: nothing), not the second's.
    assert codes(found) == ["QL202"] and found[0][1] == TWO.splitlines().index('    if mode == "qat":') + 2
    assert found == check_without_store(RULES, path, TWO)
    assert check_anew(RULES, path, TWO) == (found, 1)


# A caller handing on its own parameter: its callers in that module decide, read with it.
HANDING = """\
from pkg.nets import Net
from pkg.utils.qat_utils import quant


def run(model, q, x):
    quant(model, q, x, is_qat=True)


def main(q, x):
    run(Net(), q, x)
"""


def test_a_caller_handing_on_its_parameter_in_its_module_is_kept_with_it(tmp_path, store):
    root, path = _repo(tmp_path, c0=HANDING)
    assert check_anew(RULES, path, HELPER) == ([], 1)
    assert check_anew(RULES, path, HELPER) == ([], 0)
    old_file(root / "scripts" / "c0.py", edit(HANDING, "run(Net(), q, x)", "run(Net().eval(), q, x)"))
    found, analysed = check_anew(RULES, path, HELPER)
    assert codes(found) == ["QL202"] and analysed == 1
    assert found == check_without_store(RULES, path, HELPER)


# A helper module with a PTQ helper QL201 judges by its callers (`caller_verdicts`) and a QAT
# helper QL202 searches the callers of: one caller module calls both.
BOTH = """\
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


def unrelated(path):
    return path + ".pte"


def ptq(model, q, x):
    return prepare_pt2e(export(model, (x,)).module(), q)


def qat(model, q, x):
    return prepare_qat_pt2e(export(model, (x,)).module(), q)
"""
BOTH_CALLER = """\
from pkg.nets import Net
from pkg.utils.qat_utils import ptq, qat


def main(q, x):
    ptq(Net().eval(), q, x)
    qat(Net(), q, x)
"""


def test_callers_ql201_read_first_in_the_same_check_are_kept_for_ql202(tmp_path, store):
    # QL201's verdicts read the callers first: QL202's search reuses their analyses, and keeps
    # its answers with what those readings recorded (`caller_modules.Kept.recorded`).
    rules = ("QL201", "QL202")
    root, path = _repo(tmp_path, c0=BOTH_CALLER, c1=BOTH_CALLER)
    assert check_anew(rules, path, BOTH) == ([], 2)  # built once, for QL201
    edited = edit(BOTH, 'return path + ".pte"', 'return path + ".pte"; edited = 0')
    assert check_anew(rules, path, edited) == ([], 0)
    assert check_without_store(rules, path, edited) == []
    # What QL201's reading read (`Net`'s module) is in QL202's trail.
    old_file(root / "pkg" / "nets.py", edit(NETS, "        self.fc = torch.nn.Linear(3, 3)\n", ""))
    assert check_anew(rules, path, edited)[1] == 2
    old_file(root / "scripts" / "c0.py", edit(BOTH_CALLER, "qat(Net(), q, x)", "qat(Net().eval(), q, x)"))
    found, analysed = check_anew(rules, path, edited)
    assert codes(found) == ["QL202"] and analysed == 1
    assert found == check_without_store(rules, path, edited)


def test_a_caller_module_asked_for_where_no_recording_watches_loses_its_record(tmp_path):
    # What a reading outside the recordings reads of it is not seen: the next recording of the
    # module in the check takes nothing from those before (its answer is not kept).
    root, path = _repo(tmp_path, c0=BOTH_CALLER)
    caller = str(root / "scripts" / "c0.py")
    data = (root / "scripts" / "c0.py").read_bytes()
    ctx = FileContext(
        path, BOTH, ast.parse(BOTH), LineIndex(BOTH), load_op_table(), ProjectIndex(), "pkg.utils.qat_utils"
    )
    new_process()
    module = caller_modules.caller_module(ctx, caller, data)
    kept = caller_modules.kept_of(module)
    kept.recorded = record = (None, (), False)
    caller_modules.WATCHED.add(id(kept))  # a recording watches it
    assert caller_modules.caller_module(ctx, caller, data) is module and kept.recorded is record
    caller_modules.WATCHED.discard(id(kept))
    caller_modules.ARMING[0] = True  # a recording asks for it
    try:
        assert caller_modules.caller_module(ctx, caller, data) is module and kept.recorded is record
    finally:
        caller_modules.ARMING[0] = False
    assert caller_modules.caller_module(ctx, caller, data) is module and kept.recorded is None
    new_process()
