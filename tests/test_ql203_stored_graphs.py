"""QL203 on a graph handed to a project class's constructor, which stores it (`self.model =
model`), and switched by a method called on that instance: `Trainer(prepare_qat_pt2e(m, q)).epoch(x)`
raises NotImplementedError on torch 2.13 (`stored_graphs`; measured with torch 2.13 and torchao
0.18, quiet once `allow_exported_model_train_eval` ran on the graph). Reported at the method
call, naming the construction and the method."""

from __future__ import annotations

import textwrap

import pytest

from qlint.diagnostic import Applicability
from tests.conftest import check_file, fix, lint, package_repository

HEAD = """\
import copy
from dataclasses import dataclass

import torch
from torch import nn
from torchao.quantization.pt2e import allow_exported_model_train_eval, move_exported_model_to_train
from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e


class Trainer:
    def __init__(self, model, lr=0.1):
        self.model = model
        self.lr = lr

    def epoch(self, x):
        self.model.train()
        return self.model(x)

    def fit(self, x):
        self.epoch(x)

    def predict(self, x):
        return self.model(x)


def graph(m, q, x):
    return prepare_qat_pt2e(torch.export.export(m, (x,)).module(), q)

"""  # `epoch`'s switch is on line 16, `graph`'s prepare on line 27; the snippets start on line 29 (blank)


def found(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL203",))


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in found(src)]


def test_a_construction_switched_by_its_method_in_one_expression():
    (d,) = found(
        """
        def f(m, q, x):
            Trainer(prepare_qat_pt2e(torch.export.export(m, (x,)).module(), q)).epoch(x)
        """
    )
    assert d.range.start.row == 31
    assert d.message == (
        "`Trainer(...)` (line 31) stores the graph from `prepare_qat_pt2e` (line 31) in `self.model`, and this"
        " call of `Trainer.epoch` runs `.train()` on it (line 16), which raises NotImplementedError on torch 2.13"
    )
    assert "before `Trainer(...)` stores it" in d.help
    assert "`move_exported_model_to_train`" in d.help
    # The graph is no name before the statement: nothing to allow there.
    assert d.fix.applicability is Applicability.DISPLAY_ONLY


SPLIT = """
def f(m, q, x):
    prepared = graph(m, q, x)
    t = Trainer(prepared)
    for _ in range(3):
        t.fit(x)
"""


def test_an_instance_named_first_and_switched_through_another_method():
    (d,) = found(SPLIT)
    assert d.range.start.row == 34
    assert "`Trainer(...)` (line 32) stores the graph from `prepare_qat_pt2e`" in d.message
    assert "this call of `Trainer.fit` runs `.train()` on it (line 16)" in d.message
    assert d.fix.applicability is Applicability.UNSAFE
    fixed = fix(HEAD + textwrap.dedent(SPLIT), select=("QL203",), unsafe=True)
    assert "    allow_exported_model_train_eval(prepared)\n    t = Trainer(prepared)\n" in fixed
    assert not lint(fixed, select=("QL203",))


def test_keyword_dataclass_and_module_holders_and_the_field_switched_in_place():
    assert rows(
        """
        @dataclass
        class Box:
            model: object

            def run(self, x):
                self.model.eval()


        class Calib(nn.Module):
            def __init__(self, gm):
                super().__init__()
                self.gm = gm

            def calibrate(self, x):
                self.gm.eval()


        def f(m, q, x):
            gm = graph(m, q, x)
            Trainer(model=gm, lr=0.5).epoch(x)
            Box(gm).run(x)
            Calib(gm).calibrate(x)
            t = Trainer(gm)
            t.model.eval()
        """
    ) == [49, 50, 51, 53]


def test_the_field_read_back_from_the_instance_is_the_graph():
    (d,) = found(
        """
        def f(m, q, x):
            t = Trainer(graph(m, q, x))
            t.model.train()
        """
    )
    assert d.message.startswith("`t.model` comes from `prepare_qat_pt2e` (line 27)")
    assert d.fix.applicability is Applicability.SAFE


