"""QL201: a helper that captures the items of a container parameter (`for name, m in
models.items()`), vouched for by its callers (issue 14, item 7).

Quiet only when every caller in the project writes the container in the call and every
model it holds is harmless (eval mode, or nothing mode-dependent in it), and the helper only
reads the container. A caller passing a train-mode model with batch norm, a container
written elsewhere, a spread, a helper that fills or hands on the container, or no caller at
all keep the finding; a method is judged from its callers as a function is.
"""

from __future__ import annotations

import textwrap

from qlint.engine import check_source
from tests.conftest import lint, package_repository, settings_for

HEAD = """
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(self.fc(x))


class LinearOnly(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = nn.Linear(4, 4)

    def forward(self, x):
        return self.fc(x)
"""
HELPER = """

def quantize_all(models, x, quantizer):
    out = {}
    for name, m in models.items():
        out[name] = prepare_pt2e(torch.export.export(m, (x,)).module(), quantizer)
    return out
"""
CAPTURE_ROW = HEAD.count("\n") + HELPER.count("\n") - 1  # the `out[name] = ...` line


def ql201(src: str) -> list[int]:
    return [d.range.start.row for d in lint(HEAD + src, select=("QL201",))]


def test_callers_writing_dicts_of_eval_models_vouch_for_the_items():
    assert (
        ql201(
            HELPER
            + """
def main(x, q):
    model = Net()
    model.eval()
    quantize_all({"fp": model, "other": Net().eval()}, x, q)
    quantize_all(models={"only": Net().eval()}, x=x, quantizer=q)
"""
        )
        == []
    )


def test_items_whose_mode_cannot_change_the_graph_and_nested_containers():
    helper = """

def quantize_groups(groups, x, q):
    for group in groups.values():
        for m in group:
            prepare_pt2e(torch.export.export(m, (x,)).module(), q)
"""
    caller = "\ndef main(x, q):\n    quantize_groups({'a': [LinearOnly(), Net().eval()], 'b': ()}, x, q)\n"
    assert ql201(helper + caller) == []


def test_a_train_mode_model_with_batch_norm_in_one_call_keeps_the_finding():
    src = HELPER + "\ndef main(x, q):\n    quantize_all({'a': Net().eval()}, x, q)\n    quantize_all([Net()], x, q)\n"
    assert ql201(src) == [CAPTURE_ROW]


def test_containers_not_written_in_the_call_keep_the_finding():
    # A name bound to a dict may be filled before the call; a caller's own parameter holds
    # whatever its callers put in it.
    bound = "\ndef main(x, q):\n    models = {'a': Net().eval()}\n    quantize_all(models, x, q)\n"
    assert ql201(HELPER + bound) == [CAPTURE_ROW]
    forwarded = "\ndef main(models, x, q):\n    quantize_all(models, x, q)\n"
    assert ql201(HELPER + forwarded) == [CAPTURE_ROW]


def test_a_spread_or_a_global_in_the_literal_keeps_the_finding():
    spread = "\ndef main(x, q, extra):\n    quantize_all({'a': Net().eval(), **extra}, x, q)\n"
    assert ql201(HELPER + spread) == [CAPTURE_ROW]
    glob = "\nMODEL = Net()\n\ndef main(x, q):\n    quantize_all([MODEL], x, q)\n"
    assert ql201(HELPER + glob) == [CAPTURE_ROW]


def test_a_helper_that_fills_or_hands_on_the_container_keeps_the_finding():
    caller = "\ndef main(x, q):\n    quantize_all({'a': Net().eval()}, x, q)\n"
    fills = HELPER.replace("    out = {}\n", "    out = {}\n    models['extra'] = Net()\n")
    updates = HELPER.replace("    out = {}\n", "    out = {}\n    models.update(extra=Net())\n")
    hands_on = HELPER.replace("    out = {}\n", "    out = {}\n    register(models)\n")
    stores = HELPER.replace("    out = {}\n", "    out = {}\n    CACHE['last'] = models\n")
    loop = "    for name, m in models.items():\n"
    changes_an_item = HELPER.replace(loop, loop + "        m.fc = nn.Sequential(nn.Linear(4, 4), nn.Dropout())\n")
    for helper in (fills, updates, hands_on, stores, changes_an_item):
        assert ql201(helper + caller) == [CAPTURE_ROW + helper.count("\n") - HELPER.count("\n")], helper
    # Reading it is fine.
    reads = HELPER.replace("    out = {}\n", "    out = {}\n    print(len(models), sorted(models))\n")
    counted = "    first, *rest = list(models.values())\n    STATS['n'] = len(rest)\n"
    reads = reads.replace("    return out\n", counted + "    return out\n")
    assert ql201(reads + caller) == []


def test_no_caller_or_an_unread_use_keeps_the_finding():
    assert ql201(HELPER) == [CAPTURE_ROW]
    callback = "\ndef main(x, q, run):\n    quantize_all({'a': Net().eval()}, x, q)\n    run(quantize_all)\n"
    assert ql201(HELPER + callback) == [CAPTURE_ROW]
    # On a row of its own, and spelled otherwise (read NFKC-normalised: the same name).
    wrapped = callback.replace("run(quantize_all)", "run(\n        quantize_all,\n    )")
    assert ql201(HELPER + wrapped) == [CAPTURE_ROW]
    assert ql201(HELPER + callback.replace("run(quantize_all)", "run(\uff51uantize_all)")) == [CAPTURE_ROW]


def test_a_method_is_judged_from_its_callers_as_a_function_is():
    # Its callers are all in this module, which no other module can import
    # (`test_ql201_method_callers`); one that writes a train-mode model keeps the finding.
    method = """

class Quantizer:
    def quantize_all(self, models, x, q):
        for name, m in models.items():
            prepare_pt2e(torch.export.export(m, (x,)).module(), q)

    def main(self, x, q):
        self.quantize_all({"a": Net().eval()}, x, q)
"""
    assert ql201(method) == []
    assert ql201(method.replace('"a": Net().eval()', '"a": Net()')) == [HEAD.count("\n") + 6]


def test_callers_in_other_modules_of_the_project(tmp_path):
    root = package_repository(tmp_path / "repo")
    (root / "pkg" / "helpers.py").write_text(HEAD + HELPER)
    caller = "from pkg.helpers import Net, LinearOnly, quantize_all\n\n\ndef main(x, q):\n"
    caller += "    quantize_all(CALL, x, q)\n"
    path = root / "pkg" / "helpers.py"

    def rows(argument: str) -> list[int]:
        (root / "pkg" / "script.py").write_text(caller.replace("CALL", argument))
        result = check_source(path.read_text(), str(path), settings_for(("QL201",)))
        assert not result.errors, result.errors
        return [d.range.start.row for d in result.diagnostics]

    assert rows("{'a': Net().eval(), 'b': LinearOnly()}") == []
    assert rows("{'a': Net()}") == [CAPTURE_ROW]
    assert rows("models") == [CAPTURE_ROW]


def test_the_message_still_says_where_the_model_comes_from():
    diags = lint(textwrap.dedent(HEAD + HELPER), select=("QL201",))
    assert "as a loop item of parameter `models`" in diags[0].message
