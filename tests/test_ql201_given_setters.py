"""QL201: a part given to a model through a setter call (text72's leftover, stop 72's closing
note): `model.add_module("head", nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5)))` before
`model.body.eval()` left the model read as evaled, where `model.head = ...` did not; and after
`model.eval()` a dropout so given went unseen. `given_setters` gives the part as the assignment
does (`model_builds.Builds.given_part`). Read on torch 2.13: `add_module`, `setattr` and the
others register the new dropout in train mode, and the exported graph's dropout trains after
`model.body.eval()`. A part holding nothing that depends on the mode, a whole switch after the
setter, a setter on another object or of a plain value stay quiet."""

from __future__ import annotations

import pytest

from tests.conftest import lint
from tests.test_ql201_part_holds_the_mode import HEAD, SWITCHES, capture_row, ptq

DROPPING = "nn.Sequential(nn.Linear(3, 3), nn.Dropout(0.5))"
SETTERS = {
    "add_module": f'model.add_module("head", {DROPPING})',
    "add_module by keyword": f'model.add_module(name="head", module={DROPPING})',
    "register_module": f'model.register_module("head", {DROPPING})',
    "setattr": f'setattr(model, "head", {DROPPING})',
    "__setattr__": f'model.__setattr__("head", {DROPPING})',
    "set_submodule": f'model.set_submodule("head", {DROPPING})',
    "a name not known here": f"model.add_module(str(x), {DROPPING})",
    "a new name": 'model.add_module("extra", nn.Dropout(0.5))',
}


@pytest.mark.parametrize("switch", ["eval", "modules-eval", "children-eval", "children-flags"])
@pytest.mark.parametrize("setter", SETTERS.values(), ids=SETTERS.keys())
def test_a_part_given_by_a_setter_before_a_part_switch_stays_reported(setter, switch):
    steps = setter + "\n    " + SWITCHES[switch]
    assert ptq("Net", steps) == [("QL201", capture_row(steps))]


@pytest.mark.parametrize("setter", SETTERS.values(), ids=SETTERS.keys())
def test_a_part_given_by_a_setter_after_the_eval_is_reported(setter):
    steps = "model.eval()\n    " + setter
    assert ptq("Net", steps) == [("QL201", capture_row(steps))]


def test_the_message_names_where_the_part_was_given():
    src = HEAD + (
        "\ndef run(x, q):\n    model = Net()\n    model.eval()\n"
        f'    setattr(model, "head", {DROPPING})\n'
        "    return prepare_pt2e(torch.export.export(model, (x,)).module(), q)\n"
    )
    (diagnostic,) = lint(src, select=("QL201",))
    row = HEAD.count("\n") + 5
    assert f"given a part built in train mode at line {row} (`model.head`)" in diagnostic.message


QUIET = {
    "a part with nothing mode-dependent": 'model.add_module("extra", nn.Linear(3, 3))\n    model.body.eval()',
    "a whole switch after it": f'model.add_module("head", {DROPPING})\n    model.eval()',
    "a setter on another module": f'other = Net()\n    other.add_module("head", {DROPPING})\n    model.body.eval()',
    "a plain value set": 'setattr(model, "name", "net")\n    model.body.eval()',
    "a part of a part by a dotted path": 'model.set_submodule("body.drop", nn.Dropout(0.5))\n    model.body.eval()',
    "a module of unknown content": 'model.add_module("head", make_head())\n    model.body.eval()',
}


@pytest.mark.parametrize("steps", QUIET.values(), ids=QUIET.keys())
def test_setters_that_leave_the_mode_as_it_was_stay_quiet(steps):
    assert ptq("Net", steps) == []


@pytest.mark.parametrize("setter", ["add_module", "setattr"])
def test_a_setter_reads_as_the_assignment_it_stands_for(setter):
    # The same verdicts as `model.head = ...` (the look-alike the walk already read).
    assigned = f"model.head = {DROPPING}"
    given = SETTERS[setter]
    for switch in ("model.body.eval()", "model.eval()", "pass"):
        assert bool(ptq("Net", f"{assigned}\n    {switch}")) == bool(ptq("Net", f"{given}\n    {switch}"))


def test_the_given_part_switched_itself_is_quiet():
    # After `model.eval()` the given part is a part in train mode (`part_modes`): its own
    # `.eval()` undoes it, as a whole `model.eval()` does.
    assert ptq("Net", f'model.eval()\n    model.add_module("head", {DROPPING})\n    model.head.eval()') == []
    steps = f'model.eval()\n    model.add_module("head", {DROPPING})\n    model.head.eval()\n    model.train()'
    assert ptq("Net", steps) == [("QL201", capture_row(steps))]


PART_HELPER = """

def quantize_body(model, x, q):
    exported = torch.export.export(model.body, (x,)).module()
    return prepare_pt2e(exported, q)


def main(x, q):
    m = Net().eval()
    {setter}
    return quantize_body(m, x, q)
"""


@pytest.mark.parametrize(
    ("setter", "reported"),
    [
        (f'm.add_module("head", {DROPPING})', False),  # another part than the one captured
        (f'setattr(m, "head", {DROPPING})', False),
        ('m.add_module("body", Body())', True),  # the captured part itself, in train mode
    ],
)
def test_a_helper_capturing_another_part_is_not_concerned(setter, reported):
    src = HEAD + PART_HELPER.format(setter=setter)
    assert bool(lint(src, select=("QL201",))) is reported
