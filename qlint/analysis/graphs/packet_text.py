"""Whether a module's text can hand QL101/QL102 an `OpOverloadPacket`: their exact gate.

Both rules report only where `Resolver.op_ref` of an expression of the checked module is a
packet: its qualified name is `torch.ops.<ns>.<op>` or `<edge dialect>.<ns>.<op>`, with no
overload after it. That name is built from the chain as written (`torch.ops.aten.relu`,
`exir_ops.edge.aten.relu`), from the module's bindings of a namespace or of an ops root
(`aten = torch.ops.aten`, `from torch.ops import aten as A`, `self.ns = torch.ops.aten`,
`with ... as A`, `A := ...`), and, through `from <module> import name` or a star import,
from what another module of the project binds `name` to (a packet, a collection holding
one, a namespace, a root; directly or through its own imports). Nothing else makes a packet:
a call's result, a subscript, `getattr(torch.ops.aten, name)`, `x.overloadpacket` and
parameters are never resolved to one, and neither is anything in a string or a comment.

So a module can give the rules a packet only if, strings and comments blanked out, its text
- spells a packet: an ops root (`ops`, `edge`, or a name bound to one) followed by
  `.<ns>.<op>`, or a namespace (a name bound to one) followed by `.<op>`, and then neither
  by another `.<name>` (an overload, or no op at all) nor by a call on the same row (an
  eager call's value is what it returns);
- binds a root or namespace where this reading cannot tell to which name (a statement
  continued from an earlier row): it is let through;
- or imports from a project module a name that module binds to one of those (`name_kind`:
  a demand-driven reading of that module's text, kept per content, which follows only the
  statements binding the name at module level and the names they use).
"""

from __future__ import annotations

import keyword
import os
import re
import unicodedata
from bisect import bisect_right

from qlint.analysis.graphs import file_keys
from qlint.analysis.names.import_paths import module_bases
from qlint.analysis.names.modules import import_root, module_name_for
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.star_imports import star_sources
from qlint.analysis.names.text_imports import file_imports, import_spans, text_imports

_TORCH_OPS = "torch.ops"
_EDGE = "executorch.exir.dialects._ops.ops.edge"
# Under torch.ops but not packets (`Resolver.parse_op`).
_NOT_PACKET_NAMESPACES = frozenset({"higher_order"})
# What a name can be bound to, as far as packets go.
PACKET, NAMESPACE, ROOT = "packet", "namespace", "root"
_ROOT_WORDS = {"ops": ROOT, "edge": ROOT}

# What may stand between the links of a dotted chain: blanks, line continuations, newlines
# (inside brackets). A use of an anchor word is the word, then up to three links.
_LINKS = r"(?P<links>(?:(?:[\s\\]|#[^\n]*)*\.(?:[\s\\]|#[^\n]*)*[^\W\d]\w*){0,3})"
_COMMENT = re.compile(r"#[^\n]*")
_LINK_NAME = re.compile(r"[^\W\d]\w*")
_CALLED = re.compile(r"[ \t]*\(")
# The chain is assigned to (`ops = _Ops()`, `self.ns: T = ...`), not read.
_STORED = re.compile(r"[ \t]*(?::[^=\n]*)?=(?!=)")
_AS = re.compile(r"[ \t]+as[ \t]+([^\W\d]\w*)")
# The dotted chain written before the anchor (`torch.` of `torch.ops`): not the statement.
_CHAIN_BEFORE = re.compile(r"(?:[^\W\d]\w*[ \t]*\.[ \t]*)*$")
# An assignment's `=` (not `==`, `!=`, `<=`, `>=`, `:=`, `+=`, ...).
_ASSIGN = re.compile(r"(?<![=!<>:+\-*/%&|^@])=(?!=)")
_WALRUS = re.compile(r"([^\W\d]\w*)[ \t]*:=[\s(]*$")
_TARGET = re.compile(r"[^\W\d][\w.]*")
_WORD = re.compile(r"(?<![.\w])[^\W\d]\w*")
_USES: dict[str, re.Pattern] = {}


