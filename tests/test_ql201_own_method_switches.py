"""QL201/QL202: a method of the class called on `self` before a capture of `self.model` in the
same method (issue 14, item 2).

    def quantize(self, q):
        self.tune()                  # `def tune(self): self.model.train()`
        m = prepare_pt2e(torch.export.export(self.model, ...).module(), q)

The capture is of a train-mode model, whatever `__init__` vouched for: `tune` is read as a
helper handed `self` is (`self_switches`), each field it switches left in the modes its ends
leave it in (a path that does not switch it: the mode it had), and the message names the call.
It switches the field itself, through a helper it hands `self` or `self.model` to, or through
`self.train()` of a module class; it is found on the class or a base of the module. Quiet: a
method that evals it or only reads it, one not found, one a subclass in the module overrides
(which may run instead), a branch the call's arguments rule out, an eval after the call.
`self.eval()`/`self.train()` of a module class in the capturing method switch its fields too.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from tests.conftest import check_file, package_repository
from tests.snippets import NET_BN1D

HELPERS = """

def set_train(e):
    e.model.train()


def train_it(m):
    m.train()
"""

INIT = "    def __init__(self{param}):\n        super().__init__()\n{body}"
INITS = {
    "evaled": (INIT.format(param="", body="        self.model = Net()\n        self.model.eval()\n"), "Exporter()"),
    "switched": (
        INIT.format(param=", model", body="        model.eval()\n        self.model = model\n"),
        "Exporter(Net())",
    ),
    "stored": (INIT.format(param=", model", body="        self.model = model\n"), "Exporter(Net().eval())"),
}

CLASS = """

class Exporter(nn.Module):
INIT
    def tune(self, flag=True):
        TUNE

    def quantize(self, q):
        CALL
        ep = torch.export.export(self.model, (torch.randn(2, 4),))
        return PREPARE(ep.module(), q)


def main(q):
    return MAKE.quantize(q)
