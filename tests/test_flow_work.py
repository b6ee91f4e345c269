"""The QL2 analyses do work in proportion to what a module holds (issue 13).

Counted, not timed: how many function bodies are walked or interpreted per check. Each
shortcut also has a test that it gives the answer the full work gives, and that it is
not stale when what it depends on differs.
"""

from __future__ import annotations

import ast
import collections

import pytest

from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from qlint.rules import model_changes
from tests.conftest import settings_for, write_package
from tests.test_model_sources import HEAD, check

_NET = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(3, 3)

"""


def _tests(n: int) -> str:
    """`n` tests, each capturing a model whose mode cannot matter, and `n` unrelated helpers."""
    out = [_NET]
    for i in range(n):
        capture = "    prepare_pt2e(export(model, (x,)).module(), quantizer)\n"
        out.append(f"def test_{i}(quantizer, x):\n    model = Net()\n{capture}")
        out.append(f"def unrelated_{i}(x):\n    return export(x, (x,))\n")
    return "\n".join(out)


@pytest.fixture
def walks(monkeypatch):
    """id(node) -> how many times `model_changes` walked that body (for `capture_content`)."""
    counts: collections.Counter = collections.Counter()
    real = model_changes._own_nodes

    def counting(fn):
        counts[id(fn)] += 1
        return real(fn)

    monkeypatch.setattr(model_changes, "_own_nodes", counting)
    return counts


def test_each_body_is_walked_once_however_many_captures_ask(walks):
    # Every capture is weighed by `mode_free`, which reads the bodies that build or capture it.
    assert check(_tests(6)) == []
    # The module body and the six tests; neither the unrelated helpers nor a test for
    # another test's capture (it was walked once per capture per body: 6 x 13 walks).
    assert sum(walks.values()) == 7
    assert set(walks.values()) == {1}


def test_shared_body_index_answers_for_each_model_it_holds():
    # One body, two models: only the one given parts after it was built is reported.
    src = _NET + (
        "def test_both(quantizer, head, x):\n"
        "    kept = Net()\n"
        "    changed = Net()\n"
        "    changed.head = head\n"
        "    prepare_pt2e(export(kept, (x,)).module(), quantizer)\n"
        "    prepare_pt2e(export(changed, (x,)).module(), quantizer)\n"
    )
    (d,) = check(src)
    assert d.code == "QL201" and d.message.startswith("`changed` is captured")
    # Swapped: the index of the edited module says so.
    (d,) = check(src.replace("changed.head = head", "kept.head = head"))
    assert d.message.startswith("`kept` is captured")


def test_a_construction_in_another_function_is_still_read():
    # Built in one function, handed to the one that captures it: the builder's body is read.
    src = _NET + (
        "def quantize(model, quantizer, x):\n"
        "    return prepare_pt2e(export(model, (x,)).module(), quantizer)\n\n"
        "def main(quantizer, x, head):\n"
        "    m = Net()\n"
        "    quantize(m, quantizer, x)\n"
    )
    assert check(src) == []
    assert len(check(src.replace("    quantize(m,", "    m.head = head\n    quantize(m,"))) == 1


# -- facts of a class or function body, kept on its node ----------------------------------------
_BN_NET = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm1d(3)
"""


def _counting(monkeypatch, module, name) -> collections.Counter:
    """Calls of `module.name`, by the `name` attribute of their first argument."""
    counts: collections.Counter = collections.Counter()
    real = getattr(module, name)

    def counting(node, *args, **kwargs):
        counts[getattr(node, "name", type(node).__name__)] += 1
        return real(node, *args, **kwargs)

    monkeypatch.setattr(module, name, counting)
    return counts


