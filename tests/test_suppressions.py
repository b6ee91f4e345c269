"""noqa comments found from the parsed tree agree with tokenizing the whole file."""

from __future__ import annotations

import ast
import textwrap

import pytest

from qlint.suppressions import parse_suppressions

CASES = {
    "plain": "x = torch.ops.aten.add  # noqa: QL101\ny = 1\n",
    "in a one-line string": "x = '# noqa: QL101'\ny = 2  # NOQA\n",
    "in a docstring": '''
        def f():
            """Usage:

            x = torch.ops.aten.add  # noqa: QL101
            """
            return 1  # noqa
        ''',
    "string opened earlier on a continued line": '''
        x = foo("""a
        # noqa: QL101
        """, b)  # noqa: QL102
        ''',
    "two strings, the second starting inside the first's last line": '''
        x = """a
        b""" + """c
        # noqa: QL101
        d"""  # noqa: QL201
        ''',
    "decorator and default": '''
        @deco("""
        # noqa: QL101
        """)  # noqa: QL102
        def f(a="""
        # noqa: QL201
        """):  # noqa: QL202
            pass
        ''',
    "match case pattern": '''
        match x:
            case """a
        # noqa: QL101
        """:
                y = 1  # noqa: QL102
        ''',
    "file level": "# qlint: noqa: QL101\nx = 1\n",
    "except clause and else": """
        try:
            pass
        except ValueError:  # noqa: QL101
            pass
        else:  # noqa
            pass
        """,
    "comments without a quote before them": (
        "import torch  # noqa: QL101   \nnoqa = 1\nx = 1#noqa:QL102\t\nif y:\n\tz = 2  # NoQa"
    ),
    "a quote or a hash in a string before the comment": (
        'x = "#"  # noqa: QL101\ny = f(\'a\')  # noqa\nz = b"noqa"  # noqa: QL102\nw = "# noqa: QL201"\n'
    ),
    "f-string": '''
        x = f"""{a}
        # noqa: QL101
        {b}"""  # noqa: QL102
        ''',
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_from_tree_equals_full_tokenize(name):
    text = textwrap.dedent(CASES[name]).lstrip("\n")
    full = parse_suppressions(text)
    fast = parse_suppressions(text, ast.parse(text))
    assert (fast.lines, fast.file_codes, fast.file_all) == (full.lines, full.file_codes, full.file_all)


def test_comment_inside_a_string_is_no_directive():
    text = textwrap.dedent(CASES["in a docstring"]).lstrip("\n")
    sup = parse_suppressions(text, ast.parse(text))
    assert sorted(sup.lines) == [6]
    assert sup.lines[6].codes is None


def test_string_spanning_into_the_row_is_followed_back():
    text = textwrap.dedent(CASES["two strings, the second starting inside the first's last line"]).lstrip("\n")
    sup = parse_suppressions(text, ast.parse(text))
    assert {row: n.codes for row, n in sup.lines.items()} == {4: ("QL201",)}


def test_comments_without_a_quote_before_them_are_found_without_tokenize():
    # `tokenize` (its import and first-use regex compile) is ~5 ms of a one-file check.
    import subprocess
    import sys

    code = (
        "import ast, sys\nfrom qlint.suppressions import parse_suppressions\n"
        "text = 'import torch  # noqa: QL101\\nx = 1  # noqa\\n'\n"
        "sup = parse_suppressions(text, ast.parse(text))\n"
        "print(sorted(sup.lines), 'tokenize' in sys.modules)"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "[1, 2] False"


def test_the_rows_mentioning_noqa_are_those_whose_lowered_text_does():
    # An ASCII text is lowered and searched once; a text whose lowering lengthens a
    # character (`İ` -> `i̇`) is asked row by row, so the rows never shift.
    import io

    from qlint.suppressions import _noqa_rows

    for text in (
        "x = 1  # NOQA: QL101\ny = 2\n# noqa noqa\n\nz  # NoQa",
        "noqa",
        "a\nb\n",
        "\u0130\u0130\u0130\u0130 = 1\nx = 2  # noqa: QL101\n",
        "",
    ):
        lines = io.StringIO(text).readlines()
        expected = [row for row, line in enumerate(lines, 1) if "noqa" in line.lower()]
        assert _noqa_rows(text, lines) == expected
    assert _noqa_rows("a\n# NOQA\nb  # noqa\n", io.StringIO("a\n# NOQA\nb  # noqa\n").readlines()) == [2, 3]


@pytest.mark.parametrize(
    "comment, file_all, codes",
    [
        ("# qlint: noqa", True, None),
        ("# QLINT: NOQA", True, None),
        ("# Qlint :noqa: ql101, QL102", False, ("QL101", "QL102")),
        ("# ql\u0131nt: noqa", True, None),  # dotless i matches `i` under IGNORECASE: not ASCII, asked of the pattern
        ("# noqa: QL101", False, None),  # a line directive, no file-level one
    ],
)
def test_file_level_directive_in_any_case(comment, file_all, codes):
    text = f"x = 1  {comment}\n"
    sup = parse_suppressions(text, ast.parse(text))
    assert sup.file_all is file_all
    assert sup.file_codes == codes


def test_file_level_pattern_not_compiled_without_qlint(monkeypatch):
    """Compiling `_FILE` costs as much as the rest of a noqa file's suppressions: a file whose
    comments never spell `qlint` does not compile it."""
    import qlint.suppressions as suppressions
    from qlint.lazy_patterns import LazyPattern

    fresh = LazyPattern(*suppressions._FILE._source)
    monkeypatch.setattr(suppressions, "_FILE", fresh)
    text = "x = [i for i in y]  # noqa: C416\n"
    assert 1 in parse_suppressions(text, ast.parse(text)).lines
    assert "search" not in vars(fresh)
    text = "# qlint: noqa\n"
    assert parse_suppressions(text, ast.parse(text)).file_all
    assert "search" in vars(fresh)
