"""QL101 and a packet the project's subgraph rewrite puts into graphs (ByteIR's torch-frontend:
`replace_pattern` swaps attention written with torch functions for a replacement that calls
the sdpa packet, and its next pass matches that packet on the same Dynamo graph). Loud
look-alikes: a replacement that calls the overload, another packet or nothing, a pattern
that spells an overload (the graph carries overloads), a rewrite that is not torch's, and a
replacement that is not a function of the module."""

from __future__ import annotations

import textwrap
from pathlib import Path

REWRITE = """
    import torch
    import torch.nn.functional as F


    def attention(q, k, v, scale):
        att = (q @ k.transpose(-2, -1)) * scale
        att = F.softmax(att, dim=-1)
        return att @ v


    def fused(q, k, v, scale):
        return torch.ops.aten.scaled_dot_product_attention(q, k, v, scale=scale)


    def rewrite(gm):
        torch.fx.replace_pattern(gm, attention, fused)
        return gm
"""

MATCHER = """
    import torch


    def use_flash(gm):
        for node in gm.graph.nodes:
            if node.op == "call_function" and node.target == torch.ops.aten.scaled_dot_product_attention:
                node.target = flash
        return gm
"""

# The matcher's row (1-based) in MATCHER.
ROW = 7


def _result(tmp_path: Path, rewrite: str, matcher: str = MATCHER):
    from tests.conftest import check_file, package_repository

    root = package_repository(tmp_path, rewrites=textwrap.dedent(rewrite), flash=textwrap.dedent(matcher))
    return check_file(root / "pkg" / "flash.py", ("QL101",))


def _rows(tmp_path: Path, rewrite: str, matcher: str = MATCHER) -> list[int]:
    return [d.range.start.row for d in _result(tmp_path, rewrite, matcher).diagnostics]


def _contrast(tmp_path: Path, wrong: str) -> None:
    """The rewrite as written is quiet, its look-alike `wrong` loud."""
    (tmp_path / "right").mkdir()
    (tmp_path / "wrong").mkdir()
    assert _rows(tmp_path / "right", REWRITE) == []
    assert _rows(tmp_path / "wrong", wrong) == [ROW]


# -- quiet: the rewrite put the packet there -----------------------------------------------------


def test_packet_a_replacement_calls_is_quiet_in_the_matcher(tmp_path):
    result = _result(tmp_path, REWRITE)
    assert result.diagnostics == []
    # The matcher's result depends on the module that rewrites.
    assert any(p.endswith("rewrites.py") for p in result.dependencies)


def test_rewrite_in_the_matchers_own_module_is_quiet(tmp_path):
    body = textwrap.dedent(REWRITE) + textwrap.dedent(MATCHER).replace("import torch\n", "")
    assert _rows(tmp_path, "", body) == []


def test_traced_pattern_and_rewrite_with_filters_are_quiet(tmp_path):
    text = REWRITE.replace(
        "torch.fx.replace_pattern(gm, attention, fused)",
        "subgraph_rewriter.replace_pattern_with_filters(gm, symbolic_trace(attention), fused, [])",
    ).replace("import torch\n", "import torch\n    from torch.fx import subgraph_rewriter, symbolic_trace\n", 1)
    assert _rows(tmp_path, text) == []


def test_pattern_written_with_packets_is_quiet(tmp_path):
    text = REWRITE.replace("F.softmax(att, dim=-1)", "torch.ops.aten.softmax(att, -1)")
    assert _rows(tmp_path, text) == []


def test_keywords_are_read(tmp_path):
    text = REWRITE.replace("(gm, attention, fused)", "(gm, pattern=attention, replacement=fused)")
    assert _rows(tmp_path, text) == []


# -- loud: what the rewrite puts there is not the packet -----------------------------------------


def test_replacement_calling_the_overload_is_loud(tmp_path):
    _contrast(tmp_path, REWRITE.replace("attention(q, k, v, scale=", "attention.default(q, k, v, scale="))


def test_replacement_calling_another_packet_is_loud(tmp_path):
    _contrast(tmp_path, REWRITE.replace("scaled_dot_product_attention(q, k, v, scale=scale)", "relu(q)"))


def test_replacement_that_is_never_used_is_loud(tmp_path):
    _contrast(tmp_path, REWRITE.replace("torch.fx.replace_pattern(gm, attention, fused)", "pass"))


def test_pattern_spelling_an_overload_is_loud(tmp_path):
    # The pattern matches a graph of overloads: the packet sits beside the overloads there.
    _contrast(tmp_path, REWRITE.replace("F.softmax(att, dim=-1)", "torch.ops.aten._softmax.default(att, -1, False)"))


def test_rewrite_that_is_not_torchs_is_loud(tmp_path):
    text = REWRITE.replace("torch.fx.replace_pattern(", "replace_pattern(").replace(
        "import torch\n", "import torch\n    from pkg.util import replace_pattern\n", 1
    )
    _contrast(tmp_path, text)


def test_replacement_that_is_not_a_function_of_the_module_is_loud(tmp_path):
    _contrast(tmp_path, REWRITE.replace("(gm, attention, fused)", "(gm, attention, REPLACEMENTS[0])"))


def test_replacement_handed_in_under_a_module_functions_name_is_loud(tmp_path):
    # The parameter may hold any callable, whatever function of the module shares its name.
    _contrast(tmp_path, REWRITE.replace("def rewrite(gm):", "def rewrite(gm, fused):"))
