"""QL201: a capture helper handed, as a callable, to a wrapper function that evals the model
before calling it (`run_evaled(quantize, model, ...)` with `def run_evaled(helper, model,
*args): model.eval(); return helper(model, *args)`; issue 14, item 7's other side).

Such a wrapper is a relay (`callback_relays`) that puts the module it relays in eval mode on
every path to each call of the callback, with nothing in between that may switch it again:
the helper's parameter is in eval mode for that caller, whatever the caller passed
(`relayed_functions`), and a lambda it is handed takes its parameter in eval mode
(`relayed_lambdas`). Before, the wrapper's eval made it no relay at all, and the name handed
over was a use qlint could not read: the helper was judged as if its callers were unknown.
Quiet for those wrappers; loud for the look-alikes that leave a path in the caller's (or an
unknown) mode. The QAT side follows: a QAT helper handed over that way is captured in eval
mode (QL202).
"""

from __future__ import annotations

import ast
import textwrap

from qlint.analysis.flow.callback_relays import Relay, relays
from tests.conftest import lint

HEAD = """\
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
def run_evaled(helper, model, q, x):
{body}
"""
EVALED = "    model.eval()\n    return helper(model, q, x)"
CALLER = """

def main(q, x):
    run_evaled(quantize, Net(), q, x)
"""


def _rows(src: str, tmp_path, name: str = "m.py", select=("QL201",)) -> list[int]:
    root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
    (root / ".git").mkdir(parents=True)
    return [d.range.start.row for d in lint(HEAD + src, path=str(root / name), select=select)]


def _wrapped(body: str) -> str:
    return WRAPPER.format(body=textwrap.indent(textwrap.dedent(body), "    ").rstrip("\n")) + CALLER


# -- quiet: the wrapper evals the model on every path before it hands it on ---------------------------
def test_a_wrapper_that_evals_before_the_call_vouches_for_the_helper(tmp_path):
    assert _rows(WRAPPER.format(body=EVALED) + CALLER, tmp_path) == []


QUIET = {
    "rebinds the evaled model": "model = model.eval()\nreturn helper(model, q, x)",
    "switches training off": "model.train(False)\nreturn helper(model, q, x)",
    "on both arms of a branch": "if q is None:\n    model.eval()\nelse:\n    model.eval()\nreturn helper(model, q, x)",
    "moves it between": "model.eval()\nmodel = model.to('cpu')\nwith torch.no_grad():\n    return helper(model, q, x)",
    "asks what it is": (
        "model.eval()\nif not isinstance(model, nn.Module):\n    raise TypeError\nreturn helper(model, q, x)"
    ),
    "an alias of the evaled model": "model.eval()\nm = model\nreturn helper(m, q, x)",
}


def test_look_alikes_that_eval_on_every_path_are_quiet(tmp_path):
    for why, body in QUIET.items():
        assert _rows(_wrapped(body), tmp_path) == [], why


def test_a_lambda_handed_to_the_wrapper_takes_the_evaled_model(tmp_path):
    src = (
        WRAPPER.format(body=EVALED)
        + """

def main(q, x):
    run_evaled(lambda m, q, x: prepare_pt2e(export(m, (x,)).module(), q), Net(), q, x)
    quantize(Net().eval(), q, x)
"""
    )
    assert _rows(src, tmp_path) == []
    plain = src.replace("    model.eval()\n", "")
    row = (HEAD + plain).splitlines().index(
        "    run_evaled(lambda m, q, x: prepare_pt2e(export(m, (x,)).module(), q), Net(), q, x)"
    ) + 1
    assert _rows(plain, tmp_path) == [row]


