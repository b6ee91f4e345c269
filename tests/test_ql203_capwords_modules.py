"""QL203 on a graph a function of an imported module named in CapWords returns
(`from pkg import Exporters`, pkg/Exporters.py a module: `gm = Exporters.capture(m, x)`, then
`gm.eval()`), directly or as the last link of imported helpers in a row (issue 14, item 6).

Stop 63 read a call on a CapWords name imported from a project module as a static or class
method of a class (`Exporter.capture(` of `from pkg.exporter import Exporter`), and no longer
as a function of a module of that name: such files were read by 642f6208 and then no more.
Now the name is looked up as a module too when what it is imported from is a package (a
plain module's file holds no submodule, so a class imported from one costs no module search).

Quiet look-alikes, where the flow reads the function's real return: a function returning the
model or a copy, a same-named function of another CapWords module, a class of the same name.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint, write_package

EXPORTERS = """\
import copy

import torch


def capture(model, x):
    return torch.export.export(model, (x,)).module()


def capture_copy(model, x):
    return copy.deepcopy(torch.export.export(model, (x,)).module())


def checked(model, x):
    torch.export.export(model, (x,)).module()
    return model
"""

# A module of another package, of the same name, whose `capture` returns the model it is given.
PLAIN = """\
def capture(model, x):
    return model
"""

# A class of the same name (imported from a plain module) whose static method returns the model.
CLASS = """\
class Exporters:
    @staticmethod
    def capture(model, x):
        return model
"""

FORWARD = """\
from pkg import Exporters


def via(model, x):
    return Exporters.capture(model, x)


def via_checked(model, x):
    return Exporters.checked(model, x)
"""


def _rows(tmp_path, main: str) -> list[int]:
    root = tmp_path / f"repo{len(list(tmp_path.iterdir()))}"
    (root / ".git").mkdir(parents=True)
    write_package(root, "pkg", Exporters=EXPORTERS, forward=FORWARD, holder=CLASS)
    write_package(root, "other", Exporters=PLAIN)
    path = root / "main.py"
    path.write_text(textwrap.dedent(main))
    return [d.range.start.row for d in lint(path.read_text(), path=str(path), select=("QL203",))]


def _main(imports: str, body: str) -> str:
    return f"{imports}\n\n\ndef run(model, x):\n" + textwrap.indent(textwrap.dedent(body), "    ")


def test_a_graph_a_function_of_an_imported_capwords_module_returns_is_reported(tmp_path):
    imports = "from pkg import Exporters"
    assert _rows(tmp_path, _main(imports, "gm = Exporters.capture(model, x)\ngm.eval()\n")) == [6]
    assert _rows(tmp_path, _main(imports, "Exporters.capture(model, x).eval()\n")) == [5]
    # Imported as a module, under another name.
    aliased = "import pkg.Exporters as E"
    assert _rows(tmp_path, _main(aliased, "gm = E.capture(model, x)\ngm.train()\n")) == [6]
    renamed = "from pkg import Exporters as Ex"
    assert _rows(tmp_path, _main(renamed, "gm = Ex.capture(model, x)\ngm.train()\n")) == [6]


def test_a_graph_forwarded_through_a_capwords_module_is_reported(tmp_path):
    # A function of another module calling `Exporters.capture(` of a module it imports.
    assert _rows(tmp_path, _main("from pkg.forward import via", "gm = via(model, x)\ngm.eval()\n")) == [6]


QUIET = {
    "a function returning a copy": ("from pkg import Exporters", "gm = Exporters.capture_copy(model, x)"),
    "a function returning the model": ("from pkg import Exporters", "gm = Exporters.checked(model, x)"),
    "a same-named function of another module": ("from other import Exporters", "gm = Exporters.capture(model, x)"),
    "a class of the same name": ("from pkg.holder import Exporters", "gm = Exporters.capture(model, x)"),
    "forwarding a model": ("from pkg.forward import via_checked", "gm = via_checked(model, x)"),
}


def test_look_alikes_are_quiet(tmp_path):
    for why, (imports, call) in QUIET.items():
        assert _rows(tmp_path, _main(imports, f"{call}\ngm.eval()\n")) == [], why


def test_a_class_imported_from_a_plain_module_costs_no_module_lookup(tmp_path, monkeypatch):
    # `from pkg.holder import Exporters`: pkg/holder.py is a module's file, which holds no
    # submodule, so `pkg.holder.Exporters` is never looked up as a module; a name imported from
    # the package `pkg` is.
    from qlint.analysis.names.project import ProjectIndex

    asked: list[str] = []
    find = ProjectIndex.find_module_in_check

    def recording(self, module, requester):
        asked.append(module)
        return find(self, module, requester)

    monkeypatch.setattr(ProjectIndex, "find_module_in_check", recording)
    _rows(tmp_path, _main("from pkg.holder import Exporters", "gm = Exporters.capture(model, x)\ngm.eval()\n"))
    assert "pkg.holder" in asked and "pkg.holder.Exporters" not in asked
    asked.clear()
    _rows(tmp_path, _main("from pkg import Exporters", "gm = Exporters.capture(model, x)\ngm.eval()\n"))
    assert "pkg.Exporters" in asked
