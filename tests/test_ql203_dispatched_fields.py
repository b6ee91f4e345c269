"""QL203 through a strategy picked from a dict of classes and stored in a field
(`field_instances`, `registry_dispatch.apply_each`): `self.strategy = self._create()`, the
method constructing `STRATEGIES.get(kind)`, then `q = self.strategy.quantize(m)` and
`self.strategy.calibrate(q)`, whose base `calibrate` runs `.eval()`. Where a PT2E strategy
runs, `q` is the graph `convert_pt2e` returned, and the switch raises on torch 2.13 (the
corpus's DeepLearning `v0.QuantizationManager.py:1136`)."""

from __future__ import annotations

import pytest

from qlint.diagnostic import Applicability
from tests.conftest import lint

STRATEGIES = """\
import collections
import torch
from torchao.quantization.pt2e import allow_exported_model_train_eval, move_exported_model_to_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


class Strategy:
    def __init__(self, quantizer):
        self.quantizer = quantizer

    def calibrate(self, model, loader):
        model.eval()
        for x in loader:
            model(x)


class Eager(Strategy):
    def quantize(self, model, x):
        return model


class Pt2e(Strategy):
    def quantize(self, model, x):
        prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), self.quantizer)
        prepared(x)
        return convert_pt2e(prepared)


class Manager:
    def __init__(self, kind, quantizer):
        self.kind = kind
        self.strategy = self._create(quantizer)

    def _create(self, quantizer):
        classes = {"eager": Eager, "pt2e": Pt2e}
        cls = classes.get(self.kind)
        if cls is None:
            raise ValueError(self.kind)
        return cls(quantizer)

    def run(self, model, x, loader):
        q = self.strategy.quantize(model, x)
        self.strategy.calibrate(q, loader)
        return q
"""  # `calibrate`'s switch is on line 12, `convert_pt2e` on line 26, the hand-over on line 43


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in lint(src, select=("QL203",))]


def test_a_graph_one_strategy_returns_handed_to_the_base_calibrate():
    (d,) = lint(STRATEGIES, select=("QL203",))
    assert d.range.start.row == 43
    assert d.message.startswith("`q` may be the graph from `convert_pt2e` (line 26): where the class that returns it")
    assert "runs `.eval()` on it (line 12)" in d.message
    assert d.fix.applicability is Applicability.DISPLAY_ONLY
    # Every rule running: the same.
    assert [x.range.start.row for x in lint(STRATEGIES) if x.code == "QL203"] == [43]


def test_switched_in_place_after_the_dispatch():
    src = STRATEGIES.replace("        self.strategy.calibrate(q, loader)\n", "        q.eval()\n")
    (d,) = lint(src, select=("QL203",))
    assert d.range.start.row == 43
    assert "`q` may be the graph from `convert_pt2e`" in d.message


def test_inside_a_try_whose_handler_raises_again():
    src = STRATEGIES.replace(
        "        q = self.strategy.quantize(model, x)\n        self.strategy.calibrate(q, loader)\n        return q\n",
        "        try:\n"
        "            q = self.strategy.quantize(model, x)\n"
        "            self.strategy.calibrate(q, loader)\n"
        "            return q\n"
        "        except Exception as e:\n"
        "            print(e)\n"
        "            raise RuntimeError('quantization failed') from e\n",
    )
    assert rows(src) == [44]


def test_a_graph_a_method_of_the_module_returns_handed_to_a_switching_method():
    # The body names no graph source: it calls `quantize`, which returns one.
    src = STRATEGIES + (
        "\n\ndef direct(model, x, loader, quantizer):\n"
        "    strategy = Pt2e(quantizer)\n"
        "    q = strategy.quantize(model, x)\n"
        "    strategy.calibrate(q, loader)\n"
    )
    found = [(d.range.start.row, d.message) for d in lint(src, select=("QL203",))]
    assert [row for row, _ in found] == [43, 50]
    assert found[1][1].startswith(
        "`q` comes from `convert_pt2e` (line 26) and this call runs `.eval()` on it (line 12)"
    )


