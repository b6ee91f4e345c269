"""QL201: a method under a project decorator that hands it its callers' arguments unchanged
(`def deco(fn): return fn`, a `functools.wraps` wrapper calling `fn(*args, **kwargs)`) is read
as the undecorated method: its callers vouch for what it captures, and a call of it returns
what its body returns when the wrapper returns that unchanged (issue 14). A decorator that
changes the arguments, catches and returns something else, is a factory or a library's stays
as before: the method is not read."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import check_file, lint, package_repository

HEAD = """\
import functools

from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)


"""

LOGGED = """\
def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        print("calling", fn.__name__)
        out = fn(*args, **kwargs)
        return out

    return wrapper
"""

BUILDER = """

class Builder:
    def __init__(self, q):
        self.q = q

    @logged
    def quantize(self, model, x):
        return prepare_pt2e(export(model, (x,)).module(), self.q)


def main(q, x):
    Builder(q).quantize(Net().eval(), x)
"""

READY = """

class Ready:
    @logged
    def ready(self, model):
        return model


def main(q, x):
    m = Ready().ready(Net())
    prepare_pt2e(export(m, (x,)).module(), q)
"""

CALLER_LEFT = "(as parameter `model`, in whatever mode the caller left it)"

# Decorators that are no exact pass-through, each in place of `logged`.
NOT_PASSING = {
    "changes the arguments": """\
def logged(fn):
    def wrapper(*args, **kwargs):
        return fn(*args[:2], **kwargs)

    return wrapper
""",
    "drops the keywords": """\
def logged(fn):
    def wrapper(*args, **kwargs):
        return fn(*args)

    return wrapper
""",
    "names the model": """\
def logged(fn):
    def wrapper(self, model, *args, **kwargs):
        return fn(self, model.train(), *args, **kwargs)

    return wrapper
""",
    "changes the keywords": """\
def logged(fn):
    def wrapper(*args, **kwargs):
        kwargs.pop("x", None)
        return fn(*args, **kwargs)

    return wrapper
""",
    "a factory": """\
def logged(fn=None):
    return functools.wraps(fn)
""",
    # d2go's shape (`PATCHED` below), with one branch doing something else.
    "evals the model on one branch": """\
def logged(fn):
    def wrapper(self, model, *args, **kwargs):
        if model.training:
            model.eval()
            return fn(self, model, *args, **kwargs)
        return fn(self, model, *args, **kwargs)

    return wrapper
""",
    "returns the model on one branch": """\
def logged(fn):
    def wrapper(self, model, *args, **kwargs):
        if not self.q:
            return model
        return fn(self, model, *args, **kwargs)

    return wrapper
""",
    "retries": """\
def logged(fn):
    def wrapper(self, model, *args, **kwargs):
        try:
            return fn(self, model, *args, **kwargs)
        except RuntimeError:
            return fn(self, model, *args, **kwargs)

    return wrapper
""",
    "calls it through another def": """\
def logged(fn):
    def again(self, model, *args):
        return fn(self, model.train(), *args)

    def wrapper(self, model, *args, **kwargs):
        if kwargs:
            return fn(self, model, *args, **kwargs)
        return again(self, model, *args)

    return wrapper
""",
}

# d2go's `@mock_quantization_type`: set-up in the decorator (an import, a branch, a helper def),
# then a wrapper with parameters of its own that returns `fn(...)` of them on each of three
# branches, one under `mock.patch`, reading a parameter's attribute only to choose the branch.
PATCHED = """\
def logged(fn):
    import builtins
    import functools as ft
    from unittest import mock

    real_type = builtins.type
    if real_type is None:
        print("no type")

    def _new_type(obj):
        return real_type(obj)

    @ft.wraps(fn)
    def wrapper(self, model, *args, **kwargs):
        if isinstance(model, nn.Linear) or self.q is None:
            print(f"nothing to patch for {model}")
            return fn(self, model, *args, **kwargs)
        if not self.q.eager_mode:
            return fn(self, model, *args, **kwargs)
        with mock.patch("torch.nn.quantized.modules.linear.type") as mock_type:
            mock_type.side_effect = _new_type
            return fn(self, model, *args, **kwargs)

    return wrapper
