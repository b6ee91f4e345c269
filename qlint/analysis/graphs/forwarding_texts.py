"""What the helper search reads of other modules from their texts alone (names defined,
imports, wrappers, whether a sink can be named): answers kept per path while the module's
content key holds, so a module is not parsed (nor summarised) to learn that it holds no helper.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING, TypeVar

from qlint.analysis.graphs import file_keys
from qlint.analysis.graphs.called_names import attributes_called
from qlint.analysis.identifier_text import normalised
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.text_imports import text_imports
from qlint.lazy_patterns import lazy

if TYPE_CHECKING:
    from qlint.analysis.graphs.module_text import ModuleText

# Facts shared by the checks of one process, each with the modules (and their content keys)
# it was read from: reused only while those are unchanged.
_TEXTS: dict[tuple, tuple[tuple | None, bool]] = {}
_T = TypeVar("_T")
_WRAPPERS: dict[object, tuple[tuple | None, tuple[frozenset[str], frozenset[str]]]] = {}


def module_wrappers(
    project, path: str, needles: tuple[str, ...] | None = None
) -> tuple[frozenset[str], frozenset[str]]:
    """The functions and classes of a module naming a sink that its own text makes wrappers
    (`wrapper_candidates.candidates` of it alone): of its insertions (QL102's kind), or with
    `needles`, of its sink calls, each needle written in code standing for one any parameter
    of the function around it may reach (QL101's sink helpers, read as `sink_index` reads
    them: the last module of a sink-helper chain, which names the sink, holds no insertion)."""

    def wrappers(text: str) -> tuple[frozenset[str], frozenset[str]]:
        # Imported here: only a module naming a sink is read this way, and the text reader's
        # 16 patterns are ~2 ms of a `qlint check FILE` that reads none (`module_text` too).
        from qlint.analysis.graphs.module_text import ModuleText
        from qlint.analysis.graphs.wrapper_candidates import candidates

        if needles is None:
            module = ModuleText(text, path)
        else:
            from qlint.analysis.graphs.sink_index import sink_module_text

            module = sink_module_text(text, path, needles)
        functions, classes = candidates([module], [], instances=needles is None)
        return frozenset(functions), frozenset(classes)

    slot = path if needles is None else (path, needles)
    return _per_content(_WRAPPERS, 50_000, project, path, wrappers, slot)


def _per_content(memo: dict, limit: int, project, path: str, work: Callable[[str], _T], slot: object = None) -> _T:
    """What `work` makes of a module's text, kept per path (in `memo`, up to `limit` entries;
    `slot`: its key there when one path has several, one per kind) while the module's content
    key stays the one it was made for."""
    key = file_keys.content_key(project, path)
    slot = path if slot is None else slot
    found = memo.get(slot)
    if found is None or found[0] != key:
        if len(memo) > limit:
            memo.clear()
        found = memo[slot] = (key, work(searched_text(project, path)))
    return found[1]


def searched_text(project, path: str) -> str:
    """A module's text as Python reads its identifiers (`identifier_text`), which the helper
    search reads: `def insert_op(graph, op)` defines `insert_op` and `graph.call_function(op)`
    inserts, each also with fullwidth letters."""
    return normalised(project.text(path) or "")


def _no_sites(masked: str) -> list:
    return []


_TEXTS_READ: dict[str, tuple[tuple | None, ModuleText]] = {}


def module_text(project, path: str) -> ModuleText:
    """A link module's text as `wrapper_candidates` reads it (`module_text`)."""
    from qlint.analysis.graphs.module_text import ModuleText  # see `module_wrappers`

    return _per_content(_TEXTS_READ, 2_000, project, path, lambda text: ModuleText(text, path, sites=_no_sites))


_NAMES: dict[str, tuple[tuple | None, tuple[frozenset[str], frozenset[str], dict[str, str]]]] = {}


def called_attributes(text: str, name: str) -> set[tuple[str, ...]]:
    """`attributes_called`, answered once per name for the text asked about last (the import
    trigger and the helper search ask about functions and classes of the same imports)."""
    global _ATTRIBUTES
    if _ATTRIBUTES is None or _ATTRIBUTES[0] is not text:
        _ATTRIBUTES = (text, {})
    memo = _ATTRIBUTES[1]
    if name not in memo:
        memo[name] = attributes_called(text, name)
    return memo[name]


_ATTRIBUTES: tuple[str, dict[str, set[tuple[str, ...]]]] | None = None
_CLASSES: dict[str, tuple[tuple | None, frozenset[str]]] = {}


def class_names(project, path: str) -> frozenset[str]:
    """The names a module's text defines with `class` (at any depth: a superset)."""
    return _per_content(_CLASSES, 50_000, project, path, lambda text: frozenset(_DEFINES[1].findall(text)))


def text_names(project, path: str) -> tuple[frozenset[str], frozenset[str], dict[str, str]]:
    """The names a module's text defines (`def`/`class`, at any depth), those of them it
    defines with `def` (a superset of its summary's functions), and its imports as the
    text spells them (`text_imports`, the last binding of a name winning as in
    `ModuleScope`); read again when its content key changes."""

    def names(text: str) -> tuple[frozenset[str], frozenset[str], dict[str, str]]:
        functions = frozenset(_DEFINES[0].findall(text))
        defined = functions | frozenset(_DEFINES[1].findall(text))
        return defined, functions, dict(text_imports(text, module_name_for(path), path))

    return _per_content(_NAMES, 50_000, project, path, names)


# Each led by its literal (searched fast); a superset of the names defined (also in strings,
# comments, `undef x`): a name found here is looked up in the module's summary.
_DEFINES = (lazy(r"def[ \t]+(\w+)"), lazy(r"class[ \t]+(\w+)"))


def mentions(project, path: str, kind: str, holds_sink: Callable[[str], bool]) -> bool:
    """Whether the module's text can hold a sink of `kind`: an editor's buffer as it is, a
    file as it is on disk now (read again when its stat changes)."""
    key = file_keys.content_key(project, path)
    found = _TEXTS.get((path, kind))
    if found is None or found[0] != key:
        if len(_TEXTS) > 50_000:
            _TEXTS.clear()
        found = _TEXTS[(path, kind)] = (key, holds_sink(searched_text(project, path)))
    return found[1]


def is_torch(full: str) -> bool:
    return full == "torch" or full.startswith(("torch.", "builtins."))


def of_torch(full: str) -> bool:
    """`torch` or a name under it (`is_torch` without `builtins`, which a project may hold)."""
    return full == "torch" or full.startswith("torch.")
