"""`scanned_facts.module_facts(first=True)` stops at the first module whose fact is true: a caller
asking whether any module's fact holds (`self_traced_graphs._traces_in_project`: does a kept
module spelling a trace parse?) had every such module parsed (the installed torch: 69 of them,
~0.55 s of CPU, where the first said yes)."""

from __future__ import annotations

import ast
import os

from qlint.analysis.context import FileContext
from qlint.analysis.graphs import scanned_facts, self_traced_graphs
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.project import ProjectIndex
from qlint.optable import load_op_table
from qlint.source import LineIndex
from tests.conftest import package_repository

# A module the project scan keeps (it inserts into graphs) that spells a trace.
TRACING = """
import torch
from torch.fx.experimental.proxy_tensor import make_fx


def add_relu(gm, node):
    return gm.graph.call_function(torch.ops.aten.relu.default, (node,))


def traced(f, x):
    return make_fx(f)(x)
"""
BROKEN = TRACING + "\ndef broken(:\n"
USER = "def f(x):\n    return x\n"


def _ctx(root) -> FileContext:
    path = os.path.join(str(root), "pkg", "user.py")
    return FileContext(
        path, USER, ast.parse(USER), LineIndex(USER), load_op_table(), ProjectIndex(), module_name_for(path)
    )


def _parses(monkeypatch) -> list[str]:
    parsed: list[str] = []
    real = scanned_facts.module_context

    def counted(path, text, ctx):
        parsed.append(os.path.basename(path))
        return real(path, text, ctx)

    monkeypatch.setattr(scanned_facts, "module_context", counted)
    return parsed


def test_one_module_that_parses_answers_and_the_others_are_not_parsed(tmp_path, monkeypatch):
    root = package_repository(tmp_path, a=TRACING, b=TRACING, c=TRACING, user=USER)
    parsed = _parses(monkeypatch)
    assert self_traced_graphs._traces_in_project(_ctx(root)) is True
    assert len(parsed) == 1, parsed  # all three before


def test_a_module_that_does_not_parse_is_passed_over(tmp_path, monkeypatch):
    root = package_repository(tmp_path, a=BROKEN, b=TRACING, c=BROKEN, user=USER)
    parsed = _parses(monkeypatch)
    assert self_traced_graphs._traces_in_project(_ctx(root)) is True
    assert "b.py" in parsed and len(parsed) <= 3


def test_no_module_that_parses_is_no_trace(tmp_path, monkeypatch):
    root = package_repository(tmp_path, a=BROKEN, c=BROKEN, user=USER)
    parsed = _parses(monkeypatch)
    assert self_traced_graphs._traces_in_project(_ctx(root)) is False
    assert sorted(parsed) == ["a.py", "c.py"]


def test_first_stops_at_a_true_fact_only(tmp_path, monkeypatch):
    root = package_repository(tmp_path, a=TRACING, b=TRACING, c=TRACING, user=USER)

    def in_b(module: FileContext) -> bool:
        return module.path.endswith("b.py")

    everything = scanned_facts.module_facts(_ctx(root), ("make_fx",), in_b, keep=False)
    parsed = _parses(monkeypatch)
    found = scanned_facts.module_facts(_ctx(root), ("make_fx",), in_b, keep=False, first=True)
    assert sorted(everything) == [False, False, True]
    # The modules before b (false facts) are all asked; none after it.
    assert found[-1] is True and found.count(True) == 1 and len(found) == len(parsed)
    assert found == everything[: everything.index(True) + 1]