def test_a_wrapper_of_another_module_vouches_too(tmp_path):
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "runners.py").write_text(WRAPPER.format(body=EVALED))
    (root / "main.py").write_text(
        "from helpers import Net, quantize\nfrom runners import run_evaled\n\n\n"
        "def main(q, x):\n    run_evaled(quantize, Net(), q, x)\n"
    )
    (root / "helpers.py").write_text(HEAD)
    path = str(root / "helpers.py")
    assert lint(HEAD, path=path, select=("QL201",)) == []
    (root / "runners.py").write_text(WRAPPER.format(body="    return helper(model, q, x)"))
    assert [d.range.start.row for d in lint(HEAD, path=path, select=("QL201",))] == [CAPTURE_ROW]


# -- loud: a path reaches the call without the eval, or something may switch it again ---------------
LOUD = {
    "evals on one branch only": "if q is None:\n    model.eval()\nreturn helper(model, q, x)",
    "evals after the call": "out = helper(model, q, x)\nmodel.eval()\nreturn out",
    "hands the model on between": "model.eval()\nprepare_model(model)\nreturn helper(model, q, x)",
    "hands a part on between": "model.eval()\nfreeze(model.bn)\nreturn helper(model, q, x)",
    "calls a method of its own between": "model.eval()\nmodel.fuse()\nreturn helper(model, q, x)",
    "gives it a part between": "model.eval()\nmodel.bn = nn.BatchNorm1d(3)\nreturn helper(model, q, x)",
    "trains it": "model.train()\nreturn helper(model, q, x)",
    "evals another module": "q.eval()\nreturn helper(model, q, x)",
    "evals a part only": "for c in model.children():\n    c.eval()\nreturn helper(model, q, x)",
    "evals in a nested function": "def prep():\n    model.eval()\n\nprep()\nreturn helper(model, q, x)",
    "calls back from a handler": (
        "model.eval()\ntry:\n    prepare_model(model)\nexcept ValueError:\n    return helper(model, q, x)"
    ),
    "calls back with another model": "model.eval()\nreturn helper(Net(), q, x)",
    "evals inside a match": "match q:\n    case None:\n        model.eval()\nreturn helper(model, q, x)",
}


def test_look_alikes_that_leave_a_path_in_another_mode_are_loud(tmp_path):
    for why, body in LOUD.items():
        assert _rows(_wrapped(body), tmp_path) == [CAPTURE_ROW], why


def test_a_wrapper_handing_the_model_to_a_second_relay_is_followed_no_further(tmp_path):
    # `run_evaled` hands the callback on instead of calling it: the eval is not known to reach it.
    src = _wrapped("model.eval()\nreturn apply_to(helper, model, q, x)") + (
        "\n\ndef apply_to(fn, m, q, x):\n    return fn(m, q, x)\n"
    )
    assert _rows(src, tmp_path) == [CAPTURE_ROW]


def test_relay_summaries():
    def of(src: str) -> tuple[Relay, ...]:
        return relays(ast.parse(textwrap.dedent(src)).body[0])

    assert of("def f(fn, m):\n    m.eval()\n    fn(m)\n") == (Relay(0, 1, 0, True),)
    assert of("def f(fn, m):\n    m.eval()\n    for c in m.children():\n        fn(c)\n") == (Relay(0, 1, 0, True),)
    # Without an eval: the caller's mode, as before.
    assert of("def f(fn, m):\n    fn(m)\n") == (Relay(0, 1, 0, False),)
    # An eval on some paths (or undone) gives no relay: the mode is neither sure nor the caller's.
    assert of("def f(fn, m, flag):\n    if flag:\n        m.eval()\n    fn(m)\n") == ()
    assert of("def f(fn, m):\n    m.eval()\n    prep(m)\n    fn(m)\n") == ()
    # A module evaled and not handed over (or rebound, `m.bn = ...` included) gives none either.
    assert of("def f(fn, m, o):\n    o.eval()\n    fn(m)\n") == ()
    assert of("def f(fn, m):\n    m.eval()\n    m = g(m)\n    fn(m)\n") == ()
    # Another parameter handed over with the evaled one is in the caller's mode.
    assert of("def f(fn, m, o):\n    o.eval()\n    fn(m, o)\n") == (Relay(0, 1, 0, False), Relay(0, 2, 1, True))


