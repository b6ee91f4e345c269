"""QL201: a factory that is a method, or whose call the module's top level makes (issue 14, item 4).

`self.make(kind)(model)`, `Builder.make(kind)(model)` for a `staticmethod` or `classmethod`,
and `T = make_transform("x")` at the top level applied in a function (`model = T(model)`) are
read as `make_transform(kind)(model)` is (`factory_closures`): a callable wrapping the model in
a new module holding `Dropout` leaves a train-mode module for the capture. Quiet: a callable
that evals what it builds; a `make` a class of the module that may derive from the walked one
defines again (its instances run their own); a method called on its class without being a
`staticmethod` or `classmethod`; a top-level name bound twice, or declared `global` in a
function (which may rebind it), or bound again in a function the application is written in;
a factory of another package.
"""

from __future__ import annotations

import textwrap

import pytest

from qlint.engine import check_source
from qlint.settings import Settings
from tests.conftest import check_file, package_repository, rows_of
from tests.test_ql201_factory_closures import HEAD, WRAPPED

CAPTURE = "gm = torch.export.export(model, (torch.randn(2, 4),)).module()"


def _found(src: str):
    text = HEAD + "\n\n" + textwrap.dedent(src)
    result = check_source(text, "snippet.py", Settings(select=("QL201",)))
    assert not result.errors, result.errors
    rows = [i + 1 for i, line in enumerate(text.splitlines()) if line.strip() == CAPTURE]
    return text, result.diagnostics, rows


CLASS = """\
class Exporter:
    MAKE

    def run(self, q):
        model = Net().eval()
        model = APPLY(model)
        gm = torch.export.export(model, (torch.randn(2, 4),)).module()
        return prepare_pt2e(gm, q)
"""


def exporter(make: str, apply: str = "self.make(1)", after: str = "") -> str:
    body = textwrap.indent(textwrap.dedent(make).strip(), "    ").lstrip()
    return CLASS.replace("MAKE", body).replace("APPLY", apply) + textwrap.dedent(after)


METHOD = "def make(self, kind):\n    return lambda m: Wrapped(m)\n"
STATIC = "@staticmethod\ndef make(kind):\n    return lambda m: Wrapped(m)\n"
CLASSMETHOD = "@classmethod\ndef make(cls, kind):\n    return lambda m: Wrapped(m)\n"
EVALED = "def make(self, kind):\n    return lambda m: Wrapped(m).eval()\n"


def in_class(header: str, method: str) -> str:
    """`method` written in a class of its own, after the `Exporter` module."""
    return f"\n\n{header}\n    " + method.replace("\n", "\n    ")


# What the module's top level binds, then the function applying it.
TOP = """\
def make(kind):
    return lambda m: Wrapped(m)


BINDING


def run(q):
    model = Net().eval()
    model = T(model)
    gm = torch.export.export(model, (torch.randn(2, 4),)).module()
    return prepare_pt2e(gm, q)
"""


def top(binding: str = "T = make(1)", after: str = "") -> str:
    return TOP.replace("BINDING", textwrap.dedent(binding).strip()) + textwrap.dedent(after)


LOUD = {
    "a method through self": exporter(METHOD),
    "a method by name": exporter(METHOD, "t = self.make(1)\n        model = t"),
    "a staticmethod through self": exporter(STATIC),
    "a staticmethod on the class": exporter(STATIC, "Exporter.make(1)"),
    "a classmethod on the class": exporter(CLASSMETHOD, "Exporter.make(1)"),
    "a classmethod through self": exporter(CLASSMETHOD),
    "a method of a base of the module": (
        in_class("class Base:", METHOD) + "\n\n" + exporter("pass").replace("Exporter:", "Exporter(Base):")
    ),
    "a subclass that does not override it": exporter(METHOD, after="\n\nclass Sub(Exporter):\n    pass\n"),
    "an unrelated class with its own make": exporter(METHOD, after=in_class("class Other:", EVALED)),
    "a top-level binding": top(),
    "a top-level binding of a staticmethod": top(in_class("class Builder:", STATIC) + "\n\nT = Builder.make(1)"),
    "a top-level binding read in a nested function": TOP.replace("BINDING", "T = make(1)").replace(
        "    model = T(model)\n", "    def apply(m):\n        return m\n\n    model = T(apply(model))\n"
    ),
}


