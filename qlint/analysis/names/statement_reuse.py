"""The statements of a file's last check, put back into the tree of its next check.

A keystroke in an editor changes one statement; the language server checks the whole buffer
again. The per-body answers the analyses keep on syntax-tree nodes (`node_memo.kept_on_node`:
a function's local bindings, its calls, its constant flags, ...) live as long as the node:
with a fresh parse every check, each was computed again for every unchanged function.

After the new text is parsed, every statement whose lines lie wholly outside the edited lines,
at the same position as before, is replaced by the node the last check had for it. Such a
statement's text is the same, character for character, and so are its line and column
numbers: the parser gives an equal subtree, so the old one is the same answer with its kept
facts. A statement on an edited line, or one whose lines moved (an Enter or a deleted line
above it), keeps the new parse (its positions differ; a node's facts may hold rows). The
blocks holding an edited statement are the new ones too, with their unchanged statements
reused one level down.

When the edit changed one function's body and nothing else (`confined_edit`), the check also
takes the last check's module scope, brought up to date in place (`update_scope`), and the
model flows it kept of the functions that read nothing the edit changed
(`qlint.analysis.flow.carried_flows`). The language server's index keeps this for the last few
files checked (`PreviousTrees`); a command-line run checks each file once and keeps nothing.
"""

from __future__ import annotations

import ast

from qlint.analysis.tree_walk import first_row
from qlint.value_classes import value_class

_BLOCKS = ("body", "orelse", "finalbody", "handlers")


def _key(stmt: ast.AST) -> tuple:
    return (type(stmt), stmt.lineno, stmt.col_offset, stmt.end_lineno, stmt.end_col_offset, first_row(stmt))


def _children(node: ast.AST):
    """The statement lists directly inside `node`. Except-handlers count as statements (they
    have positions); a match case has none, so only the statements of its body do."""
    for name in _BLOCKS:
        block = getattr(node, name, None)
        if block:
            yield block
    for case in getattr(node, "cases", None) or ():
        yield case.body


def _common_prefix(a: str, b: str) -> int:
    """Length of the longest common prefix (a binary search of C-speed slice compares)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        mid = (low + high + 1) // 2
        if a[low:mid] == b[low:mid]:
            low = mid
        else:
            high = mid - 1
    return low


def _common_suffix(a: str, b: str, limit: int) -> int:
    low, high = 0, limit
    while low < high:
        mid = (low + high + 1) // 2
        if a[len(a) - mid : len(a) - low] == b[len(b) - mid : len(b) - low]:
            low = mid
        else:
            high = mid - 1
    return low


def edited_lines(old: str, new: str) -> tuple[int, int, int]:
    """(first edited line, last edited line in the new text, lines added): every line before
    the first, and with no lines added or removed every line after the last, is the same
    line of text, at the same number, in both."""
    prefix = _common_prefix(old, new)
    suffix = _common_suffix(old, new, min(len(old), len(new)) - prefix)
    first = new.count("\n", 0, prefix) + 1
    last = new.count("\n", 0, len(new) - suffix) + 1
    return first, last, new.count("\n") - old.count("\n")


def graft(old_text: str, old_tree: ast.Module, new_text: str, new_tree: ast.Module) -> int:
    """Put `old_tree`'s unchanged statements into `new_tree` in place; how many were put."""
    return _graft(old_tree, new_tree, *edited_lines(old_text, new_text))


def _graft(old_tree: ast.Module, new_tree: ast.Module, first: int, last: int, added: int) -> int:
    def unchanged(stmt: ast.AST) -> bool:
        return stmt.end_lineno < first or (added == 0 and first_row(stmt) > last)

    old: dict[tuple, ast.AST] = {}
    stack = [old_tree]
    while stack:
        for block in _children(stack.pop()):
            for stmt in block:
                if unchanged(stmt):
                    old[_key(stmt)] = stmt
                else:
                    stack.append(stmt)
    put = 0
    stack = [new_tree]
    while stack:
        for block in _children(stack.pop()):
            for i, stmt in enumerate(block):
                if not unchanged(stmt):
                    stack.append(stmt)
                    continue
                before = old.get(_key(stmt))
                if before is not None:
                    block[i] = before
                    put += 1
    return put


_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


@value_class(frozen=True)
class Confined:
    """An edit inside the body of one function (`old`, now `new`) of the module or of one of
    its classes (`old_class`, now `new_class`): every other statement is the last check's, and
    so is the class's header (bases, keywords, decorators)."""

    old: ast.AST
    new: ast.AST
    old_class: ast.ClassDef | None
    new_class: ast.ClassDef | None


