"""What a class's own methods change of the fields it stores (`stored_fields._changed_by_methods`),
read by one walk of its methods kept on the class node and asked with two sets of methods: a
switch (`self.model.train()`) changes a field for `stored_fields`, not for `held_fields` and
`held_part_fields`, whichever reading asks first (issue 13: each reading walked every method)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from qlint.analysis.flow import stored_fields
from qlint.analysis.flow.stored_fields import held_fields, held_part_fields
from qlint.analysis.flow.stored_fields import stored_fields as stored

_SWITCHED = """
class Holder:
    def __init__(self, model, net):
        self.model = model
        self.body = net.body

    def freeze(self):
        self.model.train(False)
        self.body.eval()
"""


def _class(source: str) -> ast.ClassDef:
    return ast.parse(textwrap.dedent(source)).body[0]


@pytest.mark.parametrize("first", ["stored", "held"])
def test_a_switch_changes_the_field_for_one_reading_only_whichever_asks_first(first):
    cls = _class(_SWITCHED)
    if first == "stored":
        assert stored(cls) == {}  # `train` gives the stored model another mode: not the caller's
        assert held_fields(cls) == {"model": (0, "model")}  # still the very object passed
    else:
        assert held_fields(cls) == {"model": (0, "model")}
        assert stored(cls) == {}
    assert held_part_fields(cls) == {"body": ((1, "net"), ("body",))}


_MODEL = {"model": (0, "model")}


@pytest.mark.parametrize(
    ("method", "held", "kept_stored"),
    [
        ("self.model.append(x)", {}, {}),  # a mutating method: changed for every reading
        ("fit(self.model)", {}, {}),  # handed to a call
        ("register(self)", {}, {}),  # `self` handed on whole: anything may change
        ("self.model.eval()", _MODEL, {}),  # a switch: the same object, in another mode
        ("print(self.model)", _MODEL, {}),  # looked at (`stored_fields` leaves any hand-off out)
        ("self.other.train()", _MODEL, _MODEL),  # another field switched
    ],
)
@pytest.mark.parametrize("first", ["stored", "held"])
def test_every_reading_answers_as_it_would_alone(method, held, kept_stored, first):
    source = f"""
        class Holder:
            def __init__(self, model):
                self.model = model

            def use(self, x):
                {method}
        """
    cls = _class(source)
    if first == "stored":
        assert stored(cls) == kept_stored
    assert held_fields(cls) == held
    assert stored(cls) == kept_stored
    # Alone, on a parse of its own, each reading answers the same.
    assert held_fields(_class(source)) == held
    assert stored(_class(source)) == kept_stored


def test_the_methods_are_walked_once_for_every_reading(monkeypatch):
    walked: list[str] = []
    real = stored_fields.walk_kinds

    def counted(node, kinds):
        if kinds is stored_fields._CHANGERS:
            walked.append(node.name)
        return real(node, kinds)

    monkeypatch.setattr(stored_fields, "walk_kinds", counted)
    cls = _class(_SWITCHED)
    stored(cls)
    held_fields(cls)
    held_part_fields(cls)
    assert walked == ["__init__", "freeze"]
    # A new parse of the class is a new node: read again, never answered from the old one.
    assert stored(_class(_SWITCHED.replace("self.model.train(False)", "pass"))) == {"model": (0, "model")}
    assert walked == ["__init__", "freeze"] * 2
