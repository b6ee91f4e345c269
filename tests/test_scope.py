"""function_assigns: every name a function body binds, in the order its walk meets them
(last statement first: the order callers have always seen)."""

from __future__ import annotations

import ast
import textwrap

from qlint.analysis.names.scope import function_assigns

SOURCE = textwrap.dedent(
    """
    def f(a, *args, k=1, **kw):
        x = 1
        y: int = 2
        x += 1
        for i in range(3):
            pass
        with open(p) as fh, ctx() as (u, v):
            pass
        z = [w for w in args if (n := w)]
        s, t = 1, 2
        def inner():
            hidden = 1
        class C:
            also_hidden = 1
        g = lambda q: (r := q)
        return x
    """
)


def test_function_assigns_names_each_binding_of_the_body_only():
    func = ast.parse(SOURCE).body[0]
    found = function_assigns(func)
    assert list(found) == ["a", "k", "args", "kw", "g", "s", "t", "z", "w", "n", "fh", "i", "x", "y"]
    assert [type(v).__name__ for v in found["x"]] == ["AugAssign", "Constant"]
    assert isinstance(found["fh"][0], ast.Call) and "u" not in found
    assert not {"hidden", "also_hidden", "inner", "C", "q", "r"} & set(found)


def test_bindings_deep_inside_expressions_are_found():
    # The walk skips only what cannot bind: names, constants and tokens. Comprehensions and
    # `:=` sit under calls, keywords, subscripts, f-strings, conditional expressions.
    func = ast.parse(
        textwrap.dedent(
            """
            def f(xs):
                print(f"{[m for m in xs]}", key={k: 1 for k in xs})
                xs[(j := 3)] = xs[0] if (c := xs) else None
                assert any(e for e in xs), [(o := 1)]
            """
        )
    ).body[0]
    found = function_assigns(func)
    assert set(found) == {"xs", "m", "k", "j", "c", "e", "o"}
    assert next(iter(found)) == "xs"


def test_bindings_under_what_an_attribute_chain_hangs_from_are_found():
    # A chain of attributes is skipped down to what it hangs from: a name or a constant there
    # binds nothing, a call, subscript or parenthesised `:=` may (in walk order, as before).
    func = ast.parse(
        textwrap.dedent(
            """
            def f(m):
                torch.nn.functional.relu(m).data.zero_()
                load(p := path).model.encoder.eval()
                (q := m).layers[(i := 0)].weight.data
                [w for w in m.parts].count.__name__
                "{}".format(s := 1).upper
            """
        )
    ).body[0]
    found = function_assigns(func)
    assert list(found) == ["m", "s", "w", "i", "q", "p"]
    assert isinstance(found["p"][0], ast.Name) and found["p"][0].id == "path"