def _header_lines_before(node: ast.AST, line: int) -> bool:
    parts = [*getattr(node, "decorator_list", ()), *getattr(node, "bases", ()), *getattr(node, "keywords", ())]
    return node.lineno < line and all(p.end_lineno < line for p in parts)


def _body_after_header(func: ast.AST, text_lines: list[str]) -> bool:
    """The first statement of the body starts a line of its own (not `def f(): return 1`)."""
    first = func.body[0]
    if first.lineno <= func.lineno or first.lineno > len(text_lines):
        return False
    return not text_lines[first.lineno - 1].encode("utf-8")[: first.col_offset].strip()


def confined_edit(old_text: str, old_tree: ast.Module, new_tree: ast.Module, first: int, added: int) -> Confined | None:
    """The function whose body alone the edit changed, once `new_tree` has the last check's
    statements (`_graft`); None for any other edit (a header, a module or class statement,
    lines added or removed, a nested function, blocks that moved)."""
    if added or len(old_tree.body) != len(new_tree.body):
        return None
    changed = [(o, n) for o, n in zip(old_tree.body, new_tree.body, strict=True) if o is not n]
    if len(changed) != 1:
        return None
    old, new = changed[0]
    old_class = new_class = None
    if isinstance(old, ast.ClassDef) and isinstance(new, ast.ClassDef):
        if len(old.body) != len(new.body) or old.name != new.name or not _header_lines_before(old, first):
            return None
        inner = [(o, n) for o, n in zip(old.body, new.body, strict=True) if o is not n]
        if len(inner) != 1:
            return None
        old_class, new_class = old, new
        old, new = inner[0]
    if not isinstance(old, _FUNCTIONS) or type(new) is not type(old):
        return None
    if (old.name, old.lineno, old.col_offset) != (new.name, new.lineno, new.col_offset):
        return None
    if old.body[0].lineno > first or not _body_after_header(old, old_text.splitlines()):
        return None
    if new_class is not None:
        # The header's lines are the last check's: its expressions are the same trees.
        new_class.bases, new_class.keywords = old_class.bases, old_class.keywords
        new_class.decorator_list = old_class.decorator_list
    return Confined(old, new, old_class, new_class)


def _top_functions(tree: ast.Module) -> set[int]:
    """ids of the functions of the module and the methods of its classes (not nested ones)."""
    found = set()
    for stmt in tree.body:
        if isinstance(stmt, _FUNCTIONS):
            found.add(id(stmt))
        elif isinstance(stmt, ast.ClassDef):
            found.update(id(s) for s in stmt.body if isinstance(s, _FUNCTIONS))
    return found


class Carry:
    """What flows the last check kept (`last`, by the function's id) and this one keeps (`next`),
    for the module's functions and its classes' methods (`top`): `carried_flows` decides. A
    flow that read the function or the class the edit changed is not carried (`changed`).
    Other analyses keep theirs by name (`last_of`, `next_of`: `calibration_carry`)."""

    def __init__(self, last: dict, top: set[int], confined: Confined | None = None, others: dict | None = None):
        self.last = last
        self.next: dict = {}
        self.top = top
        self._changed = (confined.old, confined.old_class) if confined is not None else ()
        self._others_last = others or {}
        self.others_next: dict[str, dict] = {}

    def changed(self, body) -> bool:
        return any(body is c for c in self._changed)

    def changed_bodies(self) -> tuple:
        """The function (and its class) whose body the edit changed, as the last check had them."""
        return self._changed

    def last_of(self, name: str) -> dict:
        """What the analysis `name` kept at the last check (empty unless the edit was confined)."""
        return self._others_last.get(name, {})

    def next_of(self, name: str) -> dict:
        """Where the analysis `name` keeps what the next check may take."""
        return self.others_next.setdefault(name, {})


class _Last:
    __slots__ = ("carried", "others", "scope", "text", "tree")

    def __init__(self, text: str, tree: ast.Module, scope, carried: dict, others: dict):
        self.text, self.tree, self.scope, self.carried = text, tree, scope, carried
        self.others = others


class _Now:
    __slots__ = ("base", "carry", "confined", "last", "tree")

    def __init__(self, tree: ast.Module, confined: Confined | None, last: _Last | None, carry: Carry, base=None):
        self.tree, self.confined, self.last, self.carry = tree, confined, last, carry
        self.base = base  # the last check's tree, when there was one


