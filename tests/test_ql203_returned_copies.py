"""QL203 on copies of an exported graph that reach the switch through a helper's tuple, and
the other carriers of a copy (`returned_copies`).

`copy.deepcopy` / `copy.copy` of a graph from `.module()`, `prepare_pt2e` or `convert_pt2e`
switches modes without raising on torch 2.13 / torchao 0.18 (`GraphModule.__deepcopy__` and
`__copy__` rebuild the module; the raising override lived in the old one's `__dict__`). Every
case below was run on that torch: each quiet one's switch raises nothing, each loud one's
raises NotImplementedError. A helper returning `copy.deepcopy(gm), info` was read as handing
back the graph itself (`a, b = f()`, `a, *rest = f()`, `out = f(); out[0]`, `f()[0]`, `a`
handed to a switching helper): the caller's element is a new object, and the copy fact
stayed in the helper. It is now carried per path: an element the helper hands back as it
was on one path still raises (and is the graph the message names), and the element's
origins stay whole for the other readers (QL204 through a returned copy, below).

Through another module the fact is not kept in any summary: the helper's module is read
(its `FunctionFlow`) on each run that checks the caller, and a cached caller's result
depends on the helper module's hash, so an edit removing the copy is seen by a cached run.
"""

from __future__ import annotations

import textwrap

import pytest

from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import alone_and_in_run, lint, package_repository

HEAD = """\
import copy
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def to_eval(model):
    model.eval()

"""  # a snippet's first line is line 9 (a triple-quoted one's first `def`, line 10)


def found(src: str, select=("QL203",)):
    return lint(HEAD + textwrap.dedent(src), select=select)


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in found(src)]


# Each carrier as (helper returning its pair, how the caller switches the first element).
HELPERS = {
    "deepcopy first": "return copy.deepcopy(prepare_pt2e(gm, q)), 1",
    "copy.copy of a local": "p = prepare_pt2e(gm, q)\n    return copy.copy(p), 1",
    "a copy of `.module()`": "return copy.deepcopy(torch.export.export(gm, (q,)).module()), 1",
}
SWITCHES = {
    "unpacked": "a, b = f(gm, q)\n    a.eval()",
    "starred": "a, *rest = f(gm, q)\n    a.train()",
    "indexed name": "out = f(gm, q)\n    out[0].eval()",
    "indexed call": "f(gm, q)[0].eval()",
    "handed on": "a, b = f(gm, q)\n    to_eval(a)",
}


def _pair(ret: str, switch: str) -> str:
    return f"def f(gm, q):\n    {ret}\n\n\ndef run(gm, q):\n    {switch}\n"


@pytest.mark.parametrize("ret", HELPERS.values(), ids=HELPERS.keys())
@pytest.mark.parametrize("switch", SWITCHES.values(), ids=SWITCHES.keys())
def test_a_copy_in_a_returned_tuple_is_quiet(ret, switch):
    assert rows(_pair(ret, switch)) == []


@pytest.mark.parametrize("ret", HELPERS.values(), ids=HELPERS.keys())
@pytest.mark.parametrize("switch", SWITCHES.values(), ids=SWITCHES.keys())
def test_the_graph_itself_in_a_returned_tuple_is_reported(ret, switch):
    uncopied = ret.replace("copy.deepcopy(", "(").replace("copy.copy(", "(")
    src = _pair(uncopied, switch)
    assert rows(src) == [(HEAD + src).count("\n")]  # the switch, on the last line


def test_a_copy_at_the_second_position_and_through_a_helper_of_helpers():
    assert (
        rows(
            """
            def f(gm, q):
                return 1, copy.copy(prepare_pt2e(gm, q))
            def g(gm, q):
                n, m = f(gm, q)
                return m, n
            def run(gm, q):
                a, b = f(gm, q)
                b.train()
                c, d = g(gm, q)
                c.eval()
            """
        )
        == []
    )


def test_the_copies_a_test_case_helper_returns():
    # ao's `ArmInductorQuantTestCase._test_quantizer` (test_arm_inductor_quantizer.py) returns
    # copies of each stage; and a helper handing on a copy another helper returned it directly.
    assert (
        rows(
            """
            def _test_quantizer(model, x, q):
                m = torch.export.export(model, (x,)).module()
                export_model = copy.deepcopy(m)
                m = prepare_pt2e(m, q)
                m(x)
                prepare_model = copy.deepcopy(m)
                m = convert_pt2e(m)
                convert_model = copy.deepcopy(m)
                return export_model, prepare_model, convert_model
            def direct(gm, q):
                return copy.deepcopy(prepare_pt2e(gm, q))
            def hands_on(gm, q):
                m = direct(gm, q)
                return m, 1
            def run(model, x, q):
                e, p, c = _test_quantizer(model, x, q)
                e.eval()
                p.eval()
                c.train()
                _, p2, _ = _test_quantizer(model, x, q)
                p2.eval()
                a, b = hands_on(model, q)
                a.eval()
            """
        )
        == []
    )


