"""The names a module imports, read from its text without parsing it.

QL102's prefilter asks whether a file that inserts nothing itself imports the project's own
insertion wrapper, and the helper search follows a name through a module that only
re-exports it (`from .graph_utils import insert_op` in a package's `__init__.py`). Both
questions are asked of many modules that are never otherwise parsed, so their imports are
read from the text: every `import`/`from ... import` statement, wherever it stands. That is
a superset of the module-level imports `ModuleScope` binds (an import inside a function
counts too), which is what a prefilter needs: it may keep a file the check then finds clean,
never skip one the check would report. Rows and names are read as Python reads them
(`identifier_text.normalised`): a lone `\r` ends a row, as in an old Mac file, and a name
written in fullwidth letters is its ASCII twin (NFKC), in the checked module and in every
other module read so.
"""

from __future__ import annotations

import re

from qlint.analysis.identifier_text import normalised
from qlint.analysis.names.modules import module_name_for, resolve_relative
from qlint.lazy_patterns import lazy

# A statement starts a row or follows a `;` (matched there: `_starts`). `from` imports take a
# bracketed list (over rows, with comments) or the rest of the row (with line continuations).
# A comment runs to the end of its row (the look-ahead): one way to match, so an unclosed
# bracket fails in linear time.
_STATEMENT = lazy(
    r"[ \t]*(?:from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]*"
    r"(\((?:[^)#]|#[^\n]*(?![^\n]))*\)|[^\n;#\\]*(?:\\\n[^\n;#\\]*)*)"
    r"|import[ \t]+([^\n;#\\]*(?:\\\n[^\n;#\\]*)*))"
)
_COMMENT = lazy(r"#[^\n]*")
_ALIAS = lazy(r"^([\w.]+)(?:\s+as\s+(\w+))?$")


def text_imports(text: str, module: str | None, path: str) -> list[tuple[str, str]]:
    """(local name, fully qualified dotted name) of every import statement, in order, as
    `ModuleScope.imports` spells them (`import a.b` binds `a` to `a`; a star import binds
    nothing). A name imported twice (at module level and in a function) is listed twice."""
    return _imports(_statements(text), module, path)


def _imports(statements: list[re.Match[str]], module: str | None, path: str) -> list[tuple[str, str]]:
    """`text_imports` of the text whose import statements (`_statements`) these are."""
    out: list[tuple[str, str]] = []
    for m in statements:
        dots, source, names, plain = m.groups()
        if plain is not None:
            for name, alias in _aliases(plain):
                top = name.split(".")[0]
                out.append((alias, name) if alias else (top, top))
            continue
        base = resolve_relative(module, path, len(dots), source or None)
        if base is None:
            continue
        for name, alias in _aliases(names):
            if "." not in name:
                out.append((alias or name, f"{base}.{name}"))
    return out


def _statements(text: str) -> list[re.Match[str]]:
    """The matches of the text's import statements, in order."""
    out: list[re.Match[str]] = []
    if "import" in text:
        # Names as Python reads them (`checks` in fullwidth letters imports `checks`). The spans are
        # of this text: every reader of them (`import_spans`) passes one read so already.
        text = normalised(text)
        for start in _starts(text, "import"):
            m = _STATEMENT.match(text, start)
            if m is not None:
                out.append(m)
    return out


def _read_once(text: str) -> list[re.Match[str]]:
    """`_statements` of the text, found once for the last whole text asked: the checked file's
    statements are what QL101's text trigger reads their spans from (`packet_text`, for a text
    spelling `ops` or `edge`: ExecuTorch's 1,811 such readings) and what the import triggers
    read their imports from (`file_imports`), each reading every `import` of the text. Not
    asked of a statement's own text (`packet_modules`, `packet_text` read those), which would
    replace the text read."""
    global _LAST_READ
    last = _LAST_READ
    if last is not None and last[0] is text:
        return last[1]
    found = _statements(text)
    _LAST_READ = (text, found)  # replaced whole: a reader on another thread sees one pair
    return found


def import_spans(text: str) -> list[tuple[int, int]]:
    """Where the text's import statements stand (start, end), in order, as `text_imports`
    reads them."""
    return [m.span() for m in _read_once(text)]


