"""QL201/QL202: a relay or a decorator's wrapper that hands the model on evaled in the call's
argument (`return helper(model.eval(), q, x)`, `return fn(model.eval(), *args)`; issue 14,
stop 61's carried `helper(model.eval())`).

`nn.Module.eval` returns the module itself (`return self.train(False)`), so the callback (or the
decorated function) gets the very module it would get after a statement `model.eval()`. The
eval in the argument was a switch the relay reading did not allow (`relay_evals.evals`), and
the wrapper's call was no exact pass-through (`decorator_verdicts._exact`): the helper was judged as
if its callers were unknown (QL201 reported a PTQ capture whose every path is evaled; QL202
missed a QAT capture in eval mode). Now such an eval counts for that call, and for later ones
when nothing in the statement may switch the module again. Judged as before: `.train()` in the
argument, an eval on some paths only, a part or another module evaled, another argument that
may switch the model, a copy evaled.
"""

from __future__ import annotations

import ast
import textwrap

from qlint.analysis.flow.callback_relays import Relay, relays
from tests.conftest import lint

HEAD = """\
import copy
import functools

import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        return self.bn(x)


def quantize(model, q, x):
    return prepare_pt2e(export(model, (x,)).module(), q)

"""
CAPTURE_ROW = HEAD.splitlines().index("    return prepare_pt2e(export(model, (x,)).module(), q)") + 1

WRAPPER = """
def run(helper, model, q, x):
{body}


def main(q, x):
    run(quantize, Net(), q, x)
"""


def _rows(src: str, tmp_path, select=("QL201",)) -> list[int]:
    root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
    (root / ".git").mkdir(parents=True)
    return [d.range.start.row for d in lint(HEAD + src, path=str(root / "m.py"), select=select)]


def _wrapped(body: str) -> str:
    return WRAPPER.format(body=textwrap.indent(textwrap.dedent(body), "    ").rstrip("\n"))


# -- relays: the callback handed the module evaled ----------------------------------------------------
QUIET = {
    "hands it evaled": "return helper(model.eval(), q, x)",
    "hands it with training off": "return helper(model.train(False), q, x)",
    "evaled on both arms": "if q is None:\n    return helper(model.eval(), q, x)\nreturn helper(model.eval(), q, x)",
    "evaled by the first of two calls": "helper(model.eval(), q, x)\nreturn helper(model, q, x)",
    "moved between two calls": "out = helper(model.eval(), q, x)\nmodel = model.to('cpu')\nreturn helper(model, q, x)",
}


def test_a_relay_handing_the_model_evaled_vouches_for_the_helper(tmp_path):
    for why, body in QUIET.items():
        assert _rows(_wrapped(body), tmp_path) == [], why


LOUD = {
    "hands it trained": "return helper(model.train(), q, x)",
    "hands it as it came": "return helper(model, q, x)",
    "evaled on one arm only": "if q is None:\n    return helper(model.eval(), q, x)\nreturn helper(model, q, x)",
    "another argument may switch it": "return helper(model.eval(), prepare_model(model), x)",
    "switched again before the next call": "helper(model.eval(), q, x)\nfreeze(model)\nreturn helper(model, q, x)",
    "evals a part": "return helper(model.bn.eval(), q, x)",
    "evals another module": "other = Net()\nreturn helper(other.eval(), q, x)",
    "evals a copy": "return helper(copy.deepcopy(model).eval(), q, x)",
    "a copy evaled, the model handed": "copy.deepcopy(model).eval()\nreturn helper(model, q, x)",
    "an eval handed to another call": "prepare_model(model.eval())\nreturn helper(model, q, x)",
    "evaled in a branch's test": "if helper(model.eval(), q, x):\n    pass\nreturn helper(model, q, x)",
}


def test_look_alikes_keep_the_report(tmp_path):
    for why, body in LOUD.items():
        assert _rows(_wrapped(body), tmp_path) == [CAPTURE_ROW], why


def test_a_lambda_handed_to_the_relay_takes_the_evaled_model(tmp_path):
    src = """
def run(helper, model, q, x):
    return helper(model.eval(), q, x)


def main(q, x):
    run(lambda m, q, x: prepare_pt2e(export(m, (x,)).module(), q), Net(), q, x)
    quantize(Net().eval(), q, x)
"""
    assert _rows(src, tmp_path) == []
    plain = src.replace("helper(model.eval(), q, x)", "helper(model, q, x)")
    row = (HEAD + plain).splitlines().index(
        "    run(lambda m, q, x: prepare_pt2e(export(m, (x,)).module(), q), Net(), q, x)"
    ) + 1
    assert _rows(plain, tmp_path) == [row]


