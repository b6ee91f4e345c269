"""Which functions and classes of a project's inserting modules may be insertion wrappers, from
their texts alone.

`wrapper_index` needs, once per run, every name under which the helper search could find a
wrapper; parsing the modules that insert to ask the search itself cost as much as the
lookups it saves (ExecuTorch: 233 modules). A superset does as well, and the text gives one.
The search (`Forwarding.forwarded_params`) calls a function a wrapper when one of its
parameters is, as a bare name, the target of an insertion in its own code
(`x.call_function(op, ...)`, `x.create_node("call_function", op, ...)`) or an argument of a
call of another wrapper (by its name, an import's new name, `self.<method>`, or `m.<name>` where
`m` heads a dotted name the module imports, as `gu.insert_op` after `import pkg.graph_utils as
gu`; the search resolves no other attribute call, `super().m(...)` included). So a
function is a candidate when a call it spans, of either kind, has one of its parameters as a
whole argument (any argument: a superset of the target), to a fixpoint over the names found;
a class is one when a function it spans is, or its bases name a candidate class (it
inherits the method).

Strings and comments are blanked first (`_masked`), so a `def` row in a docstring is none
and brackets pair as the parser pairs them. A function spans its rows up to the next
`def`/`class` row indented no deeper: a statement after it at the module's level (not a
`def`/`class`) only widens the span, which keeps the answer a superset.
"""

from __future__ import annotations

import functools
import re
from bisect import bisect_left
from collections.abc import Callable, Iterable

from qlint.analysis.graphs.attribute_text import AFTER_DOT
from qlint.analysis.names.text_imports import text_imports

# A `def`/`class` header, searched from its keyword (a pattern led by `^`, or by the line
# break before, is tried at every row or offset of the text: 3x slower); what leads it on
# its row is checked apart.
_HEADER = re.compile(r"(def|class)[ \t]+(\w+)")
_INDENT = re.compile(r"([ \t]*)(?:async[ \t]+)?")
# Led by its words, not by `\b` (same reason); the character before is checked apart.
_INSERT = re.compile(r"(?:call_function|create_node)\b")
_PARAM = re.compile(r"^\s*\**\s*(\w+)")
# A whole argument that is a name, maybe a keyword's value, starred or in brackets (`(op)`).
_BARE = re.compile(r"^\s*(?:\*{1,2}\s*)?(?:\w+\s*=\s*)?[(\s]*(\w+)[)\s]*$")
_DEFINED = re.compile(r"(?:^|\W)(?:def|class)[ \t]+$")
_ATTRIBUTE = re.compile(r"\.\s*$")
_OWN = re.compile(r"(?<![\w.])(?:self|cls)\s*\.\s*$")
# The dotted name before a called attribute (`gu.`, `pkg . graph_utils .`), from its head;
# blanks and continuations may stand around each dot (comments are blanked already).
_HEAD = re.compile(r"(?<![\w.])([A-Za-z_]\w*)(?:[\s\\]*\.[\s\\]*[A-Za-z_]\w*)*[\s\\]*\.[\s\\]*\Z")
# Relative imports resolve from a module this deep (only the names they bind are read).
_ANY_MODULE = ".".join(["_"] * 32)
_KEYWORD = re.compile(r"^\s*(\w+)\s*=(?!=)")
# A call's callee name (its last dotted part), then its bracket, maybe past blanks and `)`.
_CALL = re.compile(r"([A-Za-z_]\w*)[\s\\)]*\(")
_BRACKETS = re.compile(r"[()\[\]{}]")
_WORDS = re.compile(r"\w+")
# An ASCII text's other characters as blanks: its split gives the same runs, found faster
# than by a pattern (the inserting modules' words, read once per index: ExecuTorch ~3 MiB).
_ASCII_BLANKS = str.maketrans({c: " " for c in range(128) if not (chr(c).isalnum() or chr(c) == "_")})

Span = tuple[str, str, int, int, int, tuple[int, ...]]  # kind, name, start, end, header's end, outer
Sites = Callable[[str], list[tuple[int, "frozenset[str] | None"]]]