def test_init_of_a_class_is_read_once_for_all_its_constructions(monkeypatch):
    from qlint.analysis.flow import model_apis

    reads = _counting(monkeypatch, model_apis, "_init_sets_eval")
    tests = "".join(
        f"\ndef test_{i}(quantizer, x):\n    model = Net()\n    prepare_pt2e(export(model, (x,)).module(), quantizer)\n"
        for i in range(5)
    )
    assert len(check(_BN_NET + tests)) == 5  # built in train mode, with batch norm
    assert reads == {"Net": 1}
    # Not stale: an `__init__` that ends in `self.eval()` makes every one of them eval mode.
    assert check(_BN_NET + "        self.eval()\n" + tests) == []


def _helper_package(root, flag: str):
    return write_package(
        root,
        "proj",
        helpers=(
            "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e\n\n"
            "def prepare_pt2e_or_qat(ep, quantizer):\n"
            f"    is_qat = {flag}\n"
            "    if is_qat:\n"
            "        return prepare_qat_pt2e(ep.module(), quantizer)\n"
            "    return prepare_pt2e(ep.module(), quantizer)\n"
        ),
    )


def test_constant_flags_of_a_helper_elsewhere_are_read_once_for_every_file(tmp_path, monkeypatch):
    from qlint.analysis.flow import dead_branches

    reads = _counting(monkeypatch, dead_branches, "_single_constants")
    pkg = _helper_package(tmp_path, "False")
    src = (
        "from torch.export import export\nfrom proj.helpers import prepare_pt2e_or_qat\n\n"
        "def run(model, quantizer, x):\n    prepare_pt2e_or_qat(export(model, (x,)), quantizer)\n"
    )
    project = ProjectIndex()
    settings = settings_for(("QL201",))
    found = [check_source(src, str(pkg / f"use_{i}.py"), settings, project).diagnostics for i in range(3)]
    assert [len(f) for f in found] == [1, 1, 1]  # the PTQ arm runs: `model` as it came
    assert reads["prepare_pt2e_or_qat"] == 1
    # Not stale: the helper edited to take its QAT arm is read again, and the capture is QAT's.
    _helper_package(tmp_path, "True")
    assert check_source(src, str(pkg / "use_0.py"), settings, project).diagnostics == []
    assert reads["prepare_pt2e_or_qat"] == 2


def test_methods_of_a_test_class_are_collected_once_per_check(monkeypatch):
    from qlint.analysis.flow.callgraph import CallGraph

    counts: collections.Counter = collections.Counter()
    real = CallGraph._methods_of

    def counting(self, cls, scope, depth):
        counts[(cls.node.name, depth)] += 1
        return real(self, cls, scope, depth)

    monkeypatch.setattr(CallGraph, "_methods_of", counting)
    helper = (
        "    def _quantize(self, m, quantizer, x):\n"
        "        prepared = prepare_pt2e(export(m, (x,)).module(), quantizer)\n"
        "{calibrate}"
        "        return convert_pt2e(prepared)\n"
    )
    # The result is kept: a call that is a statement of its own, handing over no model, is not
    # resolved (`calibration_calls.hands_nothing`).
    tests = "".join(f"    def test_{i}(self):\n        r = self._quantize(self.m, self.q, self.x)\n" for i in range(5))
    head = "import unittest\nfrom torchao.quantization.pt2e.quantize_pt2e import convert_pt2e\n"
    src = (
        head
        + "class TestRaw(unittest.TestCase):\n"
        + helper.format(calibrate="")
        + tests
        + "class TestCalibrated(unittest.TestCase):\n"
        + helper.format(calibrate="        prepared(x)\n")
        + tests
    )
    found = check(src, select=("QL204",))
    assert counts == {("TestRaw", 0): 1, ("TestCalibrated", 0): 1}
    # Not stale: each class's own helper decides, so only the uncalibrated one is reported.
    convert = (HEAD + src).splitlines().index("        return convert_pt2e(prepared)") + 1
    assert [d.range.start.row for d in found] == [convert]