@pytest.mark.parametrize("src", list(LOUD.values()), ids=list(LOUD))
def test_the_factorys_callable_is_read(src):
    _, found, rows = _found(src)
    assert rows_of(found) == rows[:1], found


def test_the_message_names_the_method():
    _, (found,), _ = _found(exporter(STATIC, "Exporter.make(1)"))
    assert "by the closure `make` returns, and modules start in train mode" in found.message


QUIET = {
    "a method whose closure evals": exporter(EVALED),
    "a method overridden in a subclass": exporter(METHOD, after=in_class("class Sub(Exporter):", EVALED)),
    "overridden two classes down": exporter(
        METHOD,
        after="\n\nclass Mid(Exporter):\n    pass\n" + in_class("class Sub(Mid):", EVALED),
    ),
    "overridden by an assignment": exporter(METHOD, after="\n\nclass Sub(Exporter):\n    make = None\n"),
    "a plain method on the class": exporter(METHOD, "Exporter.make(1)"),
    "a method under another decorator": exporter("@deco\n" + METHOD),
    "a method through an alias": exporter(STATIC, "fn = self.make\n        model = fn(1)"),
    "a top-level name bound twice": top("T = make(1)\nT = keep"),
    "a top-level name declared global": top(after="\n\ndef reset():\n    global T\n    T = keep\n"),
    "a top-level name declared global in a method": top(
        after="\n\nclass R:\n    def reset(self):\n        global T\n        T = keep\n"
    ),
    "a local of the same name": TOP.replace("BINDING", "T = make(1)").replace(
        "    model = T(model)\n", "    T = keep\n    model = T(model)\n"
    ),
    "an enclosing function's name": TOP.replace("BINDING", "T = make(1)")
    .replace("def run(q):\n", "def outer(T):\n  def run(q):\n")
    .replace("\n    ", "\n      "),
    "a top-level closure that evals": top().replace("lambda m: Wrapped(m)", "lambda m: Wrapped(m).eval()"),
    "a factory of another package": top("from somelib import make as other\n\nT = other(1)"),
    "a top-level name holding no call": top("T = keep"),
}


@pytest.mark.parametrize("src", list(QUIET.values()), ids=list(QUIET))
def test_look_alikes_stay_quiet(src):
    _, found, _ = _found(src)
    assert found == []


def test_a_method_of_a_base_in_another_module(tmp_path):
    base = "from torch import nn\n\n\n" + WRAPPED + "\n\nclass Base:\n    def make(self, kind):\n"
    base += "        return lambda m: Wrapped(m)\n"
    run = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from pkg.base import Base


class Exporter(Base):
    def run(self, q):
        model = nn.Linear(4, 4).eval()
        model = self.make("wrap")(model)
        gm = torch.export.export(model, (torch.randn(1, 4),)).module()
        return prepare_pt2e(gm, q)
"""
    root = package_repository(tmp_path / "repo", base=base, run=run)
    found = check_file(root / "pkg" / "run.py", ("QL201",)).diagnostics
    assert [d.range.start.row for d in found] == [12]


def test_a_factory_method_in_a_module_read_from_its_summary(tmp_path):
    """`cls.make(1)` in a classmethod of another module, reached through a function there:
    that module's class table is built from its summary (a `Mapping`, not a `dict`), which
    the check for subclasses overriding `make` reads (an internal error once)."""
    factory = (
        "from torch import nn\n\n\n"
        + WRAPPED
        + textwrap.dedent(
            """

        class Factory:
            @classmethod
            def make(cls, kind):
                return lambda m: Wrapped(m)

            @classmethod
            def wrap(cls, model):
                fn = cls.make(1)
                return fn(model)


        def wrap_default(model):
            return Factory.wrap(model)
        """
        )
    )
    run = """\
import torch
from torch import nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from pkg.factory import wrap_default


def run(q):
    model = nn.Linear(4, 4).eval()
    model = wrap_default(model)
    gm = torch.export.export(model, (torch.randn(1, 4),)).module()
    return prepare_pt2e(gm, q)
"""
    root = package_repository(tmp_path / "repo", factory=factory, run=run)
    result = check_file(root / "pkg" / "run.py", ("QL201",))
    assert not result.errors, result.errors
    assert [d.range.start.row for d in result.diagnostics] == [11]
