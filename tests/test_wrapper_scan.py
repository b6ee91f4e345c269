"""The text readers the wrapper index is made with (`module_text`, `masked_text`, `wrapper_reads`),
each against what it stands for: the patterns they replaced for speed must find the very same
headers, literals, renames and import words, on each form a wrapper can be written in, and
miss none of them."""

from __future__ import annotations

import re

import pytest

from qlint.analysis.graphs import masked_text, wrapper_reads
from qlint.analysis.graphs.import_words import import_words
from qlint.analysis.graphs.module_text import ModuleText, _headers
from qlint.analysis.graphs.wrapper_candidates import candidates

# What `_headers` stands for: a row led by `def`/`class`, maybe indented or after `async`.
_ANCHORED = re.compile(r"^([ \t]*)(?:async[ \t]+)?(def|class)[ \t]+(\w+)", re.M)

HEADERS = [
    "def f(op):\n    pass\n",
    "  async  def f(x):\n\tdef g(): pass\n",
    "class K(B):\n    def m(self, op): ...\n",
    "x = 1; def_ = 2\nasyncdef f(): pass\nclassy = 3\n   defx(1)\n",
    "if a:\n    class\tK: pass\nelse:\n    def __init__(self): ...\n",
    "xclass def foo\n  x def bar\ndef\tñame(op): pass\n",
]


@pytest.mark.parametrize("text", HEADERS)
def test_headers_are_the_rows_the_anchored_pattern_finds(text):
    expected = [
        (len(m.group(1).expandtabs(8)), m.group(2), m.group(3), m.start(), m.end()) for m in _ANCHORED.finditer(text)
    ]
    assert _headers(text) == expected


@pytest.mark.parametrize(
    ("text", "masked"),
    [
        ("x = 'a#b'  # c\n", "x = '   '     \n"),
        ('s = """\ndef f(op):\n"""\n', 's = "  \n          \n  "\n'),
        ("s = 'unterminated\nt = 1\n", "s = '" + " " * 11 + "d\nt = 1\n"),  # ends its row
        ("s = '''runs to the end\n", "s = '" + " " * 17 + "\n"),
        ("s = 'a\\'b' + \"c\\\"\"\n", "s = '    ' + \"   \"\n"),
        ("s = 'ends in a backslash\\", "s = '                   \\"),
        ("s = '''ends in a backslash\\", "s = '                     \\"),
        ("s = '''a''''b'\n", "s = '     '' '\n"),  # four quotes: the string ends at the third
        ("s = 'a\\\nb'\n", "s = '  \n '\n"),  # a backslash carries a one-quote string over
        ("'", " "),
    ],
)
def test_strings_and_comments_are_blanked_as_the_tokenizer_ends_them(text, masked):
    assert masked_text.masked(text) == masked


def test_pieces_split_at_top_level_commas_only():
    assert masked_text.top_level("a, f(b, c), [d, e], {g: h, i: j}, (k)") == [
        "a",
        " f(b, c)",
        " [d, e]",
        " {g: h, i: j}",
        " (k)",
    ]
    assert masked_text.top_level("a, b=c") == ["a", " b=c"]


@pytest.mark.parametrize(
    ("wrapper", "name"),
    [
        ("def insert(graph, op):\n    return graph.call_function(op, ())\n", "insert"),
        ("async def insert(graph, op):\n    return graph.call_function(op, ())\n", "insert"),
        ("def insert(graph, op):\n    return graph.create_node('call_function', op, ())\n", "insert"),
        ("def insert(graph, op):\n    return graph.create_node('call_function', target=op)\n", "insert"),
        ("def insert(graph, op):\n    return graph \\\n        .call_function(op)\n", "insert"),
        ("class R:\n    def put(self, op):\n        self.g.call_function(op)\n", "put"),
        ("def insert(graph, op):\n    s = 'x.call_function(y)'\n    return graph.call_function(op, ())\n", "insert"),
    ],
)
def test_each_form_of_an_insertion_wrapper_is_found(wrapper, name):
    assert name in candidates([ModuleText(wrapper)], [])[0]


@pytest.mark.parametrize(
    "text",
    [
        "def f(graph):\n    graph.call_function(aten.relu.default, ())\n",  # a fixed target
        "def f(graph, op):\n    graph._call_function(op)\n",  # another attribute
        "def f(graph, op):\n    s = 'graph.call_function(op)'\n",  # in a string
        "def f(graph, op):\n    # graph.call_function(op)\n    pass\n",  # in a comment
    ],
)
def test_look_alikes_of_an_insertion_are_no_wrappers(text):
    assert candidates([ModuleText(text)], []) == (set(), set())


