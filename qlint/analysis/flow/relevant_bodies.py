"""Which bodies of a module the model flow reads: those whose text mentions a capture or
quantization API, or calls (up to two steps) one that does.

Picking them walks every statement list of the module and searches its text a few times
(ao's 4,300-line `test_quantize_pt2e.py`: about a third of QL201's time in an editor's
check). An editor re-checks after each keystroke, and a keystroke mostly changes one
function's body and no line count (`statement_reuse.confined_edit`): then the last check's
choice is carried (`Carry.last_of`), and only the edited function and the module body,
whose text holds the edit, are looked at again. The choice is the same as a new one when:

- the edited function, before and after, defines no function or class inside it (those are
  bodies of their own, with names that can be words of later rounds);
- the edited function lands in the round it was chosen in (or is still not chosen), read
  against the words of the last check: every other body's text and name are what they were,
  so every round then adds the same bodies and makes the same words (the module body adds
  no word: where it lands is worked out again, and it only moves itself);
- the text differs from the last check's within the edited function's rows only.
The class scopes of the bodies chosen are taken as `functions_of` takes them: the module's
own (`statement_reuse.update_scope` keeps them the same objects across a confined edit), or
built again for a class written in a function.
Anything else is chosen again from the whole module.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.mentions import holding, mentions, word_rows
from qlint.analysis.names.scope import ClassScope, ModuleScope
from qlint.analysis.statement_walk import statement_lists

# A function is analysed only if its text mentions one of these (or a helper that does).
KEYWORDS = (
    "export",
    "prepare_pt2e",
    "prepare_qat_pt2e",
    "convert_pt2e",
    "capture_pre_autograd_graph",
    "QuantizationRecipe",
    "ExportSession",
)
_ROUNDS = 3  # helpers of helpers
_CARRY = "model_flow.relevant"


class _Choice:
    """One check's choice: the bodies chosen with the round each came in, and the words each
    round after the first looked for (`words[r - 1]` for round r)."""

    __slots__ = ("entries", "order", "starts", "text", "words")

    def __init__(self, entries: list[tuple[ast.AST, ClassScope | None, int]], words: list[list[str]], ctx, order):
        self.entries = entries
        self.words = words
        self.order = order  # every body, in `functions_of`'s order
        self.text, self.starts = ctx.text, ctx.lines.starts  # what the next check compares its text with


def relevant(ctx) -> list[tuple[ast.AST, ClassScope | None]]:
    """(body, its class scope) of the bodies the model flow reads, in the order of
    `functions` within each round (once per check)."""
    found = ctx.cache.get(_CARRY)
    if found is None:
        carry = _carry(ctx)
        choice = _carried(ctx, carry) if carry is not None else None
        if choice is None:
            choice = _choose(ctx)
        if carry is not None:
            carry.next_of(_CARRY)["choice"] = choice
        found = ctx.cache[_CARRY] = [(f, cls) for f, cls, _ in choice.entries]
    return found


def _carry(ctx):
    previous = getattr(ctx.project, "previous_trees", None)
    return previous.carry(os.path.abspath(ctx.path), ctx.tree) if previous is not None else None


def _choose(ctx) -> _Choice:
    """The choice read from the whole module."""
    functions = module_functions(ctx)
    rows = word_rows(ctx.words, ctx.word_lines.starts, KEYWORDS)
    segments: list[tuple] = []
    words: list[str] = []
    chosen: dict[int, tuple] = {}
    used: list[list[str]] = []
    for round_ in range(_ROUNDS):
        # A body not chosen yet lacks every earlier word: only the newest can add it.
        if round_ == 0:
            added = [(f, cls, None) for f, cls in functions if mentions(f, rows)]
            segments = [(f, cls, segment(ctx, f)) for f, cls in functions if not mentions(f, rows)]
        else:
            used.append(words)
            segments = [(f, cls, seg) for f, cls, seg in segments if id(f) not in chosen]
            held = holding([seg for _, _, seg in segments], words)
            added = [entry for entry, hit in zip(segments, held, strict=True) if hit]
        if not added:
            break
        for f, cls, _ in added:
            chosen[id(f)] = (f, cls, round_)
        words = _words(added)
    return _Choice(list(chosen.values()), used, ctx, [f for f, _ in functions])


def _words(added) -> list[str]:
    """What calls one of the bodies just chosen, or hands it on."""
    new = [f"{f.name}(" for f, _, _ in added if not isinstance(f, ast.Module)]
    # A function handed to a relay helper (`relay(model, capture)`) is called there.
    functions = [f.name for f, cls, _ in added if cls is None and not isinstance(f, ast.Module)]
    new += [f"{name}{end}" for name in functions for end in ",)"]
    # A method handed over bound (`relay(model, self.capture)`, `run(m, runner.capture)`).
    methods = [f.name for f, cls, _ in added if cls is not None]
    new += [f".{name}{end}" for name in methods for end in ",)"]
    # A class's instantiations tell what its `__init__` stores.
    new += [f"{cls.node.name}(" for _, cls, _ in added if cls is not None]
    return list(dict.fromkeys(new))


def _round(text: str, words: list[list[str]]) -> int | None:
    """The round a body of this text comes in, against the last check's words (None: never)."""
    if any(k in text for k in KEYWORDS):
        return 0
    for round_, these in enumerate(words, 1):
        if not these:
            break
        if holding([text], these)[0]:
            return round_
    return None