def _uses_of(word: str) -> re.Pattern:
    """The pattern of a use of `word`, led by the word itself (a literal the search skips to)."""
    pattern = _USES.get(word)
    if pattern is None:
        if len(_USES) > 10_000:
            _USES.clear()
        pattern = _USES[word] = re.compile(re.escape(word) + r"(?![\w])" + _LINKS)
    return pattern


def in_code(text: str, at: int) -> bool:
    """Whether offset `at` is code, not a comment or a string, as far as its row tells: a `#`
    or an open quote before it on the row. A row that may start inside a string (a triple
    quote before it on the row, a `\\` ending the row before) counts as code, as a row
    inside a docstring may: the answer is False only where the row shows it."""
    row = text.rfind("\n", 0, at) + 1
    prefix = text[row:at]
    if "#" not in prefix and "'" not in prefix and '"' not in prefix:
        return True
    if '"""' in prefix or "'''" in prefix or text.endswith("\\\n", 0, row) or text.endswith("\\\r\n", 0, row):
        return True
    quote = None
    i, size = 0, len(prefix)
    while i < size:
        c = prefix[i]
        if quote is not None:
            if c == "\\":
                i += 1
            elif c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#":
            return False
        i += 1
    return quote is None


def _kind(full: str) -> str | None:
    """What an imported dotted name under an ops root is (None: not under one)."""
    for root in (_TORCH_OPS, _EDGE):
        if full == root:
            return ROOT
        if full.startswith(root + "."):
            parts = full[len(root) + 1 :].split(".")
            if len(parts) == 1:
                return NAMESPACE
            if len(parts) == 2 and parts[0] not in _NOT_PACKET_NAMESPACES:
                return PACKET
            return ""  # an overload, or nothing
    return None


def _torch_names(text: str, spans: list[tuple[int, int]] | None = None) -> dict[str, str]:
    """The names the text imports from under an ops root, with their kind: read from the
    import statements that spell `ops` or `edge` (`spans`: the text's, when known)."""
    out: dict[str, str] = {}
    if "import" not in text or ("ops" not in text and "edge" not in text):
        return out
    for start, end in import_spans(text) if spans is None else spans:
        statement = text[start:end]
        if "ops" in statement or "edge" in statement:
            for local, full in text_imports(statement, None, ""):
                kind = _kind(full)
                if kind:
                    out[local] = kind
    return out


def _identifiers(text: str) -> str:
    """The text with its identifiers as Python reads them (NFKC: a full-width letter is its ASCII one)."""
    return text if text.isascii() else unicodedata.normalize("NFKC", text)


# -- one text --------------------------------------------------------------------------------


class _Text:
    """A text as the gate reads it: its import statements, found once (only when a use of a
    root or namespace needs to know whether it stands in one)."""

    def __init__(self, text: str, start: int = 0, end: int | None = None, spans=None):
        self.text = text
        self.start, self.end = start, len(text) if end is None else end
        self._spans = spans

    @property
    def spans(self) -> list[tuple[int, int]]:
        if self._spans is None:
            self._spans = import_spans(self.text) if "import" in self.text else []
        return self._spans


def spells_packet(text: str) -> bool:
    """The text alone can make a packet (what it imports from the project not followed)."""
    global _LAST_SPELLED
    if _LAST_SPELLED is not None and _LAST_SPELLED[0] is text:
        return _LAST_SPELLED[1]
    found = False
    if "ops" in text or "edge" in text:
        read = _Text(_identifiers(text))
        anchors = _torch_names(read.text, read.spans) if "import" in text else {}
        found = PACKET in anchors.values() or _scan(read, {**_ROOT_WORDS, **anchors})[0]
    _LAST_SPELLED = (text, found)
    return found


_LAST_SPELLED: tuple[str, bool] | None = None


