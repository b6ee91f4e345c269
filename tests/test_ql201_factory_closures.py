"""QL201: a model handed to the callable a project factory returns (issue 14, item 4).

`model = make_transform(kind)(model)`, or `t = make_transform(kind)` then `model = t(model)`,
where the factory returns a lambda, a function it defines or a function of its module: the
application runs that callable, read as a helper called right there (`factory_closures`). One
that wraps the model in a new module of a class holding `Dropout` leaves a module in train
mode, reported as `model = Wrapped(model)` is; one that evals what it builds, or hands the
model back as it came, is quiet. A factory returning anything else on some path, one the
project does not define, a name rebound before the application: the call is unknown, as before.
"""

from __future__ import annotations

import textwrap

import pytest

from qlint.engine import check_source
from qlint.settings import Settings
from tests.conftest import check_file, package_repository, rows_of
from tests.snippets import NET_BN1D

# A wrapper whose content depends on the mode: a module built around the model in train mode
# is a bug to capture.
WRAPPED = """\
class Wrapped(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m
        self.drop = nn.Dropout(0.1)

    def forward(self, x):
        return self.drop(self.m(x))
"""

HEAD = (
    NET_BN1D
    + "\n\n"
    + WRAPPED
    + """

class Plain(nn.Module):
    def __init__(self, m):
        super().__init__()
        self.m = m

    def forward(self, x):
        return self.m(x)


def wrap(m):
    return Wrapped(m)


def keep(m):
    return m


def deco(f):
    def inner(*a):
        return f(*a)

    return inner


TABLE = {}
"""
)

RUN = """

def run(q, flag):
    model = Net().eval()
    USE
    gm = torch.export.export(model, (torch.randn(2, 4),)).module()
    return prepare_pt2e(gm, q)
"""


def _source(factory: str, use: str) -> str:
    body = textwrap.indent(textwrap.dedent(use).strip(), "    ").lstrip()
    return HEAD + "\n\n" + textwrap.dedent(factory) + RUN.replace("USE", body)


def _found(factory: str, use: str = "model = make(1)(model)"):
    text = _source(factory, use)
    result = check_source(text, "snippet.py", Settings(select=("QL201",)))
    assert not result.errors, result.errors
    return text, result.diagnostics


def _capture_row(text: str) -> int:
    return text.splitlines().index("    gm = torch.export.export(model, (torch.randn(2, 4),)).module()") + 1


LAMBDA = """\
def make(kind):
    return lambda m: Wrapped(m)
"""

LOUD = {
    "a lambda applied at once": (LAMBDA, "model = make(1)(model)"),
    "a lambda applied by name": (LAMBDA, "t = make(1)\nmodel = t(model)"),
    "by keyword": (LAMBDA, "model = make(1)(m=model)"),
    "in a loop": (LAMBDA, "for k in (1, 2):\n    model = make(k)(model)"),
    "a function it defines": (
        """\
        def make(kind):
            def apply(m):
                return Wrapped(m)

            return apply
        """,
        "model = make(1)(model)",
    ),
    "a function of its module": ("def make(kind):\n    return wrap\n", "model = make(1)(model)"),
    "one of two callables": (
        """\
        def make(kind):
            if kind:
                return lambda m: Wrapped(m)
            return keep
        """,
        "model = make(1)(model)",
    ),
    "one evaling the model, then wrapping it": (
        """\
        def make(kind):
            def apply(m):
                m.eval()
                return Wrapped(m)

            return apply
        """,
        "model = make(1)(model)",
    ),
    "one training the model it is handed": ("def make(kind):\n    return lambda m: m.train()\n", "make(1)(model)"),
    "a factory written in the function": (
        "",
        "def make(kind):\n    return lambda m: Wrapped(m)\n\nmodel = make(1)(model)",
    ),
}


@pytest.mark.parametrize(("factory", "use"), list(LOUD.values()), ids=list(LOUD))
def test_what_the_factorys_callable_does_is_reported(factory, use):
    text, found = _found(factory, use)
    assert rows_of(found) == [_capture_row(text)]