@pytest.mark.parametrize(
    "change",
    [
        # the PT2E strategy calibrates its graph the right way; the eager one's `.eval()` stays
        (
            "        return convert_pt2e(prepared)\n",
            "        return convert_pt2e(prepared)\n\n"
            "    def calibrate(self, model, loader):\n"
            "        move_exported_model_to_eval(model)\n",
        ),
        # the PT2E strategy allows the switch on what it returns
        (
            "        return convert_pt2e(prepared)\n",
            "        done = convert_pt2e(prepared)\n"
            "        allow_exported_model_train_eval(done)\n"
            "        return done\n",
        ),
        # every strategy returns an eager module
        ('"pt2e": Pt2e}', '"pt2e": Eager}'),
        # the field is written from outside the class too: any object may be there
        ("class Manager:", "def reset(manager):\n    manager.strategy = None\n\n\nclass Manager:"),
        # a subclass may override `_create`
        ("class Manager:", "class Other(Manager):\n    pass\n\n\nclass Manager:"),
        # the field is stored from something other than the class's own method
        ("        self.strategy = self._create(quantizer)\n", "        self.strategy = quantizer\n"),
        # `setattr(self, name, ...)` may write any field
        ("        self.kind = kind\n", "        self.kind = kind\n        setattr(self, kind, None)\n"),
        # a base class of another module may write the field
        ("class Manager:", "class Manager(collections.UserDict):"),
        # a class the walk cannot read is among the candidates
        ('"pt2e": Pt2e}', '"pt2e": Pt2e, "other": torch.nn.Identity}'),
    ],
)
def test_quiet_strategies(change):
    src = STRATEGIES.replace(*change)
    assert src != STRATEGIES
    assert rows(src) == []


@pytest.mark.parametrize(
    "handler",
    [
        "        except Exception:\n            return None\n",  # swallowed
        "        except NotImplementedError:\n            raise unittest.SkipTest('exported')\n",  # a test that skips
        "        except Exception as e:\n            if e:\n                return None\n            raise\n",
    ],
)
def test_quiet_handlers_that_expect_the_refusal(handler):
    src = STRATEGIES.replace(
        "        q = self.strategy.quantize(model, x)\n        self.strategy.calibrate(q, loader)\n        return q\n",
        "        try:\n"
        "            q = self.strategy.quantize(model, x)\n"
        "            self.strategy.calibrate(q, loader)\n"
        "            return q\n" + handler,
    )
    assert rows(src) == []


ALLOWING = """\
import torch
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def quantize(model, q, x, allow):
    done = convert_pt2e(prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q))
    if allow:
        allow_exported_model_train_eval(done)
    return done


def f(model, q, x):
    gm = quantize(model, q, x, False)
    gm.eval()
"""


def test_a_helper_that_allows_the_graph_it_returns():
    # Allowed only under a flag this call leaves off: the switch still raises.
    assert rows(ALLOWING) == [15]
    # Allowed on every path out of the helper: the caller's switch is `allow`'s.
    assert rows(ALLOWING.replace("    if allow:\n        allow_", "    if allow:\n        pass\n    allow_")) == []


ALLOWING_PAIR = """\
import torch
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def quantize(model, q, x):
    done = convert_pt2e(prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q))
    other = convert_pt2e(prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q))
    allow_exported_model_train_eval(done)
    return done, other


def f(model, q, x):
    gm, spare = quantize(model, q, x)
    gm.eval()
"""


def test_a_helper_that_allows_the_graph_of_the_pair_it_returns():
    # `qm, info = quantize(...)` (knowledge-distillation-edge's quantize_static_pt2e): the
    # element allowed on every path out of the helper may be switched by the caller.
    assert rows(ALLOWING_PAIR) == []
    # The other element of the pair was never allowed.
    assert rows(ALLOWING_PAIR.replace("gm.eval()", "spare.eval()")) == [15]
    # Allowed under a flag only.
    flagged = ALLOWING_PAIR.replace("def quantize(model, q, x):", "def quantize(model, q, x, allow=False):")
    flagged = flagged.replace("    allow_exported", "    if allow:\n        allow_exported")
    assert rows(flagged) == [16]
    # A path that returns something else in the first place.
    other_path = ALLOWING_PAIR.replace(
        "    allow_exported", "    if x is None:\n        return other, done\n    allow_exported"
    )
    assert rows(other_path) == [17]


CREATE = """        classes = {"eager": Eager, "pt2e": Pt2e}
        cls = classes.get(self.kind)
        if cls is None:
            raise ValueError(self.kind)
        return cls(quantizer)"""


@pytest.mark.parametrize(
    ("create", "expected"),
    [
        # Written in place and indexed by a variable: either class may be built.
        ('        return {"eager": Eager, "pt2e": Pt2e}[self.kind](quantizer)', [39]),
        ("        return [Eager, Pt2e][self.kind](quantizer)", [39]),
        # A constant key builds its one class.
        ('        return {"eager": Eager, "pt2e": Pt2e}["pt2e"](quantizer)', [39]),
        ('        return {"eager": Eager, "pt2e": Pt2e}["eager"](quantizer)', []),
        ('        classes = {"eager": Eager, "pt2e": Pt2e}\n        return classes["eager"](quantizer)', []),
        # The table is changed before the lookup: what it holds is not known.
        (
            '        classes = {"eager": Eager, "pt2e": Pt2e}\n'
            '        classes["pt2e"] = Eager\n'
            "        return classes[self.kind](quantizer)",
            [],
        ),
    ],
)
def test_the_class_picked_from_a_table_written_in_the_method(create, expected):
    assert CREATE in STRATEGIES
    assert rows(STRATEGIES.replace(CREATE, create)) == expected
