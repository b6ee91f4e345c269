"""Work the model-flow walk (`Interpreter`) no longer repeats, and the verdicts that show it
reads the same (issue 13).

- A loop's walk joins its paths to start each pass; after the second pass no pass starts, so
  that join is not made. It is still made where a `self.<attr>` read on some path must be
  filled into the others (`model_env.fill_unread`, which the join does in place): there the
  verdicts below read the same as when every join was made.
- A call's callee name is asked two or three times (`callee`, the kept-call and API lookups):
  the node's answer is kept with the node, so its spelling is read once; a node the walk made
  since (an id reused) gets its own answer.
"""

from __future__ import annotations

import ast
import os
import textwrap

import pytest

from qlint.analysis.flow import loop_walk, model_interp
from qlint.analysis.flow.model_flow import file_flow, module_flows
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.project import ProjectIndex
from qlint.optable import load_op_table
from qlint.rules.base import FileContext
from qlint.source import LineIndex
from tests.test_loop_exits import findings

HEAD = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
"""


def _context(src: str) -> FileContext:
    text = HEAD + textwrap.dedent(src)
    path = os.path.abspath("snippet.py")
    return FileContext(
        path=path,
        text=text,
        tree=ast.parse(text),
        lines=LineIndex(text),
        optable=load_op_table(),
        project=ProjectIndex(),
        module=module_name_for(path),
    )


def _loop_joins(src: str, monkeypatch) -> list[int]:
    """How many joins each `for` statement's walk made, in the order the loops were walked."""
    made: dict[int, int] = {}
    real = loop_walk.join

    def counting(envs, anchor):
        if isinstance(anchor, ast.For):
            made[id(anchor)] = made.get(id(anchor), 0) + 1
        return real(envs, anchor)

    monkeypatch.setattr(loop_walk, "join", counting)
    module_flows(_context(src))
    return list(made.values())


def test_a_loop_makes_no_entry_for_a_third_pass(monkeypatch):
    joins = _loop_joins(
        """
        def main(xs, q):
            model = torch.nn.BatchNorm2d(3).eval()
            for x in xs:
                convert_pt2e(prepare_pt2e(export(model, (x,)).module(), q))
        """,
        monkeypatch,
    )
    assert joins == [2]  # the second pass's entry, and the loop's exit


def test_a_loop_reading_an_attribute_on_some_path_still_joins_it_in(monkeypatch):
    joins = _loop_joins(
        """
        class Runner:
            def __init__(self):
                self.model = torch.nn.BatchNorm2d(3).eval()

            def run(self, xs, q):
                for x in xs:
                    if x is None:
                        self.model.train()
                convert_pt2e(prepare_pt2e(export(self.model, (1,)).module(), q))
        """,
        monkeypatch,
    )
    assert joins == [3]


BUILT = """
class Runner:
    def __init__(self):
        self.model = torch.nn.Sequential(torch.nn.Conv2d(3, 3, 3), torch.nn.BatchNorm2d(3)).eval()
"""

# A `self.<attr>` read on one path of a loop's body only: the join after the loop's second
# pass is the one that fills it in on the others (`fill_unread`), kept where it matters.
LOUD = {
    "trained on one path of the body, captured after the loop": (
        """
            def run(self, xs, q):
                for x in xs:
                    if x is None:
                        self.model.train()
                convert_pt2e(prepare_pt2e(export(self.model, (1,)).module(), q))
        """,
        18,
        "`self.model` is captured for PTQ in train mode (after `self.model.train()` at line 17)",
    ),
    "trained on one path, captured in the next iteration": (
        """
            def run(self, xs, q):
                for x in xs:
                    convert_pt2e(prepare_pt2e(export(self.model, (x,)).module(), q))
                    if x is None:
                        self.model.train()
        """,
        16,
        "`self.model` is captured for PTQ in train mode (after `self.model.train()` at line 18)",
    ),
}

QUIET = {
    "evaled again on the path that read it": """
            def run(self, xs, q):
                for x in xs:
                    if x is None:
                        self.model.eval()
                convert_pt2e(prepare_pt2e(export(self.model, (1,)).module(), q))
        """,
    "trained on one path, evaled before the capture in the body": """
            def run(self, xs, q):
                for x in xs:
                    if x is None:
                        self.model.train()
                    self.model.eval()
                    convert_pt2e(prepare_pt2e(export(self.model, (x,)).module(), q))
        """,
}


@pytest.mark.parametrize("name", sorted(LOUD))
def test_attribute_read_on_some_path_of_a_loop_is_loud(name):
    src, row, message = LOUD[name]
    found = findings(BUILT + textwrap.indent(textwrap.dedent(src), "    "), rules=("QL201",))
    assert found == [("QL201", row, message)]


@pytest.mark.parametrize("name", sorted(QUIET))
def test_attribute_read_on_some_path_of_a_loop_is_quiet(name):
    found = findings(BUILT + textwrap.indent(textwrap.dedent(QUIET[name]), "    "), rules=("QL201",))
    assert found == []


def _interpreter(src: str) -> model_interp.Interpreter:
    ctx = _context(src)
    return model_interp.Interpreter(file_flow(ctx), ctx.tree, None)


def test_a_callee_name_is_spelled_once_per_node(monkeypatch):
    walk = _interpreter("x = 1\n")
    call = ast.parse("torch.export.export(m)", mode="eval").body
    spelled = []
    real = model_interp.dotted_parts
    monkeypatch.setattr(model_interp, "dotted_parts", lambda e, *a: spelled.append(e) or real(e, *a))
    answers = {walk.qualname(call.func) for _ in range(3)}
    assert answers == {"torch.export.export"}
    assert spelled == [call.func]


def test_a_node_made_since_gets_its_own_name():
    walk = _interpreter("x = 1\n")
    first = ast.parse("torch.export.export", mode="eval").body
    assert walk.qualname(first) == "torch.export.export"
    other = ast.parse("torch.compile", mode="eval").body
    # As if `other` had been given the id of a node read before (one the walk made, then freed).
    walk._qualname_nodes[id(other)] = walk._qualname_nodes[id(first)]
    assert walk.qualname(other) == "torch.compile"
    assert walk.qualname(first) == "torch.export.export"