def test_the_message_names_the_factory_and_the_application():
    text, (found,) = _found(LAMBDA, "t = make(1)\nmodel = t(model)")
    row = _capture_row(text) - 1
    assert f"built at line {row} by the closure `make` returns, and modules start in train mode" in found.message
    assert "in `Wrapped`, the mode changes Dropout" in found.message


def test_several_callables_are_several_paths():
    _, (found,) = _found(LOUD["one of two callables"][0])
    assert "by the closure `make` returns" in found.message
    assert "runs on some paths only" in found.message  # `Net().eval()` holds on `keep`'s path


QUIET = {
    "a lambda evaling what it builds": ("def make(kind):\n    return lambda m: Wrapped(m).eval()\n", None),
    "one handing the model back": ("def make(kind):\n    return lambda m: m\n", None),
    "a function of its module handing it back": ("def make(kind):\n    return keep\n", None),
    "a wrapper with nothing mode-dependent": ("def make(kind):\n    return lambda m: Plain(m)\n", None),
    "one evaling the model it is handed": (
        """\
        def make(kind):
            def apply(m):
                m.eval()
                return m

            return apply
        """,
        "model.train()\nmodel = make(1)(model)",
    ),
    "the model evaled after": (LAMBDA, "model = make(1)(model)\nmodel.eval()"),
    "one branch returning a table's item": (
        """\
        def make(kind):
            if kind:
                return lambda m: Wrapped(m)
            return TABLE[kind]
        """,
        None,
    ),
    "one branch returning None": (
        """\
        def make(kind):
            if kind:
                return None
            return lambda m: Wrapped(m)
        """,
        None,
    ),
    "a parameter returned": ("def make(fn):\n    return fn\n", "model = make(wrap)(model)"),
    "a factory the project does not define": ("from somelib import make\n", None),
    "a decorated factory": ("@deco\n" + LAMBDA, None),
    "a generator": ("def make(kind):\n    yield 1\n    return lambda m: Wrapped(m)\n", None),
    "an async factory": ("async def make(kind):\n    return lambda m: Wrapped(m)\n", None),
    "a name rebound before the application": (LAMBDA, "t = make(1)\nt = keep\nmodel = t(model)"),
    "a name rebound on one path": (LAMBDA, "t = make(1)\nif flag:\n    t = keep\nmodel = t(model)"),
    "a function it defines twice": (
        """\
        def make(kind):
            if kind:
                def apply(m):
                    return Wrapped(m)
            else:
                def apply(m):
                    return m
            return apply
        """,
        None,
    ),
    "a local rebinding the returned name": (
        """\
        def make(kind):
            apply = TABLE[kind]
            return apply
        """,
        None,
    ),
    "a module function rebound in the module": ("def make(kind):\n    return wrap\n\n\nwrap = keep\n", None),
}


@pytest.mark.parametrize(("factory", "use"), list(QUIET.values()), ids=list(QUIET))
def test_look_alikes_stay_quiet(factory, use):
    _, found = _found(factory, use or "model = make(1)(model)")
    assert found == []


def test_a_factory_of_another_module(tmp_path):
    transforms = (
        "from torch import nn\n\n\n"
        + WRAPPED
        + """

def make_transform(kind):
    return lambda m: Wrapped(m)


def make_evaled(kind):
    return lambda m: Wrapped(m).eval()
"""
    )
    run = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from pkg.transforms import make_evaled, make_transform


def run(q):
    model = nn.Linear(4, 4).eval()
    model = make_transform("wrap")(model)
    gm = torch.export.export(model, (torch.randn(1, 4),)).module()
    return prepare_pt2e(gm, q)


def run_evaled(q):
    model = nn.Linear(4, 4).eval()
    model = make_evaled("wrap")(model)
    gm = torch.export.export(model, (torch.randn(1, 4),)).module()
    return prepare_pt2e(gm, q)
"""
    root = package_repository(tmp_path / "repo", transforms=transforms, run=run)
    (found,) = check_file(root / "pkg" / "run.py", ("QL201",)).diagnostics
    assert found.range.start.row == 11
    assert "built at line 10 by the closure `make_transform` returns" in found.message
