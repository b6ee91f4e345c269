"""QL201: models built with values read through loops over lists of constants written in
the caller (issue 14, item 7; `constant_values`).

ExecuTorch's Qualcomm index_put tests write `skip_mutable_buffer = [False, True]`, fill
`total_test_combo` with `list(itertools.product(skip_mutable_buffer, sample_inputs))` and
then `for i, test_combo in enumerate(total_test_combo): for j, combo in enumerate(test_combo):
self.get_qdq_module(IndexPut(skip_mutable_buffer=combo[0], mode=i), combo[1])`. The class
keeps the values it is given, so an unknown one could be a module it holds: the content was
unknown and the caller unclassified. `combo[0]` and `i` can only be constants.

`Flagged(dim, skip)` of the suite stores `dim` and never reads it: only a known constant
there leaves its content known.
"""

from __future__ import annotations

import ast
import textwrap

import pytest

from qlint.analysis.flow.constant_values import holds_constant
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ModuleScope
from tests.test_ql201_keyed_rows import CAPTURE_ROW, _rows

QUIET = {
    "ExecuTorch's index_put test: an index and a product's item, through a list filled by append": """
        import itertools

        def main(x, q):
            flags = [False, True]
            combos = []
            inputs = [(x, x), (x,)]
            combos.append(list(itertools.product(flags, inputs)))
            inputs = [((x, x), x)]
            combos.append(list(itertools.product(flags, inputs)))
            for i, combo_list in enumerate(combos):
                for j, combo in enumerate(combo_list):
                    quantize(Flagged(combo[0], skip=i), combo[1], q)
        """,
    "a loop over a tuple of constants, unpacked": """
        def main(x, q):
            for dim, skip in ((1, True), (2, False)):
                quantize(Flagged(dim, skip), (x,), q)
        """,
    "an index of enumerate, and a range's item": """
        def main(x, q, n, items):
            for k, item in enumerate(items):
                quantize(Flagged(k), (x,), q)
            for k in range(n):
                quantize(Flagged(k), (x,), q)
        """,
    "a list read by index, and a name bound to its item": """
        def main(x, q, n):
            dims = [1, 2, 3]
            dim = dims[n]
            quantize(Flagged(dim), (x,), q)
        """,
}


@pytest.mark.parametrize("caller", QUIET.values(), ids=QUIET.keys())
def test_constants_read_through_loops_keep_the_helper_quiet(tmp_path, caller):
    assert _rows(tmp_path, caller) == []


LOUD = {
    "a model among the values": """
        def main(x, q):
            for dim in [1, Net()]:
                quantize(Flagged(dim), (x,), q)
        """,
    "a model appended to the list": """
        def main(x, q):
            dims = [1, 2]
            dims.append(Net())
            for dim in dims:
                quantize(Flagged(dim), (x,), q)
        """,
    "the list handed to a function that may fill it": """
        def main(x, q, fill):
            dims = [1, 2]
            fill(dims)
            for dim in dims:
                quantize(Flagged(dim), (x,), q)
        """,
    "the list filled through another name": """
        def main(x, q):
            dims = [1, 2]
            other = dims
            other.append(Net())
            for dim in dims:
                quantize(Flagged(dim), (x,), q)
        """,
    "an inner list filled through a loop item": """
        def main(x, q):
            rows = [[1], [2]]
            for row in rows:
                row.append(Net())
            for row in rows:
                quantize(Flagged(row[1]), (x,), q)
        """,
    "an inner list filled through a name also bound to an unknown": """
        def main(x, q, other):
            rows = [[1], [2]]
            for row in rows:
                pass
            row = other
            row.append(Net())
            quantize(Flagged(rows[0][1]), (x,), q)
        """,
    "the list extended in place": """
        def main(x, q, more):
            dims = [1, 2]
            dims += more
            for dim in dims:
                quantize(Flagged(dim), (x,), q)
        """,
    "a parameter's items": """
        def main(x, q, dims):
            for dim in dims:
                quantize(Flagged(dim), (x,), q)
        """,
    "a name the function also binds to a model": """
        def main(x, q, n):
            dim = 1
            if n:
                dim = Net()
            quantize(Flagged(dim), (x,), q)
        """,
    "a comprehension's target that is not the one of the loop": """
        def main(x, q, models):
            for dim in [1, 2]:
                built = [Flagged(dim) for dim in models]
                quantize(built[0], (x,), q)
        """,
    "the product's model column": """
        import itertools

        def main(x, q):
            pairs = list(itertools.product([Net()], [1]))
            for pair in pairs:
                quantize(Flagged(pair[0]), (x,), q)
        """,
}


@pytest.mark.parametrize("caller", LOUD.values(), ids=LOUD.keys())
def test_values_that_may_be_models_keep_the_report(tmp_path, caller):
    assert _rows(tmp_path, caller) == [CAPTURE_ROW]


def _holds(src: str) -> bool:
    """`holds_constant` of the argument of the `use(...)` call in the last function."""
    tree = ast.parse(textwrap.dedent(src))
    scope = ModuleScope.build(tree, "m", "m.py")
    func = tree.body[-1]
    call = next(n for n in ast.walk(func) if isinstance(n, ast.Call) and getattr(n.func, "id", "") == "use")
    body = next(b for b in bodies(tree, scope, {}) if b.node is func)
    return holds_constant(func, call.args[0], Resolver(scope, ProjectIndex(), None, body.local))


CONSTANT = {
    "a tuple's item by a negative index": "def f():\n    t = (Net(), 2)\n    use(t[-1])\n",
    "tuples of lengths that differ, handed on whole": (
        "def f(m):\n    for t in [(1,), (1, 2)]:\n        g(t)\n        use(t[0])\n"
    ),
    "a later generator's iterable reads an earlier target": (
        "def f(ms):\n    k = ms\n    [j for k in range(2) for j in use(k)]\n"
    ),
}


@pytest.mark.parametrize("src", CONSTANT.values(), ids=CONSTANT.keys())
def test_constant_values(src):
    assert _holds(src)


NOT_CONSTANT = {
    "a tuple's other item": "def f():\n    t = (Net(), 2)\n    use(t[0])\n",
    "a list made from itself, filled through an alias": (
        "def f():\n    a = [[1]]\n    b = (a, 0)\n    a = b[0]\n    b[0][0].append(Net())\n    use(a[0][0])\n"
    ),
    "a name of a lambda's own": "def f():\n    k = 1\n    g = lambda k: use(k)\n",
    "a builtin the module rebinds": (
        "def enumerate(x):\n    return x\n\ndef f(ms):\n    for i, m in enumerate(ms):\n        use(i)\n"
    ),
    "a name read through `locals()`": "def f():\n    ks = [1]\n    locals()['ks'].append(Net())\n    use(ks[0])\n",
    "a name rebound by `:=` in a comprehension": "def f(ms):\n    k = 1\n    [(k := m) for m in ms]\n    use(k)\n",
    "a comprehension's first iterable reads the function's name": (
        "def f(ms):\n    k = ms\n    [j for k in use(k) for j in k]\n"
    ),
}


@pytest.mark.parametrize("src", NOT_CONSTANT.values(), ids=NOT_CONSTANT.keys())
def test_values_that_may_be_modules(src):
    assert not _holds(src)
