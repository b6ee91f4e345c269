"""QL101 and ATen packets compared on Dynamo's output graph (`rules/dynamo_recorded_packets`):
Dynamo records `torch.matmul`, `F.softmax` and tensor methods as the model's code calls them,
and an ATen packet only where the code calls the packet itself (checked on torch 2.13). A pass
a backend runs on Dynamo's graph before `compile_fx` or AOT autograd stays quiet for custom
packets, and for an ATen or prims packet only where the project calls that packet."""

from __future__ import annotations

from tests.test_dynamo_graph_passes import _package, _rows

FIND = """
    import torch

    def find_attention(gm):
        hits = []
        for node in gm.graph.nodes:
            if node.target == torch.ops.{packet}:
                hits.append(node)
        return hits
"""

COMPILE_FX = """
    from torch._inductor.compile_fx import compile_fx

    from pkg.passes import find_attention


    def my_backend(gm, example_inputs):
        find_attention(gm)
        return compile_fx(gm, example_inputs)
"""

AOT = """
    from torch._functorch.aot_autograd import aot_module_simplified

    from pkg.passes import find_attention


    def my_backend(gm, example_inputs):
        find_attention(gm)
        return aot_module_simplified(gm, example_inputs)
"""


def _pass(packet: str) -> str:
    return FIND.replace("{packet}", packet)


# -- loud: the packet is never a node of Dynamo's graph ------------------------------------------


def test_aten_packet_before_compile_fx_is_reported(tmp_path):
    model = """
        import torch
        import torch.nn.functional as F

        class Attention(torch.nn.Module):
            def forward(self, q, k):
                return F.softmax(torch.matmul(q, k), dim=-1)
    """
    root = _package(tmp_path, passes=_pass("aten.matmul"), backend=COMPILE_FX, model=model)
    assert _rows(root, "pkg/passes.py") == [7]


def test_prims_packet_before_aot_is_reported(tmp_path):
    root = _package(tmp_path, passes=_pass("prims.convert_element_type"), backend=AOT)
    assert _rows(root, "pkg/passes.py") == [7]


def test_aten_pre_grad_pass_is_reported(tmp_path):
    init = """
        from torch._inductor import config

        from pkg.passes import find_attention

        config.pre_grad_custom_pass = find_attention
    """
    model = """
        def forward(x):
            return x.softmax(-1)
    """
    root = _package(tmp_path, passes=_pass("aten.softmax"), hooks=init, model=model)
    assert _rows(root, "pkg/passes.py") == [7]


def test_a_call_of_an_overload_or_the_packet_spelled_uncalled_is_reported(tmp_path):
    # `aten.matmul.default(a, b)` records the overload, and a table or an insertion of the
    # packet records nothing Dynamo traces.
    model = """
        import torch

        TABLE = {torch.ops.aten.matmul: "mm"}

        def forward(a, b):
            return torch.ops.aten.matmul.default(a, b)
    """
    root = _package(tmp_path, passes=_pass("aten.matmul"), backend=COMPILE_FX, model=model)
    assert _rows(root, "pkg/passes.py") == [7]


# -- quiet: Dynamo's graph holds the packet --------------------------------------------------------


def test_aten_packet_the_project_calls_is_quiet(tmp_path):
    model = """
        import torch

        def forward(a, b):
            return torch.ops.aten.matmul(a, b)
    """
    root = _package(tmp_path, passes=_pass("aten.matmul"), backend=COMPILE_FX, model=model)
    assert _rows(root, "pkg/passes.py") == []


def test_aten_packet_called_through_an_alias_is_quiet(tmp_path):
    model = """
        import torch

        aten = torch.ops.aten

        def forward(x):
            return aten.softmax(x, -1)
    """
    root = _package(tmp_path, passes=_pass("aten.softmax"), backend=AOT, model=model)
    assert _rows(root, "pkg/passes.py") == []


def test_prims_packet_called_in_the_pass_module_is_quiet(tmp_path):
    passes = _pass("prims.convert_element_type") + (
        "\n    def cast(x, dtype):\n        return torch.ops.prims.convert_element_type(x, dtype)\n"
    )
    root = _package(tmp_path, passes=passes, backend=AOT)
    assert _rows(root, "pkg/passes.py") == []


def test_custom_packet_named_like_an_aten_op_is_quiet(tmp_path):
    root = _package(tmp_path, passes=_pass("mylib.matmul"), backend=COMPILE_FX)
    assert _rows(root, "pkg/passes.py") == []


def test_packet_dynamo_inserts_itself_is_quiet(tmp_path):
    root = _package(tmp_path, passes=_pass("aten.sym_storage_offset"), backend=COMPILE_FX)
    assert _rows(root, "pkg/passes.py") == []
