"""QL203's message when the graph's switch was replaced on the instance just before the call.

A workaround offered in pytorch/pytorch#151726's thread sets the exported graph's `eval` to
another object's: `gm.eval = nn.Module().eval` makes `gm.eval()` switch that new module, raise
nothing and leave the graph in the mode it was captured in; `gm.eval = nn.Module.eval` sets a
function bound to nothing, and the call raises TypeError (checked on torch 2.13). Both stay
reported, but "raises NotImplementedError" was wrong for them: the message says what runs
instead. Any replacement qlint cannot place keeps the message as it was.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import functools

import torch
import torch.nn as nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(4)

    def forward(self, x):
        return self.bn(x)


def calibrate(model):
    return model


def run(other):
    gm = torch.export.export(Net(), (torch.randn(2, 4),)).module()
"""
RAISES = "raises NotImplementedError on torch 2.13"


def ql203(body: str) -> list[tuple[int, str, str]]:
    """(row, message, help) of the QL203 findings; `body` is indented into `run`."""
    src = HEAD + textwrap.indent(textwrap.dedent(body), "    ")
    found = lint(src, select=("QL203",))
    return [(d.range.start.row, d.message, d.help or "") for d in found if d.code == "QL203"]


def test_another_objects_bound_switch_switches_that_object():
    [(row, message, help_)] = ql203("""\
        gm.eval = nn.Module().eval
        gm.eval()
        """)
    assert row == 23
    assert "`gm.eval` was set at line 22 to `nn.Module().eval`" in message
    assert "switches that object, not the graph, and raises nothing" in message
    assert "keeps the mode it was captured in" in message
    assert "NotImplementedError" not in message
    assert "drop the replacement of `gm.eval`" in help_


def test_unbound_module_switch_raises_type_error():
    for spelled in ("nn.Module.eval", "torch.nn.Module.eval", "torch.nn.modules.module.Module.eval"):
        [(row, message, _)] = ql203(f"""\
            gm.eval = {spelled}
            gm.eval()
            """)
        assert row == 23
        assert f"set at line 22 to `{spelled}`, a function bound to no module" in message
        assert "gets no `self` and raises TypeError" in message


def test_train_replaced_the_same_way():
    [(_, message, _)] = ql203("""\
        gm.train = nn.Module.train
        gm.train()
        """)
    assert "`gm.train` was set at line 22 to `nn.Module.train`" in message
    assert "raises TypeError" in message


def test_statements_between_that_do_not_name_the_graph_are_skipped():
    [(_, message, _)] = ql203("""\
        gm.eval = nn.Module().eval
        x = torch.randn(2, 4)
        gm.eval()
        """)
    assert "set at line 22" in message and "switches that object" in message


# Replacements qlint cannot place keep the message (the finding stays).


def test_replacement_in_a_branch_keeps_the_message():
    [(_, message, _)] = ql203("""\
        if other:
            gm.eval = nn.Module().eval
        gm.eval()
        """)
    assert message.endswith(RAISES)


def test_graph_handed_on_between_keeps_the_message():
    [(_, message, _)] = ql203("""\
        gm.eval = nn.Module().eval
        calibrate(gm)
        gm.eval()
        """)
    assert message.endswith(RAISES)


def test_other_switch_or_other_name_keeps_the_message():
    for body in (
        "gm.train = nn.Module().train\ngm.eval()\n",  # another switch replaced
        "other.eval = nn.Module().eval\ngm.eval()\n",  # another object's switch
    ):
        [(_, message, _)] = ql203(body)
        assert message.endswith(RAISES)


def test_replacements_it_cannot_place_keep_the_message():
    for value in (
        "other.eval",  # an instance's switch, or a class's: not told apart
        "Net.eval",  # a project class's function: what it does is not read
        "functools.partial(nn.Module.eval, other)",
        "getattr(other, 'eval')",
    ):
        [(_, message, _)] = ql203(f"gm.eval = {value}\ngm.eval()\n")
        assert message.endswith(RAISES), value


def test_noop_replacement_still_allows_the_graph():
    assert ql203("gm.eval = lambda: None\ngm.eval()\n") == []