def test_a_call_name_is_resolved_once_per_body_however_often_the_walk_asks(monkeypatch):
    from qlint.analysis.names.resolver import Resolver

    asked: collections.Counter = collections.Counter()
    real = Resolver.qualname_of

    def counting(self, parts, depth=0):
        if depth == 0:
            asked[tuple(parts)] += 1
        return real(self, parts, depth)

    monkeypatch.setattr(Resolver, "qualname_of", counting)
    src = (
        "def run(model, quantizer, xs):\n"
        "    for x in xs:\n"  # a loop body is walked twice
        "        torch.manual_seed(0)\n"
        "        torch.manual_seed(1)\n"
        "    prepare_pt2e(export(model, (xs,)).module(), quantizer)\n"
    )
    assert [d.code for d in check(src)] == ["QL201"]  # resolved still: `export` is a capture
    # `callee`, the API lookup and the relay check each asked: 3 calls x 2 passes x 3 askings.
    assert asked[("torch", "manual_seed")] == 1
    assert asked[("export",)] == 1


def test_a_call_of_a_parameter_hanging_under_another_call_still_makes_a_relay():
    from tests.test_ql201_callback_relays import relays_of

    # The pre-test that turns away functions calling none of their parameters finds calls
    # inside attribute chains and arguments too.
    assert relays_of("def f(m, fn):\n    fn(m).to('cpu')\n") != ()
    assert relays_of("def f(m, fn):\n    log(str(fn(m)))\n") != ()
    assert relays_of("def f(m, fn):\n    fn.method(m)\n    g(m)\n") == ()
    assert relays_of("def f(m, fn):\n    return m\n") == ()
    assert relays_of("def f():\n    g()\n") == ()


def test_a_flag_rebound_inside_an_expression_is_no_constant():
    from qlint.analysis.flow.dead_branches import single_constants

    def constants(src: str) -> dict:
        return single_constants(ast.parse(src).body[0])

    assert constants("def f():\n    is_qat = True\n    if is_qat:\n        pass\n") == {"is_qat": True}
    # Rebound by `:=` deep in a call's arguments, or by a `with ... as`: walked for what they store.
    assert constants("def f():\n    is_qat = True\n    g(h(is_qat := False))\n") == {}
    assert constants("def f():\n    is_qat = True\n    with g() as is_qat:\n        pass\n") == {}
    assert constants("def f(x):\n    a = 1\n    b = 2\n    x[b] = 3\n    x.y = a\n") == {"a": 1, "b": 2}
    # Bound in a block (`if`, `for`, `with`, `try`, `match`), or only in a function or class
    # written inside, whose names are their own.
    for block in ("if c:", "for _ in c:", "with c:", "try:", "while c:"):
        tail = "\n    except E:\n        pass" if block == "try:" else ""
        assert constants(f"def f(c):\n    {block}\n        is_qat = True{tail}\n") == {"is_qat": True}, block
    assert constants("def f(c):\n    match c:\n        case 1:\n            q = 0\n") == {"q": 0}
    assert constants("def f(c):\n    try:\n        pass\n    except E:\n        q = 'a'\n") == {"q": "a"}
    assert constants("def f():\n    def g():\n        is_qat = True\n    class C:\n        q = 1\n") == {}
    assert constants("def f():\n    is_qat = x = True\n    q: bool = True\n") == {}


def test_the_names_a_loop_may_follow_are_read_once_per_body(monkeypatch):
    from qlint.analysis.flow import loop_items

    reads = _counting(monkeypatch, loop_items, "_followed_names")
    func = ast.parse("def f(a, b):\n    ms = [a, b]\n    for m in ms:\n        g(m)\n    h(ms)\n").body[0]
    assert loop_items.followed_names(func) == frozenset()  # `ms` handed to `h`: not followed
    assert loop_items.followed_names(func) == frozenset()
    assert reads["f"] == 1
    func = ast.parse("def f(a, b):\n    ms = [a, b]\n    for i, m in enumerate(ms):\n        g(m)\n").body[0]
    assert loop_items.followed_names(func) == frozenset({"ms", "i"})  # `m` is handed to `g`