class ModuleText:
    """An inserting module's text (strings and comments blanked), with its `def`/`class` spans."""

    def __init__(self, text: str, path: str = "", sites: Sites | None = None):
        """`sites`: where the module's own sinks are, read from its masked text (default: its
        insertions), each with the names it passes them (None: any parameter may reach it)."""
        self.path = path
        self.masked = _masked(text)
        self._params: dict[int, frozenset[str]] = {}
        self._imported: frozenset[str] | None = None  # the names its imports bind, when asked
        self._by_name: dict[tuple[str, int | None], list[int]] | None = None  # `bodies_of`
        headers = _headers(self.masked)
        ends = [len(self.masked)] * len(headers)
        open_: list[tuple[int, int]] = []  # (indent, index) of the headers still open
        outers: list[tuple[int, ...]] = []
        for i, (indent, _, _, start, _) in enumerate(headers):
            while open_ and open_[-1][0] >= indent:
                ends[open_.pop()[1]] = start
            outers.append(tuple(j for _, j in open_))
            open_.append((indent, i))
        self.spans: list[Span] = [
            (kind, name, start, ends[i], end, outers[i]) for i, (_, kind, name, start, end) in enumerate(headers)
        ]
        self.bases = {i: self._between_brackets(h[4]) or "" for i, h in enumerate(headers) if h[1] == "class"}
        self.inserting = self._insertions() if sites is None else sites(self.masked)

    def state(self) -> tuple:
        """What `__init__` read, as plain data (`marshal`: `wrapper_reads` hands it from the
        child that read the module); `revived` makes the same module text of it."""
        return self.path, self.masked, self.spans, self.bases, self.inserting

    @classmethod
    def revived(cls, state: tuple) -> ModuleText:
        module = cls.__new__(cls)
        module.path, module.masked, module.spans, module.bases, module.inserting = state
        module._params, module._imported, module._by_name = {}, None, None
        return module

    def _insertions(self) -> list[tuple[int, frozenset[str] | None]]:
        """(offset, the target passed) of every insertion of the module."""
        text = self.masked
        return [
            (m.start(), self._target(m.end(), m.group()))
            for m in _INSERT.finditer(text)
            if not _word_before(text, m.start()) and AFTER_DOT.search(text, max(0, m.start() - 200), m.start())
        ]

    def params(self, end: int) -> frozenset[str]:
        """The parameter names of the `def` whose name ends at `end` (read when asked)."""
        known = self._params.get(end)
        if known is None:
            known = self._params[end] = self._read_params(end)
        return known

    def _read_params(self, end: int) -> frozenset[str]:
        inside = self._between_brackets(end)
        if inside is None:
            return frozenset()
        return frozenset(m.group(1) for piece in _top_level(inside) if (m := _PARAM.match(piece)))

    def _between_brackets(self, end: int) -> str | None:
        """The text inside the brackets opening right after `end` (past blanks and closing
        brackets, as in `(f)(x)`), None when none opens there."""
        i = end
        text = self.masked
        while i < len(text) and text[i] in " \t\r\n\\)":
            i += 1
        if i >= len(text) or text[i] != "(":
            return None
        depth = 0
        for m in _BRACKETS.finditer(text, i):
            depth += 1 if m.group() in "([{" else -1
            if depth == 0:
                return text[i + 1 : m.start()]
        return text[i + 1 :]

    def _arguments(self, end: int) -> frozenset[str] | None:
        """Names passed as whole arguments by the call whose callee ends at `end` (None: no
        call to read there, any parameter may reach it)."""
        inside = self._between_brackets(end)
        if inside is None:
            return None
        return frozenset(m.group(1) for piece in _top_level(inside) if (m := _BARE.match(piece)))

    def _target(self, end: int, attr: str) -> frozenset[str] | None:
        """The name an insertion's call passes as its target (`x.call_function(op, ...)`,
        `x.create_node(kind, op, ...)`, or by keyword), if a name; None: unknown (no call to
        read, or a `*args` before it), any parameter may be it."""
        inside = self._between_brackets(end)
        if inside is None:
            return None
        keyword, position = ("the_function", 0) if attr == "call_function" else ("target", 1)
        positional = []
        for piece in _top_level(inside):
            named = _KEYWORD.match(piece)
            if named is not None:
                if named.group(1) == keyword:
                    return _bare(piece)
                continue
            if piece.lstrip().startswith("*"):
                return None if not piece.lstrip().startswith("**") else frozenset()
            positional.append(piece)
        return _bare(positional[position]) if len(positional) > position else frozenset()

    def calls_of(
        self, patterns: list[tuple[str, re.Pattern]], holders: dict[str, set[str]] | None = None
    ) -> list[tuple[int, frozenset[str] | None]]:
        """(offset, whole arguments) of every call of one of the names (`f(...)`, `self.f(...)`,
        `m.f(...)` with `m` imported, and `x.f(...)` where `f` is a method of one of the
        classes `holders` gives for it and the module spells that class: `x` may be an
        instance the module builds, `Builder(g).f(...)`, `self.builder.f(...)`)."""
        out = []
        text = self.masked
        words = self.words
        for name, pattern in patterns:
            if name not in words:
                continue  # a call's name is a whole word (one set lookup, not a search of the text)
            for m in pattern.finditer(text):
                before = text[max(0, m.start() - 12) : m.start()]
                if before[-1:].isalnum() or before.endswith("_") or _DEFINED.search(before):
                    continue  # another name, or the `def`/`class` row naming it
                if (
                    _ATTRIBUTE.search(before)
                    and not _OWN.search(before)
                    and not self._of_import(m.start())
                    and not self._spells_any((holders or {}).get(name, ()))
                ):
                    continue  # `x.f(...)`, `super().f(...)`: the search resolves no helper there
                out.append((m.start(), self._arguments(m.end())))
        return out

    def bodies_of(self, name: str, of_class: int | None = None) -> list[int]:
        """The spans (indices) of the module-level function `name`, or of the methods of the
        module-level class `name`; with `of_class`, of that class's methods named `name`."""
        if self._by_name is None:
            by_name: dict[tuple[str, int | None], list[int]] = {}
            methods: dict[int, list[int]] = {}
            for i, (kind, spelled, *_, outer) in enumerate(self.spans):
                if not outer:
                    by_name.setdefault((spelled, None), [i] if kind == "def" else methods.setdefault(i, []))
                elif kind == "def" and self.spans[outer[-1]][0] == "class" and len(outer) == 1:
                    methods.setdefault(outer[0], []).append(i)
                    by_name.setdefault((spelled, outer[0]), []).append(i)
            self._by_name = by_name
        return list(self._by_name.get((name, of_class), ()))

    def functions(self) -> list[int]:
        """The spans of the module's functions and methods (at any depth)."""
        return [i for i, span in enumerate(self.spans) if span[0] == "def"]

    def owner(self, body: int) -> int | None:
        """The class a method's span lies in directly (None: no method)."""
        outer = self.spans[body][5]
        return outer[-1] if outer and self.spans[outer[-1]][0] == "class" else None

    def calls_within(self, body: int) -> list[tuple[str, str]]:
        """(head, name) of every call in a function's span that passes one of its parameters
        as a whole argument (or arguments that cannot be read): `f(op)` is ("", "f"),
        `gu.f(op)` ("gu", "f"), `self.f(op)` ("self", "f"), `x.f(op)` on another receiver
        ("?", "f"). A nested function's calls count for the one around it (a superset)."""
        _, _, _, end, header, _ = self.spans[body]
        params = self.params(header)
        found: list[tuple[str, str]] = []
        if not params:
            return found
        text = self.masked
        for m in _CALL.finditer(text, header, end):
            if m.start() and (text[m.start() - 1].isalnum() or text[m.start() - 1] == "_"):
                continue
            passed = self._arguments(m.end(1))
            if passed is not None and not passed & params:
                continue
            head = ""
            if _ATTRIBUTE.search(text, max(0, m.start() - 12), m.start()):
                dotted = _HEAD.search(text, max(0, m.start() - 300), m.start())
                head = dotted.group(1) if dotted is not None and dotted.group(0).count(".") == 1 else "?"
            found.append((head, m.group(1)))
        return found

    def spells(self, name: str) -> bool:
        return self._spells_any((name,))

    def _spells_any(self, names: Iterable[str]) -> bool:
        words = self.words
        return any(name in words for name in names)

    @functools.cached_property
    def base_words(self) -> dict[int, frozenset[str]]:
        """The words of each class's bases (`bases`, by the class's span): a class name made of
        word characters only is named there (`\\b` on both sides) exactly when it is one of
        them (`candidates`: one set intersection per class and round, not a test of every
        class found so far)."""
        return {i: frozenset(_WORDS.findall(bases)) for i, bases in self.bases.items()}

    @functools.cached_property
    def words(self) -> frozenset[str]:
        """The maximal runs of word characters of the masked text: a name is spelled (as a
        whole identifier) exactly where it is one of them."""
        text = self.masked
        if text.isascii():
            return frozenset(text.translate(_ASCII_BLANKS).split())
        return frozenset(_WORDS.findall(text))

    def _of_import(self, at: int) -> bool:
        """Whether the dotted name ending at `at` (`gu.` of `gu.f`, `pkg.graph_utils.` of
        `pkg.graph_utils.f`) starts at a name the module imports."""
        head = _HEAD.search(self.masked, max(0, at - 300), at)
        if head is None:
            return False
        if self._imported is None:
            self._imported = frozenset(name for name, _ in text_imports(self.masked, _ANY_MODULE, "m.py"))
        return head.group(1) in self._imported


