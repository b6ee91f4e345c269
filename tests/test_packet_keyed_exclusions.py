"""QL102 and QL101: a pass that inserts a packet, and the pass it hands the graph to, which keeps
those very nodes apart by the packet (easydist: the ZeRO pass inserts `aten.flatten` before its
scatters, and the tiling pass excludes `COMM_FUNCS + [aten.flatten]` from its computation nodes).
The project's own packet-keyed code is the nodes' consumer: the insertion and the exclusion are
quiet together, and loud together where code keyed on an overload may see the nodes."""

from __future__ import annotations

import pytest

from tests.conftest import lint, write_package

SHARDING = """\
import torch


def all_gather_end(x):
    return x


COMM_FUNCS = [all_gather_end]
"""

# The overload-keyed table a pass of the project looks nodes up in (easydist's `view_op_map`).
TABLE = "\n\nFLATTEN_TABLE = {torch.ops.aten.flatten.using_ints: len}\n"

ZERO = """\
import torch

from pkg.tiling import tile


def shard(gm):
    for node in list(gm.graph.nodes):
        if node.op == "placeholder":
            with gm.graph.inserting_after(node):
                flat = gm.graph.call_function(torch.ops.aten.flatten, args=(node,))
            node.replace_all_uses_with(flat)
            flat.update_arg(0, node)
    gm.recompile()
    return gm


def compile_zero(gm, *args):
    gm = shard(gm)
    {between}
    gm = tile(gm)
    return gm(*args)
"""

TILING = """\
import torch

from pkg.sharding import COMM_FUNCS


def tile(gm):
    computation = []
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target not in {excluded}:
            computation.append(node)
    return gm
{more}"""

CONCATENATED = "COMM_FUNCS + [torch.ops.aten.flatten]"


def _package(tmp_path, between="pass", excluded=CONCATENATED, more="", sharding=SHARDING, zero=ZERO):
    return write_package(
        tmp_path,
        "pkg",
        sharding=sharding,
        zero=zero.replace("{between}", between),
        tiling=TILING.format(excluded=excluded, more=more),
    )


def _rows_flagged(pkg, module: str, rule: str) -> list[int]:
    path = pkg / f"{module}.py"
    return [d.range.start.row for d in lint(path.read_text(), path=str(path), select=(rule,))]


# -- QL102: the insertion ---------------------------------------------------------------------


def test_a_packet_excluded_by_a_concatenated_list_of_the_pass_it_reaches_is_quiet(tmp_path):
    assert _rows_flagged(_package(tmp_path), "zero", "QL102") == []


# A packet-keyed exclusion that was read before (a literal list), beside a site keyed on the
# overload alone that was not: the nodes may meet code that misses them.
_LITERAL = "[torch.ops.aten.flatten]"


def _rows(collection: str) -> str:
    return f"\n\ndef rows(gm):\n    return [n for n in gm.graph.nodes if n.target in {collection}]\n"


# The tiling module looks nodes up in a table imported from another module of the project.
IMPORTED_TABLE = "\nfrom pkg.sharding import FLATTEN_TABLE\n\n" + _rows("FLATTEN_TABLE")


@pytest.mark.parametrize(
    ("sharding", "more"),
    [
        # a table imported from another module of the project, keyed on the overload alone
        (SHARDING + TABLE, IMPORTED_TABLE),
        # the same table bound in the tiling module itself, compared by its name
        (SHARDING, TABLE + _rows("FLATTEN_TABLE")),
        # a concatenation whose literal part holds the overload alone
        (SHARDING, _rows("COMM_FUNCS + [torch.ops.aten.flatten.using_ints]")),
    ],
)
def test_an_overload_keyed_site_beside_the_packet_exclusion_keeps_the_insertion_loud(tmp_path, sharding, more):
    pkg = _package(tmp_path, excluded=_LITERAL, more=more, sharding=sharding)
    assert _rows_flagged(pkg, "zero", "QL102") == [10]


