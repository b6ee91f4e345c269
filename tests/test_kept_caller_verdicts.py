"""What each caller module passes a helper, judged, kept between runs (`kept_caller_verdicts`).

Each case checks the helper's module in a new process (every memo forgotten, a new index) with
a store, as pre-commit checks one edited file: a verdict is taken while the caller module,
every file its reading recorded and the helper module's text outside the bodies not taken
are what they were, and the findings are always those of a run without the store. The work
counter (`caller_modules.BUILT`) says whether a caller module was analysed again.
"""

from __future__ import annotations

import pytest

from qlint.analysis.flow import caller_modules, kept_caller_verdicts
from qlint.analysis.graphs import kept_shards
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import kept_store, old_file, settings_for
from tests.kept_callers_support import callers_repo, check_anew, check_without_store, edit, new_process
from tests.test_caller_modules import CALLER, HELPER

# A caller that hands on its own parameter: its own callers decide (`_handed_on`), a search
# of the project the kept verdict does not record.
HANDING = """\
from pkg.utils.export_utils import quantize_module


def run(model, quantizer, x):
    quantize_module(model, quantizer, x)
"""
HANDED_TO = """\
from pkg.utils.export_utils import prep
from scripts.c0 import run


def main(net, quantizer, x):
    run(prep(net), quantizer, x)
"""


RULES = ("QL201",)


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from kept_store(tmp_path, monkeypatch, new_process)


def _repo(tmp_path, **scripts: str):
    return callers_repo(tmp_path, "export_utils.py", HELPER, scripts or {"c0": CALLER, "c1": CALLER})


def test_an_edit_of_a_body_no_caller_reads_takes_the_kept_verdicts(tmp_path, store):
    _, path = _repo(tmp_path)
    assert check_anew(RULES, path, HELPER) == ([], 2)  # both callers hand over a model `prep` put in eval mode
    edited = edit(HELPER, 'return path + ".pte"', 'return path + ".pte"; edited = 0')
    assert check_anew(RULES, path, edited) == ([], 0)  # no caller module parsed or analysed
    assert check_without_store(RULES, path, edited) == []


def test_a_caller_edited_on_disk_is_judged_again(tmp_path, store):
    root, path = _repo(tmp_path)
    assert check_anew(RULES, path, HELPER) == ([], 2)
    old_file(root / "scripts" / "c0.py", CALLER.replace("prep(Net())", "Net()"))
    found, analysed = check_anew(RULES, path, HELPER)
    assert [code for code, _, _ in found] == ["QL201"] and analysed == 1  # c1 is taken
    assert found == check_without_store(RULES, path, HELPER)


def test_an_edit_of_a_body_the_callers_read_is_judged_again(tmp_path, store):
    _, path = _repo(tmp_path)
    assert check_anew(RULES, path, HELPER) == ([], 2)
    edited = edit(HELPER, "    model.eval()\n    return model", "    model.cpu()\n    return model")
    found, analysed = check_anew(RULES, path, edited)
    assert [code for code, _, _ in found] == ["QL201"] and analysed >= 1
    assert found == check_without_store(RULES, path, edited)
    # Back as it was: the verdicts kept first hold again.
    assert check_anew(RULES, path, HELPER) == ([], 0)


def test_an_edit_outside_the_bodies_is_judged_again(tmp_path, store):
    _, path = _repo(tmp_path)
    assert check_anew(RULES, path, HELPER) == ([], 2)
    # `prep(net)` now evals a global `model`: an edit of a header, outside every body.
    edited = edit(HELPER, "def prep(model):\n    model.eval()", "def prep(net):\n    model.eval()")
    found, analysed = check_anew(RULES, path, edited)
    assert [code for code, _, _ in found] == ["QL201"] and analysed >= 1
    assert found == check_without_store(RULES, path, edited)
    # A line added in a body no caller reads moves every line below it: judged again, alike.
    moved = edit(HELPER, 'return path + ".pte"', 'p = 1\n    return path + ".pte"')
    assert check_anew(RULES, path, moved) == ([], 2)


def test_another_module_a_caller_reads_edited_on_disk_is_judged_again(tmp_path, store):
    nets = "from torch import nn\n\n\ndef make_net():\n    return nn.BatchNorm2d(3).eval()\n"
    calling = (
        "from pkg.nets import make_net\nfrom pkg.utils.export_utils import quantize_module\n\n\n"
        "def main(quantizer, x):\n    quantize_module(make_net(), quantizer, x)\n"
    )
    root, path = _repo(tmp_path, c0=calling)
    old_file(root / "pkg" / "nets.py", nets)
    assert check_anew(RULES, path, HELPER) == ([], 1)
    assert check_anew(RULES, path, HELPER) == ([], 0)
    old_file(root / "pkg" / "nets.py", nets.replace(".eval()", ""))
    found, analysed = check_anew(RULES, path, HELPER)
    assert [code for code, _, _ in found] == ["QL201"] and analysed == 1
    assert found == check_without_store(RULES, path, HELPER)