def _headers(masked: str) -> list[tuple[int, str, str, int, int]]:
    """(indent, kind, name, the row's start, the name's end) of every `def`/`class` that begins
    its row (after blanks, maybe `async`): what `^([ \\t]*)(?:async[ \\t]+)?(def|class)[ \\t]+(\\w+)`
    finds with `re.M`."""
    out = []
    for m in _HEADER.finditer(masked):
        start = m.start()
        row = masked.rfind("\n", 0, start) + 1
        lead = _INDENT.match(masked, row, start)
        if lead is None or lead.end() != start:
            continue  # not the first word of its row
        out.append((len(lead.group(1).expandtabs(8)), m.group(1), m.group(2), row, m.end()))
    return out


def _word_before(text: str, at: int) -> bool:
    """Whether a word character (as `\\w` reads one) stands right before `at`."""
    if not at:
        return False
    c = text[at - 1]
    return c.isalnum() or c == "_"


def called_patterns(names: Iterable[str]) -> list[tuple[str, re.Pattern]]:
    """A pattern per name for its calls: `(` after it, maybe past blanks, continuations or `)`."""
    return [(name, _called_pattern(name)) for name in sorted(names)]


@functools.lru_cache(maxsize=32_768)
def _called_pattern(name: str) -> re.Pattern:
    # Each round asks the calls of every name found so far again (`candidates`' `known`), past
    # `re`'s own cache of 512 patterns where there are thousands: an index of a copy of the
    # installed torch (~6,300 names, 56 rounds) compiled 73,000 patterns, 19 of its 58 s under
    # a profiler.
    return re.compile(re.escape(name) + r"\b(?=[\s\\)]*\()")


