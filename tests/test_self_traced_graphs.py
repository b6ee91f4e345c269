"""QL102 and QL101 on graphs the project traces itself, rewrites with its own passes and runs
itself (`self_traced_graphs`; issue 14 items 14/15, easydist): `make_fx` traces a step, a ZeRO
pass inserts `aten.view` packets, a tiling pass in another module inserts `aten.chunk` packets
and keeps the inserted views out of its computation nodes by the packet (beside an
overload-keyed view table, so the packet-keyed consumer alone does not settle it), and the
compiled object calls the graph. Nothing exports, lowers or serialises that graph: packets run
fine there. The ZeRO pass's views stay loud once the graph is exported, saved or comes from
`torch.export` (the tiling module's overload-keyed view table misses them), both passes when the
pass's graph comes from nowhere the project shows, and a matcher keyed on a packet the project
never inserts stays loud; the chunks, which nothing keys on, are quiet wherever the project runs
the tiling pass itself."""

from __future__ import annotations

import pytest

from tests.conftest import lint, write_package

COMPILE = """\
import torch
from torch.fx.experimental.proxy_tensor import make_fx

from pkg.tiling import tile


def shard(traced):
    for node in list(traced.graph.nodes):
        if node.op == "placeholder":
            with traced.graph.inserting_after(node):
                view = traced.graph.call_function(torch.ops.aten.view, args=(node, [-1]))
            node.replace_all_uses_with(view)
            view.update_arg(0, node)
    traced.recompile()
    return traced


class Compiled:
    def __init__(self, graph):
        self.graph = graph

    def __call__(self, *args):
        return self.graph(*args)


def compile_step(fn, *args):
    {origin}
    traced = shard(traced)
    sharded = tile(traced)
    {after}
    return Compiled(sharded)
"""

MAKE_FX = "traced = make_fx(fn)(*args)"

TILING = """\
import torch

VIEW_TABLE = {torch.ops.aten.view.default: 1}


def _split(gm, node):
    with gm.graph.inserting_before(node):
        return gm.graph.call_function(torch.ops.aten.chunk, args=(node.args[0], 2))


def tile(gm):
    computation = []
    for node in gm.graph.nodes:
        if node.op == "call_function" and node.target not in [{excluded}]:
            computation.append(node)
        if node.target in VIEW_TABLE:
            computation.append(node)
    for node in computation:
        _split(gm, node)
    gm.recompile()
    return gm
"""

API = """\
from pkg.compile import compile_step


class Api:
    def __init__(self, fn):
        self.fn = fn
        self.compiled = None

    def __call__(self, *args):
        if self.compiled is None:
            self.compiled = compile_step(self.fn, *args)
        {after}
        return self.compiled(*args)
"""


def _package(tmp_path, origin=MAKE_FX, after="pass", excluded="torch.ops.aten.view", api_after="pass", compile=COMPILE):
    return write_package(
        tmp_path,
        "pkg",
        compile=compile.replace("{origin}", origin).replace("{after}", after),
        tiling=TILING.replace("{excluded}", excluded),
        api=API.replace("{after}", api_after),
    )


def _quiet_then(tmp_path, **variant):
    """The package as easydist writes it is quiet (in a directory of its own), and `variant`
    of it is returned: each loud case is the quiet one changed in one place."""
    (tmp_path / "quiet").mkdir()
    (tmp_path / "loud").mkdir()
    base = _package(tmp_path / "quiet")
    assert _rows(base, "compile", "QL102") == [] and _rows(base, "tiling", "QL102") == []
    assert _rows(base, "tiling", "QL101") == []
    return _package(tmp_path / "loud", **variant)


def _rows(pkg, module: str, rule: str) -> list[int]:
    path = pkg / f"{module}.py"
    return [d.range.start.row for d in lint(path.read_text(), path=str(path), select=(rule,))]


def _view_row(pkg) -> int:
    return next(i for i, line in enumerate((pkg / "compile.py").read_text().splitlines(), 1) if "aten.view," in line)


