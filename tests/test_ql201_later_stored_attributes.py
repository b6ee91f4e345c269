"""QL201: a helper whose caller passes `self.<attr>` that its class stores outside `__init__`
(issue 14, items 2 and 7; Ultralytics' Ethos-U exporter, `ethos.py:56` on `ethos-export`).

`Exporter.__call__` copies the model it is given, evals it and stores it in `self.model`;
`export_q` hands `self.model` to the helper that captures it. The caller's class says the
attribute's mode: every store of it there is of a model in eval mode, and nothing in the
class switches it afterwards, so the capture is right whether the helper lives in the same
module or another one. With `.train()` in place of `.eval()` it is reported either way.
"""

from __future__ import annotations

from tests.conftest import check_file, package_repository, rows_of

HELPER = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def to_q(m, x, q, data):
    ep = torch.export.export(m, (x,))
    g = prepare_pt2e(ep.module(), q)
    for d in data:
        g(d)
    return convert_pt2e(g)
"""
CAPTURE_ROW = HELPER.splitlines().index("    ep = torch.export.export(m, (x,))") + 1

EXPORTER = """\
from copy import deepcopy


class Exporter:
    def __init__(self, q, data):
        self.q = q
        self.data = data

    def __call__(self, model, im):
        model = deepcopy(model)
        model.MODE()
        self.model = model
        self.im = im
        return self.export_q()

    def export_q(self):
        return to_q(self.model, self.im, self.q, self.data)
"""


def _cross(tmp_path, exporter: str):
    text = "from pkg.helper import to_q\n" + exporter
    root = package_repository(tmp_path / "repo", helper=HELPER, exp=text)
    return rows_of(check_file(root / "pkg" / "helper.py", ("QL201",)).diagnostics)


def _same(tmp_path, exporter: str):
    root = package_repository(tmp_path / "repo", helper=HELPER + "\n\n" + exporter)
    return rows_of(check_file(root / "pkg" / "helper.py", ("QL201",)).diagnostics)


def test_cross_module_eval_store_is_quiet(tmp_path):
    assert _cross(tmp_path, EXPORTER.replace("MODE", "eval")) == []


def test_cross_module_train_store_is_reported(tmp_path):
    assert _cross(tmp_path, EXPORTER.replace("MODE", "train")) == [CAPTURE_ROW]


def test_same_module_eval_store_is_quiet(tmp_path):
    assert _same(tmp_path, EXPORTER.replace("MODE", "eval")) == []


def test_same_module_train_store_is_reported(tmp_path):
    assert _same(tmp_path, EXPORTER.replace("MODE", "train")) == [CAPTURE_ROW]


def test_inline_switch_and_a_none_store_keep_the_mode(tmp_path):
    inline = EXPORTER.replace(
        "        model.MODE()\n        self.model = model\n", "        self.model = model.MODE()\n"
    )
    with_none = inline.replace("        self.data = data\n", "        self.data = data\n        self.model = None\n")
    assert _cross(tmp_path / "e", with_none.replace("MODE", "eval")) == []
    assert _same(tmp_path / "t", with_none.replace("MODE", "train")) == [CAPTURE_ROW]


def test_a_train_store_in_another_method_is_reported_in_one_module(tmp_path):
    # One store evals, another trains: the attribute holds either.
    other = "\n    def tune(self, model):\n        model.train()\n        self.model = model\n"
    assert _same(tmp_path, EXPORTER.replace("MODE", "eval") + other) == [CAPTURE_ROW]


# The copy's parameters frozen between its switch and its store (`grad_loops`), as
# Ultralytics' exporter freezes them: the loop sets flags of tensors, not a module's mode.
FROZEN = {
    "parameters": "        for p in model.parameters():\n            p.requires_grad = False\n",
    "named parameters": "        for name, p in model.named_parameters():\n            p.requires_grad_(False)\n",
}


def test_parameters_frozen_between_the_switch_and_the_store_keep_the_mode(tmp_path):
    for i, (what, loop) in enumerate(FROZEN.items()):
        frozen = EXPORTER.replace("        self.model = model\n", loop + "        self.model = model\n")
        assert _cross(tmp_path / f"e{i}", frozen.replace("MODE", "eval")) == [], what
        assert _cross(tmp_path / f"t{i}", frozen.replace("MODE", "train")) == [CAPTURE_ROW], what


def test_a_loop_doing_more_than_freezing_between_the_switch_and_the_store_is_reported(tmp_path):
    loops = {
        "modules trained": "        for m in model.modules():\n            m.train()\n",
        "the model trained in the loop": (
            "        for p in model.parameters():\n            p.requires_grad = False\n            model.train()\n"
        ),
        "the flag from a call": "        for p in model.parameters():\n            p.requires_grad = keep(model)\n",
    }
    for i, (what, loop) in enumerate(loops.items()):
        text = EXPORTER.replace("        self.model = model\n", loop + "        self.model = model\n")
        assert _cross(tmp_path / str(i), text.replace("MODE", "eval")) == [CAPTURE_ROW], what


# Look-alikes whose attribute's mode is not known: the caller in another module is not
# harmless, as on main (a caller in the helper's own module passing an attribute it cannot
# read stays quiet by issue 14 item 7's measured policy, `capture_common._mode_left_open`).
EVAL = EXPORTER.replace("MODE", "eval")
UNKNOWN_MODE = {
    "second store of unknown mode": EVAL + "\n    def reset(self, model):\n        self.model = model\n",
    "a method that trains it": EVAL + "\n    def tune(self):\n        self.model.train()\n",
    "a method that hands it to a call": EVAL + "\n    def tune(self):\n        adjust(self.model)\n",
    "named after the store": EVAL.replace(
        "        self.model = model\n", "        self.model = model\n        keep(model)\n"
    ),
    "named between the switch and the store": EVAL.replace(
        "        self.model = model\n", "        fuse(model)\n        self.model = model\n"
    ),
    "stored in a loop": EVAL.replace(
        "        model.eval()\n        self.model = model\n",
        "        for model in models:\n            model.eval()\n            self.model = model\n",
    ),
    "written from outside the class": EVAL + "\n\ndef swap(exporter, model):\n    exporter.model = model\n",
    "a subclass in its module": EVAL + "\n\nclass Sub(Exporter):\n    pass\n",
}


def test_look_alikes_whose_mode_is_not_known_stay_reported_across_modules(tmp_path):
    for i, (what, text) in enumerate(UNKNOWN_MODE.items()):
        assert _cross(tmp_path / str(i), text) == [CAPTURE_ROW], what


def test_a_subclass_in_another_module_may_store_it_otherwise(tmp_path):
    sub = """\