class TooManyNames(Exception):
    """`candidates` found more names than its `limit`: an index of them would rule out too few
    lookups to pay for itself (`wrapper_index._MAX_NAMES`)."""


def candidates(
    modules: list[ModuleText],
    renames: list[tuple[str, str]],
    more: Callable[..., list[ModuleText]] | None = None,
    instances: bool = True,
    links: int = 1,
    limit: int | None = None,
) -> tuple[set[str], set[str]]:
    """(function names, class names) that may be wrappers, with the names `renames` (`X as
    Y` pairs) bind them to. `modules`: those that insert; `more(new, known, paths)`: the
    modules that insert nothing but may call one of the `new` functions found at the level
    of an inserting module (at one of `paths`), among all those `known` (wrapper chains:
    `add_op(graph, op)` handing `op` on to `a.insert`, or to `gu.insert`), each read from
    then on as the inserting ones are. As in the helper search (`wrapper_chains.forwards_on`),
    a chain has at most `links` such modules: one is read for the functions and classes it
    calls of inserting modules, or of modules read for that reason fewer than `links` steps
    away, not for the classes it subclasses; but without `instances` (QL101's sink helpers),
    a module importing by name a class of a module that calls a sink on `self` (a TestCase
    mixin: `mixin_sinks.calls_sink_on_self`), or importing that module and spelling the class
    (`class M(checks.NodeChecks)`: `mixin_sinks.importing_mixin_modules`), is read, and so
    on down from the subclasses found, `MIXIN_ROUNDS` steps at most, as
    `wrapper_chains._links_of` follows such a base."""
    modules = list(modules)
    # Per module, how many modules that insert nothing lie between it and an inserting one
    # (0: it inserts), at most: a module read for names of several is counted from the nearest.
    levels = [0] * len(modules)
    functions: set[str] = set()
    classes: set[str] = set()
    toplevel: set[str] = set()  # the functions a module defines at its level (importable)
    toplevel_classes: set[str] = set()  # and the classes (a class as a link: constructed elsewhere)
    asked_methods: dict[str, set[str]] = {}  # per class, its candidate methods when last asked
    marked: list[set[int]] = [set() for _ in modules]  # per module, the spans found so far
    by_source: dict[str, set[str]] = {}
    for source, target in renames:
        if target.isidentifier():
            by_source.setdefault(source, set()).add(target)
    sites = [module.inserting for module in modules]
    # method name -> the classes holding it as a candidate (their own or inherited): a call
    # `x.m(...)` on an instance counts in a module that spells one of them.
    holders: dict[str, set[str]] = {}
    inherited: dict[str, list[str]] = {}  # a class found through its bases -> those bases
    # The sink kind's TestCase mixin modules (of the modules naming a sink), whose classes'
    # subclasses' modules are read in the first round.
    mixins = _mixin_modules(modules) if more is not None and not instances else []
    subclassed: set[str] = set()
    # Those classes (each at its module's level) and their subclasses at the level of the
    # modules read for them, in rounds of reading down until one finds none, `MIXIN_ROUNDS`
    # at most; with the modules defining them, whose subclasses may name them through their
    # module (`mod.Mixin`: `mixin_paths`).
    line = {span[1] for module in mixins for span in module.spans if span[0] == "class" and not span[5]}
    base_rounds, mixin_paths = 0, [module.path for module in mixins]
    if line:
        from qlint.analysis.graphs.mixin_sinks import MIXIN_ROUNDS
    while True:
        new_functions: set[str] = set()
        new_classes: set[str] = set()
        new_toplevel: set[str] = set()
        new_toplevel_classes: set[str] = set()
        defining: dict[int, ModuleText] = {}  # the modules defining them
        # Asked by their names alone, not their modules' (a mixin imports the class it
        # subclasses by name: `wrapper_chains._links_of`), whose stems (`utils`) most modules
        # import something from.
        new_bases = line - subclassed
        heirs: set[str] = set()
        heir_paths: list[str] = []
        for at, (module, found, calls) in enumerate(zip(modules, marked, sites, strict=True)):
            if not calls:
                continue
            calls.sort(key=lambda site: site[0])
            offsets = [at for at, _ in calls]
            for i, (kind, name, start, end, header, outer) in enumerate(module.spans):
                if i in found or kind != "def":
                    continue
                first, last = bisect_left(offsets, start), bisect_left(offsets, end)
                if first == last:
                    continue
                params = module.params(header)
                if params and any(passed is None or passed & params for _, passed in calls[first:last]):
                    found.add(i)
                    new_functions.add(name)
                    if not outer and levels[at] < links:
                        new_toplevel.add(name)
                        defining[id(module)] = module
                    # A method of the class it lies in directly (a function's own classes are
                    # not importable, nor are a class's nested ones' methods its own).
                    if outer and module.spans[outer[-1]][0] == "class":
                        owner = module.spans[outer[-1]]
                        holders.setdefault(name, set()).add(owner[1])
                        if outer[-1] not in found:
                            found.add(outer[-1])
                            new_classes.add(owner[1])
                            # Importable, constructed elsewhere (a link where the search asks
                            # about classes a module builds: `Forwarding.instances`).
                            if instances and not owner[5] and levels[at] < links:
                                new_toplevel_classes.add(owner[1])
                                defining[id(module)] = module
        known = classes | new_classes
        while known:  # a class whose bases name one inherits its methods
            grown = False
            odd = [c for c in known if not _WORDS.fullmatch(c)]
            for module, found in zip(modules, marked, strict=True):
                for i, words in module.base_words.items():
                    if i in found:
                        continue
                    named = [*(words & known), *(c for c in odd if _named_in(c, module.bases[i]))]
                    if named:
                        found.add(i)
                        sub = module.spans[i][1]
                        new_classes.add(sub)
                        inherited[sub] = named
                        grown = True
                        if line and not module.spans[i][5] and not line.isdisjoint(named):
                            heirs.add(sub)
                            heir_paths.append(module.path)
            if not grown:
                break
            known = _closure(classes | new_classes, by_source)
        new_functions = _closure(new_functions, by_source) - functions
        new_classes = _closure(new_classes, by_source) - classes
        if limit is not None and len(functions) + len(classes) + len(new_functions) + len(new_classes) > limit:
            raise TooManyNames
        new_toplevel = _closure(new_toplevel, by_source) - toplevel
        new_toplevel_classes = _closure(new_toplevel_classes, by_source) - toplevel_classes
        if not new_functions and not new_classes:
            return functions, classes
        functions |= new_functions
        classes |= new_classes
        toplevel |= new_toplevel
        toplevel_classes |= new_toplevel_classes
        _inherit(holders, inherited)
        holders = {m: _closure(owners, by_source) for m, owners in holders.items()}
        methods_of: dict[str, set[str]] = {}
        for method, owners in holders.items():
            for owner in owners:
                methods_of.setdefault(owner, set()).add(method)
        # A class whose candidate methods grew: a module passed over for it may call one now.
        grown = {c for c, ms in methods_of.items() if ms != asked_methods.get(c) and c in toplevel_classes}
        asked_methods = methods_of
        patterns = called_patterns(new_functions)
        sites = [module.calls_of(patterns, holders if instances else None) for module in modules]
        if heirs and base_rounds < MIXIN_ROUNDS:
            line |= heirs
            new_bases |= heirs
            mixin_paths += heir_paths
        new_bases = _closure(new_bases, by_source) - subclassed
        subclassed |= new_bases
        base_rounds += bool(new_bases)
        if more and (new_toplevel or new_toplevel_classes or grown or new_bases):
            only_classes = {c: ms for c, ms in methods_of.items() if c in toplevel_classes and c not in toplevel}
            new_names = new_toplevel | new_toplevel_classes | grown | new_bases
            among = toplevel | toplevel_classes | subclassed
            added = more(new_names, among, [m.path for m in defining.values()], only_classes, mixin_paths, line)
            mixin_paths = []
        else:
            added = []
        if added:
            # Their calls of every name found so far (the modules read before were searched
            # for the earlier names in earlier rounds).
            known = called_patterns(functions)
            nearest = min((levels[i] for i, m in enumerate(modules) if id(m) in defining), default=0)
            levels.extend(nearest + 1 for _ in added)
            modules.extend(added)
            marked.extend(set() for _ in added)
            sites.extend(module.inserting + module.calls_of(known, holders if instances else None) for module in added)