def file_imports(text: str, path: str) -> list[tuple[str, str]]:
    """`text_imports` of the module at `path`, named (a `stat` per package level) only where
    a relative import needs it; once per text, for each import trigger that asks (QL101's and
    QL102's read the same file's imports)."""
    global _LAST
    if _LAST is not None and _LAST[0] is text and _LAST[1] == path:
        return _LAST[2]
    statements = _read_once(text)
    found = _imports(statements, _relative_base(statements, path), path)
    _LAST = (text, path, found)
    return found


def plain_dotted_imports(text: str) -> list[tuple[str, str]]:
    """(name bound, dotted name) of the plain imports of a module under a package with no new
    name (`import pkg.checks` binds `pkg`, through which `pkg.checks.f(...)` is called), which
    `text_imports` reads as the `pkg` they bind alone; from the statements `file_imports` read."""
    out: list[tuple[str, str]] = []
    for m in _read_once(text):
        plain = m.group(4)
        if plain is not None and "." in plain:
            out.extend((name.split(".")[0], name) for name, alias in _aliases(plain) if alias is None and "." in name)
    return out


def _relative_base(statements: list[re.Match[str]], path: str) -> str | None:
    """The name of the module at `path`, asked (a `stat` per package level) only when one of
    its statements is relative (`from .x import`): not a search of the whole text for dots,
    which most texts, with no relative import, lack."""
    return module_name_for(path) if any(m.group(1) for m in statements) else None


_LAST: tuple[str, str, list[tuple[str, str]]] | None = None
# (the text, its statements' matches) of the last whole text read (`_read_once`)
_LAST_READ: tuple[str, list[re.Match[str]]] | None = None


def _starts(text: str, word: str) -> list[int]:
    """Where the statements that can hold `word` start (the row's start, or just after the
    last `;` before it), in order: a literal search, which a pattern anchored at each row's
    start would not be."""
    out: list[int] = []
    at = text.find(word)
    while at >= 0:
        row = text.rfind("\n", 0, at) + 1
        # A `;` before the row is no nearer: searched back to the row's start only (from
        # every `import` of a text without one, back to its start).
        start = text.rfind(";", row, at) + 1 or row
        if not out or out[-1] != start:
            out.append(start)
        at = text.find(word, at + len(word))
    return out


def _aliases(names: str) -> list[tuple[str, str | None]]:
    if "#" in names:
        names = _COMMENT.sub("", names)
    cleaned = names.replace("\\\n", " ").strip().strip("()")
    out = []
    for part in cleaned.split(","):
        name = part.strip()
        # Most parts are one (dotted) ASCII name, which `_ALIAS` matches whole with no `as`:
        # its match is skipped (asked of every import of every file the triggers read).
        if name.isascii() and name.replace(".", "_").isidentifier():
            out.append((name, None))
            continue
        m = _ALIAS.match(" ".join(part.split()))
        if m:
            out.append((m.group(1), m.group(2)))
    return out


_CLASS = lazy(r"[ \t]*class[ \t]+\w+[ \t]*\(")
_DOTTED = lazy(r"\w+(?:[ \t]*\.[ \t]*\w+)*")


def class_bases(text: str) -> set[tuple[str, ...]]:
    """The names (`Base`, `mod.Base`, as parts) written in the bases of the text's class
    statements (keywords and subscripts included): with `text_imports`, what a class may
    inherit from another module."""
    out: set[tuple[str, ...]] = set()
    if "class" not in text:
        return out
    text = normalised(text)
    for start in _starts(text, "class"):
        m = _CLASS.match(text, start)
        if m is None:
            continue
        depth, i = 1, m.end()
        end = min(len(text), i + 2000)
        while i < end and depth:
            depth += {"(": 1, ")": -1}.get(text[i], 0)
            i += 1
        for dotted in _DOTTED.findall(text, m.end(), i):
            out.add(tuple(p.strip() for p in dotted.split(".")))
    return out


def class_bases_by_head(text: str) -> dict[str, list[tuple[str, ...]]]:
    """`class_bases` by the name each starts at (`mod` for `mod.Base`): what the helper
    searches and their gates ask of each name a module imports."""
    heads: dict[str, list[tuple[str, ...]]] = {}
    for parts in class_bases(text):  # none where the text holds no `class`
        heads.setdefault(parts[0], []).append(parts)
    return heads


