"""QL201's walk of a helper's callers for a ruled-out branch, kept per caller module between
runs (`kept_call_paths`).

As `test_kept_qat_callers`: each case checks the helper's module in a new process (every memo
forgotten, a new index) with a store, as pre-commit checks one edited file; an answer is taken
while the caller module, every file its reading recorded and the helper module's text outside
the bodies not taken are what they were, and the findings are always those of a run without
the store. `caller_modules.BUILT` counts the caller modules analysed again. QL201's verdicts
(`vouched_by_callers`) stop at the first caller passing a train-mode model and read it again
in every run: the walk's answers spare the modules after it.
"""

from __future__ import annotations

import pytest

from qlint.analysis.flow import kept_call_paths
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
"""
# Hands its own flag on: its callers decide, and the walk reads them.
HANDING = """\
from pkg.nets import Net
from pkg.utils.qat_utils import quant


def run(model, q, x, is_qat):
    quant(model, q, x, is_qat=is_qat)


def main(q, x):
    run(Net(), q, x, True)
"""
RULES = ("QL201",)


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from kept_store(tmp_path, monkeypatch, new_process)


def _repo(tmp_path, **scripts: str):
    return callers_repo(tmp_path, "qat_utils.py", HELPER, scripts or {"c0": TRAINS, "c1": TRAINS}, nets=NETS)


def _kept() -> list[str]:
    """The caller modules whose answers this run kept, by file name."""
    return sorted(key[-1].rsplit("/", 1)[-1] for key in kept_call_paths._KEPT)


def test_an_edit_of_a_body_no_caller_reads_takes_the_kept_answers(tmp_path, store):
    _, path = _repo(tmp_path)
    assert check_anew(RULES, path, HELPER) == ([], 2)
    assert _kept() == ["c0.py", "c1.py"]
    edited = edit(HELPER, 'return path + ".pte"', 'return path + ".pte"; edited = 0')
    # c0 is read again by QL201's verdicts (its train-mode model stops them), c1 by nothing.
    assert check_anew(RULES, path, edited) == ([], 1)
    assert check_without_store(RULES, path, edited) == []


def test_a_caller_edited_on_disk_is_read_again(tmp_path, store):
    root, path = _repo(tmp_path)
    assert check_anew(RULES, path, HELPER) == ([], 2)
    # c1 now takes the PTQ branch with a train-mode model.
    old_file(root / "scripts" / "c1.py", edit(TRAINS, ", is_qat=True)", ")"))
    found, analysed = check_anew(RULES, path, HELPER)
    assert codes(found) == ["QL201"] and analysed == 2  # c0 by the verdicts, c1 by the walk
    assert found == check_without_store(RULES, path, HELPER)


def test_an_edit_of_the_branch_asks_another_question(tmp_path, store):
    _, path = _repo(tmp_path)
    assert check_anew(RULES, path, HELPER) == ([], 2)
    # `is_qat=True` now takes the PTQ branch: the answers kept were for `if is_qat:`.
    edited = edit(HELPER, "    if is_qat:\n", "    if not is_qat:\n")
    found, analysed = check_anew(RULES, path, edited)
    assert codes(found) == ["QL201"] and analysed >= 1
    assert found == check_without_store(RULES, path, edited)


def test_an_edit_of_the_helpers_signature_is_read_again(tmp_path, store):
    _, path = _repo(tmp_path, c0=TRAINS, c1=edit(TRAINS, ", is_qat=True)", ", is_qat=False)"))
    found = check_anew(RULES, path, HELPER)[0]
    assert codes(found) == ["QL201"] and _kept() == ["c0.py"]
    # A default, outside every body: the masked text differs and nothing kept is taken.
    edited = edit(HELPER, "is_qat=False):", "is_qat=None):")
    found, analysed = check_anew(RULES, path, edited)
    assert codes(found) == ["QL201"] and analysed == 2
    assert found == check_without_store(RULES, path, edited)


def test_a_caller_handing_its_flag_on_is_not_kept(tmp_path, store):
    # What the walk reads above the call (whether another module names `run`) is not named:
    # the module is read again.
    _, path = _repo(tmp_path, c0=TRAINS, c1=HANDING)
    assert check_anew(RULES, path, HELPER) == ([], 2)
    assert _kept() == ["c0.py"]
    assert check_anew(RULES, path, HELPER) == ([], 2)
    assert check_without_store(RULES, path, HELPER) == []