def test_a_copy_and_the_graph_it_copies_in_one_tuple():
    # `return copy.deepcopy(p), p`: two elements with the same origin stay two values.
    diagnostics = found(
        """
        def f(gm, q):
            p = prepare_pt2e(gm, q)
            return copy.deepcopy(p), p
        def run(gm, q):
            a, b = f(gm, q)
            a.eval()
            b.eval()
        """
    )
    assert [d.range.start.row for d in diagnostics] == [16]
    assert "`b` comes from `prepare_pt2e` (line 11)" in diagnostics[0].message


def test_an_element_the_helper_hands_back_uncopied_on_one_path_is_reported():
    diagnostics = found(
        """
        def f(gm, q, c):
            p = prepare_pt2e(gm, q)
            if c:
                return copy.deepcopy(p), 1
            return p, 2
        def run(gm, q, c):
            a, b = f(gm, q, c)
            a.eval()
        """
    )
    assert [d.range.start.row for d in diagnostics] == [17]
    assert "`a` comes from `prepare_pt2e` (line 11)" in diagnostics[0].message


def test_two_graphs_one_copied_are_named_by_the_uncopied_one():
    # Loud either way (the other graph raises); the message names the graph that raises.
    diagnostics = found(
        """
        def paths(gm, q, c):
            p1 = prepare_pt2e(gm, q)
            p2 = prepare_pt2e(gm, q)
            if c:
                return copy.deepcopy(p1), 1
            return p2, 2
        def merged(gm, q, c):
            p1 = prepare_pt2e(gm, q)
            p2 = prepare_pt2e(gm, q)
            m = copy.deepcopy(p1) if c else p2
            return m, 1
        def direct(gm, q, c):
            p1 = prepare_pt2e(gm, q)
            p2 = prepare_pt2e(gm, q)
            if c:
                return copy.deepcopy(p1)
            return p2
        def run(gm, q, c):
            a, b = paths(gm, q, c)
            a.eval()
            d, e = merged(gm, q, c)
            d.eval()
            g = direct(gm, q, c)
            g.train()
        """
    )
    assert [(d.range.start.row, d.message.split(":")[0]) for d in diagnostics] == [
        (29, "`a` comes from `prepare_pt2e` (line 12)"),
        (31, "`d` comes from `prepare_pt2e` (line 18)"),
        (33, "`g` comes from `prepare_pt2e` (line 23)"),
    ]


def test_a_copy_or_the_eager_model_is_quiet():
    assert (
        rows(
            """
            def paths(gm, q, model, c):
                if c:
                    return copy.deepcopy(prepare_pt2e(gm, q)), 1
                return model, 2
            def merged(gm, q, model, c):
                m = copy.deepcopy(prepare_pt2e(gm, q)) if c else model
                return m, 1
            def run(gm, q, model, c):
                a, b = paths(gm, q, model, c)
                a.eval()
                d, e = merged(gm, q, model, c)
                d.eval()
            """
        )
        == []
    )


def test_arguments_copied_or_handed_back():
    # The helper copies its parameter: quiet; it hands back the caller's copy: quiet; it hands
    # back the caller's graph, or the caller's copy is of another graph than the one handed back.
    diagnostics = found(
        """
        def copies(m):
            return copy.deepcopy(m), 1
        def hands_back(m):
            return m, 1
        def run(gm, q):
            p = prepare_pt2e(gm, q)
            a, b = copies(p)
            a.eval()
            c, d = hands_back(copy.deepcopy(p))
            c.eval()
            e, f = hands_back(p)
            e.eval()
        """
    )
    assert [d.range.start.row for d in diagnostics] == [21]


def test_a_helper_returning_a_copy_directly_is_quiet_and_on_one_path_only_is_reported():
    direct = "def f(gm, q):\n    return copy.deepcopy(prepare_pt2e(gm, q))\ndef run(gm, q):\n    f(gm, q).eval()"
    assert rows(direct) == []
    diagnostics = found(
        """
        def f(gm, q, c):
            p = prepare_pt2e(gm, q)
            if c:
                return copy.deepcopy(p)
            return p
        def run(gm, q, c):
            m = f(gm, q, c)
            m.eval()
        """
    )
    assert [d.range.start.row for d in diagnostics] == [17]


