"""A holder handed to an imported helper that may store an exported graph on it, then to an
imported helper that switches an attribute of its parameter (QL203's import trigger):

    from proj.keep import keep        # def keep(h, m, args): h.gm = prepare_qat_pt2e(...)
    from proj.switch import to_eval   # def to_eval(h): h.gm.eval()
    h = Holder(); keep(h, net, args); to_eval(h)     # raises NotImplementedError on torch 2.13

The file names neither a switch nor a graph source. Which of the functions it imports store a
graph is a summary fact of their modules (`graph_returns.GraphReturns`), a parse of each module
that names a source: asked of every imported function handed a name that another one is
handed later, it parsed ~2x the modules on ExecuTorch. The cheap question comes first, from
texts alone: is the later function one that switches an attribute of a parameter
(`switching_functions`, its module's text read once per content, never parsed)? Few are, and
only the functions handed the same name before a call of one of those are looked up.
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from qlint.analysis.names.text_imports import file_imports
from qlint.lazy_patterns import lazy

# Names imported from these are never helpers of the project.
LIBRARY_ROOTS = frozenset({"torch", "torchao", "numpy", "copy", "typing", "collections", "unittest", "pytest"})
_STDLIB = sys.stdlib_module_names
_SWITCHES = (".eval()", ".train(")
# The arguments of a call up to its end or its first bracket or line break.
_ARGUMENTS = lazy(r"[^()\[\]{}\n]*")
# `def name(`, its parameters up to the `)` that closes them (annotations with brackets aside).
_DEF = lazy(r"def[ \t]+(\w+)[ \t]*\(([^()]*)\)")


def argument_sites(text: str, callee: str) -> list[tuple[int, str]]:
    """(where the call starts, name) for the plain names handed as positional arguments of
    their own to the calls of `callee`, before any call, bracket or line break among the
    arguments (`h` of `to_eval(h)` and of `keep(h, nn.Linear(3, 3))`), its `def` aside."""
    out: list[tuple[int, str]] = []
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
            out.extend((at, a) for a in (p.strip() for p in parts) if a.isidentifier() and a not in ("self", "cls"))
        at = text.find(needle, start)
    return out


def co_handed(text: str, imports: list[tuple[str, str]]) -> dict[str, set[str]]:
    """For each function imported from a module of the project (`from pkg.switch import
    to_eval`) handed a plain name, the other such functions handed that name before it with no
    `def` between the two calls (`keep` of `keep(h, m)`, then `to_eval(h)`): what one stores on
    the name the later one may switch."""
    sites: dict[str, list[tuple[int, str]]] = {}
    for local, full in dict(imports).items():
        # A function imported from a module, not a module (`import os`) nor a class, and not
        # from a library or the standard library: asked of most files, a search each (the
        # sites' own: a test for the call first scanned the text twice where it is called).
        top, dot, _ = full.partition(".")
        if dot and local[:1].islower() and top not in LIBRARY_ROOTS and top not in _STDLIB:
            for at, name in argument_sites(text, local):
                sites.setdefault(name, []).append((at, local))
    out: dict[str, set[str]] = {}
    for calls in sites.values():
        if len(calls) < 2:
            continue
        calls.sort()
        for i in range(1, len(calls)):
            at, later = calls[i]
            # Searched back to the nearest `def` only: a slice of the text between each two
            # calls copied ao's modules over and over (a name handed to dozens of calls).
            since = text.rfind("def ", 0, at)
            for a, earlier in reversed(calls[:i]):
                if a <= since:
                    break
                if earlier != later:
                    out.setdefault(later, set()).add(earlier)
    return out


def switching_names(text: str) -> frozenset[str]:
    """The functions of a module's text that switch an attribute of one of their parameters
    (`def to_eval(h): h.gm.eval()`; `x.core.train(False)`): the `def` nearest before the
    switch, whose parameters name the switched value's root. A superset is harmless (the model
    flow reads the real body); a switch in a nested function counts for that function."""
    found: set[str] = set()
    for needle in _SWITCHES:
        at = text.find(needle)
        while at != -1:
            start = at
            while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "_."):
                start -= 1
            root, dot, _ = text[start:at].partition(".")
            if dot and root.isidentifier() and root not in ("self", "cls"):
                head = text.rfind("def ", 0, start)
                m = _DEF.match(text, head) if head != -1 else None
                if m is not None and root in _parameters(m.group(2)):
                    found.add(m.group(1))
            at = text.find(needle, at + 1)
    return frozenset(found)


def _parameters(text: str) -> set[str]:
    """The names of a `def`'s parameter list as written (`a, holder: Holder = None, *, f=1`)."""
    return {p.split(":")[0].split("=")[0].strip(" *\t\n") for p in text.split(",")}


# path -> (content key, `switching_names` of its text), while the key holds.
_SWITCHING: dict[str, tuple[tuple | None, frozenset[str]]] = {}


def switching_functions(project, module: str, requester: str) -> frozenset[str]:
    """`switching_names` of `module` as imported from `requester`, read from its text (never
    parsed), once per content. The module is a dependency of the check all the same."""
    path = project.find_module_in_check(module, requester)
    if path is None:
        return frozenset()
    project.record_unloaded(module, requester, path)
    key = project.content_key(path)
    found = _SWITCHING.get(path)
    if found is None or found[0] != key:
        if len(_SWITCHING) > 50_000:
            _SWITCHING.clear()
        text = project.text(path)
        names = switching_names(text) if text is not None and any(s in text for s in _SWITCHES) else frozenset()
        found = _SWITCHING[path] = (key, names)
    return found[1]


def handed_holder_calls(text: str, path: str, project, stores: Callable[[str, str], bool]) -> tuple[str, ...]:
    """The call spellings (`keep(`) of imported functions handed a plain name before an
    imported function that switches an attribute of its parameter is handed it, and that
    `stores(module, name)` says may store (or return) an exported graph."""
    if project is None:
        return ()
    imports = file_imports(text, path)
    pairs = co_handed(text, imports)
    if not pairs:
        return ()
    full_of = dict(imports)
    out: list[str] = []
    for switcher, storers in pairs.items():
        module, _, name = full_of[switcher].rpartition(".")
        if name not in switching_functions(project, module, path):
            continue
        for storer in sorted(storers):
            module, _, name = full_of[storer].rpartition(".")
            if stores(module, name):
                out.append(f"{storer}(")
    return tuple(dict.fromkeys(out))


__all__ = ["LIBRARY_ROOTS", "argument_sites", "co_handed", "handed_holder_calls", "switching_functions"]
