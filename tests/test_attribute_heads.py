"""Which imports the helper search reads attribute paths from (`gu.insert_op(...)`) with the
wrapper index of a batch run: only those a dotted name ending in a name the index holds may
start at (`dotted_heads.heads_reaching`, asked by `imported_helpers._attribute_helpers`).
Every way to a wrapper through an attribute keeps its import; the others are not searched."""

from __future__ import annotations

import pytest

from qlint.analysis.graphs import imported_helpers
from qlint.analysis.graphs.called_names import attribute_pattern
from qlint.analysis.graphs.dotted_heads import heads_reaching
from qlint.analysis.graphs.wrapper_names import WrapperIndex
from qlint.analysis.names.text_imports import text_imports
from tests.test_helper_gate import THROUGH_ATTRIBUTES
from tests.test_ql102_imported_wrappers import PASS

FUNCTIONS = frozenset({"insert_op"})
# The ways that call the wrapper function through an attribute (not a class built).
FUNCTION_WAYS = {way: case for way, case in THROUGH_ATTRIBUTES.items() if "insert_op" in case[1]}


def _heads(text: str) -> frozenset[str]:
    return frozenset(name for name, _ in text_imports(text, "pkg.passes", "pkg/passes.py"))


@pytest.mark.parametrize("imports, body", FUNCTION_WAYS.values(), ids=FUNCTION_WAYS.keys())
def test_every_way_through_an_attribute_keeps_its_import(imports, body):
    text = PASS.format(imports=imports, body=body)
    head = text_imports(imports, "pkg.passes", "pkg/passes.py")[0][0]
    reaching = heads_reaching(text, attribute_pattern(FUNCTIONS), _heads(text))
    assert reaching is not None and head in reaching


def test_imports_no_such_dotted_name_starts_at_are_left_out():
    text = "import os\nimport numpy as np\nimport pkg.graph_utils as gu\n\nos.getcwd()\nnp.zeros(3)\ngu.insert_op(g)\n"
    assert heads_reaching(text, attribute_pattern(FUNCTIONS), _heads(text)) == {"gu"}
    # A look-alike that does spell one: `os` is kept (a superset, whatever `os.path` is).
    text += "os.path.insert_op(g)\n"
    assert heads_reaching(text, attribute_pattern(FUNCTIONS), _heads(text)) == {"gu", "os"}


def test_a_reading_back_past_its_budget_leaves_every_import_in():
    text = "import pkg.graph_utils as gu\n(gu\n" + "# a comment row\n" * 500 + ".insert_op)(g)\n"
    assert heads_reaching(text, attribute_pattern(FUNCTIONS), _heads(text)) is None


@pytest.fixture
def searched(monkeypatch):
    """The import names whose attribute paths `_attribute_helpers` reads, and the dotted
    names it looks up (none is a helper here: no project to read)."""
    asked: list[str] = []
    looked_up: list[str] = []
    real = imported_helpers.called_attributes
    monkeypatch.setattr(
        imported_helpers, "called_attributes", lambda text, name: asked.append(name) or real(text, name)
    )

    def not_a_helper(fw, scope, name: str, full: str) -> bool:
        looked_up.append(full)
        return False

    monkeypatch.setattr(imported_helpers, "_imported_helper", not_a_helper)
    return asked, looked_up


IMPORTS = [("os", "os"), ("np", "numpy"), ("gu", "pkg.graph_utils")]
TEXT = "import os\nimport numpy as np\nimport pkg.graph_utils as gu\n\nos.getcwd()\nnp.zeros(3)\ngu.insert_op(g)\n"
INDEX = WrapperIndex("/nowhere", FUNCTIONS, frozenset(), "digest")


def test_attribute_paths_are_read_from_the_reaching_imports_only(searched):
    asked, looked_up = searched
    assert imported_helpers._attribute_helpers(None, "/nowhere/pkg/passes.py", IMPORTS, TEXT, INDEX) == set()
    assert asked == ["gu"]
    assert looked_up == ["pkg.graph_utils.insert_op"]


@pytest.mark.parametrize(
    "text, index",
    [
        # Outside ASCII the dotted names are read in NFKC: every import is searched, as before.
        (TEXT + "# réécriture\n", INDEX),
        # No index (a one-file check, the language server): every import is searched.
        (TEXT, None),
    ],
    ids=["outside-ascii", "no-index"],
)
def test_every_import_is_searched_where_the_heads_are_not_read(searched, text, index):
    asked, looked_up = searched
    imported_helpers._attribute_helpers(None, "/nowhere/pkg/passes.py", IMPORTS, text, index)
    assert sorted(asked) == ["gu", "np", "os"]
    assert "pkg.graph_utils.insert_op" in looked_up