def imported_modules(text: str, path: str) -> set[str]:
    """The dotted names of the modules the import statements of the module at `path` may name,
    as `text_imports` reads them: a plain import's whole name (`import a.b` names `a.b`, which
    `text_imports` reads as the `a` it binds), a `from` import's source and each name under it
    (`from a import b` names `a` and `a.b`: `b` may be a module). The module is named (a `stat`
    per package level) only where a relative import needs it."""
    out: set[str] = set()
    statements = _statements(text)
    module = _relative_base(statements, path)
    for m in statements:
        dots, source, names, plain = m.groups()
        if plain is not None:
            out.update(name for name, _ in _aliases(plain))
            continue
        base = resolve_relative(module, path, len(dots), source or None)
        if base is not None:
            out.add(base)
            out.update(f"{base}.{name}" for name, _ in _aliases(names) if "." not in name)
    return out


def may_import(text: str, name: str) -> bool:
    r"""Whether `text` may import `name` as the last part of a name its imports bind or come
    from (`from a.name import x`, `from a import name`, `import a.name`: what
    `packet_scan.imported_names` holds), read from the text: a module spelling `name` only
    elsewhere (`def __init__(`, `pkg.name.f`, prose) is not parsed to find out. A superset of
    what the parse finds, however an import is written (over rows, in brackets, with comments,
    in a compound statement): an occurrence counts when an `import` follows it, or when it
    ends a name (`,`, `)`, `as`, the row's end) and an `import` stands before it with nothing
    between but what an import's names are written with. No import is missed in the installed
    torch, torchao and ExecuTorch and the two bench trees (11,315 modules, 171,768 names).
    Read as every text reader reads it (`identifier_text.normalised`): `checks` spelled in fullwidth
    letters is `checks`, and a lone `\r` ends a row (a `\` before it continues the statement)."""
    text = normalised(text)  # a yes or no: no offset goes back into the text given
    size, at = len(text), text.find(name)
    while at != -1:
        end = at + len(name)
        if (at == 0 or not _word_char(text[at - 1])) and (end == size or not _word_char(text[end])):
            after = _past_blanks(text, end)
            if _keyword_at(text, after, "import"):
                return True
            ends = after == size or text[after] in _NAME_ENDS or _keyword_at(text, after, "as")
            if ends and _in_import_list(text, at):
                return True
        at = text.find(name, end)
    return False


# What may follow a name an import binds, and what an import's names are written with between
# its `import` and one of them (names, dots, commas, a bracket, blanks, continued rows).
_NAME_ENDS = frozenset(",)\n\r#;")
_LIST_CHARS = frozenset(" \t\f\n\r,().\\")
# How far back an `import` is looked for: farther than any list of names but the longest (a
# walk this long counts as finding one, as the answer may only err towards a parse).
_LIST_REACH = 4000


def _word_char(c: str) -> bool:
    # Any character past ASCII outside a string or comment is part of a name.
    return c == "_" or c.isalnum() or c > "\x7f"


def _keyword_at(text: str, at: int, word: str) -> bool:
    end = at + len(word)
    return text.startswith(word, at) and (end >= len(text) or not _word_char(text[end]))


def _past_blanks(text: str, at: int) -> int:
    """Where the next token after `at` starts on its logical row (blanks and continued rows
    skipped)."""
    size = len(text)
    while at < size:
        if text[at] in " \t\f":
            at += 1
        elif text.startswith("\\\n", at):
            at += 2
        elif text.startswith("\\\r\n", at):
            at += 3
        else:
            break
    return at


def _in_import_list(text: str, at: int) -> bool:
    """Whether an `import` keyword stands before `at` with only names, dots, commas, brackets,
    blanks and comments between. A character no import's names hold ends the walk unless a `#`
    before it on its row starts a comment (the row's first `#`: names hold none); the walk
    may thus run through prose, never stop inside an import."""
    stop = max(0, at - _LIST_REACH)
    while at > stop:
        c = text[at - 1]
        if c in _LIST_CHARS:
            at -= 1
        elif _word_char(c):
            start = at - 1
            while start > 0 and _word_char(text[start - 1]):
                start -= 1
            if at - start == 6 and text.startswith("import", start):
                return True
            at = start
        else:
            comment = text.find("#", text.rfind("\n", 0, at) + 1, at)
            if comment == -1:
                return False
            at = comment
    return True
