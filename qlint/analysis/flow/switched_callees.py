"""Which callees' results a file switches, read from its text (QL203's import trigger,
`graph_returns.returning_calls`, looks up only the imported ones): the names a switch is
called on, what each is bound to (`gm = capture(...)`, `g, _ = capture(...)`,
`gm = Exporter(x).export(...)`), the calls switched in place or through an item
(`capture(m).eval()`, `out["model"].train()`), and the calls handed what is switched
(`attach(m, q)` before `m.train()`, also through a function of the file switching what it is
handed). String searches, not a parse: the trigger asks them of every file that switches a mode.
"""

from __future__ import annotations

import functools
import re

from qlint.lazy_patterns import lazy

SWITCHES = (".eval()", ".train(")
# The arguments of a call up to its end or its first bracket or line break.
_ARGUMENTS = lazy(r"[^()\[\]{}\n]*")
_ASSIGNED = lazy(r"[ \t]*=[ \t]*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)\(")
# A method called on an instance made with no bracket or line break among the construction's
# arguments (as `_on_instance` asks), read where `_ASSIGNED`'s callee starts.
_MADE = lazy(r"([A-Z]\w*\([^()\[\]{}\n]*\)\.[A-Za-z_]\w*)\(")
# A name of a tuple target (`name, info = f(`, `(info, name) = f(`): what its line holds before
# the name, and after the `,` or `)` that follows it. Compiled once: a pattern compiled per
# name costs ~0.3 ms of `sre_compile` each, and a module switches a handful of names.
_TUPLE_HEAD = lazy(r"[ \t(]*(?:[A-Za-z_*][\w.]*[ \t]*,[ \t]*)*")
# Every name after the first follows a comma: with the comma optional, a line like `g, abc + 1`
# can split `abc` into names in exponentially many ways before the match fails.
_TUPLE_REST = lazy(
    r"[ \t]*(?:[A-Za-z_*][\w.]*(?:[ \t]*,[ \t]*[A-Za-z_*][\w.]*)*[ \t]*(?:,[ \t]*)?)?(?:\)[ \t]*)?"
    r"=[ \t]*([A-Za-z_]\w*(?:\.[A-Za-z_]\w*)?)\("
)


def switched_receivers(text: str) -> tuple[dict[str, int], set[str]]:
    """(the dotted names switched in `text`, each with where its last switch is: `gm` of
    `gm.eval()`, `self.gm` of `self.gm.train(False)`; the callees switched in place: `capture`
    of `capture(model, x).eval()`). String searches: a regex over a whole module costs ~40 ms
    on ao's largest test file."""
    receivers: dict[str, int] = {}
    in_place: set[str] = set()
    for needle in SWITCHES:
        at = text.find(needle)
        while at != -1:
            name = _dotted_before(text, at)
            if name:
                receivers[name] = max(receivers.get(name, at), at)
            elif text[at - 1 : at] == ")":
                opened = text.rfind("(", 0, at - 1)  # `f(model, x).eval()`: no nested call
                callee = _dotted_before(text, opened) if opened != -1 else ""
                if callee and ")" not in text[opened + 1 : at - 1]:
                    in_place.add(callee)
            at = text.find(needle, at + 1)
    return receivers, in_place


def switched_results(text: str) -> set[str]:
    """The callees (`capture`, `helpers.prepare`) whose result the text switches: bound to a
    name that is then switched (`gm = capture(...)` ... `gm.eval()`), or switched in place
    (`capture(model, x).eval()`), also through an item (`out["model"].train()`,
    `capture(m)[0].eval()`); and those handed the name whose value, or an attribute of it, is
    switched (`attach(m, q)` ... `m.core.train()`). Only their
    imports are looked up: a module's every imported call would cost a lookup (and a parse)
    per imported module."""
    receivers, out = switched_receivers(text)
    _switched_items(text, receivers, out)
    # A root is handed to the calls before its last switch (`attach(m, q)`, then `m.train()`).
    until: dict[str, int] = {}
    for name, at in receivers.items():
        out.update(bound_to(text, name))
        out.update(bound_to(text, name, made=True))  # `gm = Exporter(x).export(`
        root = name.partition(".")[0]
        until[root] = max(until.get(root, at), at)
    pending: dict[str, int | None] = {r: at for r, at in until.items() if r not in ("self", "cls")}
    scanned: dict[str, int | None] = {}
    for _ in range(3):  # helpers of helpers
        handed: set[str] = set()
        for root, limit in pending.items():
            defs: set[str] = set()
            found = _handed_to(text, root, limit, defs)
            out |= found
            # A function of this module switching its parameter (`def to_eval(h): h.gm.eval()`):
            # what its calls hand it is switched too (`keep(h, m)`, then `to_eval(h)`), as is a
            # name bound to a call (`g = capture(m)`, then `to_eval(g)`).
            for name in defs:
                handed |= _arguments(text, name)
        scanned.update(pending)
        # Read to the end: where the helper's calls are is not known here.
        pending = {n: None for n in handed if scanned.get(n, 0) is not None}
        if not pending:
            break
        for name in pending:
            out.update(bound_to(text, name))
    # snake_case by convention: a class's construction is an eager module.
    return {c for c in out if c.rpartition(".")[2][:1].islower()}


