"""Whether a private method that methods of its class call after storing an attribute
(`init_calls`) can be reached any other way.

The model flow reads the method's `self.<attr>` as its one caller left it only when nothing
else in the class, or in the module's classes and functions, names the method. The caller
verdict that lets such a fact vouch for a helper's capture also asks the rest of the
project, strictly:

- the module holding the class names the method only in its calls from the class's storing
  methods (`init_calls.called_times`), statements at the module's top level included
  (`STEP._quantize()` under `if __name__ == "__main__":`);
- no other module of the project loads the name (`project_search.named_elsewhere`; unknown,
  as when too many modules hold it, counts as reached), nor does the checked module;
- neither module could form the name for a dynamic lookup: a string equal to it, an f-string,
  a `+`, a `%` template, a `str.format` template or a `str.join` separator whose literal parts
  are all pieces of the name (`f"_{step}"`, `"_quant" + kind`, `"_%s" % kind`), or a lookup
  by a name that is no literal (`getattr(self, what)`, `attrgetter`, `methodcaller`,
  `__getattribute__`) or of every member (`vars`, `dir`, `__dict__`, `getmembers`).

A lookup in a third module by a name formed from strings that module does not hold (read
from a configuration file, say) is not seen: the search reads modules naming the method.
"""

from __future__ import annotations

import ast
import re

from qlint.analysis.context import FileContext
from qlint.analysis.flow.init_calls import called_times
from qlint.analysis.flow.project_search import named_elsewhere
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk_kinds

# Lookups by a name given as their argument (`getattr(obj, name)`), the position of the name.
_LOOKUPS = {"getattr": 1, "hasattr": 1, "attrgetter": 0, "methodcaller": 0, "__getattribute__": 0}
# The directives of a `%` template and of a `str.format` template (patterns compiled when
# first split with, by `re`'s own cache: most checks never build the uses of a module).
_PERCENT = r"%(?:\([^)]*\))?[-#0 +]*(?:\*|\d+)?(?:\.(?:\*|\d+))?[a-zA-Z%]"
_BRACES = r"\{[^{}]*\}"
# Lookups of every member at once.
_ALL_MEMBERS = frozenset({"vars", "dir", "getmembers"})
_CLASSES = frozenset({ast.ClassDef})


def reached_elsewhere(ctx: FileContext, home: FileContext, method: ast.AST) -> bool:
    """`method` (a method of a class of module `home`) may run from somewhere other than its
    one call in its class, as far as the project shows (see the module's docstring)."""
    name = getattr(method, "name", None)
    cls = _class_of(home.tree, method)
    if not name or cls is None:
        return True
    if _reaches(home.tree, name, called_times(cls, name)):
        return True
    if ctx is not home and _reaches(ctx.tree, name, 0):
        return True
    return named_elsewhere(ctx, name, home.path) is not False


def _class_of(tree: ast.Module, method: ast.AST) -> ast.ClassDef | None:
    """The class of `tree` whose body holds `method`."""
    return next((c for c in walk_kinds(tree, _CLASSES) if any(s is method for s in c.body)), None)


def _reaches(tree: ast.Module, name: str, allowed: int) -> bool:
    """`tree` names `name` more than `allowed` times, or could form it for a lookup."""
    uses = kept_on_node(tree, "_qlint_name_uses", _name_uses)
    if uses.dynamic:
        return True
    if uses.names.get(name, 0) > allowed or name in uses.literals:
        return True
    return any(all(p in name for p in pieces) for pieces in uses.strings)


class _Uses:
    """What a module's code holds that could reach a method: each name loaded (as an
    attribute or a bare name) and how often, the literal parts of each string it writes
    builds (`strings`; a string written whole is in `literals`), and whether it looks names up
    dynamically."""

    __slots__ = ("dynamic", "literals", "names", "strings")

    def __init__(self) -> None:
        self.names: dict[str, int] = {}
        self.strings: list[tuple[str, ...]] = []
        self.literals: set[str] = set()
        self.dynamic = False


def _name_uses(tree: ast.Module) -> _Uses:
    uses = _Uses()
    docstrings = {id(s.value) for s in _docstring_statements(tree)}
    built: set[int] = set()  # string constants read as parts of a built string
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            uses.names[node.attr] = uses.names.get(node.attr, 0) + 1
            if node.attr == "__dict__":
                uses.dynamic = True
        elif isinstance(node, ast.Name):
            uses.names[node.id] = uses.names.get(node.id, 0) + 1
        elif isinstance(node, ast.JoinedStr):
            parts = [v for v in node.values if isinstance(v, ast.Constant)]
            built.update(id(v) for v in parts)
            uses.strings.append(tuple(str(v.value) for v in parts))
        elif isinstance(node, ast.BinOp) and isinstance(node.op, (ast.Add, ast.Mod)):
            parts = [v for v in (node.left, node.right) if isinstance(v, ast.Constant) and isinstance(v.value, str)]
            if parts:
                built.update(id(v) for v in parts)
                pattern = _PERCENT if isinstance(node.op, ast.Mod) else None
                uses.strings.append(tuple(p for v in parts for p in _pieces(v.value, pattern)))
        elif isinstance(node, ast.Call):
            uses.dynamic = uses.dynamic or _dynamic_lookup(node)
            func = node.func
            text = func.value if isinstance(func, ast.Attribute) else None
            if isinstance(text, ast.Constant) and isinstance(text.value, str) and func.attr in ("format", "join"):
                built.add(id(text))  # `"_{}".format(kind)`, `"_".join(parts)`
                uses.strings.append(_pieces(text.value, _BRACES if func.attr == "format" else None))
    for node in ast.walk(tree):
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and id(node) not in docstrings | built:
            uses.literals.add(node.value)
    return uses


def _pieces(text: str, pattern: str | None) -> tuple[str, ...]:
    """The literal parts of a template (`"_%s_q"` -> `("_", "_q")`), or the text itself."""
    return tuple(re.split(pattern, text)) if pattern is not None else (text,)


def _dynamic_lookup(call: ast.Call) -> bool:
    func = call.func
    word = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else None
    if word in _ALL_MEMBERS:
        return True
    at = _LOOKUPS.get(word)
    if at is None:
        return False
    args = call.args
    if len(args) <= at:
        return any(k.arg is None for k in call.keywords) or bool(call.keywords)
    arg = args[at]
    return isinstance(arg, ast.Starred) or not (isinstance(arg, ast.Constant) and isinstance(arg.value, str))


def _docstring_statements(tree: ast.Module):
    """The first statement of the module and of each function and class, when a string."""
    for node in ast.walk(tree):
        if isinstance(node, (ast.Module, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.body:
            first = node.body[0]
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                yield first


__all__ = ["reached_elsewhere"]
