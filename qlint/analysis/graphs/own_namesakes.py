"""A module that spells a name only as its own module-level function of that name, and as
plain reads of it (dead code's "named elsewhere", `named_texts`).

ExecuTorch's vulkan tests hold two copies of `quantize_and_lower_module`: test_vulkan_delegate.py
defines and calls its own, and test_vulkan_passes.py's (issue 14's vulkan row) has no caller at
all. A word search finds the name in the first module and kept the second's helper alive.
Python resolves a bare name to the module's own global binding, so such a module's spellings
reach its own function, never another module's namesake.

Only where nothing else can bind or reach the name: every spelling in code is the name of a
`def` at column 0 of the module's body (a module-level one), or a plain `Name` read. An import
of it (`from tests import f`, `import f`), an attribute (`other.f`), a string (`getattr(m, "f")`,
`__all__`), a keyword, a parameter, an assignment, a `global` or `del`, a class or nested def of
that name, or a `from m import *` (which may bind it before the `def` runs) and the module may
name another module's function: it counts as naming it. Comments reach nothing.
"""

from __future__ import annotations

import ast
import io
import re


def only_own_namesake(text: str, name: str) -> bool:
    """Whether every spelling of `name` in `text` (a module's source) is its own module-level
    function of that name or a plain read of a name (see the module's docstring)."""
    # A module-level `def` starts a line: most modules that spell a name hold no such line.
    if not re.search(rf"^(?:async[ \t]+)?def[ \t]+{re.escape(name)}\b", text, re.MULTILINE):
        return False
    import tokenize  # here: an edited buffer's check (`qlint check -`) seldom gets this far

    try:
        tree = ast.parse(text)
        tokens = list(tokenize.generate_tokens(io.StringIO(text).readline))
    except (SyntaxError, ValueError, RecursionError, tokenize.TokenError):
        return False
    defs = {
        node.lineno
        for node in tree.body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name and node.col_offset == 0
    }
    if not defs:
        return False
    reads: set[tuple[int, int]] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and any(alias.name == "*" for alias in node.names):
            return False
        if isinstance(node, ast.Name) and node.id == name:
            if not isinstance(node.ctx, ast.Load):
                return False
            reads.add((node.lineno, node.col_offset))
    word = re.compile(rf"\b{re.escape(name)}\b")
    lines = text.splitlines()
    previous = None
    for token in tokens:
        kind, string, (row, col) = token.type, token.string, token.start
        if kind == tokenize.COMMENT or not word.search(string):
            if kind not in (tokenize.COMMENT, tokenize.NL, tokenize.NEWLINE, tokenize.INDENT, tokenize.DEDENT):
                previous = token
            continue
        if kind != tokenize.NAME:
            return False  # a string or an f-string spelling it
        # `ast` counts columns in UTF-8 bytes, `tokenize` in characters.
        offset = len(lines[row - 1][:col].encode("utf-8")) if row <= len(lines) else col
        own_def = previous is not None and previous.string == "def" and row in defs
        if not own_def and (row, offset) not in reads:
            return False
        previous = token
    return True