# -- QAT: the helper is handed the model in eval mode -----------------------------------------------
def test_a_qat_helper_handed_to_an_evaling_wrapper_is_captured_in_eval_mode(tmp_path):
    qat = _wrapped("model.eval()\nreturn helper(model, q, x)").replace("run_evaled(quantize,", "run_evaled(train_q,")
    qat += "\n\ndef train_q(model, q, x):\n    return prepare_qat_pt2e(export(model, (x,)).module(), q)\n"
    row = (HEAD + qat).splitlines().index("    return prepare_qat_pt2e(export(model, (x,)).module(), q)") + 1
    found = lint(HEAD + qat, path=str(tmp_path / "qat.py"), select=("QL202",))
    assert [d.range.start.row for d in found] == [row]
    assert "eval mode" in found[0].message
    assert _rows(qat.replace("    model.eval()\n", ""), tmp_path, select=("QL202",)) == []


# -- decorators: a wrapper opening with the eval of its parameter (`pass_through.evaled_parameters`) ------
DECORATOR = """
import functools


def evaled(fn):
    @functools.wraps(fn)
    def wrapper(model, *args):
{opening}
        return fn(model, *args)

    return wrapper


@evaled
def quantize_decorated(model, q, x):
    return prepare_pt2e(export(model, (x,)).module(), q)


def main(q, x):
    quantize(Net().eval(), q, x)
    quantize_decorated(Net(), q, x)
"""


def _decorated_row(src: str) -> int:
    return (HEAD + src).splitlines().index("def quantize_decorated(model, q, x):") + 2


def _decorated(opening: str) -> str:
    return DECORATOR.format(opening=textwrap.indent(textwrap.dedent(opening), "        ").rstrip("\n"))


def test_a_decorator_whose_wrapper_evals_the_model_first_vouches_for_the_function(tmp_path):
    assert _rows(_decorated("model.eval()"), tmp_path) == []
    assert _rows(_decorated("model.train(False)"), tmp_path) == []
    # Stacked with a pass-through and a gradient switch.
    stacked = (
        _decorated("model.eval()").replace("@evaled\n", "@torch.no_grad()\n@evaled\n@passing\n")
        + "\n\ndef passing(fn):\n    return fn\n"
    )
    assert _rows(stacked, tmp_path) == []
    # On a method: the wrapper's positions are the method's.
    method = _decorated("model.eval()").replace("def wrapper(model, *args)", "def wrapper(self, model, *args)")
    method = method.replace("return fn(model, *args)", "return fn(self, model, *args)").replace(
        "@evaled\ndef quantize_decorated(model, q, x):\n    return",
        "class Q:\n    @evaled\n    def quantize_decorated(self, model, q, x):\n        return",
    )
    method = method.replace("    quantize_decorated(Net(), q, x)", "    Q().quantize_decorated(Net(), q, x)")
    assert _rows(method, tmp_path) == []


def test_decorators_that_leave_a_path_without_the_eval_keep_the_report(tmp_path):
    for why, opening in {
        "evals on a branch": "if args:\n    model.eval()",
        "evals another parameter": "args[0].eval()",
        "hands the model on after the eval": "model.eval()\nprepare_model(model)",
        "trains it": "model.train()",
    }.items():
        src = _decorated(opening)
        assert _rows(src, tmp_path) == [_decorated_row(src)], why
    # The eval after the call, and a wrapper calling the function with another model.
    after = DECORATOR.replace(
        "{opening}\n        return fn(model, *args)",
        "        out = fn(model, *args)\n        model.eval()\n        return out",
    )
    assert _rows(after, tmp_path) == [_decorated_row(after)]
    fresh = _decorated("model.eval()").replace("return fn(model, *args)", "return fn(Net(), *args)")
    assert _rows(fresh, tmp_path) == [_decorated_row(fresh)]