def _scan(read: _Text, anchors: dict[str, str]) -> tuple[bool, dict[str, str]]:
    """Whether the text spells a packet (or binds a root or namespace to a name it cannot
    tell), and the names its uses of `anchors` bind to roots and namespaces."""
    known = dict(anchors)
    bound: dict[str, str] = {}
    todo = list(known.items())
    done: set[tuple[str, str]] = set()
    while todo:
        word, kind = todo.pop()
        if (word, kind) in done:
            continue
        done.add((word, kind))
        for name, bound_kind in _uses(read, word, kind):
            if name is None:
                return True, bound
            if known.get(name) not in (None, bound_kind):
                return True, bound  # bound to a root somewhere, a namespace elsewhere
            known[name] = bound[name] = bound_kind
            todo.append((name, bound_kind))
    return False, bound


def _uses(read: _Text, word: str, kind: str):
    """For each use of `word` (a `kind`) in code outside import statements: (None, None) when
    the use is a packet or binds the word where this reading cannot name the target, else
    (name, kind) for each name it binds to a root or a namespace."""
    text = read.text
    whole = 2 if kind == ROOT else 1  # the links that make a packet
    for m in _uses_of(word).finditer(text, read.start, read.end):
        at = m.start()
        if at and _is_word(text[at - 1]):
            continue
        links = m.group("links")
        if "#" in links:
            links = _COMMENT.sub("", links)
        count = links.count(".")
        if count > whole:
            continue  # an overload (or an attribute of a packet): no packet
        end = m.end()
        if _CALLED.match(text, end) is not None:
            continue  # an eager call, or a call of the namespace (`torch.ops.load_library(...)`)
        if count == whole:
            if kind == ROOT and _LINK_NAME.search(links).group() in _NOT_PACKET_NAMESPACES:
                continue
            if in_code(text, at) and not _inside(read.spans, at):
                yield None, None
            continue
        if _STORED.match(text, end) is not None or not in_code(text, at) or _inside(read.spans, at):
            continue
        # A root or a namespace on its own: the names it is bound to are one too.
        yield from _bindings(text, at, end, NAMESPACE if count == 1 else kind)


def _bindings(code: str, at: int, end: int, kind: str):
    m = _AS.match(code, end)
    if m is not None:
        yield m.group(1), kind
    row = code.rfind("\n", 0, at) + 1
    before = code[row:at]
    before = before[: _CHAIN_BEFORE.search(before).start()]
    walrus = _WALRUS.search(before)
    if walrus is not None:
        yield walrus.group(1), kind
        return
    assigns = list(_ASSIGN.finditer(before))
    if not assigns:
        if not before.strip(" \t([{,\\*"):
            # The statement may have started on an earlier row: its target is not on this one.
            yield None, None
        return
    for piece in re.split(r"[=,;]", before[: assigns[-1].start()]):
        piece = piece.split(":")[0].strip(" \t()[]*")
        if _TARGET.fullmatch(piece):
            yield piece.rpartition(".")[2], kind


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def _inside(spans: list[tuple[int, int]], at: int) -> bool:
    i = bisect_right(spans, (at, _END)) - 1
    return i >= 0 and at < spans[i][1]


_END = float("inf")


# -- the checked file, with what it imports from the project --------------------------------------


def may_hold_packet(text: str, path: str, project) -> bool:
    """The text, with the names it imports from other modules of the project, can make a
    packet. The modules read (and those looked for and absent) are dependencies of the
    check of `path`."""
    if spells_packet(text):
        return True
    if "import" not in text:
        return False
    deps: list = []
    extra: dict[str, str] = {}
    try:
        for local, full in file_imports(text, path):
            if _kind(full) is not None:
                continue
            module, _, name = full.rpartition(".")
            where = _find(project, module, path, deps) if module else None
            if where is None or where == os.path.abspath(path):
                continue
            kind = name_kind(project, where, name, deps)
            if kind == PACKET:
                return True
            if kind:
                extra[local] = kind
        if "*" in text:
            for base in star_sources(project, path, None):
                where = _find(project, base, path, deps)
                if where is not None:
                    kinds = _star_kinds(project, where, deps)
                    if PACKET in kinds.values():
                        return True
                    extra.update(kinds)
        if not extra:
            return False
        read = _Text(_identifiers(text))
        return _scan(read, {**_ROOT_WORDS, **_torch_names(read.text, read.spans), **extra})[0]
    finally:
        if ProjectIndex.wants_dependencies:  # a run without a cache reads none
            file_keys.record(project, path, tuple(dict.fromkeys(deps)))


