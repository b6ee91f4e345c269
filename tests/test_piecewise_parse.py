"""`piecewise_parse`: a large module parsed one top-level definition at a time gives the
tree of one whole parse (nodes and positions), and a text whose cut lines are no statement
boundaries (in a string, in brackets, under a decorator) is still parsed right."""

from __future__ import annotations

import ast
import re

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
    sizes = _counted(monkeypatch)
    tree = parse_by_definitions(text, "m.py")
    assert len(tree.body) == 2501
    assert len(sizes) > 1 and max(sizes) <= piecewise_parse._PIECE


def test_neighbouring_definitions_are_parsed_together(monkeypatch):
    # Each piece is padded with the line breaks above it: one parse per definition read ~5 M
    # of them here (2,500 definitions, ~10,000 lines); pieces of up to `_PIECE` characters, a
    # few tens of thousands.
    text = "import torch\n\n\n" + FILLER
    padding = _padding(monkeypatch)
    parse_by_definitions(text, "m.py")
    assert len(padding) <= 2 * len(text) // piecewise_parse._PIECE + 1
    assert sum(padding) < 3 * text.count("\n") * len(text) // piecewise_parse._PIECE // 2
    # ... and a class spanning the module, member by member, the same.
    padding.clear()
    parse_by_definitions(SUITE, "m.py")
    assert len(padding) <= 2 * len(SUITE) // piecewise_parse._PIECE + 2


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


# A test suite's class spanning the module: its methods (some decorated, one async, a nested
# class) one after another, with statements of the class body between them.
SUITE_MEMBERS = "".join(
    f"    @decorated(\n        {i},\n    )\n    def test_{i}(self, x):\n        return x + {i}\n\n"
    f"    field_{i} = [\n        {i},\n    ]\n\n"
    for i in range(560)
)
SUITE = (
    "import unittest\n\n\n@suite\nclass Suite(\n    unittest.TestCase,\n):\n"
    '    """doc\n    def not_a_member(self):\n    """\n\n'
    + SUITE_MEMBERS
    + "    async def later(self):\n        pass\n\n    class Inner:\n        pass\n\n"
    + "if __name__ == '__main__':\n    unittest.main()\n"
)


@pytest.mark.parametrize("after", ["", "\n\ndef tail():\n    pass\n", "\n\nX = 1\n"])
def test_a_class_spanning_the_module_is_parsed_member_by_member(monkeypatch, after):
    text = SUITE + after
    assert len(text) > piecewise_parse._SMALL
    whole = ast.dump(ast.parse(text), include_attributes=True)
    sizes = _counted(monkeypatch)
    assert ast.dump(parse_by_definitions(text, "m.py"), include_attributes=True) == whole
    # A member line in the docstring: the class's header is parsed with the first group of members.
    assert len(sizes) > 1 and max(sizes) < 2 * piecewise_parse._PIECE < len(text)


@pytest.mark.parametrize(
    "member",
    [
        "    x = (a\n    @ b)\n",  # a member line inside brackets
        "    S = '''\n    def inside(self):\n    '''\n",  # ... inside a string
        "    if flag:\n        def maybe(self):\n            pass\n",  # a def one level down
    ],
)
def test_member_cuts_that_are_no_statement_boundaries(monkeypatch, member):
    text = SUITE.replace("    async def later", member + "    async def later")
    whole = ast.dump(ast.parse(text), include_attributes=True)
    sizes = _counted(monkeypatch)
    assert ast.dump(parse_by_definitions(text, "m.py"), include_attributes=True) == whole
    # joined with the next members, not parsed whole
    assert len(sizes) > 1 and max(sizes) < 2 * piecewise_parse._PIECE < len(text)
    # A top-level statement between two members: the whole parse's error, not a tree.
    broken = SUITE.replace("    async def later", "print(1)\n    async def later")
    with pytest.raises(SyntaxError) as pieces:
        parse_by_definitions(broken, "m.py")
    with pytest.raises(SyntaxError) as at_once:
        ast.parse(broken, filename="m.py")
    assert (pieces.value.msg, pieces.value.lineno) == (at_once.value.msg, at_once.value.lineno)


def _padding(monkeypatch) -> list[int]:
    """The line breaks padding each text `ast.parse` is given from now on."""
    padding: list[int] = []
    parse = ast.parse

    def counting(source, *args, **kwargs):
        padding.append(len(source) - len(source.lstrip("\n")))
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(piecewise_parse.ast, "parse", counting)
    return padding


def _counted(monkeypatch) -> list[int]:
    """The sizes of the texts `ast.parse` is given from now on (without the padding)."""
    sizes: list[int] = []
    parse = ast.parse

    def counting(source, *args, **kwargs):
        sizes.append(len(source.lstrip("\n")))
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(piecewise_parse.ast, "parse", counting)
    return sizes


def _opening_lines(text: str, indented: bool) -> list[int]:
    """Where the lines after the first start that open a definition or a decorator, at the top
    level or (`indented`) below it: read line by line."""
    found, at = [], text.find("\n") + 1
    while 0 < at < len(text):
        end = text.find("\n", at)
        line = text[at:end]
        body = line.lstrip(" \t")
        if (body != line) == indented and re.match(r"(?:def|async[ \t]+def|class)[ \t(]|@", body):
            found.append(at)
        at = end + 1
    return found


def _under_a_decorator(text: str, at: int, indent: str = "") -> bool:
    return text.startswith(indent + "@", text.rfind("\n", 0, at - 1) + 1)


@pytest.mark.parametrize("indent", ["    ", "\t", " \t "])
def test_the_cutters_find_every_line_that_opens_a_definition(indent):
    # Found from the line break before each (the first line is never a cut), the indentation
    # read once: the cuts are those a line-by-line reading finds.
    suite = SUITE.replace("\n    ", "\n" + indent).replace("async def", "async \t def")
    text = "def first():\n    pass\n\n" + suite
    top = piecewise_parse._cuts(text)[1:-1]
    assert top and top == [at for at in _opening_lines(text, False) if not _under_a_decorator(text, at)]
    piece = suite[suite.index("@suite") :]
    members = piecewise_parse._member_cuts(piece)[:-1]
    expected = [
        at
        for at in _opening_lines(piece, True)
        if piece[at:].startswith(indent) and not piece[at + len(indent)].isspace()
        if not _under_a_decorator(piece, at, indent)
    ]
    assert len(members) > 500 and members == expected
    whole = ast.dump(ast.parse(suite), include_attributes=True)
    assert ast.dump(parse_by_definitions(suite, "m.py"), include_attributes=True) == whole