def _chunk_row(pkg) -> int:
    return next(i for i, line in enumerate((pkg / "tiling.py").read_text().splitlines(), 1) if "aten.chunk" in line)


def _exclusion_row(pkg) -> int:
    return next(i for i, line in enumerate((pkg / "tiling.py").read_text().splitlines(), 1) if "not in [" in line)


def test_self_traced_graph_run_by_the_project_is_quiet(tmp_path):
    pkg = _package(tmp_path)
    assert _rows(pkg, "compile", "QL102") == []
    assert _rows(pkg, "tiling", "QL102") == []  # through `tile`'s own helper, two calls deep
    assert _rows(pkg, "tiling", "QL101") == []  # keyed on the views the ZeRO pass inserts


def test_graph_unpacked_from_the_projects_tracing_helper_is_quiet(tmp_path):
    # easydist's `_compile_auto`: `..., traced = ed_compile_func(...)`, which returns the
    # make_fx graph in a tuple.
    helper = "\n\ndef trace(fn, *args):\n    graph = make_fx(fn)(*args)\n    return len(args), graph\n"
    pkg = _package(tmp_path, origin="count, traced = trace(fn, *args)", compile=COMPILE + helper)
    assert _rows(pkg, "compile", "QL102") == []
    assert _rows(pkg, "tiling", "QL102") == []


def test_symbolic_trace_is_an_own_trace_too(tmp_path):
    pkg = _package(tmp_path, origin="traced = torch.fx.symbolic_trace(fn)")
    assert _rows(pkg, "compile", "QL102") == []


@pytest.mark.parametrize(
    "after",
    [
        "torch.export.export(sharded, args)",
        "torch.save(sharded, 'step.pt')",
        "to_edge(sharded)",
    ],
)
def test_graph_exported_lowered_or_saved_later_is_loud(tmp_path, after):
    pkg = _quiet_then(tmp_path, after=after)
    assert _rows(pkg, "compile", "QL102") == [_view_row(pkg)]  # tiling's `VIEW_TABLE` misses it
    # Nothing the project shows keys on `chunk` in either form, and the project runs `tile` itself
    # (`compile_step`, run by `Api`): the packet runs as its overload would (packet_distinguishers).
    assert _rows(pkg, "tiling", "QL102") == []
    assert _rows(pkg, "tiling", "QL101") == [_exclusion_row(pkg)]


def test_returned_holder_exported_by_its_caller_is_loud(tmp_path):
    pkg = _quiet_then(tmp_path, api_after="torch.export.export(self.compiled.graph, args)")
    assert _rows(pkg, "compile", "QL102") == [_view_row(pkg)]
    assert _rows(pkg, "tiling", "QL102") == []  # no consumer of `chunk`, as above


def test_graph_from_torch_export_is_loud(tmp_path):
    # Captured in a helper of the module: the step itself names no export.
    helper = "\n\ndef capture(fn, *args):\n    return torch.export.export(fn, args).module()\n"
    pkg = _quiet_then(tmp_path, origin="traced = capture(fn, *args)", compile=COMPILE + helper)
    assert _rows(pkg, "compile", "QL102") == [_view_row(pkg)]
    assert _rows(pkg, "tiling", "QL102") == []  # no consumer of `chunk`, as above
    assert _rows(pkg, "tiling", "QL101") == [_exclusion_row(pkg)]


def test_graph_from_a_caller_nothing_shows_is_loud(tmp_path):
    # The step's graph is its parameter, and nothing in the project calls it: unknown origin.
    pkg = _quiet_then(tmp_path, origin="traced = fn", compile=COMPILE.replace("def compile_step(fn,", "def build(fn,"))
    assert _rows(pkg, "compile", "QL102") == [_view_row(pkg)]
    assert _rows(pkg, "tiling", "QL102") == [_chunk_row(pkg)]


def test_matcher_keyed_on_a_packet_the_project_never_inserts_is_loud(tmp_path):
    pkg = _package(tmp_path, excluded="torch.ops.aten.expand")
    assert _rows(pkg, "tiling", "QL101") == [_exclusion_row(pkg)]
    assert _rows(pkg, "compile", "QL102") == []
