"""QL203 on graphs held in parts of local values (`graph_parts`): `holder.gm`, `pair[0]`,
`graphs["q"]` read back in the function that stored an exported GraphModule there."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint

HEAD = """\
import torch
from torchao.quantization.pt2e import allow_exported_model_train_eval
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def calibrate(model, loader):
    model.eval()


def reset(holder):
    holder.gm = holder.model

"""  # the snippets start on line 13


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in lint(HEAD + textwrap.dedent(src), select=("QL203",))]


@pytest.mark.parametrize(
    ("store", "read"),
    [
        ("pair = (p, model)", "pair[0]"),
        ("pair = [model, p]", "pair[1]"),
        ('graphs = {"q": p, "fp": model}', 'graphs["q"]'),
        ("holder.gm = p", "holder.gm"),
        ("ctx = {}\n    ctx['gm'] = p", "ctx['gm']"),
    ],
)
def test_a_part_holding_a_graph_is_switched(store, read):
    src = f"""
def f(model, holder, q, x):
    p = prepare_pt2e(torch.export.export(model, (x,)).module(), q)
    {store}
    {read}.eval()
"""
    (d,) = lint(HEAD + src, select=("QL203",))
    assert f"`{read}` comes from `prepare_pt2e` (line 15)" in d.message
    assert d.fix.edits[0].content == f"move_exported_model_to_eval({read})"


def test_a_part_handed_to_a_switching_helper_is_reported_at_the_call():
    assert rows(
        """
        def f(model, q, loader, x):
            graphs = [convert_pt2e(prepare_pt2e(torch.export.export(model, (x,)).module(), q))]
            calibrate(graphs[0], loader)
        """
    ) == [16]


@pytest.mark.parametrize(
    "src",
    [
        # the other element
        """
        def f(model, q, x):
            p = prepare_pt2e(torch.export.export(model, (x,)).module(), q)
            pair = (p, model)
            pair[1].eval()
        """,
        # stored on one path only
        """
        def f(model, holder, q, x, quantize):
            if quantize:
                holder.gm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)
            holder.gm.eval()
        """,
        # overwritten with an eager module, the root rebound, the list changed, the holder handed on
        """
        def f(model, holder, q, x):
            p = prepare_pt2e(torch.export.export(model, (x,)).module(), q)
            holder.gm = p
            holder.gm = model
            holder.gm.eval()
            pair = (p, model)
            pair = (model, p)
            pair[0].eval()
            graphs = [p]
            graphs.insert(0, model)
            graphs[0].eval()
            other = [p]
            del other[0]
            other[0].eval()
            holder.gm = p
            reset(holder)
            holder.gm.eval()
        """,
        # allowed first, and a re-wrapped module
        """
        def f(model, holder, q, x):
            holder.gm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)
            allow_exported_model_train_eval(holder.gm)
            holder.gm.eval()
            holder.wrapped = torch.nn.Sequential(holder.gm)
            holder.wrapped.train()
        """,
        # a negative index names another element once the list grows
        """
        def f(model, q, x):
            graphs = [prepare_pt2e(torch.export.export(model, (x,)).module(), q)]
            graphs.append(model)
            graphs[-1].eval()
        """,
    ],
)
def test_quiet(src):
    assert rows(src) == []


# -- `self.<attr>` set to a graph in one method, switched in another (`graph_fields`) --------

QUANTIZER = """
class Quantizer:
    def __init__(self, model, q, x):
        self.model = model
        self.gm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)

    def calibrate(self, loader):
        self.gm.eval()
        self.model.eval()
        for x in loader:
            self.gm(x)

    def finish(self):
        self.gm = convert_pt2e(self.gm)
        self.gm.train()
