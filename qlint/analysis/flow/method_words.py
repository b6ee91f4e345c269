"""Whether a method of another module's class can change what the caller's walk follows: its
own body names a mode switch, a capture or a PT2E step.

Reading every method an instance of a project class runs (`instance_methods`,
`class_calls`) analysed 282 more bodies on ExecuTorch (+11%: its test harness's stage
methods, the Arm pass manager's pipelines), most of which name none of them, and cost a
measurable share of a cold run. A method whose body names none of these words is left
unread, as every such call was before: it leaves the mode as it was. A method that hands
the model to a module-level function that names one (a few levels down) is read, whether
the function is of its module or imported from another module of the project (a third
module, beside the caller's and the class's: `Quantizer.quantize` returning
`helpers.ptq(model)`); once read, its calls are followed as any body's are.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.forwarded_graphs import LIBRARY_ROOTS
from qlint.analysis.flow.relevant_bodies import KEYWORDS
from qlint.analysis.tree_walk import walk

_WORDS = ("eval", "train", "prepare", "convert", *KEYWORDS)
_KEY = "_qlint_method_words"  # on the scope's `__dict__`: one walk per method and module content


def names_a_step(owner, method: ast.AST) -> bool:
    """`method`'s body (a def of `owner`'s module; `owner` is that module's `ModelFlow`) names a
    mode switch, a capture or a PT2E step, itself or through a module-level function it calls
    by name, a few levels down (`def capture(self, m): return _capture(m)`, `_capture`
    exporting): one of its module, or one it imports from another module of the project
    (`from pkg.helpers import ptq`, `helpers.ptq(m)`), read there."""
    return _step_in(owner, method, _LEVELS, set())


_LEVELS = 3  # helpers of helpers, as `relevant_bodies` follows them


def _step_in(owner, func: ast.AST, levels: int, seen: set[int]) -> bool:
    scope = owner.scope
    known = scope.__dict__.setdefault(_KEY, {})
    found = known.get(id(func))
    if found is None or found[0] is not func:
        found = known[id(func)] = (func, *_names(func, scope))
    if found[1]:
        return True
    seen.add(id(func))
    if levels == 0:
        return False
    if any(_step_in(owner, helper, levels - 1, seen) for helper in found[2] if id(helper) not in seen):
        return True
    for module, attr in found[3]:
        other = owner.for_module(module)
        helper = _function(other, attr) if other is not None and other is not owner else None
        if helper is not None and id(helper) not in seen and _step_in(other, helper, levels - 1, seen):
            return True
    return False


def _function(owner, attr: str):
    """The module-level function `attr` of `owner`'s module, written there (not imported)."""
    scope = owner.scope
    if attr in scope.imports or attr in scope.assigns:
        return None
    return scope.functions.get(attr)


def _names(func: ast.AST, scope) -> tuple[bool, tuple[ast.AST, ...], tuple[tuple[str, str], ...]]:
    """(whether the body names a step word, the module-level functions of its module it calls
    by name, the (module, name) of the functions it may call from other modules)."""
    functions, imports = scope.functions, scope.imports
    called: dict[int, ast.AST] = {}
    imported: dict[tuple[str, str], None] = {}
    for node in walk(func):  # `ast.walk`'s order, tokens left out
        if isinstance(node, ast.Attribute):
            word = node.attr
            head = node.value
            if isinstance(head, ast.Name) and (full := imports.get(head.id)) is not None and _project(full):
                imported[(full, word)] = None  # `helpers.ptq(m)`
        elif isinstance(node, ast.Name):
            word = node.id
            if isinstance(node.ctx, ast.Load) and (helper := functions.get(word)) is not None and helper is not func:
                called[id(helper)] = helper
            elif isinstance(node.ctx, ast.Load) and (full := imports.get(word)) is not None and _project(full):
                module, _, attr = full.rpartition(".")
                if module:
                    imported[(module, attr)] = None  # `from pkg.helpers import ptq`
        else:
            continue
        if any(w in word for w in _WORDS):
            return True, (), ()
    return False, tuple(called.values()), tuple(imported)


def _project(full: str) -> bool:
    return full.partition(".")[0] not in LIBRARY_ROOTS


__all__ = ["names_a_step"]
