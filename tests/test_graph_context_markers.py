"""`may_carry_packets` (the project scan's byte filter) holds for every module whose graphs
`packet_graph_context` finds to carry packets: the filter may let a module through for
nothing, never skip one."""

from __future__ import annotations

import ast
import os

import pytest

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.graph_context import (
    _MARKERS,
    MARKER_WORDS,
    marked_path,
    may_carry_packets,
    packet_graph_context,
)
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.project_words import _TO_SPACES, words_of
from qlint.optable import load_op_table
from qlint.source import LineIndex

CARRY_PACKETS = [
    ("pkg/a.py", "from torch.fx import symbolic_trace\n"),
    ("pkg/a.py", "import torch.fx as fx\n\ndef f(m):\n    return fx.symbolic_trace(m)\n"),
    ("pkg/a.py", "from torch.fx import Tracer\n"),
    ("pkg/a.py", "from torch.ao.quantization.quantize_fx import prepare_fx\n"),
    ("pkg/a.py", "from torch.ao.quantization import quantize_fx\n"),
    ("pkg/a.py", "from torch.quantization.quantize_fx import prepare_fx\n"),
    ("pkg/a.py", "from torch.ao.ns.fx.utils import get_target_type_str\n"),
    ("pkg/a.py", "from torch.ao import ns\n"),
    ("pkg/a.py", "import torch\n\ndef f(g: torch._C.Graph):\n    return g\n"),
    ("pkg/a.py", "from torch._inductor.pattern_matcher import register_replacement\n"),
    ("torch/_inductor/fx_passes/a.py", "from ..pattern_matcher import Match\n"),
    ("torch/_dynamo/a.py", "from . import config\n"),
    ("torch/ao/ns/a.py", "from . import weight_utils\n"),
]


def _context(tmp_path, relative: str, text: str) -> FileContext:
    path = tmp_path / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    for parent in list(path.relative_to(tmp_path).parents)[:-1]:  # a package up to `tmp_path`
        (tmp_path / parent / "__init__.py").touch()
    path.write_text(text)
    path = os.path.abspath(path)
    tree, lines = ast.parse(text), LineIndex(text)
    return FileContext(path, text, tree, lines, load_op_table(), ProjectIndex(), module_name_for(path))


@pytest.mark.parametrize(("relative", "text"), CARRY_PACKETS)
def test_every_module_whose_graphs_carry_packets_passes_the_filter(tmp_path, relative, text):
    ctx = _context(tmp_path, relative, text)
    assert packet_graph_context(ctx) is not None
    assert may_carry_packets(text.encode(), ctx.path)


def test_a_module_of_exported_graphs_is_filtered_out(tmp_path):
    text = "import torch\nfrom torch.export import export\n\ndef f(m, x):\n    return export(m, x).module()\n"
    ctx = _context(tmp_path, "pkg/b.py", text)
    assert packet_graph_context(ctx) is None
    assert not may_carry_packets(text.encode(), ctx.path)


def test_the_marker_words_are_in_the_words_of_every_text_holding_a_marker():
    """A project scan answers `may_carry_packets` from a module's words (`project_words`):
    each marker must hold one of `MARKER_WORDS` within a run of word characters, which any
    text holding the marker holds within one of its words."""
    for marker in _MARKERS:
        runs = marker.translate(_TO_SPACES).split()
        assert any(w in run for run in runs for w in MARKER_WORDS), marker
    for relative, text in CARRY_PACKETS:
        if not marked_path(os.sep + relative):
            assert any(w in word for word in words_of(text.encode()) for w in MARKER_WORDS), text
