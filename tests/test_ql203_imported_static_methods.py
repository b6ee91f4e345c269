"""QL203 on a graph a static or class method of an imported class returns, called on the class
(`gm = Exporter.capture(m, x)`, then `gm.eval()`), directly or as the last link of imported
helpers in a row (`forwarded_graphs`; issue 14, stop 62's "Not followed (yet)" of the QL203
rule page).

The model flow follows such a call once it reads the body (`class_calls.class_callee`), but the
import trigger looked `Exporter.capture` up as a function `capture` of a module
`pkg.exporter.Exporter`, which no module is: the file was never read for QL203. Now a call of a
CapWords name imported from a module of the project is looked up as the class's method, which
`GraphReturns` lists as `Exporter.capture`.

Quiet look-alikes, where the flow reads the method's real return: a static method returning the
model or a copy, a same-named method of another class, a same-named class of another module, a
subclass overriding the method, a class the project does not define.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint, write_package

EXPORTER = """\
import copy

import torch


class Exporter:
    @staticmethod
    def capture(model, x):
        return torch.export.export(model, (x,)).module()

    @classmethod
    def capture_cls(cls, model, x):
        return torch.export.export(model, (x,)).module()

    @staticmethod
    def capture_copy(model, x):
        return copy.deepcopy(torch.export.export(model, (x,)).module())

    @staticmethod
    def checked(model, x):
        torch.export.export(model, (x,)).module()
        return model


class Other:
    @staticmethod
    def capture(model, x):
        return model


class Quiet(Exporter):
    @staticmethod
    def capture(model, x):
        return model
"""

# A class of the same name whose static method returns the model it is given.
PLAIN = """\
class Exporter:
    @staticmethod
    def capture(model, x):
        return model
"""

FORWARD = """\
import pkg.exporter as ex
from pkg.exporter import Exporter


def via(model, x):
    return Exporter.capture(model, x)


def via_module(model, x):
    return ex.Exporter.capture(model, x)


def via_checked(model, x):
    return Exporter.checked(model, x)
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


def test_a_graph_a_static_method_of_an_imported_class_returns_is_reported(tmp_path):
    imports = "from pkg.exporter import Exporter"
    assert _rows(tmp_path, _main(imports, "gm = Exporter.capture(model, x)\ngm.eval()\n")) == [6]
    assert _rows(tmp_path, _main(imports, "Exporter.capture(model, x).eval()\n")) == [5]
    # Imported under another name.
    aliased = "from pkg.exporter import Exporter as E"
    assert _rows(tmp_path, _main(aliased, "gm = E.capture(model, x)\ngm.train()\n")) == [6]


def test_a_graph_a_class_method_of_an_imported_class_returns_is_reported(tmp_path):
    imports = "from pkg.exporter import Exporter"
    assert _rows(tmp_path, _main(imports, "gm = Exporter.capture_cls(model, x)\ngm.train()\n")) == [6]


def test_a_graph_forwarded_through_an_imported_static_method_is_reported(tmp_path):
    # A function of another module calling `Exporter.capture(` of a class it imports, or
    # `ex.Exporter.capture(` of a module it imports.
    assert _rows(tmp_path, _main("from pkg.forward import via", "gm = via(model, x)\ngm.eval()\n")) == [6]
    assert _rows(tmp_path, _main("from pkg.forward import via_module", "gm = via_module(model, x)\ngm.eval()\n")) == [6]


QUIET = {
    "a static method returning a copy": ("from pkg.exporter import Exporter", "gm = Exporter.capture_copy(model, x)"),
    "a static method returning the model": ("from pkg.exporter import Exporter", "gm = Exporter.checked(model, x)"),
    "a same-named method of another class": ("from pkg.exporter import Other", "gm = Other.capture(model, x)"),
    "a same-named class of another module": ("from pkg.plain import Exporter", "gm = Exporter.capture(model, x)"),
    "a subclass overriding the method": ("from pkg.exporter import Quiet", "gm = Quiet.capture(model, x)"),
    "a class the project does not define": ("from elsewhere import Exporter", "gm = Exporter.capture(model, x)"),
    "forwarding a model": ("from pkg.forward import via_checked", "gm = via_checked(model, x)"),
}


def test_look_alikes_are_quiet(tmp_path):
    for why, (imports, call) in QUIET.items():
        assert _rows(tmp_path, _main(imports, f"{call}\ngm.eval()\n")) == [], why
