"""QL203's import trigger reads what a switched name is bound to from the text
(`switched_callees.bound_to`): the callee of `name = callee(`, and the method of `name =
Exporter(x).export(`. Both come from one search of the text for the name, with one pattern
compiled per name: the answers are those of a pattern of its own for each reading."""

from __future__ import annotations

import re

import pytest

from qlint.analysis.flow import switched_callees

_ASSIGNED = r"[ \t]*=[ \t]*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)\("
_MADE = r"[ \t]*=[ \t]*([A-Z]\w*\([^()\[\]{}\n]*\)\.[A-Za-z_]\w*)\("


def _oracle(text: str, name: str, tail: str) -> set[str]:
    """The answer of a pattern made for the reading alone (as before one search served both)."""
    out = set()
    for m in re.finditer(re.escape(name) + tail, text):
        at = m.start()
        if at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_."):
            out.add(m.group(1))
    return out


TEXT = """\
gm = capture(model, x)
gm=helpers.capture(model)
gm\t =  prepare(model)
self.gm = Exporter(model).export(x)
x.gm = foreign(model)
xgm = other(model)
gm == compare(model)
gm = Exporter(model, strict=False).export(x)
gm = Exporter(build(model)).export(x)
gm = exporter(model).export(x)
gm = gm2 = chained(model)
gm2 = Maker(gm).make(x)
out = gm
ep = gm = last(model)
k = Keeper(gm=1).keep(gm)
"""


@pytest.mark.parametrize("name", ["gm", "gm2", "self.gm", "x.gm", "xgm", "ep", "k", "out", "model"])
def test_both_readings_are_those_of_a_pattern_of_their_own(name):
    for text in (TEXT, TEXT.replace("gm = capture", "gm = Capture"), "gm = Exporter(m).export(x)"):
        assert switched_callees.bound_to(text, name) == _oracle(text, name, _ASSIGNED), name
        assert switched_callees.bound_to(text, name, made=True) == _oracle(text, name, _MADE), name


def test_the_readings_found():
    bound = {"capture", "helpers.capture", "prepare", "Exporter", "exporter", "last"}
    assert switched_callees.bound_to(TEXT, "gm") == bound
    assert switched_callees.bound_to(TEXT, "gm", made=True) == {"Exporter(model, strict=False).export"}
    assert switched_callees.bound_to(TEXT, "self.gm", made=True) == {"Exporter(model).export"}


def test_another_text_is_searched_again():
    # The last name's answers are kept for its second reading: never for another text.
    assert switched_callees.bound_to("a = f(x)\n", "a") == {"f"}
    assert switched_callees.bound_to("a = g(x)\n", "a") == {"g"}
    assert switched_callees.bound_to("a = f(x)\n", "b") == frozenset()


def test_a_name_is_searched_for_with_one_pattern_for_both_readings(monkeypatch):
    compiled = []
    real = re.compile

    def counting(pattern, *args):
        compiled.append(pattern)
        return real(pattern, *args)

    monkeypatch.setattr(re, "compile", counting)
    switched_callees._binding.cache_clear()
    text = "def f(m, x):\n    gm_once = capture(m, x)\n    gm_once.eval()\n"
    assert "capture" in switched_callees.switched_results(text)
    # The name's binding pattern, and the one finding what it is handed to (`attach(gm_once)`).
    assert len([p for p in compiled if isinstance(p, str) and p.startswith("gm_once")]) == 2