class PreviousTrees:
    """The last checked text, tree, module scope and kept flows of the few files an editor
    has open, and what the check under way of each may take from them."""

    def __init__(self, limit: int = 4):
        self.limit = limit
        self._trees: dict[str, _Last] = {}
        self._now: dict[str, _Now] = {}
        # (path, old text, new text, `edited_lines` of them): `parse_edit` and `reuse` ask both.
        self._lines: tuple | None = None

    def parse_edit(self, path: str, text: str) -> ast.Module | None:
        """The tree of `text` from the last check's of `path` and a parse of the one function
        the edit lies in (`edit_parse`), or None: the caller parses the whole text."""
        last = self._trees.get(path)
        if last is None:
            return None
        edited = self._edited_lines(path, last.text, text)
        from qlint.analysis.names.edit_parse import parse_edited

        return parse_edited(last.tree, text, *edited)

    def _edited_lines(self, path: str, old: str, new: str) -> tuple[int, int, int]:
        known = self._lines
        if known is not None and known[0] == path and known[1] is old and known[2] is new:
            return known[3]
        found = edited_lines(old, new)
        self._lines = (path, old, new, found)
        return found

    def reuse(self, path: str, text: str, tree: ast.Module) -> int:
        """Graft the last check's unchanged statements of `path` into `tree` (see above), and
        tell what else this check of it may take from the last one."""
        last = self._trees.get(path)
        put, confined = 0, None
        if last is not None and last.tree is not tree:
            first, end, added = self._edited_lines(path, last.text, text)
            put = _graft(last.tree, tree, first, end, added)
            confined = confined_edit(last.text, last.tree, tree, first, added)
        taken = last if confined is not None and last.scope is not None else None
        carry = Carry(taken.carried if taken else {}, _top_functions(tree), confined, taken.others if taken else None)
        self._now[path] = _Now(tree, confined, taken, carry, last.tree if last is not None else None)
        return put

    def edit_of(self, path: str, tree: ast.Module) -> tuple[ast.Module, Confined | None] | None:
        """(the tree of the last check of `path`, the edit confined to one function's body
        that made `tree` of it, or None for any other edit), for the check of `tree` under way."""
        now = self._now.get(path)
        if now is None or now.tree is not tree or now.base is None:
            return None
        return now.base, now.confined

    def scope_for(self, path: str, tree: ast.Module):
        """The last check's module scope, brought up to this tree, when only one function's
        body changed (its content is then what a new scope of this tree would hold); else None."""
        now = self._now.get(path)
        if now is None or now.tree is not tree or now.last is None:
            return None
        return update_scope(now.last.scope, now.confined)

    def carry(self, path: str, tree: ast.Module) -> Carry | None:
        now = self._now.get(path)
        return now.carry if now is not None and now.tree is tree else None

    def keep(self, path: str, text: str, tree: ast.Module, scope=None) -> None:
        self._lines = None
        now = self._now.pop(path, None)
        mine = now is not None and now.tree is tree
        carried, others = (now.carry.next, now.carry.others_next) if mine else ({}, {})
        self._trees.pop(path, None)
        self._trees[path] = _Last(text, tree, scope, carried, others)
        while len(self._trees) > self.limit:
            del self._trees[next(iter(self._trees))]

    def drop(self, path: str) -> None:
        self._lines = None
        self._trees.pop(path, None)
        self._now.pop(path, None)


# The fields a `ModuleScope` is built with; anything else on it was kept there by a check.
_SCOPE_FIELDS = frozenset(
    {"module", "path", "imports", "assigns", "functions", "classes", "imported_modules", "import_fallbacks"}
)


def update_scope(scope, confined: Confined):
    """`scope` with the changed function and its class in place of the old ones: equal to a
    scope built from the new tree, and the same objects the kept flows refer to."""
    for name, func in list(dict.items(scope.functions)):
        if func is confined.old:
            dict.__setitem__(scope.functions, name, confined.new)
    if confined.old_class is not None:
        for cls in dict.values(scope.classes):
            if cls.key_node() is confined.old_class:
                cls.node = confined.new_class
                cls.bases = list(confined.new_class.bases)
                for name, method in list(dict.items(cls.methods)):
                    if method is confined.old:
                        dict.__setitem__(cls.methods, name, confined.new)
    for key in [k for k in scope.__dict__ if k not in _SCOPE_FIELDS]:
        del scope.__dict__[key]  # what the last check kept on it (star imports' sources, ...)
    return scope