def _carried(ctx, carry) -> _Choice | None:
    """The last check's choice, if this check's would be the same (see the module's notes)."""
    last = carry.last_of(_CARRY).get("choice")
    changed = carry.changed_bodies()
    if last is None or not changed:
        return None
    old, old_class = changed
    new, holder = _edited(ctx.tree, old, old_class)
    if new is None or not _only_in(ctx, last, old, new):
        return None
    # The bodies written in the edited function, before and after, in `functions_of`'s order.
    region_old = [f for f, _ in _functions_in(old.body)]
    region_new = list(_functions_in(new.body))
    position = {id(f): i for i, f in enumerate(last.order)}
    at = position.get(id(region_old[0])) if region_old else None
    if region_old and [position.get(id(f)) for f in region_old] != list(range(at, at + len(region_old))):
        return None
    if at is None and region_new:
        return None  # where the new ones stand in the order is not known
    inner = {id(f) for f in region_old}
    entries: list[tuple[ast.AST, ClassScope | None, int, int]] = []  # with their place in the order
    scopes: dict[int, ClassScope] = {}
    classes = ctx.scope.classes
    shift = len(region_new) - len(region_old)
    for f, cls, r in last.entries:
        if isinstance(f, ast.Module) or id(f) in inner:
            continue
        if cls is not None:
            node = cls.node
            if node is old_class:
                return None  # a class of a name written twice: its scope is built from the new node
            if id(node) not in scopes:
                # As `functions_of` finds it: the module's, or built again (a class in a function).
                known = dict.get(classes, node.name)
                scopes[id(node)] = known if known is not None and known.node is node else ClassScope.build(node)
            cls = scopes[id(node)]
        place = position[id(f)]
        if f is old:
            r = _round(segment(ctx, new), last.words)
            if r is None:
                continue
            f = new
        entries.append((f, cls, r, place + shift if at is not None and place >= at else place))
    if not any(f is new for f, _, _, _ in entries):
        r = _round(segment(ctx, new), last.words)
        if r is not None:
            entries.append((new, _class_of(ctx.scope, holder), r, position[id(old)]))
    for offset, (f, cls) in enumerate(region_new):
        r = _round(segment(ctx, f), last.words)
        if r is not None:
            entries.append((f, cls, r, at + offset))
    module = _round(ctx.words, last.words)
    if module is not None:
        entries.append((ctx.tree, None, module, 0))
    entries.sort(key=lambda e: (e[2], e[3]))
    if _used([(f, cls, r) for f, cls, r, _ in entries]) != [set(w) for w in last.words]:
        return None  # the edit changed the words a round looks for: choose again
    order = list(last.order)
    order[position[id(old)]] = new
    if region_old or region_new:
        order[at : at + len(region_old)] = [f for f, _ in region_new]
    order[0] = ctx.tree
    return _Choice([(f, cls, r) for f, cls, r, _ in entries], last.words, ctx, order)


def _used(entries) -> list[set[str]]:
    """The words each round after the first looks for, as the bodies of `entries` (with their
    rounds) make them: up to the first round that adds nothing, as `_choose` runs them."""
    used = []
    for round_ in range(1, _ROUNDS):
        added = [(f, cls, None) for f, cls, r in entries if r == round_ - 1]
        if not added:
            break
        used.append(set(_words(added)))
    return used


