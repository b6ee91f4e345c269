"""QL101 and QL102 excuses written with letters Python reads under NFKC (issue 14): the verdict
modules that excuse a finding (`graph_context`, `passes_after_strip`, `printed_name_keys`,
`never_called`, `stripped_here` and the others the two rules consult) searched the raw text
for their words before reading the tree, so `fx.symbolic_trace(m)`, a strip loop reading
`node.target.overloadpacket` or a matcher comparing `node.target.__name__`, each with one
letter fullwidth (`wide`), did not excuse what their ASCII spellings excuse: a false alarm the
ASCII twin does not raise. They now read the context's `words` (`identifier_text.normalised`),
as the triggers and row searches do.

Loud look-alikes: an accented letter NFKC does not map onto the word (`sýmbolic_trace`), and
the word outside the code (in a comment)."""

from __future__ import annotations

import ast
import textwrap

import pytest

import tests.test_passes_after_strip as after_strip
import tests.test_ql102_printed_name_keys as printed
from qlint.analysis.context import FileContext
from qlint.analysis.graphs.graph_context import may_carry_packets
from qlint.analysis.graphs.never_called import computed_getattr
from qlint.source import LineIndex
from tests.conftest import lint
from tests.test_ql10x_nfkc_spellings import wide

TRACED = """\
import torch
import torch.fx as fx


def f(m):
    gm = fx.{trace}(m)
    return [n for n in gm.graph.nodes if n.target == torch.ops.aten.relu]
"""


def _traced(trace: str) -> list[tuple[str, int]]:
    return [(d.code, d.range.start.row) for d in lint(TRACED.format(trace=trace), select=("QL101",))]


@pytest.mark.parametrize("trace", ["symbolic_trace", f"{wide('s')}ymbolic_trace", wide("symbolic_trace")])
def test_a_legacy_trace_spelled_in_fullwidth_letters_is_a_legacy_graph(trace):
    assert _traced(trace) == []


@pytest.mark.parametrize("trace", ["other_trace", "sýmbolic_trace"])
def test_no_legacy_trace_is_loud(trace):
    assert _traced(trace) == [("QL101", 7)]


def test_the_legacy_word_in_a_comment_is_loud():
    text = TRACED.format(trace="trace").replace("(m)\n", f"(m)  # {wide('s')}ymbolic_trace\n")
    assert [(d.code, d.range.start.row) for d in lint(text, select=("QL101",))] == [("QL101", 7)]


def test_a_module_so_spelled_passes_the_project_scans_filter():
    # `may_carry_packets` lets through every module `packet_graph_context` may find to carry
    # packets (`test_graph_context_markers`), so spelled too.
    data = TRACED.format(trace=wide("symbolic_trace")).replace("fx", "f")
    assert may_carry_packets(data.encode(), "pkg/m.py")
    assert not may_carry_packets("import torch\n# \uff50\n".encode(), "pkg/m.py")


def _strip_lower(word: str, strip: str) -> str:
    return after_strip.LOWER.replace("overloadpacket", word).replace("strip_overloads", strip)


def test_a_strip_loop_spelled_in_fullwidth_letters_excuses_the_pass_run_after_it(tmp_path):
    tmp = tmp_path
    strip = f"{wide('s')}trip_overloads"
    lower = _strip_lower(f"{wide('o')}verloadpacket", strip)
    assert after_strip._rows(tmp, f"{strip}(gm)\nupcast(gm)\n", lower=lower) == []
    (tmp / "ascii").mkdir()
    assert after_strip._rows(tmp / "ascii", "strip_overloads(gm)\nupcast(gm)\n") == []


def test_a_strip_loop_spelled_with_an_accent_strips_nothing(tmp_path):
    tmp = tmp_path
    strip = f"{wide('s')}trip_overloads"
    lower = _strip_lower("óverloadpacket", strip)
    assert after_strip._rows(tmp, f"{strip}(gm)\nupcast(gm)\n", lower=lower) == after_strip.LOUD


def test_a_printed_name_read_in_fullwidth_letters_is_what_the_consumers_key_on(tmp_path):
    consumer = printed._consumer('is_node(node, "fp8_gemm")')
    spelled = printed.IS_NODE.replace("__name__", f"__{wide('n')}ame__")
    accented = printed.IS_NODE.replace("__name__", "__nåme__")
    texts = {"wide": spelled, "ascii": printed.IS_NODE, "accented": accented}
    for name in texts:
        (tmp_path / name).mkdir()
    found = {name: printed._rows(tmp_path / name, printed.INSERT + text + consumer) for name, text in texts.items()}
    assert found == {"wide": [], "ascii": [], "accented": [printed.ROW]}


def _ctx(text: str) -> FileContext:
    text = textwrap.dedent(text)
    return FileContext("m.py", text, ast.parse(text), LineIndex(text), None, None)


def test_a_computed_getattr_spelled_in_fullwidth_letters_is_found():
    assert computed_getattr(_ctx(f'def run(self, op):\n    return {wide("g")}etattr(self, "_do_" + op)()\n'))
    assert not computed_getattr(_ctx(f'def run(self):\n    return {wide("g")}etattr(self, "_do_relu")()\n'))