def test_a_call_of_a_wrapper_counts_only_as_a_whole_word():
    utils = "def insert(graph, op):\n    return graph.call_function(op, ())\n"
    caller = (
        "def add(graph, op):\n    graph.call_function(aten.relu.default, ())\n    return insert(graph, op)\n\n\n"
        "def other(graph, op):\n    return reinsert(graph, op)\n"
    )
    functions, _ = candidates([ModuleText(utils), ModuleText(caller)], [])
    assert "add" in functions and "other" not in functions


_BUILDER = "class R:\n    def put(self, op):\n        self.g.call_function(op)\n\n\n"


@pytest.mark.parametrize(
    "classes",
    [
        "class S(R):\n    pass\n\n\nclass T(S):\n    pass\n",
        # The subclass of a subclass written first: the fixpoint does not follow the text's order.
        "class T(S):\n    pass\n\n\nclass S(R):\n    pass\n",
    ],
)
def test_a_method_is_inherited_down_a_chain_of_subclasses(classes):
    # `T(graph).put(op)` counts where the module spells a class holding `put`: `T` holds it
    # through `S`, which holds it through `R` (`_inherit`).
    user = "def add(graph, op):\n    graph.call_function(aten.relu.default, ())\n    return {}(graph).put(op)\n"
    functions, classes_found = candidates([ModuleText(_BUILDER + classes), ModuleText(user.format("T"))], [])
    assert "add" in functions and {"R", "S", "T"} <= classes_found
    # A class outside the chain spelled instead: no link.
    assert "add" not in candidates([ModuleText(_BUILDER + classes), ModuleText(user.format("Q"))], [])[0]


def test_a_base_counts_only_as_a_whole_name():
    bases = (
        "class Dotted(mod.R):\n    pass\n\n\nclass Longer(RBase, Rx, _R):\n    pass\n\n\n"
        "class Renamed(R\u00b7x):\n    pass\n\n\nclass Accented(\u00e9R):\n    pass\n"
    )
    # `R·x` is an identifier (a rename's new name) that is not all word characters.
    _, classes = candidates([ModuleText(_BUILDER), ModuleText(bases)], [("R", "R\u00b7x")])
    assert {"Dotted", "Renamed"} <= classes
    assert not {"Longer", "Accented"} & classes


def test_renames_read_from_the_name_before_as():
    data = b"from .a import (\n    insert_op as ins,\n    b.c as d)\nimport x as y;\nwith f() as g:\n"
    assert wrapper_reads._renames(data) == [("insert_op", "ins"), ("c", "d"), ("x", "y")]
    assert wrapper_reads._renames(b"x = (a, as_b)\nfrom m import f,as x\n") == []


@pytest.mark.parametrize(
    ("data", "words"),
    [
        (b"from pkg import graph_utils\nx = 1\n", {b"from", b"pkg", b"import", b"graph_utils"}),
        (b"from pkg import (\n    a,\n    b,\n)\ny = 2\n", {b"from", b"pkg", b"import", b"a", b"b"}),
        (b"from pkg \\\n    import a\nz = 3\n", {b"from", b"pkg", b"import", b"a"}),
        (b"from pkg import a, \\\n    b\nz = 3\n", {b"from", b"pkg", b"import", b"a", b"b"}),
        (b"from pkg import (a, \\\r\n    b)\nz = 3\n", {b"from", b"pkg", b"import", b"a", b"b"}),
        (b"x = '\\\\n'\nimport a\nz = 3\n", {b"import", b"a"}),  # a backslash that continues nothing
        # A bracket closed after a backslash carries the statement on past it (the only pair here).
        (b"from pkg import (a,\n    b\\) c\nz = 3\n", {b"from", b"pkg", b"import", b"a", b"b", b"c"}),
        # A `)` in a comment closes nothing: the bracket runs on to the one that does.
        (
            b"from pkg import (  # see f()\n    a,  # (b)\n    c as d,\n)\nz = 3\n",
            {b"from", b"pkg", b"import", b"see", b"f", b"a", b"b", b"c", b"as", b"d"},
        ),
        (b"from pkg import (a)  # f(\nz = 3\n", {b"from", b"pkg", b"import", b"a", b"f"}),
    ],
)
def test_import_words_with_brackets_and_continuations(data, words):
    assert import_words(data) == words


@pytest.mark.parametrize(
    ("text", "words"),
    [
        # ASCII: every other character (tabs, form feeds, separators) parts the runs; `_` and digits do not.
        (
            "def f_1(a,\tb2):\x0c\x1c\n    return a.call_function(b2, ())\n",
            {"def", "f_1", "a", "b2", "return", "call_function"},
        ),
        # Outside ASCII, a letter is a word character as `\w` reads it.
        ("def café(x):\n    return x.call_function(x, ())\n", {"def", "café", "x", "return", "call_function"}),
    ],
)
def test_a_module_texts_words_are_its_runs_of_word_characters(text, words):
    assert ModuleText(text).words == words
