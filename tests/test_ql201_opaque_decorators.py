"""QL201: a function or method under a project decorator that is no pass-through is not read
through its callers (issue 14; `pass_through.opaque`, `helper_callees.callee`).

A call of a decorated name runs what the decorator returned. A wrapper that trains, evals or
replaces the model it is handed, or hands back something else, makes the callers' arguments
and the body's result someone else's: the walk followed such calls as if undecorated, so a
helper a wrapper trains was vouched for by callers passing eval-mode models, and a builder a
wrapper evals was reported in train mode. Now the call is none the walk follows: the helper
is judged as if its callers were unknown, the builder's result is unknown. Pass-throughs
(`pass_through.transparent`), `torch.no_grad()`, a registry's `@register("key")` and a
library's decorators are read as before.
"""

from __future__ import annotations

import pytest

from tests.conftest import lint

HEAD = """\
import contextlib
import functools

import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(3)

    def forward(self, x):
        return self.bn(x)

"""
CALLER_LEFT = "(as parameter `model`, in whatever mode the caller left it)"

TRAINED = """
def trained(fn):
    def wrapper(model, *args):
        model.train()
        return fn(model, *args)

    return wrapper
"""
QUANTIZE = """
@{deco}
def quantize(model, q, x):
    return prepare_pt2e(export(model, (x,)).module(), q)


def main(q, x):
    quantize(Net(){mode}, q, x)
"""


def _found(src: str):
    return lint(HEAD + src, path="/tmp/opaque/m.py", select=("QL201",))


def _capture_row(src: str) -> int:
    lines = (HEAD + src).splitlines()
    return next(i for i, line in enumerate(lines, 1) if "prepare_pt2e(export(" in line)


# -- loud: callers no longer vouch through a decorator that is no pass-through -----------------------
DECORATORS = {
    "trains what it is handed": TRAINED,
    "hands the body a fresh model": """
def trained(fn):
    def wrapper(model, *args):
        return fn(Net(), *args)

    return wrapper
""",
    "a factory of the project": """
def retry(times):
    def deco(fn):
        def wrapper(*args, **kwargs):
            return fn(*args, **kwargs)

        return wrapper

    return deco
""",
}


@pytest.mark.parametrize("name", DECORATORS)
def test_a_helper_under_a_decorator_that_is_no_pass_through_is_judged_alone(name):
    deco = "retry(3)" if name == "a factory of the project" else "trained"
    src = DECORATORS[name] + QUANTIZE.format(deco=deco, mode=".eval()")
    (found,) = _found(src)
    assert found.range.start.row == _capture_row(src)
    assert CALLER_LEFT in found.message


def test_a_method_under_such_a_decorator_called_on_self_is_judged_alone():
    src = (
        TRAINED
        + """
class Builder:
    def __init__(self, q):
        self.q = q

    @trained
    def _quantize(self, model, x):
        return prepare_pt2e(export(model, (x,)).module(), self.q)

    def run(self, x):
        return self._quantize(Net().eval(), x)
"""
    )
    src = src.replace("def wrapper(model, *args):", "def wrapper(self, model, *args):").replace(
        "return fn(model, *args)", "return fn(self, model, *args)"
    )
    (found,) = _found(src)
    assert CALLER_LEFT in found.message


def test_a_nested_helper_under_such_a_decorator_is_judged_alone():
    src = (
        TRAINED
        + """
def main(q, x):
    @trained
    def quantize(model):
        return prepare_pt2e(export(model, (x,)).module(), q)

    quantize(Net().eval())
"""
    )
    (found,) = _found(src)
    assert CALLER_LEFT in found.message


def test_a_train_mode_caller_is_not_named_through_such_a_decorator():
    # The wrapper evals what it is handed on some paths: the caller's fresh `Net()` is not what
    # is captured on the others, so it is not named.
    evaled = TRAINED.replace("        model.train()\n", "        if args:\n            model.eval()\n")
    (found,) = _found(evaled + QUANTIZE.format(deco="trained", mode=""))
    assert CALLER_LEFT in found.message and "the call at line" not in found.message


def test_a_decorator_whose_wrapper_opens_by_evaling_the_model_vouches_for_it():
    # (`pass_through.evaled_parameters`, tests/test_ql201_evaled_relays.py has the wrapper functions.)
    evaled = TRAINED.replace("model.train()", "model.eval()")
    assert _found(evaled + QUANTIZE.format(deco="trained", mode="")) == []


# -- quiet: a builder whose wrapper evals its result is not reported in train mode ------------------------
def test_a_builder_whose_wrapper_evals_its_result_is_not_reported_in_train_mode():
    src = """
def evaled(fn):
    def wrapper(*args):
        return fn(*args).eval()

    return wrapper


@evaled
def build():
    return Net()


def main(q, x):
    m = build()
    prepare_pt2e(export(m, (x,)).module(), q)
"""
    assert _found(src) == []


# -- as before: decorators read as written -------------------------------------------------------------
READ_AS_WRITTEN = {
    "pass-through": (
        """
def trained(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper
""",
        "trained",
    ),
    "registry": (
        """
REGISTRY = {}


def register(name):
    def deco(fn):
        REGISTRY[name] = fn
        return fn

    return deco
""",
        'register("q")',
    ),
    "gradient switch": ("", "torch.no_grad()"),
}


@pytest.mark.parametrize("name", READ_AS_WRITTEN)
def test_decorators_read_as_written_keep_the_callers_verdicts(name):
    prelude, deco = READ_AS_WRITTEN[name]
    assert _found(prelude + QUANTIZE.format(deco=deco, mode=".eval()")) == []
    (found,) = _found(prelude + QUANTIZE.format(deco=deco, mode=""))
    assert "the call at line" in found.message  # the caller's fresh model, named


def test_a_library_decorator_is_read_as_before():
    src = """
@contextlib.contextmanager
def quantize(model, q, x):
    yield prepare_pt2e(export(model, (x,)).module(), q)


def main(q, x):
    with quantize(Net().eval(), q, x):
        pass
"""
    assert _found(src) == []
