"""Whether a method of another module's class can change what the caller's walk follows: its
own body names a mode switch, a capture or a PT2E step.

Reading every method an instance of a project class runs (`instance_methods`,
`class_calls`) analysed 282 more bodies on ExecuTorch (+11%: its test harness's stage
methods, the Arm pass manager's pipelines), most of which name none of them, and cost a
measurable share of a cold run. A method whose body names none of these words is left
unread, as every such call was before: it leaves the mode as it was. A method that only
hands the model to a helper that evals it is missed that way (a same-module helper's call
is read through any depth).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.relevant_bodies import KEYWORDS

_WORDS = ("eval", "train", "prepare", "convert", *KEYWORDS)
_KEY = "_qlint_method_words"  # on the scope's `__dict__`: one walk per method and module content


def names_a_step(scope, method: ast.AST) -> bool:
    """`method`'s body (a def of `scope`'s module) names a mode switch, a capture or a PT2E step."""
    known = scope.__dict__.setdefault(_KEY, {})
    found = known.get(id(method))
    if found is None or found[0] is not method:
        found = known[id(method)] = (method, _names(method))
    return found[1]


def _names(method: ast.AST) -> bool:
    for node in ast.walk(method):
        if isinstance(node, ast.Attribute):
            word = node.attr
        elif isinstance(node, ast.Name):
            word = node.id
        else:
            continue
        if any(w in word for w in _WORDS):
            return True
    return False


__all__ = ["names_a_step"]