@pytest.mark.parametrize(
    "src",
    [
        # the graph allowed by the caller, before the construction or through the field after it
        """
        def f(m, q, x):
            gm = graph(m, q, x)
            allow_exported_model_train_eval(gm)
            Trainer(gm).epoch(x)
            t = Trainer(graph(m, q, x))
            allow_exported_model_train_eval(t.model)
            t.epoch(x)
        """,
        # an eager module, a copy of the graph, the field replaced before the call
        """
        def f(m, q, x):
            Trainer(nn.Linear(2, 2)).epoch(x)
            Trainer(copy.deepcopy(graph(m, q, x))).epoch(x)
            t = Trainer(graph(m, q, x))
            t.model = m
            t.epoch(x)
        """,
        # no method that switches the field is called on the instance
        """
        def f(m, q, x):
            t = Trainer(graph(m, q, x))
            t.predict(x)
            Trainer(graph(m, q, x))
        """,
        # the caller expects the error
        """
        def f(m, q, x):
            try:
                Trainer(graph(m, q, x)).epoch(x)
            except NotImplementedError:
                pass
        """,
    ],
)
def test_quiet_at_the_call(src):
    assert found(src) == []


@pytest.mark.parametrize(
    "cls",
    [
        # the class allows what it is given, before or after storing it
        """
        class Holder:
            def __init__(self, model):
                allow_exported_model_train_eval(model)
                self.model = model

            def epoch(self, x):
                self.model.train()
        """,
        """
        class Holder:
            def __init__(self, model):
                self.model = model
                allow_exported_model_train_eval(self.model)

            def epoch(self, x):
                self.model.train()
        """,
        # it moves the graph with torchao's helper
        """
        class Holder:
            def __init__(self, model):
                self.model = model

            def epoch(self, x):
                move_exported_model_to_train(self.model)
        """,
        # the method switches another field
        """
        class Holder:
            def __init__(self, model, head=None):
                self.model = model
                self.head = head if head is not None else nn.Linear(2, 2)

            def epoch(self, x):
                self.head.train()
        """,
        # under a flag the call does not set
        """
        class Holder:
            def __init__(self, model):
                self.model = model

            def epoch(self, x, train=False):
                if train:
                    self.model.train()
        """,
        # it asks what the field is, and leaves a graph alone behind an early return
        """
        class Holder:
            def __init__(self, model):
                self.model = model

            def epoch(self, x):
                if isinstance(self.model, torch.fx.GraphModule):
                    return
                self.model.train()
        """,
        # a base class of the project may replace the field first
        """
        class Base:
            def reset(self):
                self.model = nn.Linear(2, 2)


        class Holder(Base):
            def __init__(self, model):
                self.model = model
                self.reset()

            def epoch(self, x):
                self.model.train()
        """,
    ],
)
def test_quiet_classes(cls):
    src = textwrap.dedent(cls) + "\n\ndef f(m, q, x):\n    Holder(graph(m, q, x)).epoch(x)\n"
    assert found(src) == []


def test_a_class_of_another_module(tmp_path):
    root = package_repository(
        tmp_path,
        trainers=textwrap.dedent(
            """
            class Trainer:
                def __init__(self, model):
                    self.model = model

                def fit(self, x):
                    self._prepare()
                    return self.model(x)

                def _prepare(self):
                    self.model.train()
            """
        ),
        run=textwrap.dedent(
            """
            import torch
            from torchao.quantization.pt2e.quantize_pt2e import prepare_qat_pt2e

            from pkg.trainers import Trainer


            def qat(m, q, x):
                t = Trainer(prepare_qat_pt2e(torch.export.export(m, (x,)).module(), q))
                t.fit(x)
            """
        ),
    )
    (d,) = check_file(root / "pkg" / "run.py", select=("QL203",)).diagnostics
    assert d.range.start.row == 10
    assert "this call of `Trainer.fit` runs `.train()` on it (trainers.py:11)" in d.message


def test_quiet_on_a_field_set_later_when_the_class_asks_what_it_is():
    src = """
    class Holder:
        def __init__(self, model=None):
            self.model = model

        def epoch(self, x):
            if hasattr(self.model, "graph"):
                return
            self.model.train()


    def f(m, q, x):
        h = Holder()
        h.model = graph(m, q, x)
        h.epoch(x)
        t = Trainer(None)
        t.model = graph(m, q, x)
        t.epoch(x)
    """
    assert rows(src) == [46]
