"""QL102 on packets a subgraph rewrite's replacement calls when its pattern spells overloads:
`replace_pattern` splices the replacement's nodes into the graph the pattern matched, and a
pattern of overloads matches only a graph of overloads, where the packet node is invisible to
matchers keyed on overloads.

Quiet look-alikes: a pattern that also calls a packet or spells no overload (a graph of
packets, a trace of user code), a replacement calling overloads only, a pattern or replacement
that is not a function of the module, a rewrite that is not torch's, a compiler's graphs, and a
rewriting function nothing can call.
"""

from __future__ import annotations

import textwrap

from tests.conftest import check_file, fix, lint, package_repository

REWRITE = """
    import torch


    def relu_of_relu6(x):
        return torch.ops.aten.relu.default(torch.ops.aten.hardtanh.default(x, 0.0, 6.0))


    def relu6(x):
        return torch.ops.aten.hardtanh(x, 0.0, 6.0)


    def drop_redundant_relu(gm):
        torch.fx.replace_pattern(gm, relu_of_relu6, relu6)
        return gm
"""
ROW = 10  # the replacement's packet call


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in lint(src, select=("QL102",))]


# -- loud -------------------------------------------------------------------------------------


def test_packet_in_a_replacement_of_an_overload_pattern_is_reported():
    found = lint(REWRITE, select=("QL102",))
    assert [(d.range.start.row, d.range.start.col) for d in found] == [(ROW, 11)]
    assert "subgraph rewrite" in found[0].message


def test_fix_spells_the_overload_graphs_carry():
    fixed = fix(REWRITE, select=("QL102",))
    assert "return torch.ops.aten.hardtanh.default(x, 0.0, 6.0)" in fixed


def test_with_filters_keywords_and_aliases():
    src = REWRITE.replace("import torch\n", "import torch\n    from torch.fx import subgraph_rewriter as sr\n", 1)
    src = src.replace(
        "torch.fx.replace_pattern(gm, relu_of_relu6, relu6)",
        "sr.replace_pattern_with_filters(gm, pattern=relu_of_relu6, replacement=relu6, match_filters=[])",
    )
    assert rows(src) == [ROW + 1]


def test_aliased_namespace_in_the_replacement():
    src = REWRITE.replace("return torch.ops.aten.hardtanh(x, 0.0, 6.0)", "return aten.hardtanh(x, 0.0, 6.0)")
    src = src.replace("import torch\n", "import torch\n    aten = torch.ops.aten\n", 1)
    assert rows(src) == [ROW + 1]


def test_a_module_that_traces_symbolically_is_no_excuse():
    # The pattern's overloads say what the graph is, whatever else the module traces.
    src = REWRITE.replace("import torch\n", "import torch\n    from torch.fx import symbolic_trace\n", 1)
    src += "\n    def trace(m):\n        return symbolic_trace(m)\n"
    assert rows(src) == [ROW + 1]


# -- quiet ------------------------------------------------------------------------------------


def test_pattern_that_also_calls_a_packet():
    src = REWRITE.replace("torch.ops.aten.relu.default(", "torch.ops.aten.relu(")
    assert rows(src) == []


def test_pattern_of_torch_functions_matches_a_trace():
    src = REWRITE.replace(
        "torch.ops.aten.relu.default(torch.ops.aten.hardtanh.default(x, 0.0, 6.0))",
        "torch.relu(torch.nn.functional.hardtanh(x, 0.0, 6.0))",
    )
    assert rows(src) == []


def test_replacement_calling_the_overload():
    assert rows(REWRITE.replace("hardtanh(x, 0.0, 6.0)", "hardtanh.default(x, 0.0, 6.0)")) == []


def test_replacement_that_is_not_a_function_of_the_module():
    assert rows(REWRITE.replace("(gm, relu_of_relu6, relu6)", "(gm, relu_of_relu6, lambda x: x)")) == []


def test_replacement_handed_in_as_a_parameter():
    assert rows(REWRITE.replace("def drop_redundant_relu(gm):", "def drop_redundant_relu(gm, relu6):")) == []