def test_a_relay_of_another_module_vouches_too(tmp_path):
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "runners.py").write_text("def run(helper, model, q, x):\n    return helper(model.eval(), q, x)\n")
    (root / "main.py").write_text(
        "from helpers import Net, quantize\nfrom runners import run\n\n\n"
        "def main(q, x):\n    run(quantize, Net(), q, x)\n"
    )
    (root / "helpers.py").write_text(HEAD)
    path = str(root / "helpers.py")
    assert lint(HEAD, path=path, select=("QL201",)) == []
    (root / "runners.py").write_text("def run(helper, model, q, x):\n    return helper(model.train(), q, x)\n")
    assert [d.range.start.row for d in lint(HEAD, path=path, select=("QL201",))] == [CAPTURE_ROW]


def test_relay_summaries():
    def of(src: str) -> tuple[Relay, ...]:
        return relays(ast.parse(textwrap.dedent(src)).body[0])

    assert of("def f(fn, m):\n    fn(m.eval())\n") == (Relay(0, 1, 0, True),)
    assert of("def f(fn, m):\n    fn(m.train(False))\n") == (Relay(0, 1, 0, True),)
    assert of("def f(fn, m):\n    fn(m.eval())\n    fn(m)\n") == (Relay(0, 1, 0, True),)
    # Another module parameter handed beside it keeps the caller's mode.
    assert of("def f(fn, m, o):\n    fn(m.eval(), o)\n") == (Relay(0, 1, 0, True), Relay(0, 2, 1, False))
    # An eval handed over on some paths only, or undone before a later call: no relay.
    assert of("def f(fn, m, c):\n    if c:\n        return fn(m.eval())\n    fn(m)\n") == ()
    assert of("def f(fn, m):\n    fn(m.eval())\n    prep(m)\n    fn(m)\n") == ()
    assert of("def f(fn, m):\n    fn(m.eval(), prep(m))\n") == ()
    # `.train()` handed over is a switch no relay allows; an eval of something else is of unknown reach.
    assert of("def f(fn, m):\n    fn(m.train())\n") == ()
    assert of("def f(fn, m, o):\n    fn(m, o.eval().bn)\n") == ()
    assert of("def f(fn, m):\n    g(m.eval())\n    fn(m)\n") == ()


# -- QAT: the helper is handed the model in eval mode --------------------------------------------------
QAT = """
def train_q(model, q, x):
    return prepare_qat_pt2e(export(model, (x,)).module(), q)


def run(helper, model, q, x):
    return helper(model.eval(), q, x)


def main(q, x):
    run(train_q, Net(), q, x)
"""


def test_a_qat_helper_handed_the_model_evaled_is_captured_in_eval_mode(tmp_path):
    row = (HEAD + QAT).splitlines().index("    return prepare_qat_pt2e(export(model, (x,)).module(), q)") + 1
    found = lint(HEAD + QAT, path=str(tmp_path / "qat.py"), select=("QL202",))
    assert [d.range.start.row for d in found] == [row]
    assert "eval mode" in found[0].message
    for kept in ("helper(model, q, x)", "helper(model.train(), q, x)"):
        assert _rows(QAT.replace("helper(model.eval(), q, x)", kept), tmp_path, select=("QL202",)) == [], kept


# -- decorators: the wrapper's call hands the parameter evaled (`pass_through.evaled_parameters`) -------
DECORATOR = """
def evaled(fn):
    @functools.wraps(fn)
    def wrapper(model, *args):
        return fn(model.eval(), *args)

    return wrapper


@evaled
def quantize_decorated(model, q, x):
    return prepare_pt2e(export(model, (x,)).module(), q)


def main(q, x):
    quantize(Net().eval(), q, x)
    quantize_decorated(Net(), q, x)
"""
DECORATED_ROW = (HEAD + DECORATOR).splitlines().index("def quantize_decorated(model, q, x):") + 2


def test_a_decorator_handing_the_model_evaled_vouches_for_the_function(tmp_path):
    assert _rows(DECORATOR, tmp_path) == []
    assert _rows(DECORATOR.replace("model.eval()", "model.train(False)"), tmp_path) == []
    both = DECORATOR.replace(
        "        return fn(model.eval(), *args)",
        "        if model is None:\n            return fn(model.eval(), *args)\n        return fn(model.eval(), *args)",
    )
    assert _rows(both, tmp_path) == []


def test_decorators_that_leave_a_path_without_the_eval_keep_the_report(tmp_path):
    for why, call in {
        "trains it": "return fn(model.train(), *args)",
        "hands it as it came": "return fn(model, *args)",
        "hands a copy evaled": "return fn(copy.deepcopy(model).eval(), *args)",
    }.items():
        src = DECORATOR.replace("return fn(model.eval(), *args)", call)
        assert _rows(src, tmp_path) == [DECORATED_ROW], why
    one_arm = DECORATOR.replace(
        "        return fn(model.eval(), *args)",
        "        if model is None:\n            return fn(model.eval(), *args)\n        return fn(model, *args)",
    )
    row = (HEAD + one_arm).splitlines().index("def quantize_decorated(model, q, x):") + 2
    assert _rows(one_arm, tmp_path) == [row]
