"""QL101 and QL102 on spellings Python reads under NFKC (issue 14): `gu.insert_op(...)` with
a fullwidth `i` calls `gu.insert_op`, `import pkg.graph_utils as gu` written in fullwidth
letters binds `gu`, and `graph.call_function(torch.ops.aten.relu, ...)` with a fullwidth `c`
inserts the packet. `ast` gives the normalised names, but the rules read raw text in places:
the registry's trigger search, the text triggers, the rows the check walks
(`lines_containing`), the aliases of `file_imports`, and the helper search's texts of other
modules (a wrapper or sink helper written in fullwidth letters). Each now reads the text as
Python reads identifiers (`identifier_text.normalised`: NFKC), so a spelling Python accepts
gives the same finding as its ASCII form, on every path: a tree run (the index), `qlint check
FILE` and an editor's buffer, cached and not (`test_chain_depth_paths._every_path`).

Quiet: the overload spelled in fullwidth letters, a name outside ASCII that NFKC does not map
onto the helper or onto `target` (an accented `i`, `a`), the packet in a comment or a string,
and the same in a file whose rows end in a lone `\\r`. Positions: rows, and columns in code
points from 1 (the JSON output's), of the raw text on rows holding fullwidth letters."""

from __future__ import annotations

import unicodedata

import pytest

from tests.conftest import json_findings
from tests.test_chain_depth_paths import _every_path, cached_project
from tests.test_ql102_imported_wrappers import GRAPH_UTILS
from tests.test_sink_helper_chains import CHECKS


def wide(word: str) -> str:
    """`word` in fullwidth letters (NFKC maps each back onto its ASCII letter)."""
    return "".join(chr(ord(c) + 0xFEE0) for c in word)


# A wrapper and a sink helper whose own names and calls are spelled in fullwidth letters.
WIDE_UTILS = f"def {wide('put')}(graph, op, args):\n    return graph.{wide('c')}all_function(op, args)\n"
WIDE_CHECKS = (
    f"def {wide('expect')}_nodes(case, m, occ):\n"
    f"    case.checkGraphModuleN{wide('o')}des(m, expected_node_occurrence=occ)\n"
)
HELPERS = {"graph_utils": GRAPH_UTILS, "checks": CHECKS, "wide_utils": WIDE_UTILS, "wide_checks": WIDE_CHECKS}

RELU = "torch.ops.aten.relu"
HARDTANH = "{torch.ops.aten.hardtanh: 1}"


def _pass(imports: str, body: str) -> str:
    return f"import torch\n{imports}\n\n\ndef run(gm, node, case):\n    {body}\n"


# Module -> (its text, the packet's spelling on the reported row).
LOUD = {
    "inserts": (_pass("", f"gm.graph.{wide('c')}all_function({RELU}, (node,))"), RELU),
    "creates": (_pass("", f'gm.graph.{wide("c")}reate_node("call_function", {RELU}, (node,))'), RELU),
    "through_attribute": (
        _pass("\nimport pkg.graph_utils as gu", f"gu.{wide('i')}nsert_op(gm.graph, {RELU}, (node,))"),
        RELU,
    ),
    "aliased_import": (
        _pass(f"\nimport pkg.graph_utils as {wide('gu')}", f"gu.insert_op(gm.graph, {RELU}, (node,))"),
        RELU,
    ),
    "from_import": (
        _pass(f"\nfrom pkg.graph_utils import {wide('i')}nsert_op", f"insert_op(gm.graph, {RELU}, (node,))"),
        RELU,
    ),
    "wide_wrapper": (_pass("\nfrom pkg.wide_utils import put", f"put(gm.graph, {RELU}, (node,))"), RELU),
    "wide_wrapper_module": (_pass("\nfrom pkg import wide_utils", f"wide_utils.put(gm.graph, {RELU}, (node,))"), RELU),
    "matched_packet": (
        _pass("from torch.ops import aten", f"return [n for n in gm.graph.nodes if n.target == aten.{wide('r')}elu]"),
        f"aten.{wide('r')}elu",
    ),
    "matched_target": (
        _pass("", f"return [n for n in gm.graph.nodes if n.{wide('t')}arget == {RELU}]"),
        RELU,
    ),
    "ops_root": (
        _pass("", f"return [n for n in gm.graph.nodes if n.target == torch.{wide('o')}ps.aten.relu]"),
        f"torch.{wide('o')}ps.aten.relu",
    ),
    "sink_helper": (
        _pass(f"\nfrom pkg.checks import {wide('a')}ssert_nodes", f"assert_nodes(case, gm, {HARDTANH})"),
        "torch.ops.aten.hardtanh",
    ),
    "sink_helper_module": (
        _pass("\nfrom pkg import checks", f"checks.{wide('a')}ssert_nodes(case, gm, {HARDTANH})"),
        "torch.ops.aten.hardtanh",
    ),
    "wide_sink_helper": (
        _pass("\nfrom pkg.wide_checks import expect_nodes", f"expect_nodes(case, gm, {HARDTANH})"),
        "torch.ops.aten.hardtanh",
    ),
    "sink_keyword": (
        _pass("", f"case.checkGraphModuleNodes(gm, {wide('e')}xpected_node_occurrence={HARDTANH})"),
        "torch.ops.aten.hardtanh",
    ),
}
# Rows that end in a lone `\r` (old Mac files, which Python runs row by row).
LOUD["cr_rows_matcher"] = (LOUD["matched_target"][0].replace("\n", "\r"), RELU)
# (Not an import in such a file: `text_imports` reads rows ending in `\n`, for ASCII names too.)
LOUD["cr_rows_insert"] = (LOUD["inserts"][0].replace("\n", "\r"), RELU)