"""
CAPTURE_LINE = "        ep = torch.export.export(self.model, (torch.randn(2, 4),))"


def _text(
    tune: str, call: str = "self.tune()", source: str = "evaled", qat: bool = False, extra: str = "", make: str = ""
) -> str:
    init, made = INITS[source]
    body = CLASS.replace("INIT", init).replace("MAKE", make or made).replace("TUNE", tune).replace("CALL", call)
    text = NET_BN1D + HELPERS + body.replace("PREPARE", "prepare_qat_pt2e" if qat else "prepare_pt2e") + extra
    return text.replace("import prepare_pt2e\n", "import prepare_pt2e, prepare_qat_pt2e\n", 1)


def _found(text: str, rule: str = "QL201"):
    with tempfile.TemporaryDirectory() as tmp:
        root = package_repository(Path(tmp) / "repo", exp=text)
        return [(d.range.start.row, d.message) for d in check_file(root / "pkg" / "exp.py", (rule,)).diagnostics]


def _row(text: str, line: str = CAPTURE_LINE) -> int:
    return text.splitlines().index(line) + 1


def _call_row(text: str, call: str) -> int:
    return text.splitlines().index(f"        {call}") + 1


TRAINS = {
    "itself": "self.model.train()",
    "through a helper handed `self`": "set_train(self)",
    "through a helper handed the field": "train_it(self.model)",
    "through `self.train()`": "self.train()",
}


@pytest.mark.parametrize("source", list(INITS))
@pytest.mark.parametrize("tune", list(TRAINS.values()), ids=list(TRAINS))
def test_a_method_training_the_field_before_the_capture_is_the_finding(source, tune):
    text = _text(tune, source=source)
    ((row, message),) = _found(text)
    assert row == _row(text)
    assert f"after `self.tune()` at line {_call_row(text, 'self.tune()')}" in message


def test_a_method_of_a_base_of_the_module():
    base = "\n\nclass Base(nn.Module):\n    def prepare_model(self):\n        self.model.train()\n"
    text = _text("pass", "self.prepare_model()")
    text = text.replace("\n\nclass Exporter(nn.Module):", base + "\n\nclass Exporter(Base):")
    assert [row for row, _ in _found(text)] == [_row(text)]


def test_a_branch_the_call_leaves_open_joins_the_modes():
    tune = "if flag:\n            self.model.train()"
    text = _text(tune, "self.tune(True)")
    assert [row for row, _ in _found(text)] == [_row(text)]
    unknown = _text(tune, "self.tune(q is None)")
    assert [row for row, _ in _found(unknown)] == [_row(unknown)]


def test_a_path_past_an_early_return_trains_it():
    text = _text("if flag:\n            return\n        self.model.train()", "self.tune(flag=False)")
    assert [row for row, _ in _found(text)] == [_row(text)]


QUIET = {
    "a method evaling it": ("self.model.eval()", "self.tune()"),
    "one only reading it": ("print(self.model.training)", "self.tune()"),
    "one doing nothing": ("pass", "self.tune()"),
    "a method not found": ("self.model.train()", "self.calibrate()"),
    "a branch the call rules out": ("if flag:\n            self.model.train()", "self.tune(False)"),
    "an eval after the call": ("self.model.train()", "self.tune()\n        self.model.eval()"),
    "`self.eval()` after the call": ("self.model.train()", "self.tune()\n        self.eval()"),
    "a helper evaling it after training": ("set_train(self)\n        self.model.eval()", "self.tune()"),
}


@pytest.mark.parametrize("source", list(INITS))
@pytest.mark.parametrize(("tune", "call"), list(QUIET.values()), ids=list(QUIET))
def test_a_method_leaving_the_field_in_eval_mode_is_quiet(source, tune, call):
    assert _found(_text(tune, call, source)) == []


def test_a_method_a_subclass_in_the_module_overrides_leaves_it_unknown():
    sub = "\n\nclass Evaled(Exporter):\n    def tune(self, flag=True):\n        self.model.eval()\n"
    assert _found(_text("self.model.train()", extra=sub)) == []
    # A subclass that does not override it runs this one.
    other = "\n\nclass Other(Exporter):\n    def report(self):\n        return self.model\n"
    text = _text("self.model.train()", extra=other)
    assert [row for row, _ in _found(text)] == [_row(text)]


def test_a_method_rebinding_the_field_is_left_to_the_walk():
    """`self.model = Net().eval()` in `tune`: another object, which the walk does not follow
    into the caller; the field is unknown there (set in two methods), as before."""
    assert _found(_text("self.model = Net().eval()")) == []


def test_qat_reads_the_mirror():
    """QL202: the construction passes a train-mode model (`self.model = model`); `tune` evals
    it before a QAT capture. Training it there is right."""
    evals = _text("self.model.eval()", source="stored", qat=True, make="Exporter(Net())")
    assert [row for row, _ in _found(evals, "QL202")] == [_row(evals)]
    assert _found(_text("self.model.train()", source="stored", qat=True, make="Exporter(Net())"), "QL202") == []
    assert _found(_text("self.model.train()", source="evaled", qat=True), "QL202") == []


@pytest.mark.parametrize("source", list(INITS))
def test_the_capturing_method_switching_its_own_module(source):
    """`self.train()` of a module class trains every submodule, `self.model` with them."""
    text = _text("pass", "self.train()", source)
    ((row, message),) = _found(text)
    assert row == _row(text) and f"after `self.train()` at line {_call_row(text, 'self.train()')}" in message
    assert _found(_text("pass", "self.train()\n        self.eval()", source)) == []


def test_a_class_defining_its_own_train_is_not_switched_whole():
    own = "    def train(self, mode=True):\n        return self\n\n    def quantize(self, q):"
    text = _text("pass", "self.train()").replace("    def quantize(self, q):", own)
    assert _found(text) == []
