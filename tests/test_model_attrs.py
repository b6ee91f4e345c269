"""`model_attrs.attribute_sources`: where a `self.<attr>` read comes from. A class that assigns
no attribute a construction, and whose `__init__` stores no parameter, has no source; the
statements that set one are found wherever they sit in a method (blocks, nested functions)."""

from __future__ import annotations

import ast
import textwrap

from qlint.analysis.flow.model_attrs import Evaled, Stored, attribute_sources


def _sources(code: str, asked: list[str] | None = None):
    cls = ast.parse(textwrap.dedent(code)).body[0]

    def is_constructor(call: ast.Call) -> bool:
        name = call.func.id if isinstance(call.func, ast.Name) else ""
        if asked is not None:
            asked.append(name)
        return name == "Net"

    return attribute_sources(cls, is_constructor)


def test_a_class_that_builds_and_stores_nothing_has_no_source():
    asked: list[str] = []
    code = """\
    class TestCase:
        backend = "htp"

        def setUp(self):
            self.speed = float(read())
            self.division = division
            other.model = Net()

        def test_it(self):
            m = Net()
            run(self.backend, m)
    """
    assert _sources(code, asked) == {}
    assert asked == ["float"]  # only calls assigned to `self.<attr>` are asked about


def test_constructions_in_blocks_and_nested_functions_are_sources():
    code = """\
    class Runner:
        def setUp(self):
            with ctx():
                try:
                    if flag:
                        self.model = Net()
                except Error:
                    pass

        def later(self):
            def build():
                for _ in range(2):
                    self.other: nn.Module = Net()
            build()
    """
    found = _sources(code)
    assert set(found) == {"self.model", "self.other"}
    assert all(isinstance(v, ast.Call) for v in found.values())


def test_a_parameter_stored_in_a_block_of_init_is_a_source():
    code = """\
    class Holder:
        def __init__(self, model, flag):
            if flag:
                self.model = model
    """
    found = _sources(code)
    assert isinstance(found["self.model"], Stored) and found["self.model"].param == "model"


def test_a_parameter_stored_outside_init_is_no_source():
    code = """\
    class Holder:
        def __init__(self, model):
            pass

        def set(self, model):
            self.model = model
    """
    assert _sources(code) == {}


def test_each_construction_is_asked_about_once():
    asked: list[str] = []
    code = """\
    class Runner:
        def setUp(self):
            self.model = Net()
            self.speed = float(x)

        def reset(self):
            self.model.eval()
    """
    assert _sources(code, asked) == {}  # switched elsewhere: its mode is not the construction's
    assert sorted(asked) == ["Net", "float"]


def test_a_construction_evaled_in_init_is_an_evaled_source():
    code = """\
    class Runner:
        def __init__(self, data):
            self.model = Net()
            self.model.eval()
            self.other = Net().eval()
            self.late = Net()
            if data:
                self.late.eval()

        def run(self, x):
            return self.model(x), self.other(x)
    """
    found = _sources(code)
    assert set(found) == {"self.model", "self.other"}  # `self.late`: evaled in a branch only
    model, other = found["self.model"], found["self.other"]
    assert isinstance(model, Evaled) and isinstance(other, Evaled)
    assert ast.unparse(model.switch) == "self.model.eval()" and ast.unparse(other.call) == "Net()"
    assert model.passed_on_in == frozenset()


def test_an_evaled_attribute_switched_handed_or_built_twice_is_not_evaled():
    code = """\
    class Runner:
        def __init__(self):
            self.a = Net().eval()
            self.b = Net().eval()
            self.c = Net()
            self.c.eval()
            self.c = Net()

        def fit(self, data):
            self.a.train()
            loop(self.b, data)
    """
    found = _sources(code)
    assert "self.a" not in found and "self.c" not in found
    assert isinstance(found["self.b"], Evaled) and len(found["self.b"].passed_on_in) == 1


def test_only_calls_handing_over_a_recorded_name_are_asked_whether_they_keep_modes():
    """`keeps_mode` resolves a call's callee: it is asked only of calls handing over a name
    the reading records (`self.<attr>`, and in `__init__` any name), whose answer decides."""
    code = """\
    class Runner:
        def __init__(self, model, n):
            torch.manual_seed(0)
            self.model = model
            log(n)

        def run(self, x):
            print(x, 3)
            capture(self.model)
            copy_of(self.model)
            step(x.y, self.other)
    """
    cls = ast.parse(textwrap.dedent(code)).body[0]
    asked: list[str] = []

    def keeps_mode(call: ast.Call) -> bool:
        asked.append(ast.unparse(call))
        return getattr(call.func, "id", "") == "capture"

    found = attribute_sources(cls, lambda call: False, keeps_mode)
    assert asked == ["log(n)", "capture(self.model)", "copy_of(self.model)", "step(x.y, self.other)"]
    # The answers are those of asking every call: `capture` keeps the mode, `copy_of` may not,
    # and `n` handed over in `__init__` is a name its calls may touch.
    stored = found["self.model"]
    assert isinstance(stored, Stored) and stored.param == "model"
    assert stored.passed_on_in == frozenset({id(cls.body[1])})


def test_a_stored_parameter_handed_only_to_mode_keeping_calls_is_passed_on_nowhere():
    code = """\
    class Runner:
        def __init__(self, model):
            self.model = model

        def run(self, x):
            capture(self.model, x)
    """
    cls = ast.parse(textwrap.dedent(code)).body[0]
    found = attribute_sources(cls, lambda call: False, lambda call: call.func.id == "capture")
    assert found["self.model"].passed_on_in == frozenset()