QUIET = {
    "inserts_overload": _pass("", f"gm.graph.{wide('c')}all_function({RELU}.{wide('default')}, (node,))"),
    "matches_overload": _pass(
        "", f"return [n for n in gm.graph.nodes if n.{wide('t')}arget == {RELU}.{wide('d')}efault]"
    ),
    # NFKC keeps an accented letter: `ínsert_op` is another name, and so is `tárget`.
    "accented_helper": _pass(
        "\nimport pkg.graph_utils as gu", f"gu.\u00ednsert_op(gm.graph, {RELU}, (node,))\n    gu.first_user(node)"
    ),
    "accented_import": _pass(
        "\nfrom pkg.graph_utils import first_user as \u00ednsert_op",
        f"insert_op = print\n    insert_op(gm.graph, {RELU}, (node,))\n    \u00ednsert_op(node)",
    ),
    "accented_target": _pass("", f"return [n for n in gm.graph.nodes if n.t\u00e1rget == {RELU}]"),
    "in_comment_and_string": _pass(
        "",
        f"# gm.graph.{wide('c')}all_function({RELU}, (node,))\n"
        f'    doc = "n.{wide("t")}arget == {RELU}; gm.graph.{wide("c")}all_function({RELU})"\n'
        f"    return {RELU}(node), doc",
    ),
}
QUIET["cr_rows_quiet"] = QUIET["in_comment_and_string"].replace("\n", "\r")
QUIET["cr_rows_overload"] = QUIET["inserts_overload"].replace("\n", "\r")


# Each loud module's ASCII twin: the text as Python reads it (NFKC), whose findings it must give.
TWINS = {f"ascii_{name}": unicodedata.normalize("NFKC", text) for name, (text, _) in LOUD.items()}
# The matchers (the others insert the packet: `call_function`, `create_node`, a wrapper).
MATCHERS = {"matched_packet", "matched_target", "ops_root", "sink_helper", "sink_helper_module", "wide_sink_helper"}
MATCHERS |= {"sink_keyword", "cr_rows_matcher"}


def _expected_row(name: str) -> int:
    """The row holding the packet (rows end in `\n` or a lone `\r`)."""
    text, spelled = LOUD[name]
    return next(i for i, line in enumerate(text.replace("\r", "\n").split("\n"), 1) if spelled in line)


EXPECTED = sorted(
    (f"pkg/{prefix}{name}.py", _expected_row(name), "QL101" if name in MATCHERS else "QL102")
    for name in LOUD
    for prefix in ("", "ascii_")
)


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    """The project and what a first whole-tree run found (its answers kept in `cache`)."""
    modules = {**HELPERS, **{name: text for name, (text, _) in LOUD.items()}, **TWINS, **QUIET}
    repo, found = cached_project(tmp_path_factory.mktemp("nfkc"), **modules)
    return repo, found, json_findings(repo, "--select", "QL101,QL102", "--no-cache", "pkg")


def test_every_spelling_python_accepts_is_found_and_nothing_else(project):
    _, found, _ = project
    assert found == EXPECTED


def _where(d: dict) -> tuple:
    edits = d["fix"]["edits"] if d["fix"] else []
    return d["code"], d["location"], d["end_location"], [(e["location"], e["end_location"]) for e in edits]


