"""QL203 on a graph field a subclass inherits from a base class of another module of the
project (`graph_fields.foreign_methods`, `inherited_fields`): `class Calibrated(Runner)` with
`from pkg.base import Runner`, whose `__init__` stores `self.gm = prepare_pt2e(...)`, and
`self.gm.eval()` in the subclass. The subclass's module names no graph source: the engine's
import trigger has to find it."""

from __future__ import annotations

import textwrap

import pytest

from qlint.diagnostic import Applicability
from tests.conftest import lint, write_package

BASE = """\
import copy
import torch
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def capture(model, x, q):
    return prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)


class Runner:
    def __init__(self, model, x, q):
        self.gm = capture(model, x, q)


class Maybe:
    def __init__(self, model, x, q, exported):
        if exported:
            self.gm = capture(model, x, q)
        else:
            self.gm = model


class Allowed:
    def __init__(self, model, x, q):
        self.gm = capture(model, x, q)
        allow_exported_model_train_eval(self.gm)


class Copied:
    def __init__(self, model, x, q):
        self.gm = copy.deepcopy(capture(model, x, q))


class Plain(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.gm = model
"""

MID = """\
from pkg.base import Runner


class Middle(Runner):
    def run(self, x):
        return self.gm(x)
"""


def _project(tmp_path, child: str):
    (tmp_path / ".git").mkdir()
    write_package(tmp_path, "pkg", base=BASE, mid=MID)
    path = tmp_path / "pkg" / "child.py"
    path.write_text(textwrap.dedent(child))
    return path


def _found(path, select=("QL203",)):
    return lint(path.read_text(), path=str(path), select=select)


def test_a_subclass_switching_the_graph_its_base_of_another_module_stores(tmp_path):
    path = _project(
        tmp_path,
        """\
        from pkg.base import Runner


        class Calibrated(Runner):
            def calibrate(self, batches):
                self.gm.eval()
                for x in batches:
                    self.gm(x)
        """,
    )
    (d,) = _found(path)
    assert d.range.start.row == 6
    assert "`self.gm` comes from `prepare_pt2e` (base.py:8, stored by the base class named at line 4)" in d.message
    assert d.fix.applicability is Applicability.SAFE
    # Every rule running: the engine's import trigger reads the file (it names no graph source).
    assert [x.range.start.row for x in _found(path, select=("QL",)) if x.code == "QL203"] == [6]


def test_a_base_two_modules_away(tmp_path):
    path = _project(
        tmp_path,
        """\
        from pkg.mid import Middle


        class Calibrated(Middle):
            def calibrate(self):
                self.gm.train()
        """,
    )
    assert [d.range.start.row for d in _found(path)] == [6]


def test_the_inherited_graph_handed_to_a_helper_that_switches_it(tmp_path):
    path = _project(
        tmp_path,
        """\
        from pkg.base import Runner


        def to_eval(model):
            model.eval()


        class Calibrated(Runner):
            def calibrate(self):
                to_eval(self.gm)
        """,
    )
    (d,) = _found(path)
    assert d.range.start.row == 10
    assert "runs `.eval()` on it (line 5)" in d.message


@pytest.mark.parametrize(
    "child",
    [
        # The base leaves an eager module there on one path.
        "from pkg.base import Maybe as Base\n",
        # The base allows the graph's switch itself.
        "from pkg.base import Allowed as Base\n",
        # A deep copy has the plain module's `eval` again.
        "from pkg.base import Copied as Base\n",
        # The field holds whatever module the caller gave.
        "from pkg.base import Plain as Base\n",
        # A library's class: nothing of the project stores the field.
        "from torch.nn import Module as Base\n",
    ],
)
def test_quiet_bases_of_another_module(tmp_path, child):
    path = _project(
        tmp_path,
        child
        + textwrap.dedent(
            """\


            class Calibrated(Base):
                def calibrate(self):
                    self.gm.eval()
            """
        ),
    )
    assert _found(path) == []
    assert [d for d in _found(path, select=("QL",)) if d.code == "QL203"] == []


def test_quiet_when_the_subclass_stores_an_eager_module_there(tmp_path):
    path = _project(
        tmp_path,
        """\
        from pkg.base import Runner


        class Calibrated(Runner):
            def reset(self, model):
                self.gm = model

            def calibrate(self):
                self.gm.eval()
        """,
    )
    assert _found(path) == []