def _find(project, module: str, requester: str, deps: list) -> str | None:
    run = _run()
    root = run["roots"].get(requester)
    if root is None:
        root = run["roots"][requester] = import_root(requester)
    key = (module, root)
    found = run["found"]
    if ProjectIndex.fixed_layout and key in found:
        where = found[key]
    else:
        where = project.find_module_in_check(module, requester) if _may_exist(project, module, requester) else None
        if ProjectIndex.fixed_layout:
            # Files under one import root find a module at the same place (`module_bases`).
            found[key] = where
    if where is None:
        mine = run["names"].get(requester)
        if mine is None:
            mine = run["names"][requester] = module_name_for(requester) or ""
        if mine.split(".")[0] == module.split(".")[0]:
            # A module of this project that does not exist yet: creating it changes the answer.
            deps.append((os.path.join(root, *module.split(".")) + ".py", None))
    return where


def _may_exist(project, module: str, requester: str) -> bool:
    """False when no place `find_module` would look at holds the module, as the listings of
    their directories tell (kept for a run whose files stay put; elsewhere: True)."""
    if not ProjectIndex.fixed_layout or project.overlay:
        return True
    run = _run()
    top = module.partition(".")[0]
    if top != module:
        # Most imports are of other packages (torch, typing): their top package is nowhere.
        key = (top, run["roots"].get(requester) or import_root(requester))
        if key not in run["tops"]:
            run["tops"][key] = _may_exist(project, top, requester)
        if not run["tops"][key]:
            return False
    listings = run["listings"]
    for base in module_bases(module, requester):
        parent, name = os.path.split(base)
        names = listings.get(parent)
        if names is None:
            try:
                names = listings[parent] = frozenset(os.listdir(parent))
            except OSError:
                names = listings[parent] = frozenset()
        if name in names or name + ".py" in names or name + ".pyi" in names:
            return True
    return False


def _run() -> dict:
    """What module lookups found, for the run (`ProjectIndex.layouts`) whose files stay put."""
    global _RUN
    if _RUN["layouts"] != ProjectIndex.layouts:
        _RUN = {"layouts": ProjectIndex.layouts, "found": {}, "listings": {}, "roots": {}, "tops": {}, "names": {}}
    return _RUN


_RUN: dict = {"layouts": -1}


# -- other modules ------------------------------------------------------------------------------


class _Module:
    """What a module's text binds at module level, read once per content, and only as far as
    the names asked about need (most are functions and classes it defines)."""

    def __init__(self, path: str, text: str):
        self.path = path
        self.text = text = _identifiers(text)
        self.spans = import_spans(text) if "import" in text else []
        self.torch = _torch_names(text, self.spans)
        self.stars = "*" in text and bool(self.spans)
        self._imports: dict[str, str] | None = None
        self._import_text: str | None = None
        self._bindings: dict[str, list[tuple[int, int]]] | None = None

    def imported(self, name: str) -> str | None:
        """The dotted name `name` is imported as (an import statement spells it, or None)."""
        if self._imports is None:
            if self._import_text is None:
                self._import_text = "\n".join(self.text[start:end] for start, end in self.spans)
            if name not in self._import_text:
                return None
            self._imports = {}
            module = module_name_for(self.path) if _RELATIVE.search(self.text) else None
            for start, end in self.spans:
                self._imports.update(text_imports(self.text[start:end], module, self.path))
        return self._imports.get(name)

    def bindings(self, name: str) -> list[tuple[int, int]]:
        """The module-level statements that may bind `name` (read once a name is assigned)."""
        if self._bindings is None:
            if not _assigned(self.text, name):
                return []
            self._bindings = {}
            _statements(self.text, self._bindings)
        return self._bindings.get(name, [])

    def every_name(self) -> set[str]:
        """Every name the module may bind at module level or import (a star import's reach)."""
        bindings: dict[str, list[tuple[int, int]]] = {}
        _statements(self.text, bindings)
        imports: dict[str, str] = {}
        for start, end in self.spans:
            imports.update(text_imports(self.text[start:end], None, self.path))
        return {*bindings, *imports, *self.torch}

    def defines(self, name: str) -> bool:
        """`def name` or `class name` at column 0."""
        text = self.text
        for word in ("def", "class"):
            spelled = f"{word} {name}"
            at = text.find(spelled)
            while at >= 0:
                end = at + len(spelled)
                row = text.rfind("\n", 0, at) + 1
                if text[row:at] in ("", "async ") and not (end < len(text) and _is_word(text[end])):
                    return True
                at = text.find(spelled, end)
        return False


