"""How the caller search (`project_callers`) finds a helper in the project's other modules:
what its references resolve to and which kind of helper it is (`searched_as`: a module-level
function, a method of a top-level class, or that class's `__init__`, whose callers spell the
class), the names it is spelled under (`more_words`: its own, then those modules re-export it
as), and its uses in one module read under one of them (`uses_in`), each kind by its own
reader (`function_references`, `method_references`, `construction_references`).
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.flow.function_references import function_uses
from qlint.analysis.flow.method_references import method_uses, owner_class
from qlint.analysis.flow.project_search import import_renames
from qlint.analysis.names.references import References

MAX_WORDS = 4  # the helper's name and the names it is re-exported under, searched in turn

METHOD = "method"
# Beside a method's name in `subclassed_methods`' answers: a subclass that takes it as a value
# (`subclass_self_calls.taken_as_value`), not any module subclassing its class (`used_elsewhere`'s answer).
TAKEN = "@taken-as-value"
INIT = "init"  # `__init__`: its callers are the constructions of its class


def searched_as(ctx: FileContext, func: ast.AST) -> tuple[str, str, str] | None:
    """(what its references resolve to, "" / `METHOD` / `INIT`, its class's name) for a
    module-level function or a method of a top-level class; None for anything else."""
    if ctx.scope.functions.get(func.name) is func:
        return f"{ctx.module}.{func.name}", "", ""
    # A method of a top-level class is found by its name as an attribute
    # (`method_references`), its `__init__` by its class's name (`construction_references`).
    owner = owner_class(ctx, func)
    if owner is None:
        return None
    name = owner.node.name
    if func.name == "__init__":
        return f"{ctx.module}.{name}", INIT, name
    return f"{ctx.module}.{name}.{func.name}", METHOD, name


def more_words(ctx: FileContext, path: str, word: str, words: list[str], method: str) -> bool:
    """Add to `words` the names the module at `path` re-exports the helper under; False when
    that makes too many to search."""
    for renamed in import_renames(ctx, path, word) if not method else ():
        if renamed not in words:
            if len(words) > MAX_WORDS:
                return False
            words.append(renamed)
    return True


def uses_in(module: tuple, target: str, func: ast.AST, helper_path: str, refs: References, word: str, method: str = ""):
    """`function_uses`, once per parsed module, helper and name it is spelled under (for a method,
    `method_references.method_uses`: `target` is then `module.Class.method`)."""
    other, _, _, memo = module
    asked = (target, func.name, helper_path, word, method)
    if asked not in memo:
        if method == INIT:
            from qlint.analysis.flow.construction_references import construction_uses

            memo[asked] = construction_uses(other, target, word, refs.rows(refs.names_for(word)))
        elif method:
            memo[asked] = method_uses(other, target.rpartition(".")[0], word, refs.rows(refs.names_for(word)))
        else:
            memo[asked] = function_uses(other, target, func, helper_path, refs, word)
    return memo[asked]


__all__ = ["INIT", "MAX_WORDS", "METHOD", "TAKEN", "more_words", "searched_as", "uses_in"]
