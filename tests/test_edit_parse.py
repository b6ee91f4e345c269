"""A keystroke in one function parses that function only (`edit_parse`, issue 13): the tree is
the whole text's parse, node for node with every position, or the whole text is parsed.

What is checked: `ast.dump` (positions included) against `ast.parse` of the whole text, for
keystrokes in every function and method of real modules and for the edits that must fall back
(rows added, a header, decorators, a statement left open, carriage returns, a nested class).
"""

from __future__ import annotations

import ast
import os
import sys
import textwrap

import pytest

from qlint.analysis.names import edit_parse
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.statement_reuse import PreviousTrees, edited_lines
from qlint.engine import check_source
from tests.conftest import settings_for

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "benchmarks"))
from keystroke_edits import keystroke_edits

BASE = textwrap.dedent(
    '''\
    """A module."""
    import functools


    @functools.lru_cache(maxsize=None)
    def top(a, b=(1,
                  2)):
        x = a + b[0]
        s = """a
    string at column zero"""
        return x, s


    class K(object):
        """Doc."""

        size = 3

        @staticmethod
        def method(self, y):
            if y:
                return [i
            for i in range(y)]
            return None

        async def other(self):
            await self.method(1)

        class Inner:
            def deep(self):
                return 1


    def last():
        pass
    '''
)


def _dump(tree: ast.AST) -> str:
    return ast.dump(tree, include_attributes=True)


def _incremental(old_text: str, new_text: str) -> ast.Module | None:
    return edit_parse.parse_edited(ast.parse(old_text), new_text, *edited_lines(old_text, new_text))


@pytest.mark.parametrize(
    "old, new",
    [
        ("    x = a + b[0]\n", "    x = a + b[1]\n"),
        ("    return x, s\n", "    return x, s, 1\n"),
        ("string at column zero", "string at row zero"),
        ("        if y:\n", "        if not y:\n"),
        ("        for i in range(y)]\n", "        for i in range(y + 1)]\n"),
        ("        await self.method(1)\n", "        await self.method(2)\n"),
        ("def method(self, y):\n", "def method(self, z):\n"),  # the header: still one function
        ("@functools.lru_cache(maxsize=None)\n", "@functools.lru_cache(maxsize=1)\n"),
        ("def top(a, b=(1,\n", "def top2(a, b=(1,\n"),
        ("pass\n", "return 1\n"),
    ],
)
def test_edits_inside_one_function_give_the_whole_text_s_tree(old, new):
    assert BASE.count(old) == 1
    edited = BASE.replace(old, new)
    tree = _incremental(BASE, edited)
    assert tree is not None
    assert _dump(tree) == _dump(ast.parse(edited))


@pytest.mark.parametrize(
    "old, new",
    [
        ("    x = a + b[0]\n", "    x = a + b[0]\n        y = 1\n"),  # a row added
        ("    return x, s\n", "    return (x, s\n"),  # left open: the next rows decide
        ("    return x, s\n", '        return """x, s\n'),
        ("    return x, s\n", "    return x, s \\\n"),
        ("            return 1\n", "            return 2\n"),  # a nested class's method
        ("size = 3\n", "size = 4\n"),  # a class statement
        ('"""A module."""\n', '"""The module."""\n'),
        ("def method(self, y):\n", "x = 1\n"),  # no longer a function
    ],
)
def test_other_edits_are_parsed_whole(old, new):
    edited = BASE.replace(old, new)
    tree = _incremental(BASE, edited)
    try:
        whole = _dump(ast.parse(edited))
    except SyntaxError:
        whole = None
    assert tree is None or _dump(tree) == whole


def test_the_last_method_of_a_class_moves_the_class_s_end():
    text = "class A:\n    x = 1\n\n    def f(self):\n        return 1\n"
    edited = text.replace("return 1", "return 100")
    tree = _incremental(text, edited)
    assert tree is not None and tree.body[0].end_col_offset == 18
    assert _dump(tree) == _dump(ast.parse(edited))


def test_rows_added_removed_or_carriage_returns_fall_back():
    assert _incremental(BASE, BASE.replace("    x = a + b[0]\n", "    x = a + b[0]\n\n")) is None
    crlf = BASE.replace("\n", "\r\n")
    assert _incremental(crlf, crlf.replace("a + b[0]", "a + b[1]")) is None
    assert _incremental(BASE, BASE.replace("    return x, s\n", "    return (x, s\n")) is None
    assert _incremental(BASE, BASE.replace("size = 3\n", "size = 4\n")) is None
    assert _incremental(BASE, BASE.replace("            return 1\n", "            return 2\n")) is None


def test_keystrokes_in_every_function_of_real_modules():
    root = os.path.join(os.path.dirname(__file__), "..", "qlint")
    paths = sorted(os.path.join(d, f) for d, _, files in os.walk(root) for f in files if f.endswith(".py"))
    checked = 0
    for path in paths[::15]:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        previous = text
        for buffer in keystroke_edits(text, 6):
            tree = _incremental(previous, buffer)
            if tree is not None:
                checked += 1
                assert _dump(tree) == _dump(ast.parse(buffer)), path
            previous = buffer
    assert checked > 50


def test_the_editor_index_parses_the_edited_function_only(tmp_path, monkeypatch):
    """Through the engine: the findings of every keystroke are a fresh check's, and a keystroke
    in a function does not parse the whole text."""
    parsed: list[int] = []
    real = ast.parse

    def counting(source, *args, **kwargs):
        parsed.append(len(source) if isinstance(source, str) else 0)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", counting)
    examples = os.path.join(os.path.dirname(__file__), "..", "examples")
    path = next(
        os.path.join(d, f) for d, _, files in sorted(os.walk(examples)) for f in sorted(files) if f.endswith(".py")
    )
    with open(path, encoding="utf-8") as fh:
        text = fh.read()
    kept = ProjectIndex()
    settings = settings_for(("QL",))
    for step, buffer in enumerate([text, *keystroke_edits(text, 5)]):
        parsed.clear()
        mine = check_source(buffer.encode(), path, settings, kept)
        whole = len(buffer) in parsed
        fresh = check_source(buffer.encode(), path, settings, ProjectIndex())
        assert [(d.code, d.range) for d in mine.diagnostics] == [(d.code, d.range) for d in fresh.diagnostics]
        assert whole == (step == 0), step


def test_previous_trees_hands_back_nothing_for_an_unknown_file():
    assert PreviousTrees().parse_edit("/nowhere.py", "x = 1\n") is None
