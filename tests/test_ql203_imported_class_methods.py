"""QL203 on a graph a method of an imported class returns (`gm = Exporter(x).export(m)`, `e =
Exporter(x); gm = e.export(m)`, then `gm.eval()`), directly or as the last link of imported
helpers in a row (`forwarded_graphs`; issue 14, stop 61's carried "QL203 helpers chained
through methods of imported classes").

The import trigger looked up a method of an imported class only when it was handed what the
file switches and stored on it (`Keeper().keep(h, m)`, then `h.gm.eval()`): `GraphReturns`
listed methods that store, never methods that return, and a result bound to a method call of an
instance made in the expression was no callee it read. So the file was never read for QL203,
though the model flow follows such a method once it reads the body. Now `GraphReturns` lists
returning methods too (as `Class.method`), the trigger reads `name = Cls(...).method(` bindings
and a local instance's method whatever it is handed, and a forwarding function or method of
another module may call `Cls(...).method(` of a class it imports.

Quiet look-alikes, where the flow reads the method's real return: a method returning a copy,
one returning a module built anew, a same-named class of another module whose method returns
the model, a same-named method of another class of the module.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint, write_package

EXPORTER = """\
import copy

import torch
from torch import nn


class Exporter:
    def __init__(self, x):
        self.x = x

    def export(self, model):
        return torch.export.export(model, (self.x,)).module()

    def export_copy(self, model):
        return copy.deepcopy(torch.export.export(model, (self.x,)).module())

    def export_fresh(self, model):
        torch.export.export(model, (self.x,)).module()
        return nn.Linear(3, 3)


class Other:
    def __init__(self, x):
        self.x = x

    def export(self, model):
        return model
"""

# A class of the same name whose method returns the model it is given.
PLAIN = """\
class Exporter:
    def __init__(self, x):
        self.x = x

    def export(self, model):
        return model
"""

FORWARD = """\
from pkg.exporter import Exporter


def via(model, x):
    return Exporter(x).export(model)


def via_copy(model, x):
    return Exporter(x).export_copy(model)


class Outer:
    def run(self, model, x):
        return Exporter(x).export(model)

    def run_fresh(self, model, x):
        return Exporter(x).export_fresh(model)
"""


def _rows(tmp_path, main: str) -> list[int]:
    root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
    (root / ".git").mkdir(parents=True)
    write_package(root, "pkg", exporter=EXPORTER, plain=PLAIN, forward=FORWARD)
    path = root / "main.py"
    path.write_text(textwrap.dedent(main))
    return [d.range.start.row for d in lint(path.read_text(), path=str(path), select=("QL203",))]


def _main(imports: str, body: str) -> str:
    return f"{imports}\n\n\ndef run(model, x):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def test_a_graph_a_method_of_an_imported_class_returns_is_reported(tmp_path):
    imports = "from pkg.exporter import Exporter"
    assert _rows(tmp_path, _main(imports, "gm = Exporter(x).export(model)\ngm.eval()\n")) == [6]
    assert _rows(tmp_path, _main(imports, "e = Exporter(x)\ngm = e.export(model)\ngm.train()\n")) == [7]


def test_a_graph_forwarded_through_an_imported_class_method_is_reported(tmp_path):
    # A function of another module calling `Exporter(x).export(`, and a method of another
    # module's class doing so.
    assert _rows(tmp_path, _main("from pkg.forward import via", "gm = via(model, x)\ngm.eval()\n")) == [6]
    assert _rows(tmp_path, _main("from pkg.forward import Outer", "gm = Outer().run(model, x)\ngm.eval()\n")) == [6]


QUIET = {
    "a method returning a copy": ("from pkg.exporter import Exporter", "gm = Exporter(x).export_copy(model)"),
    "a method returning a module built anew": (
        "from pkg.exporter import Exporter",
        "gm = Exporter(x).export_fresh(model)",
    ),
    "a same-named class of another module": ("from pkg.plain import Exporter", "gm = Exporter(x).export(model)"),
    "a same-named method of another class": ("from pkg.exporter import Other", "gm = Other(x).export(model)"),
    "forwarding a copy": ("from pkg.forward import via_copy", "gm = via_copy(model, x)"),
    "a method forwarding a module built anew": ("from pkg.forward import Outer", "gm = Outer().run_fresh(model, x)"),
}


def test_look_alikes_are_quiet(tmp_path):
    for why, (imports, call) in QUIET.items():
        assert _rows(tmp_path, _main(imports, f"{call}\ngm.eval()\n")) == [], why


def test_graph_returns_lists_returning_methods(tmp_path):
    import ast

    from qlint.analysis.flow.graph_returns import GraphReturns

    found = GraphReturns().compute(ast.parse(EXPORTER), None, EXPORTER)
    assert {"Exporter.export", "Exporter.export_copy", "Exporter.export_fresh"} <= set(found)
    assert "Other.export" not in found  # its text names no graph source
