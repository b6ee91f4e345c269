"""`helper_gate.named_ways`: the one reading of "a name the file imports leads to a sink helper"
that QL101's sink gate (`_sink_helper_gate`, with `dotted`) and its trigger for files holding
no trigger text (`sinks._named_imports`, names alone) both ask. Each import is asked of the
index's names first, then as the search asks it: a function the text may call, a class it
subclasses. What the search finds through them: tests/test_ql101_untriggered_and_mixins.py."""

from __future__ import annotations

import pytest

from qlint.analysis.graphs.helper_gate import named_ways
from qlint.analysis.graphs.wrapper_names import WrapperIndex

INDEX = WrapperIndex("/p", frozenset({"assert_nodes"}), frozenset({"NodeChecks", "Module"}), "digest")
IMPORTS = [
    ("torch", "torch"),
    ("nn", "torch.nn"),
    ("Path", "pathlib.Path"),
    ("assert_nodes", "pkg.checks.assert_nodes"),
    ("NodeChecks", "pkg.checks.NodeChecks"),
    ("checks", "pkg.checks"),
]


def _ways(text: str, index=INDEX, dotted: bool = True, imports=IMPORTS) -> list[tuple[str, str]]:
    return list(named_ways(text, imports, index, dotted))


def test_a_function_called_and_a_class_subclassed_by_name_lead_in_the_imports_order():
    text = "class T(NodeChecks):\n    def test(self):\n        assert_nodes(self, gm, occ)\n"
    expected = [("assert_nodes", "pkg.checks.assert_nodes"), ("NodeChecks", "pkg.checks.NodeChecks")]
    assert _ways(text) == expected
    assert _ways(text, dotted=False) == expected


@pytest.mark.parametrize(
    "text",
    [
        "x = [assert_nodes]\n",  # imported, never called
        "NodeChecks().assert_order(gm, ops)\n",  # built, not subclassed
        "class T(nn.Module):\n    pass\n",  # torch's `Module`, a name of the index
        "class T(torch.nn.Module):\n    pass\n",
        "p = Path('x')\n",  # called, but no name of the index
    ],
)
def test_names_that_lead_to_no_helper_are_quiet(text):
    assert _ways(text) == []
    assert _ways(text, dotted=False) == []


def test_a_base_named_through_its_module_leads_only_where_dotted_names_are_asked():
    text = "class T(checks.NodeChecks):\n    pass\n"
    assert _ways(text) == [("checks", "pkg.checks")]
    # A file holding no trigger text is asked about the names it imports alone (QL101 page).
    assert _ways(text, dotted=False) == []


def test_without_the_index_every_name_a_from_import_binds_is_asked_as_the_search_asks_it():
    text = "p = Path('x')\nclass T(NodeChecks):\n    pass\nnn.Linear(1, 1)\n"
    assert _ways(text, index=None, dotted=False) == [("Path", "pathlib.Path"), ("NodeChecks", "pkg.checks.NodeChecks")]


def test_a_torch_name_is_no_way_even_where_the_index_holds_its_last_part():
    imports = [("Module", "torch.nn.Module"), ("M", "torch")]
    text = "class T(Module):\n    pass\nclass U(M):\n    pass\n"
    assert _ways(text, imports=imports, dotted=False) == []
    assert _ways(text, index=None, imports=imports, dotted=False) == []