def _mixin_modules(modules: list[ModuleText]) -> list[ModuleText]:
    """The modules that may hold TestCase mixins (they call a sink on `self`:
    `mixin_sinks.calls_sink_on_self`): each class at their level is one, whatever its
    methods, as the helper search follows a base of such a module (`wrapper_chains._links_of`)."""
    from qlint.analysis.graphs.mixin_sinks import calls_sink_on_self

    return [module for module in modules if calls_sink_on_self(module.masked)]


def _inherit(holders: dict[str, set[str]], inherited: dict[str, list[str]]) -> None:
    """A class found through its bases holds their candidate methods too (to a fixpoint: a
    subclass of a subclass). Each owner set grows by a walk down from its classes to their
    subclasses: the fixpoint of the rule "a class with a base among the owners is one",
    reached without testing every subclass against every owner set again at each round
    (ExecuTorch: ~580,000 base tests per index made)."""
    subclasses: dict[str, list[str]] = {}
    for sub, bases in inherited.items():
        for base in bases:
            subclasses.setdefault(base, []).append(sub)
    for owners in holders.values():
        pending = [c for c in owners if c in subclasses]
        while pending:
            for sub in subclasses.get(pending.pop(), ()):
                if sub not in owners:
                    owners.add(sub)
                    pending.append(sub)


