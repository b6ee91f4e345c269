"""A needle is searched once per text (`text_needles`): the registry asks every rule's trigger
substrings of a file, then the import triggers of the rules they turned away ask the same ones
(QL101's `mentions`, QL203's switches, QL102's insertion spellings), and a text that lacks
them was searched whole for each again."""

from __future__ import annotations

import collections

import pytest

from qlint.analysis.flow.graph_returns import may_switch_graph
from qlint.analysis.text_needles import gate_by, holds, holds_any
from qlint.engine import check_source
from tests.conftest import settings_for


class _Counted(str):
    """A text that counts the substring searches made of it."""

    def __new__(cls, value: str):
        text = super().__new__(cls, value)
        text.searched = collections.Counter()
        return text

    def __contains__(self, needle: str) -> bool:
        self.searched[needle] += 1
        return super().__contains__(needle)


# Imports a project module (the import triggers are asked), holds no rule's trigger.
PLAIN = "import os\nfrom pkg.util import helper\n\n\ndef f(x):\n    return helper(os.sep, x)\n"


def test_the_import_triggers_search_no_trigger_again(tmp_path):
    text = _Counted(PLAIN)
    check_source(text, str(tmp_path / "plain.py"), settings_for())
    for needle in (".target", "find_nodes", ".eval(", ".train(", "getattr", "call_function"):
        assert text.searched[needle] == 1, needle
    # QL203's `.eval()` holds its trigger `.eval(`: a text without it is not searched for the
    # switch (`gate_by`), by the text trigger or the import trigger.
    assert text.searched[".eval()"] == 0 and text.searched['"eval")('] == 0
    assert text.searched["getattr("] == 1
    # A text without a `2` holds no `prepare_pt2e`: only the digit is looked for, once.
    assert text.searched["prepare_pt2e"] == 0 and text.searched["2"] == 1


def test_answers_are_the_searches_answers():
    text = _Counted("a.target = b\n")
    assert holds_any(text, ("call_function", "target")) is True
    assert holds_any(text, ("call_function", "create_node")) is False
    assert holds(text, "target") is True and holds(text, "create_node") is False
    assert text.searched == {"call_function": 1, "target": 1, "create_node": 1}
    # Another text (equal, not the same object) is searched afresh.
    other = _Counted("a.target = b\n")
    assert holds(other, "target") is True and other.searched == {"target": 1}


def test_a_needle_is_not_searched_in_a_text_without_its_capital_or_digit():
    text = _Counted("from torch.export import export\nrecipe = Recipe()\n")
    assert holds_any(text, ("QuantizationRecipe", "checkGraphModuleNodes", "prepare_pt2e", "convert_pt2e")) is False
    assert holds(text, "QuantizationRecipe") is False
    assert text.searched == {"Q": 1, "G": 1, "2": 1}


def test_a_text_with_the_gate_is_searched_for_the_needle_whole():
    # Look-alikes: the capital or the digit is there, the needle is not (or is, once).
    text = _Counted("Q = 2  # Quantization, checkGraph\nx = prepare_pt2(m)\n")
    assert holds_any(text, ("QuantizationRecipe", "checkGraphModuleNodes", "prepare_pt2e")) is False
    whole = ("QuantizationRecipe", "checkGraphModuleNodes", "prepare_pt2e")
    assert text.searched == {"Q": 1, "G": 1, "2": 1, **dict.fromkeys(whole, 1)}
    found = _Counted("from executorch.export import QuantizationRecipe\nm = convert_pt2e(m)\n")
    assert holds(found, "QuantizationRecipe") is True and holds(found, "convert_pt2e") is True
    assert holds(found, "prepare_qat_pt2e") is False
    assert found.searched == {"Q": 1, "QuantizationRecipe": 1, "2": 1, "convert_pt2e": 1, "prepare_qat_pt2e": 1}
    # A needle of one character, or of none of those, is searched as it is.
    plain = _Counted("a.target = b\n")
    assert holds(plain, "Z") is False and holds(plain, "target") is True
    assert plain.searched == {"Z": 1, "target": 1}


def test_an_exact_switch_is_searched_only_where_it_may_be_held():
    # No graph source: no switch is searched for.
    plain = _Counted("import torch\ngetattr(m, 'x')()\n")
    assert may_switch_graph(plain) is False and plain.searched['"eval")('] == 0
    # No `.eval(`: no `.eval()` or `Module.eval(`.
    trained = _Counted("m = prepare_pt2e(m, q)\nm.train(False)\n")
    assert may_switch_graph(trained) is True and trained.searched[".eval("] == 1
    assert trained.searched[".eval()"] == 0 and trained.searched["Module.eval("] == 0
    # A graph source: the exact forms are searched, each once, and found.
    spelled = _Counted('m = prepare_pt2e(m, q)\ngetattr(m, "eval")()\n')
    assert may_switch_graph(spelled) is True and spelled.searched['"eval")('] == 1
    module = _Counted("m = capture_pre_autograd_graph(m, x)\nnn.Module.eval(m)\n")
    assert may_switch_graph(module) is True
    assert module.searched[".eval()"] == 1 and module.searched["Module.eval("] == 1
    turned = _Counted("m = torch.export.export(m, x).module()\nm.eval(True)\n")
    assert may_switch_graph(turned) is False


def test_a_gate_is_a_part_of_its_needle():
    with pytest.raises(ValueError):
        gate_by(".eval(", ".eval()")
    with pytest.raises(ValueError):
        gate_by(".eval(", ".eval(")