from pkg.exp import Exporter


class Training(Exporter):
    def __call__(self, model, im):
        model.train()
        self.model = model
        self.im = im
        return self.export_q()
"""
    text = "from pkg.helper import to_q\n" + EVAL
    root = package_repository(tmp_path / "repo", helper=HELPER, exp=text, sub=sub)
    assert rows_of(check_file(root / "pkg" / "helper.py", ("QL201",)).diagnostics) == [CAPTURE_ROW]
    # Without it, quiet.
    plain = package_repository(tmp_path / "plain", helper=HELPER, exp=text)
    assert rows_of(check_file(plain / "pkg" / "helper.py", ("QL201",)).diagnostics) == []


DIRECT = """\
import torch
from copy import deepcopy
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Q:
    def __call__(self, model, x, q):
        model = deepcopy(model)
        model.MODE()
        self.model = model
        self.x = x
        self.q = q
        return self.ptq(), self.qat()

    def ptq(self):
        ep = torch.export.export(self.model, (self.x,))
        return prepare_pt2e(ep.module(), self.q)

    def qat(self):
        ep = torch.export.export(self.model, (self.x,))
        return prepare_qat_pt2e(ep.module(), self.q)
"""
PTQ_ROW, QAT_ROW = (i + 1 for i, line in enumerate(DIRECT.splitlines()) if "torch.export.export" in line)


def _direct(tmp_path, mode: str, rule: str):
    root = package_repository(tmp_path / f"{mode}-{rule}", q=DIRECT.replace("MODE", mode))
    return rows_of(check_file(root / "pkg" / "q.py", (rule,)).diagnostics)


def test_a_capture_in_the_class_reads_the_stored_mode(tmp_path):
    # PTQ: reported after `.train()`, quiet after `.eval()`; QAT the mirror image. (On main the
    # attribute was unread and all four were quiet.)
    assert _direct(tmp_path, "train", "QL201") == [PTQ_ROW]
    assert _direct(tmp_path, "eval", "QL201") == []
    assert _direct(tmp_path, "eval", "QL202") == [QAT_ROW]
    assert _direct(tmp_path, "train", "QL202") == []
