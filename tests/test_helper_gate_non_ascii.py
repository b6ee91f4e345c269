"""Both import triggers' gates (`helper_gate`) in texts holding `\\r` or characters outside
ASCII (issue 13): read as the helper search reads them (`read_in_ascii`: NFKC, as Python reads
identifiers), a dotted name opens the gate only where it starts at an import. QL102's gate let
any name of the index after a dot through in such a text (on ExecuTorch 22 of the 232 files it
asked, on a docstring's dash), and the file was then searched import by import. Its gate is
also asked again of the project's own imports (`helper_imports`), as QL101's was:
`subprocess.run(...)` ends in a name of the index, but no search follows `subprocess`.

Exactness: every text here that opens a gate is one the search can find a helper in, and
the loud checks find the insertion with the index (a run over many files) as without it
(`qlint check FILE`, the editor's buffer); tests/test_helper_gate.py holds the ASCII ways."""

from __future__ import annotations

import pytest

from qlint.analysis.graphs import wrapper_index
from qlint.analysis.graphs.helper_gate import may_lead_to_helper, read_in_ascii
from qlint.analysis.graphs.wrapper_names import WrapperIndex
from tests.test_chain_depth_paths import _every_path, cached_project
from tests.test_helper_gate import kind  # noqa: F401  (the fixture: with the index and without)
from tests.test_ql102_imported_wrappers import GRAPH_UTILS, _flagged

INDEX = WrapperIndex("/p", frozenset({"insert_op"}), frozenset({"Rewriter"}), "digest")
GU = [("gu", "pkg.graph_utils")]
RELU = "torch.ops.aten.relu"

# Ways to `insert_op` through a dotted name, in texts the search reads in NFKC (the sink
# search of QL101 reads them so too: `instances` False).
THROUGH_A_DOTTED_NAME = {
    "a-dash-in-a-docstring": '"""Résumé — a pass."""\nimport pkg.graph_utils as gu\ngu.insert_op(g)',
    "full-width-head": "import pkg.graph_utils as gu\nｇｕ.insert_op(g)",  # noqa: RUF001
    "full-width-name": "import pkg.graph_utils as gu\ngu.ｉｎsert_op(g)",  # noqa: RUF001
    # The search reads a head's start after any character outside ASCII, in a name too.
    "head-after-a-letter-outside-ascii": "import pkg.graph_utils as gu\négu.insert_op(g)",
    "head-inside-a-name": "import pkg.graph_utils as gu\naégu.insert_op(g)",
    # A part that goes on past ASCII (`[A-Za-z_]\\w*`) is one part: read back over it.
    "part-outside-ascii": "import pkg as p\n# —\np.utilsé.insert_op(g)",
    "parts-outside-ascii": "import pkg as p\np.aéb.cçd .  # —\n  insert_op(g)",
    # Rows that end in `\r\n` or `\r`: a blank to the search, and a comment ends there, as
    # Python ends it (`source.lf_rows`: `# a\r b` would leave ` b` code, a syntax error).
    "crlf-rows": "import pkg.graph_utils as gu\r\n(gu .\r\n  insert_op)(g)\r\n",
    "cr-inside-a-comment": "import pkg.graph_utils as gu\nx = (gu  # a\r  .insert_op)(g)",
    # An import whose own name is not ASCII: any dotted name ending in a name of the index.
    "head-outside-ascii": "import pkg.graph_utils as çu\nçu.insert_op(g)",
}
HEADS = {
    "part-outside-ascii": [("p", "pkg")],
    "parts-outside-ascii": [("p", "pkg")],
    "head-outside-ascii": [("çu", "pkg.graph_utils")],
}


@pytest.mark.parametrize("instances", [True, False], ids=["QL102", "QL101"])
@pytest.mark.parametrize("name", THROUGH_A_DOTTED_NAME)
def test_both_gates_open_on_a_dotted_name_the_search_reads_from_an_import(name, instances):
    assert may_lead_to_helper(THROUGH_A_DOTTED_NAME[name], HEADS.get(name, GU), INDEX, instances)


# Unrelated characters outside ASCII, and names of the index after a dot no import starts.
LOOK_ALIKES = {
    "a-dash-in-a-comment": "import pkg.graph_utils as gu\n# nœud — a node\nnode.insert_op(n)",
    "a-string": 'import pkg.graph_utils as gu\nprint("→ done")\nself.builder.insert_op(n)',
    "a-name-outside-ascii": "import pkg.graph_utils as gu\nnœud = gu.first_user(n)\nnœud.insert_op(n)",
    "a-head-inside-a-longer-name": "import pkg.graph_utils as gu\ngué.insert_op(n)",
    "a-part-starting-outside-ascii": "import pkg as p\np.éutils.insert_op(n)",
    "crlf-rows": "import pkg.graph_utils as gu\r\nx.insert_op(n)\r\n",
    "a-class-built-on-another-object": "import pkg.graph_utils as gu\n# où\nx = self.tools.Rewriter()",
}


@pytest.mark.parametrize("name", LOOK_ALIKES)
def test_the_gate_stays_shut_on_what_no_import_starts(name):
    text = LOOK_ALIKES[name]
    imports = [("p", "pkg")] if "import pkg as p" in text else GU
    assert not may_lead_to_helper(text, imports, INDEX)
    assert not may_lead_to_helper(text, imports, INDEX, instances=False)