def _arguments(text: str, callee: str) -> set[str]:
    """The plain names handed as positional arguments of their own to the calls of `callee`,
    before any call, bracket or line break among the arguments (`h` of `to_eval(h)` and of
    `keep(h, nn.Linear(3, 3))`), its `def` aside."""
    out: set[str] = set()
    needle = f"{callee}("
    at = text.find(needle)
    while at != -1:
        start = at + len(needle)
        before = text[at - 1] if at else " "
        if not (before.isalnum() or before in "_.") and text[max(at - 4, 0) : at] != "def ":
            m = _ARGUMENTS.match(text, start)
            parts = m.group(0).split(",")
            if m.end() < len(text) and text[m.end()] != ")":
                parts.pop()  # a callee or a container's first item, not an argument of its own
            out.update(a for a in (p.strip() for p in parts) if a.isidentifier())
        at = text.find(needle, start)
    return out - {"self", "cls"}


def _switched_items(text: str, receivers: dict[str, int], in_place: set[str]) -> None:
    """Add the containers of switched items (`out` of `out["model"].train()`) to `receivers`,
    and the callees switched through an item of their result (`capture(m)[0].eval()`) to
    `in_place`."""
    for needle in SWITCHES:
        at = text.find("]" + needle)
        while at != -1:
            opened = _opening(text, at)
            if opened > 0:
                name = _dotted_before(text, opened)
                if name:
                    receivers[name] = max(receivers.get(name, at), at)
                elif text[opened - 1] == ")":
                    start = text.rfind("(", 0, opened - 1)
                    callee = _dotted_before(text, start) if start != -1 else ""
                    if callee and ")" not in text[start + 1 : opened - 1]:
                        in_place.add(callee)
            at = text.find("]" + needle, at + 1)


def _opening(text: str, close: int) -> int:
    """The `[` that the `]` at `close` closes, on the same line; -1 when there is none."""
    depth = 0
    for at in range(close, max(text.rfind("\n", 0, close), -1), -1):
        char = text[at]
        if char == "]":
            depth += 1
        elif char == "[":
            depth -= 1
            if depth == 0:
                return at
    return -1


def _handed_to(text: str, root: str, until: int | None = None, defs: set[str] | None = None) -> set[str]:
    """The callees of the calls handed `root` as a positional argument of its own, with no
    call before it among the arguments (`attach(m, q)`, `helpers.attach(q, m)`), and of those
    whose result a tuple target binds it to (`root, info = f(`); before `until` if given. The
    functions that take a parameter of that name (`def to_eval(root):`) are added to `defs`."""
    out = set()
    for m in _handed(root).finditer(text, 0, len(text) if until is None else until):
        at = m.start()
        if at and (text[at - 1].isalnum() or text[at - 1] in "_."):
            continue
        line = text.rfind("\n", 0, at) + 1
        if _TUPLE_HEAD.fullmatch(text, line, at) and (bound := _TUPLE_REST.match(text, m.end())):
            out.add(bound.group(1))
            continue
        opened = text.rfind("(", 0, at)
        if opened == -1 or ")" in text[opened:at] or "\n\n" in text[opened:at]:
            continue
        callee = _dotted_before(text, opened)
        if callee:
            start = opened - len(callee)
            if defs is not None and text[start - 4 : start] == "def ":
                defs.add(callee)
            out.add(_on_instance(text, start, callee))
    return out


def _on_instance(text: str, start: int, callee: str) -> str:
    """`Keeper().keep` for the method `keep` called at `start` on an instance made there with
    no argument holding a call; else `callee`."""
    if text[start - 2 : start] != ").":
        return callee
    opened = text.rfind("(", 0, start - 2)
    cls = _dotted_before(text, opened) if opened != -1 else ""
    return f"{cls}().{callee}" if cls and ")" not in text[opened + 1 : start - 2] else callee


@functools.lru_cache(maxsize=512)
def _handed(root: str) -> re.Pattern:
    # Led by the root itself, a literal the search skips to in C (`_binding`).
    return re.compile(re.escape(root) + r"[ \t]*[,)]")


def bound_to(text: str, name: str, made: bool = False) -> frozenset[str]:
    """The callees of the calls `name` (a dotted name) is bound to (`name = callee(`; with
    `made`, the methods called on an instance made there, `name = Exporter(x).export(`)."""
    return _bindings(text, name)[made]


# (text, name, what `_bindings` found): a name's two readings are asked one after the other.
# One tuple, replaced whole: a reader never pairs one text's answers with another's name.
_LAST: tuple = (None, None, None)


def _bindings(text: str, name: str) -> tuple[frozenset[str], frozenset[str]]:
    """`bound_to`'s two answers, from one search of the text for `name = ` (a pattern of its
    own for each kind cost a second compile, ~0.5 M instructions, and a second search of the
    whole text: ~11 M of ao's cold run). A made instance's method call is read at the
    callee of the binding (`name = Exporter(`), which every such call also is."""
    global _LAST
    last = _LAST
    if last[0] is text and last[1] == name:
        return last[2]
    callees: set[str] = set()
    methods: set[str] = set()
    for m in _binding(name).finditer(text):
        at = m.start()
        if at == 0 or not (text[at - 1].isalnum() or text[at - 1] in "_."):
            callees.add(m.group(1))
            made = _MADE.match(text, m.start(1))
            if made is not None:
                methods.add(made.group(1))
    found = (frozenset(callees), frozenset(methods))
    _LAST = (text, name, found)
    return found


@functools.lru_cache(maxsize=512)
def _binding(name: str) -> re.Pattern:
    # Led by the name itself, a literal the search skips to in C: a loop of `str.find` over a
    # receiver such as `m` stops at every `m` of the module (~2 ms a keystroke on a
    # 4,300-line test module).
    return re.compile(re.escape(name) + _ASSIGNED.pattern)


def _dotted_before(text: str, end: int) -> str:
    """The dotted name that ends at `end` (`self.gm`, `helpers.prepare`), or ""."""
    start = end
    while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_."):
        start -= 1
    name = text[start:end].strip(".")
    return name if name[:1].isalpha() or name[:1] == "_" else ""