def _assigned(text: str, name: str) -> bool:
    """Whether `name` may be assigned in the text: followed on its row by an `=` (not `==`),
    or after `as`; or the text has a target list closed on a row of its own (`(a,\n b) = x`)."""
    size = len(name)
    at = text.find(name)
    while at >= 0:
        end = at + size
        alone = not (at and _is_word(text[at - 1])) and not (end < len(text) and _is_word(text[end]))
        if alone and (_EQUALS_AFTER.match(text, end) is not None or _AS_BEFORE.search(text, max(0, at - 16), at)):
            return True
        at = text.find(name, end)
    return _CLOSED_TARGETS.search(text) is not None


_EQUALS_AFTER = re.compile(r"[^\n]*?(?<![=!<>])=(?!=)")
_AS_BEFORE = re.compile(r"\bas[ \t]+\Z")
# Led by the newline (a literal the search skips to): a first row cannot close a bracket.
_CLOSED_TARGETS = re.compile(r"\n[ \t]*[)\]][ \t]*=(?!=)")


# A row starting at column 0 (led by the newline: a literal the search skips to).
_RELATIVE = re.compile(r"from[ \t]+\.")
_HEAD = re.compile(r"\n(?:[^\W\d]|@)")
_DEF = re.compile(r"(?:async[ \t]+)?(?:def|class)[ \t]+(\w+)")
_COMPOUND = frozenset({"if", "elif", "else", "try", "except", "finally", "with", "for", "while", "async", "match"})
_ROW_TARGETS = re.compile(
    r"\n[ \t]*((?:[(\[]?[ \t]*[^\W\d][\w.]*(?:[ \t]*,[ \t]*[^\W\d][\w.]*)*[ \t]*,?[ \t]*[)\]]?"
    r"[ \t]*(?::[^=\n]*)?=(?!=)[ \t]*)+)",
)
_AS_TARGET = re.compile(r"\bas[ \t]+([^\W\d]\w*)")
_NAME = re.compile(r"[^\W\d]\w*")


def _statements(text: str, bindings: dict[str, list[tuple[int, int]]]) -> None:
    r"""Split the module-level code into statements and record the names each binds (every
    name assigned on any of its rows: a superset). A statement starts at a row that starts
    at column 0; a row while brackets are still open, after a row ending in `\`, or one that
    binds nothing (an element of a literal written at column 0, as far as this reading can
    tell) continues the one before. Brackets are counted in strings and comments too: an
    extra opening one joins statements, which only adds names."""
    starts = [m.start() + 1 for m in _HEAD.finditer(text)]
    if text[:1].isalpha() or text[:1] in "_@":
        starts.insert(0, 0)
    pieces: list[list] = []  # [start, end, names]
    depth = 0
    for i, start in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        piece = text[start:end]
        first = _NAME.match(text, start)
        head = first.group() if first is not None else "@"
        if head in ("def", "class", "@", "import", "from") or (head == "async" and _DEF.match(text, start)):
            names = None  # binds no name whose value this reading follows
        elif "=" not in piece and " as " not in piece:
            names = set()
        else:
            names = {
                n
                for m in _ROW_TARGETS.finditer("\n" + piece)
                for target in m.group(1).split("=")[:-1]
                for n in _NAME.findall(target.split(":")[0])  # not the annotation's names
            }
            names.update(_AS_TARGET.findall(piece))
        opened = depth > 0 or text[start - 2 : start] == "\\\n"
        if pieces and (opened or (names is not None and not names)):
            previous = pieces[-1]
            previous[1] = end
            if names:
                previous[2] = (previous[2] or set()) | names
        else:
            pieces.append([start, end, names])
            depth = 0
        depth += piece.count("(") + piece.count("[") + piece.count("{")
        depth -= piece.count(")") + piece.count("]") + piece.count("}")
    for start, end, names in pieces:
        for name in names or ():
            bindings.setdefault(name, []).append((start, end))