def test_the_bases_of_other_modules_are_placed_only_for_a_field_a_method_reads(tmp_path, monkeypatch):
    # `self.gm` handed to a helper that switches nothing: no method of the class reads the
    # field as `field_switches` would report it, so the base's module is not placed (in the
    # torch package that was `nn.Module` and the test-case bases, for every such class).
    from qlint.analysis.flow import graph_fields

    placed = []
    real = graph_fields.foreign_methods
    monkeypatch.setattr(graph_fields, "foreign_methods", lambda ctx, cls: placed.append(cls.name) or real(ctx, cls))
    quiet = """\
        from pkg.base import Runner


        def log(model):
            print(model)


        def to_eval(model):
            model.eval()


        class Logged(Runner):
            def report(self):
                log(self.gm)
        """
    assert _found(_project(tmp_path, quiet)) == []
    assert placed == []
    # The same class handing it to the switching helper: placed, and reported.
    (tmp_path / "b").mkdir()
    path = _project(tmp_path / "b", quiet.replace("log(self.gm)", "to_eval(self.gm)"))
    assert [d.range.start.row for d in _found(path)] == [14]
    assert placed == ["Logged"]


# A module that prepares graphs itself: its switchers are every project function it imports,
# and the methods of every project class it imports, so a class's bases of other modules are
# placed before its methods are searched for them (`graph_fields._placing_first`).
PREPARES = """\
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
from pkg.base import Runner


def prep(model, q):
    return prepare_pt2e(model, q)


def to_eval(model):
    model.eval()


def show(model):
    print(model)


class Case(Runner):
    device = "cpu"

    def go(self):
        {call}
"""


@pytest.mark.parametrize(
    ("call", "row"),
    [
        ("to_eval(self.gm)", 21),  # the base's graph, handed to a switching helper
        ("self.gm.eval()", 21),  # switched here
        ("show(self.gm)", None),  # handed to a helper that switches nothing
        ("to_eval(self.device)", None),  # a class attribute no method sets
    ],
)
def test_fields_of_an_imported_base_in_a_module_that_prepares_graphs(tmp_path, call, row):
    path = _project(tmp_path, PREPARES.format(call=call))
    assert [d.range.start.row for d in _found(path)] == ([] if row is None else [row])


def test_a_field_no_method_sets_is_not_searched_for_in_the_methods(tmp_path, monkeypatch):
    # `self.device` (a class attribute) and `self.ip` (of nothing) handed on in a module that
    # prepares graphs: no method sets them, so no method's reading of them is searched for
    # (the module's `switchers`, ExecuTorch's qualcomm tests: ~600 methods). QL201 first, as
    # in a run of every rule: its flows are the ones QL203 reads, and it asks for no switchers.
    from qlint.analysis.flow import graph_fields

    monkeypatch.setattr(graph_fields, "switchers", lambda ctx: pytest.fail("switchers searched"))
    path = _project(tmp_path, PREPARES.format(call="to_eval(self.device)\n        run(self.ip, 1)"))
    assert _found(path, select=("QL201", "QL203")) == []


HANDED = '''\
class A:
    def go(self):
        f(self.gm)
        g(x, self.gm2 , self.model_name)
        h(myself.q, self.run.gm, self.r.s)
        k(self.ab,self.b)


class B(A):
    def go(self):
        f(self.a_b)
        z = self.gm3  # self.gm4)
        """self.doc,"""


class C:
    x = (self.c)
'''


def test_the_names_a_class_hands_on_are_its_arguments_spelled_in_its_text():
    # `_handed_in` reads one search of the module for what `_argument` finds in each class's
    # text: the same names, with spellings inside longer ones, in strings and comments.
    import ast

    from qlint.analysis.context import FileContext
    from qlint.analysis.flow import graph_fields
    from qlint.analysis.flow.relevant_bodies import segment
    from qlint.source import LineIndex

    ctx = FileContext("m.py", HANDED, ast.parse(HANDED), LineIndex(HANDED), None, None)  # type: ignore[arg-type]
    words = {w for w in HANDED.replace(".", " ").replace(",", " ").replace(")", " ").split() if w.isidentifier()}
    for cls in ctx.tree.body:
        text = segment(ctx, cls)
        found = graph_fields._handed_in(ctx, cls)
        assert found == {w for w in words if graph_fields._argument(text, w)}
    assert [sorted(graph_fields._handed_in(ctx, cls)) for cls in ctx.tree.body] == [
        ["ab", "b", "gm", "model_name", "q"],
        ["a_b", "doc", "gm4"],
        ["c"],
    ]