"""


def test_a_field_holding_a_graph_switched_in_another_method():
    found = lint(HEAD + QUANTIZER, select=("QL203",))
    assert [(d.range.start.row, d.evidence["origin"]) for d in found] == [(20, "prepare_pt2e"), (27, "convert_pt2e")]
    assert "`self.gm` comes from `prepare_pt2e` (line 17)" in found[0].message
    assert found[0].fix.edits[0].content == "move_exported_model_to_eval(self.gm)"
    # The same with every rule running.
    assert [d.range.start.row for d in lint(HEAD + QUANTIZER) if d.code == "QL203"] == [20, 27]


@pytest.mark.parametrize(
    "change",
    [
        # another method stores an eager module there
        ("    def finish(self):", "    def reset(self, model):\n        self.gm = model\n\n    def finish(self):"),
        # stored on one path only
        (
            "        self.gm = prepare_pt2e(",
            "        self.gm = model\n        if q is not None:\n            self.gm = prepare_pt2e(",
        ),
        # allowed somewhere in the class
        (
            "        self.model = model\n",
            "        self.model = model\n        allow_exported_model_train_eval(self.gm)\n",
        ),
        # a subclass of the module may store something else
        ("class Quantizer:", "class Other(Base):\n    pass\n\n\nclass Base:"),
        # a deep copy of the graph has the plain module's `eval` again
        (
            "class Quantizer:\n    def __init__(self, model, q, x):\n        self.model = model\n"
            "        self.gm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)",
            "import copy\n\n\nclass Quantizer:\n    def __init__(self, model, q, x):\n        self.model = model\n"
            "        self.gm = copy.deepcopy(prepare_pt2e(torch.export.export(model, (x,)).module(), q))",
        ),
    ],
)
def test_quiet_fields(change):
    src = QUANTIZER.replace(*change).replace(
        "        self.gm = convert_pt2e(self.gm)\n        self.gm.train()\n", "        pass\n"
    )
    assert src != QUANTIZER
    assert lint(HEAD + src, select=("QL203",)) == []


# -- a subclass without its own `__init__` switches the graph its base stored ------------------

INHERITED = """
class Base:
    def __init__(self, model, q, x):
        self.gm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)


class Wrapper(Base):
    def calibrate(self, loader):
        self.gm.eval()
        for x in loader:
            self.gm(x)
"""


STORE = "        self.gm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)\n"


def test_a_subclass_switching_the_graph_its_base_stored():
    (d,) = lint(HEAD + INHERITED, select=("QL203",))
    assert d.range.start.row == 21
    assert "`self.gm` comes from `prepare_pt2e` (line 16)" in d.message
    # Two levels of bases, and a subclass whose `__init__` hands on to the base's.
    deeper = INHERITED.replace("class Wrapper(Base):", "class Middle(Base):\n    pass\n\n\nclass Wrapper(Middle):")
    assert [x.range.start.row for x in lint(HEAD + deeper, select=("QL203",))] == [25]
    calling = INHERITED.replace(
        "class Wrapper(Base):\n",
        "class Wrapper(Base):\n    def __init__(self, *args):\n        super().__init__(*args)\n\n",
    )
    assert [x.range.start.row for x in lint(HEAD + calling, select=("QL203",))] == [24]


@pytest.mark.parametrize(
    "change",
    [
        # the subclass stores an eager module there itself
        ("class Wrapper(Base):\n", "class Wrapper(Base):\n    def __init__(self, model):\n        self.gm = model\n\n"),
        # a base between them does
        (
            "class Wrapper(Base):",
            "class Middle(Base):\n    def __init__(self, model):\n        self.gm = model\n\n\nclass Wrapper(Middle):",
        ),
        # the base allows the switch
        (STORE, STORE + "        allow_exported_model_train_eval(self.gm)\n"),
        # a base of another module (or the library's) is not read: nothing known sets the field
        ("class Base:", "class Unrelated:"),
        # a class derives from the wrapper and may store something else
        ("class Wrapper(Base):", "class Leaf(Wrapper):\n    pass\n\n\nclass Wrapper(Base):"),
    ],
)
def test_quiet_inherited_fields(change):
    src = INHERITED.replace(*change)
    assert src != INHERITED
    assert lint(HEAD + src, select=("QL203",)) == []
