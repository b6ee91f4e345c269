"""Model flows of functions written in other functions, carried across an editor's edit.

`carried_flows` carries the flows of the module's functions and its classes' methods. A test
module writes many bodies inside others (ao's `test_quantize_pt2e.py`: a `Quantizer` subclass
per test, a helper in a test), and those were interpreted again at every keystroke (nine
bodies, about 15 ms of each check). Such a body is carried on the same terms as a top-level
one (what it read of the module and of other modules unchanged), and one more: it is not
written inside the function the edit changed. The reuse of unchanged statements
(`statement_reuse`) gives a changed function's unchanged statements, nested functions
included, the last check's nodes, so a node that is the same object as last time may still
stand in a function whose other statements changed: what it reads of them (the function's
classes and helpers, which no scope watches) may have changed. Outside that function every
statement is the last check's, with the same text, so the body and all around it are as the
last check read them.
"""

from __future__ import annotations

import ast


def inside_edited(func: ast.AST, changed: tuple) -> bool:
    """`func` stands within the rows of the function the edit changed (a confined edit keeps
    every row where it was), or no edit is known."""
    if not changed:
        return True
    edited = changed[0]
    return edited.lineno <= func.lineno <= edited.end_lineno


__all__ = ["inside_edited"]