LOCAL = {
    "unpacked": ("a, b = {}, 1", "a.eval()"),
    "starred": ("a, *rest = {}, 1", "a.train()"),
    "dict literal": ('d = {{"m": {}}}', 'd["m"].eval()'),
    "dict stored": ('d = {{}}\n    d["m"] = {}', 'd["m"].eval()'),
    "dict read back": ('d = {{"m": {}}}\n    m = d["m"]', "m.eval()"),
    "list literal": ("items = [{}]", "items[0].eval()"),
}


@pytest.mark.parametrize(("bind", "switch"), LOCAL.values(), ids=LOCAL.keys())
def test_local_carriers(bind, switch):
    # Already followed before: the copy itself is what the element or item holds.
    def src(value: str) -> str:
        return f"def run(gm, q):\n    {bind.format(value)}\n    {switch}\n"

    assert rows(src("copy.deepcopy(prepare_pt2e(gm, q))")) == []
    assert rows(src("prepare_pt2e(gm, q)")) != []


def test_a_copy_under_a_key_of_a_returned_dict():
    # Already quiet before: a dict's copied value is not followed to `out["model"]` at all.
    def src(value: str) -> str:
        return f'def f(gm, q):\n    return {{"model": {value}}}\ndef run(gm, q):\n    f(gm, q)["model"].eval()\n'

    assert rows(src("copy.deepcopy(prepare_pt2e(gm, q))")) == []
    assert rows(src("prepare_pt2e(gm, q)")) == [12]


def test_ql204_still_sees_a_returned_copy():
    # A copy's origins stay: converted uncalibrated, it is reported, on every path or on one.
    diagnostics = found(
        """
        def f(gm, q):
            return copy.deepcopy(prepare_pt2e(gm, q))
        def g(gm, q, model, c):
            if c:
                return copy.deepcopy(prepare_pt2e(gm, q))
            return model
        def run(gm, q, model, c):
            convert_pt2e(f(gm, q))
            m = g(gm, q, model, c)
            m.eval()
            return convert_pt2e(m)
        """,
        select=("QL203", "QL204"),
    )
    assert [(d.code, d.range.start.row) for d in diagnostics] == [("QL204", 17), ("QL204", 20)]


HELPERS_MODULE = """\
import copy

import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def quantize(model, x, q):
    gm = torch.export.export(model, (x,)).module()
    return copy.deepcopy(prepare_pt2e(gm, q)), x


def quantize_on(model, x, q, copied):
    gm = prepare_pt2e(torch.export.export(model, (x,)).module(), q)
    if copied:
        return copy.deepcopy(gm), x
    return gm, x
"""

MAIN = """\
from pkg.helpers import quantize, quantize_on


def calibrate(model, x, q):
    gm, x = quantize(model, x, q)
    gm.eval()
    out, *rest = quantize(model, x, q)
    out.train()
    pair = quantize(model, x, q)
    pair[0].eval()


def maybe(model, x, q, flag):
    gm, _ = quantize_on(model, x, q, flag)
    gm.eval()
"""


def _run(root, cache_dir, use_cache):
    run = run_check([str(root)], Settings(select=("QL203",), root=root, cache_dir=cache_dir), use_cache, jobs=1)
    return [(d.code, d.range.start.row) for r in run.results if r.path.endswith("main.py") for d in r.diagnostics]


def test_through_a_helper_of_another_module_alone_in_a_run_and_cached(tmp_path):
    root = package_repository(tmp_path / "repo", helpers=HELPERS_MODULE, main=MAIN)
    script, cache = root / "pkg" / "main.py", tmp_path / "cache"
    # `quantize_on` hands the graph back uncopied on its other path, which `flag` does not rule
    # out (a constant `True` would: `test_ql203_ruled_out_arms.py`).
    assert [(c, r) for c, r, _ in alone_and_in_run(script, root, ("QL203",), cache)] == [("QL203", 15)]
    assert _run(root, cache, True) == [("QL203", 15)]
    assert _run(root, cache, True) == [("QL203", 15)]  # answered from the cache
    # The helper's copy removed: the cached caller's result depends on the helper's module.
    helpers = root / "pkg" / "helpers.py"
    helpers.write_text(HELPERS_MODULE.replace("copy.deepcopy(prepare_pt2e(gm, q))", "prepare_pt2e(gm, q)"))
    expected = [("QL203", 6), ("QL203", 8), ("QL203", 10), ("QL203", 15)]
    assert _run(root, cache, True) == expected
    assert [(c, r) for c, r, _ in alone_and_in_run(script, root, ("QL203",), cache)] == expected