"""


def ql201(src: str):
    return {d.range.start.row: d.message for d in lint(HEAD + textwrap.dedent(src), select=("QL201",))}


def _row(src: str, needle: str) -> int:
    return next(i for i, line in enumerate((HEAD + src).splitlines(), 1) if needle in line)


def test_a_wrapped_method_is_vouched_for_by_its_callers():
    src = LOGGED + BUILDER
    assert ql201(src) == {}
    trained = src.replace("Net().eval()", "Net()")
    (message,) = ql201(trained).values()
    assert f"the call at line {_row(trained, 'Builder(q).quantize(')} passes it built at line" in message


def test_an_identity_decorator_and_one_of_another_module(tmp_path):
    identity = "HOOKS = []\n\n\ndef logged(fn):\n    HOOKS.append(fn.__name__)\n    return fn\n"
    assert ql201(identity + BUILDER) == {}
    # The decorator imported from another module of the project.
    deco = "from functools import wraps\n\n\n" + LOGGED.replace("@functools.wraps", "@wraps")
    main = HEAD + "from pkg.deco import logged\n" + BUILDER
    package_repository(tmp_path, deco=deco, main=main)
    assert check_file(tmp_path / "pkg" / "main.py", ("QL201",)).diagnostics == []
    (tmp_path / "pkg" / "main.py").write_text(main.replace("Net().eval()", "Net()"))
    (d,) = check_file(tmp_path / "pkg" / "main.py", ("QL201",)).diagnostics
    assert "passes it built at line" in d.message


def test_a_wrapper_returning_the_call_of_its_own_parameters_on_every_branch_passes_through():
    src = PATCHED + BUILDER
    assert ql201(src) == {}
    trained = src.replace("Net().eval()", "Net()")
    (message,) = ql201(trained).values()
    assert f"the call at line {_row(trained, 'Builder(q).quantize(')} passes it built at line" in message
    (message,) = ql201(PATCHED + READY).values()
    assert "in train mode (built at line" in message


def test_the_result_of_a_wrapped_method_is_its_body_s():
    src = LOGGED + READY
    (message,) = ql201(src).values()
    assert f"in train mode (built at line {_row(src, 'Ready().ready(Net())')}" in message


@pytest.mark.parametrize("why", sorted(NOT_PASSING))
def test_decorators_that_are_no_pass_through_leave_the_method_unread(why):
    src = NOT_PASSING[why] + BUILDER
    assert CALLER_LEFT in ql201(src)[_row(src, "return prepare_pt2e(")]


def test_a_library_decorator_leaves_the_method_unread():
    src = BUILDER.replace("@logged", "@functools.lru_cache")
    assert CALLER_LEFT in ql201(src)[_row(src, "return prepare_pt2e(")]


@pytest.mark.parametrize(
    "body",
    [
        # Catches and returns something else.
        "try:\n            return fn(*args, **kwargs)\n        except Exception:\n            return None",
        # May end without returning the result.
        "out = fn(*args, **kwargs)\n        if out is not None:\n            return out",
        # Hands the result to something that may change it.
        "out = fn(*args, **kwargs)\n        out.train()\n        return out",
        # Calls the method twice.
        "fn(*args, **kwargs)\n        return fn(*args, **kwargs)",
    ],
)
def test_a_wrapper_that_may_not_return_the_result_leaves_the_method_unread(body):
    deco = f"def logged(fn):\n    def wrapper(*args, **kwargs):\n        {body}\n\n    return wrapper\n"
    assert ql201(deco + READY) == {}
    src = deco + BUILDER
    assert CALLER_LEFT in ql201(src)[_row(src, "return prepare_pt2e(")]
