"""QL101 on the graph side of a subgraph matcher whose callers hand it patterns of ATen overloads
(AITemplate's fx2ait: a rewriter module traces its patterns symbolically, which makes it legacy
FX graph mode, while the graph it searches is the captured ATen graph its callers pass).

Loud: the searched graph's node compared with an ATen packet, when a caller's pattern calls an
ATen overload. Quiet look-alikes: the pattern's node (its trace records the packets the pattern
calls), patterns written with torch functions or packets alone (traces of user code), no caller,
an overload pattern handed in a parameter the rewriter never traces, a class that is not a
`SubgraphMatcher`, and a non-ATen packet.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.conftest import check_file, package_repository

REWRITER = """
    import torch
    from torch.fx import symbolic_trace
    from torch.fx.passes.utils.matcher_utils import SubgraphMatcher


    class SizeMatcher(SubgraphMatcher):
        def _match_nodes(self, pn, gn, match):
            if (
                pn.target == torch.ops.aten.sym_size
                and gn.target == torch.ops.aten.sym_size
            ):
                return True
            return super()._match_nodes(pn, gn, match)


    def _replace(gm, pattern, replacement):
        matcher = SizeMatcher(symbolic_trace(pattern).graph)
        return matcher.match(gm.graph)


    def replace_pattern(gm, pattern, replacement):
        return _replace(gm, pattern, replacement)
"""
GRAPH_ROW = 11  # `gn.target == torch.ops.aten.sym_size`
PATTERN_ROW = 10

PASSES = """
    import torch
    from pkg.rewriter import replace_pattern


    def compose_mm(a, b):
        size = torch.ops.aten.sym_size(a, 0)
        return torch.ops.aten.view.default(torch.ops.aten.mm.default(a, b), [size, -1])


    def fused(a, b):
        return torch.mm(a, b)


    def compose(module):
        return replace_pattern(module, compose_mm, fused)
"""


def _rows(tmp_path: Path, rewriter: str = REWRITER, passes: str | None = PASSES) -> list[int]:
    modules = {"rewriter": textwrap.dedent(rewriter)}
    if passes is not None:
        modules["passes"] = textwrap.dedent(passes)
    root = package_repository(tmp_path, **modules)
    return [d.range.start.row for d in check_file(root / "pkg" / "rewriter.py", ("QL101",)).diagnostics]


# -- loud -------------------------------------------------------------------------------------


def test_graph_side_packet_is_reported_when_a_caller_hands_an_overload_pattern(tmp_path):
    assert _rows(tmp_path) == [GRAPH_ROW]


def test_keyword_argument_and_aliased_import_count(tmp_path):
    passes = PASSES.replace("import replace_pattern", "import replace_pattern as rp").replace(
        "replace_pattern(module, compose_mm, fused)", "rp(module, pattern=compose_mm, replacement=fused)"
    )
    assert _rows(tmp_path, passes=passes) == [GRAPH_ROW]


def test_a_caller_in_the_rewriters_own_module_counts(tmp_path):
    own = textwrap.dedent(REWRITER) + textwrap.dedent(PASSES).replace("from pkg.rewriter import replace_pattern\n", "")
    assert _rows(tmp_path, own, passes=None) == [GRAPH_ROW]


def test_membership_on_the_graph_side_is_reported(tmp_path):
    rewriter = REWRITER.replace(
        "and gn.target == torch.ops.aten.sym_size", "and gn.target in (torch.ops.aten.sym_size,)"
    )
    assert _rows(tmp_path, rewriter) == [GRAPH_ROW]


# -- quiet ------------------------------------------------------------------------------------


def test_pattern_of_torch_functions_is_a_trace_of_user_code(tmp_path):
    passes = PASSES.replace(
        "torch.ops.aten.view.default(torch.ops.aten.mm.default(a, b), [size, -1])", "torch.mm(a, b).view(size, -1)"
    )
    assert _rows(tmp_path, passes=passes) == []


def test_pattern_of_packets_alone_matches_a_graph_of_packets(tmp_path):
    passes = PASSES.replace("view.default(", "view(").replace("mm.default(", "mm(")
    assert _rows(tmp_path, passes=passes) == []


def test_no_caller_keeps_the_legacy_excuse(tmp_path):
    assert _rows(tmp_path, passes=None) == []


def test_overload_function_in_a_parameter_never_traced(tmp_path):
    # `replacement` is never traced here: it says nothing about the graph searched.
    passes = PASSES.replace("replace_pattern(module, compose_mm, fused)", "replace_pattern(module, fused, compose_mm)")
    assert _rows(tmp_path, passes=passes) == []


def test_callers_local_callable_is_not_read(tmp_path):
    # A parameter of the caller may hold any callable, whatever function shares its name.
    passes = PASSES.replace("def compose(module):", "def compose(module, compose_mm):")
    assert _rows(tmp_path, passes=passes) == []


def test_class_that_is_not_a_subgraph_matcher(tmp_path):
    rewriter = REWRITER.replace("class SizeMatcher(SubgraphMatcher):", "class SizeMatcher:")
    rewriter = rewriter.replace("return super()._match_nodes(pn, gn, match)", "return False")
    assert _rows(tmp_path, rewriter) == []


def test_pattern_side_is_never_reported(tmp_path):
    rewriter = REWRITER.replace("and gn.target == torch.ops.aten.sym_size", "and gn.op == 'call_function'")
    assert _rows(tmp_path, rewriter) == []


def test_non_aten_packet_keeps_the_legacy_excuse(tmp_path):
    rewriter = REWRITER.replace("gn.target == torch.ops.aten.sym_size", "gn.target == torch.ops.quantized.add")
    assert _rows(tmp_path, rewriter) == []