@pytest.mark.parametrize("name", LOUD)
def test_each_spelling_is_found_where_its_ascii_twin_is(project, name):
    _, _, findings = project
    mine = [_where(d) for d in findings if d["filename"].endswith(f"/pkg/{name}.py")]
    twin = [_where(d) for d in findings if d["filename"].endswith(f"/pkg/ascii_{name}.py")]
    assert len(mine) == 1 and mine == twin


@pytest.mark.parametrize("names", [sorted(LOUD)[:8], sorted(LOUD)[8:]], ids=["first-half", "second-half"])
def test_every_path_finds_them(project, names):
    repo, found, _ = project
    assert found == EXPECTED
    assert _every_path(repo, *names, buffer_alone=True) == found


def test_the_look_alikes_stay_quiet_on_every_path(project):
    repo, found, _ = project
    assert not [f for f in found if f[0][len("pkg/") : -len(".py")] in QUIET]
    assert _every_path(repo, *QUIET, buffer_alone=True) == found


def test_positions_are_the_raw_texts_in_code_points(project):
    _, _, findings = project
    mine = [d for d in findings if not d["filename"].rsplit("/", 1)[1].startswith("ascii_")]
    assert len(mine) == len(LOUD)
    for d in mine:
        name = d["filename"].rsplit("/", 1)[1][: -len(".py")]
        text, spelled = LOUD[name]
        line = text.replace("\r", "\n").split("\n")[d["location"]["row"] - 1]
        start = line.index(spelled)
        assert (d["location"]["column"], d["end_location"]["column"]) == (start + 1, start + len(spelled) + 1), name
        assert d["end_location"]["row"] == d["location"]["row"]
        # The fix writes the overload after the packet as it is spelled (`aten.relu` in
        # fullwidth letters, then `.default`): Python reads that as the overload.
        edits = d["fix"]["edits"]
        assert all(e["location"]["row"] == d["location"]["row"] for e in edits), name
        assert any(e["location"]["column"] == start + len(spelled) + 1 for e in edits), name


def test_rows_are_searched_as_python_reads_identifiers(tmp_path):
    from qlint.analysis.context import FileContext
    from qlint.engine import parse_module
    from qlint.optable import load_op_table
    from qlint.source import LineIndex

    # `…` is three characters under NFKC: the rows after it are found all the same.
    text = f"x = '…'\r\ny = g.{wide('c')}all_function\rz = (n.\n    {wide('target')})\n"
    ctx = FileContext("m.py", text, parse_module(text, "m.py"), LineIndex(text), load_op_table(), None)
    assert ctx.lines_containing("call_function") == {2}
    assert ctx.lines_containing("target") == {4}
    assert ctx.words.startswith("x = '...'") and ctx.word_lines.line(4) == "    target)"


def test_an_ascii_text_or_one_nfkc_leaves_alone_is_read_as_it_is():
    from qlint.analysis.identifier_text import normalised, normalised_bytes

    for text in ("import torch\n", "# Résumé — a pass\n"):
        assert normalised(text) is text
        data = text.encode()
        assert normalised_bytes(data) is data
    assert normalised(f"g.{wide('c')}all_function") == "g.call_function"
    assert normalised_bytes(f"g.{wide('c')}all_function".encode()) == b"g.call_function"
    assert normalised_bytes(b"\xff undecodable") == b"\xff undecodable"


def test_a_text_nfkc_changes_only_outside_names_is_read_as_it_is():
    from qlint.analysis.identifier_text import normalised, normalised_bytes

    # `…`, `²` and fullwidth punctuation stand only in strings and comments (no name may hold
    # them): the names are the raw text's, so the text is not normalised.
    for text in ("x = '…'  # m², ok\uff01\n", "call_function  # \uff08relu\uff09\n"):
        assert normalised(text) is text
        data = text.encode()
        assert normalised_bytes(data) is data
    # A letter a name may hold changes (`ᵀ` is `T`), with those characters beside it, and a
    # run NFKC composes (`ø` and a combining acute): the whole text is normalised.
    assert normalised("Wᵀ = '…'\n") == "WT = '...'\n"
    assert normalised("x = 'ø\u0301'  # ²\n") == "x = '\u01ff'  # 2\n"


def test_only_the_rules_reading_identifiers_read_their_triggers_so():
    from qlint.registry import deferred

    text = f"g.{wide('c')}all_function(torch.ops.aten.relu, ())\n"
    assert deferred("QL102", {}).identifier_triggers and deferred("QL101", {}).identifier_triggers
    assert deferred("QL102", {}).triggered_by(text)
    assert not deferred("QL201", {}).identifier_triggers