def _class_of(scope: ModuleScope, holder: ast.ClassDef | None) -> ClassScope | None:
    """The class scope `functions_of` gives the edited function (None: a module function)."""
    if holder is None:
        return None
    known = dict.get(scope.classes, holder.name)
    return known if known is not None and known.node is holder else ClassScope.build(holder)


def _only_in(ctx, last: _Choice, old: ast.AST, new: ast.AST) -> bool:
    """The text differs from the last check's within the edited function's rows only (a
    comment typed in another body in the same edit changes what that body's text holds)."""
    text, before = ctx.text, last.text
    start = ctx.lines.starts[new.lineno - 1]
    if start != last.starts[old.lineno - 1] or text[:start] != before[:start]:
        return False
    return text[_end(ctx.lines.starts, text, new) :] == before[_end(last.starts, before, old) :]


def _end(starts: list[int], text: str, node: ast.AST) -> int:
    return starts[node.end_lineno] if node.end_lineno < len(starts) else len(text)


def _edited(tree: ast.Module, old: ast.AST, old_class: ast.ClassDef | None) -> tuple:
    """The function of `tree` in the place of `old` (`confined_edit` keeps its name and place),
    and the class it is a method of (None: a module function)."""
    stmts, holder = tree.body, None
    if old_class is not None:
        holder = next((s for s in stmts if isinstance(s, ast.ClassDef) and s.lineno == old_class.lineno), None)
        if holder is None:
            return None, None
        stmts = holder.body
    for stmt in stmts:
        if (
            isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
            and (stmt.name, stmt.lineno, stmt.col_offset) == (old.name, old.lineno, old.col_offset)
            and stmt is not old
        ):
            return stmt, holder
    return None, None


def functions_of(tree: ast.Module, scope: ModuleScope):
    """(function, its class scope) for the module body and every function and method."""
    yield tree, None
    yield from _functions_in(tree.body, scope)


def module_functions(ctx) -> list[tuple[ast.AST, ClassScope | None]]:
    """`functions_of` the checked module, walked once per check: the choice of bodies, the
    mode switchers, the graph fields and the graph returns each asked for the whole list, and
    walked every statement list of the module for it (torch's 11,000-line distributed_test.py:
    three walks of ~530 bodies, each building the class scopes of the classes written in
    functions again). The same bodies in the same order; a class written in a function has one
    scope for all of them, built from the same node."""
    found = ctx.cache.get(_FUNCTIONS)
    if found is None:
        found = ctx.cache[_FUNCTIONS] = list(functions_of(ctx.tree, ctx.scope))
    return found


_FUNCTIONS = "relevant_bodies.functions"


def _functions_in(body: list[ast.stmt], scope: ModuleScope | None = None):
    """(function, its class scope) of the functions written in `body`, at any depth; `scope`:
    the module's, whose class scopes stand for the class statements of its own body.

    Functions and classes are statements, so only statement lists are walked.
    """
    stack: list[tuple[list[ast.stmt], ClassScope | None, bool]] = [(body, None, scope is not None)]
    while stack:
        stmts, cls, top = stack.pop()
        for node in stmts:
            if isinstance(node, ast.ClassDef):
                known = scope.classes.get(node.name) if top else None
                cls_scope = known if known is not None and known.node is node else ClassScope.build(node)
                stack.append((node.body, cls_scope, False))
            elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                yield node, cls
                stack.append((node.body, None, False))
            else:
                for block in statement_lists(node):
                    stack.append((block, cls, top))


def segment(ctx, node: ast.AST) -> str:
    """The source lines of a function (the whole text for the module body), as Python reads
    their names (`FileContext.words`, NFKC: `gm.eval()` with a fullwidth `e` calls `eval`, and
    the flows' searches must find it where the tree has it). A string keeps its characters in
    the tree: the searches only pick what the tree is then read for (`getattr(gm, "eval")` so
    spelled switches nothing)."""
    if isinstance(node, ast.Module):
        return ctx.words
    start, end = text_span(ctx, node)
    return ctx.words[start:end]


def text_span(ctx, node: ast.AST) -> tuple[int, int]:
    """Where `segment` of `node` starts and ends in the module's text as Python reads names
    (`FileContext.words`: the raw text's rows, row for row)."""
    if isinstance(node, ast.Module):
        return 0, len(ctx.words)
    starts = ctx.word_lines.starts
    return starts[node.lineno - 1], _end(starts, ctx.words, node)


__all__ = ["KEYWORDS", "functions_of", "module_functions", "relevant", "segment", "text_span"]