def test_pattern_handed_in_as_a_parameter():
    src = REWRITE.replace("def drop_redundant_relu(gm):", "def drop_redundant_relu(gm, relu_of_relu6):")
    assert rows(src) == []


def test_rewrite_that_is_not_torchs():
    src = REWRITE.replace("torch.fx.replace_pattern(", "replace_pattern(").replace(
        "import torch\n", "import torch\n    from mylib.rewrite import replace_pattern\n", 1
    )
    assert rows(src) == []


def test_compiler_graphs_accept_packets():
    src = REWRITE.replace("import torch\n", "import torch\n    from torch._inductor.pattern_matcher import Match\n", 1)
    assert rows(src) == []


def test_rewriting_function_nothing_calls(tmp_path):
    # A private function of a package module that nothing names never runs.
    src = REWRITE.replace("def drop_redundant_relu(gm):", "def _drop_redundant_relu(gm):")
    root = package_repository(tmp_path, rewrites=textwrap.dedent(src))
    assert check_file(root / "pkg" / "rewrites.py", ("QL102",)).diagnostics == []
    public = package_repository(tmp_path / "public", rewrites=textwrap.dedent(REWRITE))
    assert [d.range.start.row for d in check_file(public / "pkg" / "rewrites.py", ("QL102",)).diagnostics] == [ROW]


# -- quiet: the graph is stripped to packets next, or the op is the project's own ------------

STRIPPED = """
    import torch
    from torch._functorch.compile_utils import strip_overloads


    def squeeze_dims(x, dims):
        return torch.ops.aten.squeeze.dims(x, dims)


    def prims_squeeze(x, dims):
        return torch.ops.prims.squeeze(x, dims)


    def index_put(x, i, v):
        return torch.ops.aten.index_put.default(x, i, v)


    def hacked_index_put(x, i, v):
        return torch.ops.aten.index_put_.hacked_twin(x, i, v)


    def preprocess(gm):
        torch.fx.replace_pattern(gm, squeeze_dims, prims_squeeze)
        torch.fx.replace_pattern(gm, index_put, hacked_index_put)
        strip_overloads(gm)
        return gm
"""
STRIPPED_ROW = 11


def test_graph_stripped_right_after_the_rewrites():
    assert rows(STRIPPED) == []


def test_strip_missing_is_loud():
    assert rows(STRIPPED.replace("        strip_overloads(gm)\n", "")) == [STRIPPED_ROW]


def test_rewrite_between_that_names_the_op_is_loud():
    src = STRIPPED.replace("torch.ops.aten.index_put.default(x, i, v)", "torch.ops.aten.squeeze.default(x)")
    assert rows(src) == [STRIPPED_ROW]


OWN_OP = {
    "ops": """
        import torch

        torch.library.define("myops::fused_attn(Tensor q, Tensor k) -> Tensor")
    """,
    "rewrites": """
        import torch


        def attention(q, k):
            return torch.ops.aten._softmax.default(torch.ops.aten.bmm.default(q, k), -1, False)


        def fused(q, k):
            return torch.ops.myops.fused_attn(q, k)


        def rewrite(gm):
            torch.fx.replace_pattern(gm, attention, fused)
            return gm
    """,
    "lowering": """
        import torch

        LOWERINGS = {torch.ops.myops.fused_attn: "fused_attn"}


        def lower(gm):
            return [LOWERINGS[n.target] for n in gm.graph.nodes if n.target in LOWERINGS]
    """,
}


def _own_op_rows(tmp_path, **changes: str) -> list[int]:
    modules = {name: textwrap.dedent(changes.get(name, text)) for name, text in OWN_OP.items()}
    root = package_repository(tmp_path, **modules)
    return [d.range.start.row for d in check_file(root / "pkg" / "rewrites.py", ("QL102",)).diagnostics]


def test_projects_own_op_keyed_on_its_packet(tmp_path):
    assert _own_op_rows(tmp_path) == []


def test_projects_own_op_keyed_on_an_overload_is_loud(tmp_path):
    lowering = OWN_OP["lowering"].replace("myops.fused_attn:", "myops.fused_attn.default:")
    assert _own_op_rows(tmp_path, lowering=lowering) == [10]