def test_a_parameter_named_like_a_module_table_stands_for_what_callers_pass(tmp_path):
    # The function's own parameter is not the module's overload table of the same name.
    more = (
        TABLE
        + "\n\ndef rows(gm, FLATTEN_TABLE):\n    return [n for n in gm.graph.nodes if n.target in FLATTEN_TABLE]\n"
    )
    assert _rows_flagged(_package(tmp_path, excluded=_LITERAL, more=more), "zero", "QL102") == []


def test_a_re_export_between_the_insertion_and_the_exclusion_keeps_the_insertion_loud(tmp_path):
    pkg = _package(tmp_path, between="gm = torch.export.export(gm, args).module()")
    assert _rows_flagged(pkg, "zero", "QL102") == [10]


# -- QL101: the exclusion ---------------------------------------------------------------------


def test_the_exclusion_of_the_packet_a_linked_pass_inserts_is_quiet(tmp_path):
    assert _rows_flagged(_package(tmp_path), "tiling", "QL101") == []


@pytest.mark.parametrize(
    "kwargs",
    [
        # QL102 reports the insertion: the tiling module also looks the op up by its overload
        {"sharding": SHARDING + TABLE, "more": IMPORTED_TABLE},
        # ... or the graph is exported again between the insertion and the tiling
        {"between": "gm = torch.export.export(gm, args).module()"},
        # the inserting pass neither imports the tiling module nor is imported by it: the
        # graphs it inserts into are not shown to reach the exclusion
        {"zero": ZERO.replace("from pkg.tiling import tile\n", "").replace("gm = tile(gm)", "pass")},
        # the insertion is of the overload: the packet matches nothing the project put there
        {"zero": ZERO.replace("torch.ops.aten.flatten,", "torch.ops.aten.flatten.using_ints,")},
    ],
)
def test_the_exclusion_stays_loud_where_the_insertion_is_not_its_own(tmp_path, kwargs):
    assert _rows_flagged(_package(tmp_path, **kwargs), "tiling", "QL101") == [9]


def test_no_module_spelling_the_packet_settles_the_question_before_the_matchers_sites(tmp_path, monkeypatch):
    # The matcher's own sites are a walk of every statement naming the op: with no other module
    # spelling the packet, no linked insertion can exist, and they are not read.
    from qlint.rules import packet_sites

    def unread(module, op):
        raise AssertionError(f"sites of {op} read")

    monkeypatch.setattr(packet_sites, "op_sites", unread)
    zero = ZERO.replace("torch.ops.aten.flatten,", "torch.ops.aten.flatten.using_ints,")
    assert _rows_flagged(_package(tmp_path, zero=zero), "tiling", "QL101") == [9]


def test_the_exclusion_is_quiet_where_the_matcher_imports_the_inserting_pass(tmp_path):
    # Linked the other way: the tiling module imports the pass, which never spells its name.
    zero = ZERO.replace("from pkg.tiling import tile\n", "").replace("gm = tile(gm)", "pass")
    more = "\n\nfrom pkg.zero import shard\n\n\ndef run(gm):\n    return tile(shard(gm))\n"
    assert _rows_flagged(_package(tmp_path, zero=zero, more=more), "tiling", "QL101") == []


# Inserts the packet too, into graphs of its own: no import links it to the tiling module.
UNLINKED = ZERO.replace("from pkg.tiling import tile\n", "").replace("gm = tile(gm)", "pass")


def test_a_module_no_import_links_to_the_matcher_is_parsed_once_for_its_questions(tmp_path, monkeypatch):
    # Whether it inserts the packet into graphs that carry packets is kept with its content;
    # the linked-insertion questions that follow (not kept) need no parse of a module whose
    # text does not spell the matcher's module and that the matcher does not import.
    from qlint.analysis.graphs import project_texts

    parsed: list[str] = []
    live_parse = project_texts.live_parse

    def parse(text, path, *args):
        parsed.append(path.rpartition("/")[2])
        return live_parse(text, path, *args)

    monkeypatch.setattr(project_texts, "live_parse", parse)
    pkg = _package(tmp_path, excluded=_LITERAL)
    (pkg / "unlinked.py").write_text(UNLINKED)
    assert _rows_flagged(pkg, "tiling", "QL101") == []
    assert parsed.count("unlinked.py") == 1 and parsed.count("zero.py") >= 2
