"""Whether a method of another module's class can change what the caller's walk follows: its
own body names a mode switch, a capture or a PT2E step.

Reading every method an instance of a project class runs (`instance_methods`,
`class_calls`) analysed 282 more bodies on ExecuTorch (+11%: its test harness's stage
methods, the Arm pass manager's pipelines), most of which name none of them, and cost a
measurable share of a cold run. A method whose body names none of these words is left
unread, as every such call was before: it leaves the mode as it was. A method that hands
the model to a module-level function of its module that names one (a few levels down) is
read; one that hands it to a helper imported from yet another module is still missed that
way (a same-module helper's call is read through any depth).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.relevant_bodies import KEYWORDS

_WORDS = ("eval", "train", "prepare", "convert", *KEYWORDS)
_KEY = "_qlint_method_words"  # on the scope's `__dict__`: one walk per method and module content


def names_a_step(scope, method: ast.AST) -> bool:
    """`method`'s body (a def of `scope`'s module) names a mode switch, a capture or a PT2E step,
    itself or through a module-level function of its module it calls by name, a few levels
    down (`def capture(self, m): return _capture(m)`, `_capture` exporting)."""
    known = scope.__dict__.setdefault(_KEY, {})
    return _step_in(scope, method, known, _LEVELS, set())


_LEVELS = 3  # helpers of helpers, as `relevant_bodies` follows them


def _step_in(scope, func: ast.AST, known: dict, levels: int, seen: set[int]) -> bool:
    found = known.get(id(func))
    if found is None or found[0] is not func:
        found = known[id(func)] = (func, *_names(func, scope.functions))
    if found[1]:
        return True
    seen.add(id(func))
    if levels == 0:
        return False
    return any(_step_in(scope, helper, known, levels - 1, seen) for helper in found[2] if id(helper) not in seen)


def _names(func: ast.AST, functions: dict) -> tuple[bool, tuple[ast.AST, ...]]:
    """(whether the body names a step word, the module-level functions it calls by name)."""
    called: dict[int, ast.AST] = {}
    for node in ast.walk(func):
        if isinstance(node, ast.Attribute):
            word = node.attr
        elif isinstance(node, ast.Name):
            word = node.id
            if isinstance(node.ctx, ast.Load) and (helper := functions.get(word)) is not None and helper is not func:
                called[id(helper)] = helper
        else:
            continue
        if any(w in word for w in _WORDS):
            return True, ()
    return False, tuple(called.values())


__all__ = ["names_a_step"]
