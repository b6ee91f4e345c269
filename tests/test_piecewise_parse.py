"""`piecewise_parse`: a large module parsed one top-level definition at a time gives the
tree of one whole parse (nodes and positions), and a text whose cut lines are no statement
boundaries (in a string, in brackets, under a decorator) is still parsed right."""

from __future__ import annotations

import ast

import pytest

from qlint.analysis.names import piecewise_parse
from qlint.analysis.names.piecewise_parse import parse_by_definitions

FILLER = "".join(f"def filler_{i}(x):\n    return x + {i}\n\n\n" for i in range(2500))

TRICKY = [
    # a decorator spanning lines, stacked decorators, a blank line under a decorator
    "@register(\n    target=[1],\n)\n@other\n\n@third\ndef f():\n    return 1\n\n\nasync def g():\n    pass\n",
    # `def`, `class` and `@` lines at column 0 inside strings
    "CODE = \"\"\"\ndef inside():\n    pass\n@decorated\nclass C:\n    x = 1\n\"\"\"\nX = '''\ndef f(\n'''\n",
    # ... inside brackets and after a backslash
    "y = (a\n@ b)\nz = [\ndef_ for def_ in y\n]\nw = 1 + \\\n2\nclass K(\nobject):\n    pass\n",
    # a class header spanning lines, then statements that are not definitions
    "class Z(\n    Base,\n):\n    pass\nif True:\n    def h(): pass\nelse:\n    pass\nprint(Z)\n",
]


@pytest.mark.parametrize("tricky", TRICKY)
@pytest.mark.parametrize("where", ["start", "middle", "end"])
def test_the_pieces_give_the_whole_parse(tricky, where):
    parts = {"start": [tricky, FILLER], "middle": [FILLER, tricky, FILLER], "end": [FILLER, tricky]}[where]
    text = "".join(parts)
    assert len(text) > piecewise_parse._SMALL
    whole = ast.dump(ast.parse(text), include_attributes=True)
    assert ast.dump(parse_by_definitions(text, "m.py"), include_attributes=True) == whole


def test_a_large_module_is_parsed_in_pieces(monkeypatch):
    text = "import torch\n\n\n" + FILLER
    sizes: list[int] = []
    parse = ast.parse

    def counting(source, *args, **kwargs):
        sizes.append(len(source.lstrip("\n")))
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(piecewise_parse.ast, "parse", counting)
    tree = parse_by_definitions(text, "m.py")
    assert len(tree.body) == 2501
    assert len(sizes) > 1 and max(sizes) < len(text) // 100


@pytest.mark.parametrize(
    "error",
    [
        "def broken(:\n    pass\n",  # a piece that never parses
        'S = """\nnever closed\ndef f():\n    pass\n',  # a string running to the end
    ],
)
def test_a_text_that_does_not_parse_raises_what_the_whole_parse_raises(error):
    text = FILLER + error + FILLER
    with pytest.raises(SyntaxError) as whole:
        ast.parse(text, filename="m.py")
    with pytest.raises(SyntaxError) as pieces:
        parse_by_definitions(text, "m.py")
    assert (pieces.value.msg, pieces.value.lineno, pieces.value.offset) == (
        whole.value.msg,
        whole.value.lineno,
        whole.value.offset,
    )