def test_a_caller_handing_on_its_parameter_is_not_kept(tmp_path, store):
    root, path = _repo(tmp_path, c0=HANDING, c1=HANDED_TO)
    assert check_anew(RULES, path, HELPER) == ([], 2)  # c0's `run` is called by c1 with `prep(net)`
    assert check_anew(RULES, path, HELPER)[1] >= 1  # c0's verdict rests on a search for its callers: read again
    old_file(root / "scripts" / "c1.py", HANDED_TO.replace("prep(net)", "net"))
    found, _ = check_anew(RULES, path, HELPER)
    assert [code for code, _, _ in found] == ["QL201"]
    assert found == check_without_store(RULES, path, HELPER)


# The only call is in a test unittest always skips: it passes nothing and vouches for nothing
# (`skipped_tests.never_runs`), so the helper has no caller that vouches for it.
SKIPPED = """\
import unittest

from torch import nn
from pkg.utils.export_utils import quantize_module


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)


class TestQ(unittest.TestCase):
    @unittest.skip("never")
    def test_net(self):
        quantize_module(Net(), None, None)
"""


def test_a_module_whose_calls_never_run_vouches_for_nothing_when_taken(tmp_path, store):
    _, path = _repo(tmp_path, c0=SKIPPED)
    found, _ = check_anew(RULES, path, HELPER)
    assert (
        [code for code, _, _ in found] == ["QL201"] == [code for code, _, _ in check_without_store(RULES, path, HELPER)]
    )
    assert check_anew(RULES, path, HELPER)[0] == found


# `prep` hands the model to `_switch`, which the callers' analyses read through `prep`'s flow.
NESTED = HELPER.replace(
    "def prep(model):\n    model.eval()\n    return model\n",
    "def prep(model):\n    return _switch(model)\n\n\ndef _switch(model):\n    model.eval()\n    return model\n",
)


def test_a_body_read_through_a_flow_analysed_for_another_check_is_kept_in_the_shape(tmp_path, store):
    # As a run over the tree does: a caller is checked first, and the helper module's flows it
    # analysed (before that module's bodies were watched) are reused by the helper module's check.
    root, path = _repo(tmp_path)
    old_file(root / "pkg" / "utils" / "export_utils.py", NESTED)
    new_process()
    project = ProjectIndex()
    caller = root / "scripts" / "c0.py"
    assert not check_source(CALLER, str(caller), settings_for(("QL201",)), project).errors
    result = check_source(NESTED, path, settings_for(("QL201",)), project)
    assert [d.code for d in result.diagnostics] == []
    caller_modules.checked_once(path)
    kept_shards.flush()
    # `_switch` no longer evals: every caller now hands over a train-mode model.
    edited = edit(NESTED, "    model.eval()\n    return model\n", "    model.cpu()\n    return model\n")
    found, _ = check_anew(RULES, path, edited)
    assert [code for code, _, _ in found] == ["QL201"]
    assert found == check_without_store(RULES, path, edited)


def test_a_verdict_that_reused_a_flow_of_an_earlier_check_is_not_kept(tmp_path, store, monkeypatch):
    # A run over the tree checks a caller before the helper's module (ExecuTorch's
    # test_qnn_delegate.py before tests/utils.py): flows of the helper's module it kept were
    # analysed before that module's bodies were watched, so what they read of them is unnamed.
    _, path = _repo(tmp_path, c0=CALLER)
    watch = kept_caller_verdicts.Verdicts.watch

    def reusing(self, module_of):
        watch(self, module_of)
        if self._sink is not None:
            self._sink[0].reused.append(self.ctx.project.checks - 1)  # as `Tracker.reuse` notes one

    monkeypatch.setattr(kept_caller_verdicts.Verdicts, "watch", reusing)
    assert check_anew(RULES, path, HELPER) == ([], 1)
    monkeypatch.setattr(kept_caller_verdicts.Verdicts, "watch", watch)
    assert check_anew(RULES, path, HELPER) == ([], 1)  # not kept: read again (and kept now)
    assert check_anew(RULES, path, HELPER) == ([], 0)