def test_a_class_base_is_also_read_as_the_class_search_reads_it():
    # `class_bases` reads the text as Python reads names (NFKC), as the search does: `gu.Rewriter`
    # before a combining accent is `Rewriteŕ`, one letter with the `r`, which names no class of
    # the index; with a fullwidth `R` it is `Rewriter`.
    text = "import pkg.graph_utils as gu\n\n\nclass P(gu.Rewriter\u0301):\n    pass\n"
    assert "Rewriter" not in read_in_ascii(text, frozenset({"gu"}), INDEX.attribute_or_class_names)[0]
    assert not may_lead_to_helper(text, GU, INDEX)
    assert may_lead_to_helper(text.replace("gu.Rewriter\u0301", "gu.\uff32ewriter"), GU, INDEX)
    assert not may_lead_to_helper(text.replace("gu.Rewriter", "gu.Other"), GU, INDEX)


def test_a_name_outside_ascii_in_the_index_or_the_imports_reads_any_dotted_name():
    # No ASCII reading stands for it: any dotted name ending in a name of the index.
    index = WrapperIndex("/p", frozenset({"insert_op", "insért"}), frozenset(), "digest")
    assert read_in_ascii("x.insert_op(n)  # é", frozenset({"gu"}), index.attribute_names) is None
    assert may_lead_to_helper("import pkg.graph_utils as gu  # é\nx.insert_op(n)", GU, index)


def test_the_reading_is_made_once_per_text():
    text = "import pkg.graph_utils as gu  # é\nx.insert_op(n)"
    names = INDEX.attribute_or_class_names
    assert read_in_ascii(text, frozenset({"gu"}), names) is read_in_ascii(text, frozenset({"x"}), names)


LOUD = {
    "a-dash-in-a-comment": (
        "import pkg.graph_utils as gu  # — the wrappers",
        f"gu.insert_op(gm.graph, {RELU}, (node,))",
    ),
    "full-width-head": ("import pkg.graph_utils as gu", f"ｇｕ.insert_op(gm.graph, {RELU}, (node,))"),  # noqa: RUF001
    "crlf-rows": ("import pkg.graph_utils as gu\r\n", f"(gu .\r\n        insert_op)(gm.graph, {RELU}, (node,))"),
    "alias-outside-ascii": (
        "from pkg.graph_utils import insert_op as añadir",
        f"añadir(gm.graph, {RELU}, (node,))",
    ),
    "class-built-through-the-module": (
        "import pkg.graph_utils as gu  # réécriture",
        "gu.Rewriter().insert(gm.graph, torch.ops.aten.relu, (node,))",
    ),
}


@pytest.mark.parametrize("imports, body", LOUD.values(), ids=LOUD.keys())
def test_an_insertion_through_a_wrapper_is_found_with_and_without_the_index(tmp_path, kind, imports, body):  # noqa: F811
    found, result = _flagged(tmp_path, imports, body)
    assert result.parsed and len(found) == 1


QUIET = {
    # the wrapper's name after a dot, on what the module does not import (a dash in a comment)
    "foreign-attribute": ("import pkg.graph_utils as gu  # — the wrappers", f"node.graph.insert_op({RELU})"),
    "crlf-rows": ("import pkg.graph_utils as gu\r\n", f"node.graph.insert_op({RELU})\r\n    gu.first_user(node)"),
}


@pytest.mark.parametrize("imports, body", QUIET.values(), ids=QUIET.keys())
def test_look_alikes_stay_quiet_and_unsearched_where_the_index_answers(tmp_path, kind, monkeypatch, imports, body):  # noqa: F811
    searched = []
    search = wrapper_index._wrapper_found
    monkeypatch.setattr(wrapper_index, "_wrapper_found", lambda *a: searched.append(a[1]) or search(*a))
    found, result = _flagged(tmp_path, imports, body)
    assert found == [] and not result.parsed
    # Without the index every file importing a module of the project is searched.
    assert bool(searched) == (kind == "exact search")


PASSES = """\
\"\"\"Passes — with a wrapper.\"\"\"
import torch

import pkg.graph_utils as gu


def rewrite(gm, node):
    gu.insert_op(gm.graph, torch.ops.aten.relu, (node,))
"""
LOOKS = """\
\"\"\"Looks — alike.\"\"\"
import subprocess

import torch

import pkg.graph_utils as gu

RELU = torch.ops.aten.relu


def rewrite(gm, node):
    node.graph.insert_op(RELU)
    subprocess.insert_op(RELU)
    return gu.first_user(node)
"""


def test_every_path_finds_the_same(tmp_path):
    # A tree run (the index), `qlint check FILE` and the editor's buffer (none), cached or not.
    modules = {"graph_utils": GRAPH_UTILS, "passes": PASSES, "looks": LOOKS, "crlf": PASSES.replace("\n", "\r\n")}
    repo, found = cached_project(tmp_path, **modules)
    assert found == [("pkg/crlf.py", 8, "QL102"), ("pkg/passes.py", 8, "QL102")]
    assert _every_path(repo, "passes", "looks", "crlf", buffer_alone=True) == found
