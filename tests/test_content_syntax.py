"""content_syntax: what reading a model class's content asks of its body, from one walk."""

from __future__ import annotations

import ast
import textwrap

from qlint.analysis.flow.content_syntax import calls_under, content_syntax

SOURCE = textwrap.dedent(
    """
    class Net(nn.Module):
        def __init__(self, norm=nn.BatchNorm2d):
            super().__init__()
            self.body = nn.Sequential(nn.Conv2d(3, 8, 3), make(nn.ReLU()))
            self.fc.weight.data = init(self.fc.weight)
            self.keep = init(self)
            if isinstance(self.body, nn.Dropout):
                pass

        def forward(self, x):
            return self.body(x) if self.training else x

        class Inner:
            pass

        class Inner:
            pass
    """
)


def _calls(node: ast.AST) -> list[str]:
    return [ast.unparse(c.func) for c in node]


def test_each_call_once_first_met_when_each_call_of_the_walk_is_walked_in_turn():
    cls = ast.parse(SOURCE).body[0]
    syntax = content_syntax(cls)
    walked = [n for n in ast.walk(cls) if isinstance(n, ast.Call)]
    expected, seen = [], set()
    for call in walked:
        for n in ast.walk(call):
            if isinstance(n, ast.Call) and id(n) not in seen:
                seen.add(id(n))
                expected.append(n)
    assert [id(c) for c in syntax.calls] == [id(c) for c in expected]
    assert [id(c) for c in syntax.walked_calls] == [id(c) for c in walked]
    # A call's inner calls come with it, before the next call of the walk's order.
    assert _calls(syntax.calls)[:6] == ["super().__init__", "super", "nn.Sequential", "nn.Conv2d", "make", "nn.ReLU"]
    assert len(syntax.calls) == len(walked)  # each once, though nested calls are met twice
    assert [id(c) for c in calls_under([cls])] == [id(c) for c in walked]


def test_the_rest_of_what_the_reading_asks():
    cls = ast.parse(SOURCE).body[0]
    syntax = content_syntax(cls)
    inner = [s for s in cls.body if isinstance(s, ast.ClassDef)]
    assert syntax.classes == {"Inner": inner[-1]}  # the last one written
    assert syntax.functions == {"__init__", "forward"}
    # `init(self.fc.weight)` stores a tensor; `init(self)` is handed the model itself.
    stored = [c for c in syntax.calls if ast.unparse(c) == "init(self.fc.weight)"]
    assert {id(c) for c in stored} == set(syntax.tensors)
    assert syntax.reads_training and syntax.reads_any_training and not syntax.dynamic
    # Named and not called, and not what isinstance tests against: the base and the default.
    assert [ast.unparse(r) for r in syntax.references] == ["nn.Module", "nn.BatchNorm2d"]
    assert content_syntax(cls) is syntax  # kept on the node


def test_a_class_that_switches_its_own_mode_is_dynamic():
    cls = ast.parse("class M(nn.Module):\n    def train(self, mode=True):\n        return self\n").body[0]
    assert content_syntax(cls).dynamic
    other = ast.parse("class M(nn.Module):\n    def f(self, o):\n        return o.training\n").body[0]
    assert content_syntax(other).dynamic and not content_syntax(other).reads_training