def _named_in(name: str, bases: str) -> bool:
    """Whether `name` is spelled in `bases` as a whole name (`\\b` on both sides)."""
    return name in bases and re.search(rf"\b{re.escape(name)}\b", bases) is not None


def _bare(piece: str) -> frozenset[str]:
    found = _BARE.match(piece)
    return frozenset((found.group(1),)) if found else frozenset()


def _closure(names: set[str], by_source: dict[str, set[str]]) -> set[str]:
    out = set(names)
    pending = list(names)
    while pending:
        for target in by_source.get(pending.pop(), ()):
            if target not in out:
                out.add(target)
                pending.append(target)
    return out


def _top_level(inside: str) -> list[str]:
    """The comma-separated pieces of a bracket's content, not splitting nested brackets."""
    if not _BRACKETS.search(inside):
        return inside.split(",")
    pieces = []
    depth = 0
    start = 0
    for m in _SPLITS.finditer(inside):  # only where a piece may end or a bracket open or close
        c = m.group()
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif depth == 0:
            pieces.append(inside[start : m.start()])
            start = m.end()
    pieces.append(inside[start:])
    return pieces


_SPLITS = re.compile(r"[()\[\]{},]")


def _masked(text: str) -> str:
    """The text with every string literal's and comment's characters but line ends blanked
    (as the tokenizer ends them: a backslash escapes the next character, raw strings too)."""
    return _LITERAL.sub(_blanked, text)


def _blanked(m: re.Match) -> str:
    piece = m.group()
    blank = _NOT_A_LINE_END.sub(" ", piece) if "\n" in piece else " " * len(piece)
    # A string keeps its quotes (an argument `"x"` stays an argument that is no name), and an
    # unterminated one its last character.
    return blank if piece[0] == "#" or len(piece) < 2 else piece[0] + blank[1:-1] + piece[-1]


# A comment to its row's end, or a string to its closing quote, a backslash escaping the next
# character: a three-quote one may run to the end of the text, a one-quote one unterminated
# ends at its row's end (the parse would fail anyway). One pattern, one pass through the text
# (possessive: nothing is matched twice).
_LITERAL = re.compile(
    r"#[^\n]*+"
    r"|'''(?:[^\\']++|\\.|'(?!''))*+(?:'''|\\?\Z)"
    r'|"""(?:[^\\"]++|\\.|"(?!""))*+(?:"""|\\?\Z)'
    r"|'(?:[^\\'\n]++|\\.)*+(?:'|\\)?"
    r'|"(?:[^\\"\n]++|\\.)*+(?:"|\\)?',
    re.S,
)
_NOT_A_LINE_END = re.compile(r"[^\n]")
