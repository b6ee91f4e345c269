"""`never_called.computed_getattr` (dead code's and QL102's "the module looks names up at run
time") walks only the nodes spanning a row that spells `getattr`, and finds it wherever it
sits: a decorator above its definition's first row, an f-string, a call's continuation line,
a default, a lambda; a constant name or the word in a comment or string is no lookup."""

from __future__ import annotations

import ast
import textwrap

import pytest

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.never_called import computed_getattr
from qlint.source import LineIndex


def _ctx(text: str) -> FileContext:
    text = textwrap.dedent(text)
    return FileContext("m.py", text, ast.parse(text), LineIndex(text), None, None)


FILLER = "".join(f"\n\ndef helper_{i}(x):\n    return [y + {i} for y in x if y]\n" for i in range(100))


@pytest.mark.parametrize(
    "src",
    [
        'class A:\n    class B:\n        def run(self, op):\n            return getattr(self, "_do_" + op)()\n',
        'class A:\n    @register(getattr(ops, "x" + K))\n    def run(self):\n        pass\n',
        "@getattr(registry, KIND)\ndef run():\n    pass\n",
        'def show(self, name):\n    return f"{name}: {getattr(self, name)!r}"\n',
        'def show(self, name):\n    return f"""\n    {name}:\n      {getattr(self, name)}\n    """\n',
        "def run(obj, name):\n    return call(\n        1,\n"
        "        getattr(\n            obj, name\n        ),\n    )\n",
        "def run(obj, name, f=lambda o, n: getattr(o, n)):\n    return f(obj, name)\n",
        "x = 1\r\ny = 2\rdef run(o, n):\r    return getattr(o, n)\r",
        "name = 'é'\n\n\ndef run(o):\n    return getattr(o, name)\n",
    ],
    ids=[
        "nested-method",
        "decorator",
        "bare-decorator",
        "f-string",
        "multi-line-f-string",
        "continued",
        "lambda",
        "cr",
        "non-ascii",
    ],
)
def test_a_computed_getattr_is_found(src):
    assert computed_getattr(_ctx(FILLER + src))


@pytest.mark.parametrize(
    "src",
    [
        'def run(self):\n    return getattr(self, "_do_relu")()\n',
        "def run(self, op):\n    # getattr(self, op) would dispatch\n    return 'getattr(self, op)'\n",
        "def run(self, op):\n    return self.getattr(self, op)\n",
    ],
    ids=["constant-name", "comment-and-string", "method-named-getattr"],
)
def test_no_computed_getattr(src):
    assert not computed_getattr(_ctx(FILLER + src))


def test_only_the_nodes_spanning_its_rows_are_walked(monkeypatch):
    """One `getattr` row in a module of 100 functions: the walk goes down that function alone
    (asked at every keystroke of ao's 1,970-line observer.py)."""
    ctx = _ctx(FILLER + 'def run(self, op):\n    return getattr(self, "_do_" + op)()\n')
    visited = []
    children = ast.iter_child_nodes

    def counted(node):
        visited.append(node)
        return children(node)

    monkeypatch.setattr(ast, "iter_child_nodes", counted)
    assert computed_getattr(ctx)
    assert 0 < len(visited) < 40


NON_ASCII_FILLER = FILLER + '\n\ndef described(x):\n    """Adds one \u2014 or none."""\n    return x\n'


def test_a_module_past_ascii_walks_only_the_rows_that_may_spell_getattr(monkeypatch):
    """A character past ASCII in a docstring far from any lookup: the walk still goes down the
    functions spanning the rows that spell `getattr` or hold such a character, not the whole
    module (ExecuTorch's reorder_ops.py)."""
    ctx = _ctx(NON_ASCII_FILLER + 'def run(self, op):\n    return getattr(self, "_do_relu")()\n')
    visited = []
    children = ast.iter_child_nodes

    def counted(node):
        visited.append(node)
        return children(node)

    monkeypatch.setattr(ast, "iter_child_nodes", counted)
    assert not computed_getattr(ctx)
    assert 0 < len(visited) < 60


@pytest.mark.parametrize(
    "src",
    [
        # spelled in full-width letters (NFKC: `getattr`), the word itself only in a comment
        "# getattr\ndef run(o, n):\n    return \uff47\uff45\uff54\uff41\uff54\uff54\uff52(o, n)\n",
        "# getattr\ndef run(o, n):\n    return g\u0435tattr(o, n) if False else \uff47etattr(o, n)\n",
    ],
    ids=["full-width", "mixed"],
)
def test_getattr_spelled_past_ascii_is_found(src):
    assert computed_getattr(_ctx(NON_ASCII_FILLER + src))