def _module(project, path: str, deps: list) -> _Module:
    key = file_keys.content_key(project, path)
    deps.append((path, key))
    known = _MODULES.get(path)
    if known is None or known[0] != key:
        if len(_MODULES) > 20_000:
            _MODULES.clear()
        known = _MODULES[path] = (key, _Module(path, project.text(path) or ""))
    return known[1]


_MODULES: dict[str, tuple[tuple | None, _Module]] = {}
# (path, name) -> (kind, the (path, key) pairs it was read from)
_KINDS: dict[tuple[str, str], tuple[str, tuple]] = {}
_ASKING: set[tuple[str, str]] = set()


def name_kind(project, path: str, name: str, deps: list) -> str:
    """What the module at `path` binds `name` to at module level: `PACKET` (or a collection
    that may hold one, or cannot tell), `NAMESPACE`, `ROOT`, or "" (none of those). What was
    read is appended to `deps`."""
    key = (path, name)
    known = _KINDS.get(key)
    if known is not None and file_keys.still_valid(project, known[1]):
        deps.extend(known[1])
        return known[0]
    if key in _ASKING:
        return PACKET  # an import cycle: what the name is, is still being read
    _ASKING.add(key)
    mine: list = []
    try:
        kind = _name_kind(project, _module(project, path, mine), name, mine)
    finally:
        _ASKING.discard(key)
    trail = tuple(dict.fromkeys(mine))
    if len(_KINDS) > 50_000:
        _KINDS.clear()
    _KINDS[key] = (kind, trail)
    deps.extend(trail)
    return kind


def _name_kind(project, module: _Module, name: str, deps: list) -> str:
    kinds: set[str] = set()
    if name in module.torch:
        kinds.add(module.torch[name])
    for span in module.bindings(name):
        kinds.add(_statement_kind(project, module, span, name, deps))
    full = module.imported(name)
    if full is not None and name not in module.torch:
        source, _, attr = full.rpartition(".")
        where = _find(project, source, module.path, deps) if source else None
        if where is not None and where != module.path:
            kinds.add(name_kind(project, where, attr, deps))
    if module.stars and not kinds and full is None and not module.defines(name):
        for base in star_sources(project, module.path, None):
            where = _find(project, base, module.path, deps)
            if where is not None and where != module.path:
                kinds.add(name_kind(project, where, name, deps))
    kinds.discard("")
    if PACKET in kinds or len(kinds) > 1:
        return PACKET
    return kinds.pop() if kinds else ""


def _statement_kind(project, module: _Module, span: tuple[int, int], name: str, deps: list) -> str:
    """What a module-level statement binding `name` binds it to."""
    code = module.text[span[0] : span[1]]
    anchors = {**_ROOT_WORDS, **module.torch}
    for word in set(_WORD.findall(code)):
        if word == name or word in anchors or keyword.iskeyword(word):
            continue
        if module.bindings(word) or module.imported(word) is not None:
            kind = name_kind(project, module.path, word, deps)
            if kind == PACKET:
                return PACKET
            if kind:
                anchors[word] = kind
    packet, bound = _scan(_Text(module.text, span[0], span[1], module.spans), anchors)
    if packet:
        return PACKET
    return bound.get(name, "")


def _star_kinds(project, path: str, deps: list) -> dict[str, str]:
    """The names a star import of the module at `path` may bind to packets, namespaces and
    roots (every name it binds or imports: its `__all__` is not read, a superset)."""
    module = _module(project, path, deps)
    out: dict[str, str] = {}
    for name in sorted(module.every_name()):
        kind = name_kind(project, path, name, deps)
        if kind:
            out[name] = kind
    return out
