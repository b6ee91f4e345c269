"""Which modules of a project hold which words: each module read and cut into words once per
content, per process, for every search of a project's modules by name.

The caller searches (`flow.project_callers`: a helper's callers elsewhere, whether another
module's text names a module's file, a method named in other modules) ask every module of
the project whether its text holds a name, dozens of names per run. Read again for each name,
ExecuTorch's cold run made 64,000 file reads (about 4 s of its 22 s). Here a module is read
once per content key (its stat, or the editor's buffer: `content_keys`), and only its words
are kept: the maximal runs of ASCII letters, digits and underscores, each once, joined by
line breaks (ExecuTorch's 29 MB of modules keep 6.4 MB), and those of the text as Python
reads its names where NFKC changes it (`module_words`: `foo` with a fullwidth `f` is `foo`).
Two questions are answered from them exactly, as reading the text, or that reading of it,
would:

- `holding`: the text holds `word` (a substring test). A word made of those characters only
  lies inside one run wherever it occurs, so the text holds it exactly when one of the
  module's words does (a name in a comment or a string counts, as in the text).
- `spells`: the text holds `word` with no ASCII letter, digit or underscore on either side
  (`references.spells`), exactly when it is one of the module's words; a byte past ASCII
  ends a run, as it is a boundary there.

A word with any other character (a non-ASCII identifier, a file name with a dash) is
answered by reading the modules, as before. The modules holding a word are kept per word
until a module is read again (a new content: an edit in the language server), and then only
that module is read. A module that is absent, unreadable or over `MAX_BYTES` holds nothing,
as the searches it serves skip it.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping
from itertools import islice
from typing import TYPE_CHECKING

from qlint.analysis.identifier_text import normalised_bytes
from qlint.analysis.names import content_keys
from qlint.analysis.names.references import spells as text_spells

if TYPE_CHECKING:
    from qlint.analysis.names.shared_words import SharedWords

MAX_BYTES = 1_000_000  # a module larger than this is not searched (generated tables)

_WORD_BYTES = frozenset(b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_")
# Every byte that is not part of a word becomes a space, which `split` cuts at.
_TO_SPACES = bytes(c if c in _WORD_BYTES else 0x20 for c in range(256))

# path -> (content key, its words as b"\nw1\nw2\n...\n", or None: holds nothing)
_MODULES: dict[str, tuple[tuple, bytes | None]] = {}
_MAX_MODULES = 200_000
# pattern -> the paths of `_MODULES` whose words hold it; dropped whenever a module is read.
_FOUND: dict[bytes, frozenset[str]] = {}
_MAX_FOUND = 4096
_READS = 0
# Bumped whenever what `_MODULES` or the shared words answer may have changed (a module read,
# forgotten, or left to the shared words; other shared words).
_GENERATION = 0
# (a copy of the keys, `_GENERATION`, the module passed over) after `holding` asked every
# module of those keys but that one, read at its key or answered by the shared words: the
# next question with the same keys skips the walk over them (ExecuTorch's caller searches
# asked 43 questions of its 3,784 modules).
_WALKED: tuple[dict, int, str] | None = None
# The words a parallel run's child cut for every process of the run, or a run of one process cut
# for itself (`shared_words`): a module is answered from them at the key they were cut at, unless
# `_MODULES` holds it.
_SHARED: SharedWords | None = None

# Known answers for modules not read at their keys yet (what an earlier run found), by path:
# the text holds the word or not; absent: read it.
Known = Mapping[str, bool]


def holding(
    overlay: Mapping[str, str],
    keys: Mapping[str, tuple | None],
    word: str,
    known: Known | None = None,
    besides: str = "",
    limit: int | None = None,
) -> list[str]:
    """The paths of `keys` (path -> content key, as `module_keys.project_keys` lists them)
    whose text holds `word`, in the order of `keys`, but `besides` (the module checked, which
    is not read: in the editor its buffer changes at every keystroke). `known` may answer for
    a module (at its key in `keys`) not read at that key yet, which is then not read.

    With a `limit`, only the first `limit` of them: the modules past the one that reaches it
    are not asked, nor read (the caller search gives up past 80 holders, and ExecuTorch holds
    `run` in 1,329 modules; whether a module's name is held anywhere wants one). A holder list
    shorter than `limit` asked every module, as a search without one does."""
    needle = _plain(word)
    if needle is None:
        listed = ((p, k) for p, k in keys.items() if k is not None and p != besides)
        return _first((p for p, k in listed if _read_holds(overlay, p, k, word, False, known)), limit)
    if _walked(keys, besides):  # every module read at its key already: one scan, kept per word
        found = _found(needle)
        if not known:
            held = (p for p, k in keys.items() if k is not None and p != besides and p in found)
        else:
            held = (p for p, k in keys.items() if k is not None and p != besides and known.get(p, p in found))
        return _first(held, limit)
    return _first(_asking(overlay, keys, needle, besides, known), limit)


def _first(paths: Iterable[str], limit: int | None) -> list[str]:
    """The first `limit` of `paths` (all of them without one); none drawn past it."""
    return list(paths if limit is None else islice(paths, limit))


def _asking(
    overlay: Mapping[str, str], keys: Mapping[str, tuple | None], needle: bytes, besides: str, known: Known | None
) -> Iterator[str]:
    """The modules of `keys` holding `needle`, asked one by one in the order of `keys`, each read
    only when it is reached (unless read at its key already, answered by the shared words, or by
    `known`). Drawn to the end, every module was asked, and the next question with the same keys
    and nothing read since is one scan of the words (`_walked`)."""
    global _WALKED, _GENERATION
    shared = _SHARED
    modules = _MODULES
    for path, key in keys.items():
        if key is None or path == besides:
            continue
        answer = known.get(path) if known else None
        if answer is None:
            entry = modules.get(path)
            if entry is not None and entry[0] == key:
                words = entry[1]
            elif shared is not None and shared.holds_key(path, key):
                if entry is not None:  # read before at another key: the shared words are the current ones
                    del modules[path]
                    _FOUND.clear()
                    _GENERATION += 1
                if shared.holds(path, needle):
                    yield path
                continue
            else:
                words = _words(overlay, path, key)
            answer = words is not None and needle in words
        if answer:
            yield path
    # With answers known, some modules were left unread: nothing to skip next time.
    _WALKED = None if known else (dict(keys), _GENERATION, besides)


def _walked(keys: Mapping[str, tuple | None], besides: str) -> bool:
    """Whether `_asking` would read nothing: it asked every module of these very keys last,
    nothing was read or forgotten since, and the module it passed over is `besides` too or
    was read, or is answered by the shared words at its key (a parallel run's: there each
    check passing over a module of its own walked all of ExecuTorch's 3,784 modules again,
    36 walks over the two processes, instead of one scan of the words per needle)."""
    walked = _WALKED
    if walked is None or walked[1] != _GENERATION or walked[0] != keys:
        return False
    other = walked[2]
    key = keys.get(other)
    if other == besides or key is None:
        return True
    entry = _MODULES.get(other)
    if entry is None:  # `_found` answers it from the shared words, if they hold it at its key
        return _SHARED is not None and _SHARED.holds_key(other, key)
    return entry[0] == key


def spells(overlay: Mapping[str, str], path: str, key: tuple | None, word: str) -> bool:
    """Whether the module's text spells `word` as a whole identifier (`references.spells`)."""
    if key is None:
        return False
    needle = _plain(word)
    if needle is None:
        return _read_holds(overlay, path, key, word, True, None)
    entry = _MODULES.get(path)
    if (entry is None or entry[0] != key) and _shared(path, key):
        return _SHARED.spells(path, needle)  # type: ignore[union-attr]
    words = _words(overlay, path, key)
    return words is not None and b"\n" + needle + b"\n" in words


def known_to_lack(path: str, key: tuple, needles: tuple[bytes, ...]) -> bool:
    """Whether the module's words, cut at `key` already (here or by the shared words), show that
    its text holds none of `needles`, without reading it. False where they cannot tell: a needle
    with a character outside words, or no words of the module at that key (not cut yet, or none:
    absent, or over `MAX_BYTES`). A project scan that reads a module only to search its bytes
    for a few names (QL102's consumer and definition scans: ~15,000 reads of ExecuTorch's
    modules, each already cut into words by a caller search) asks here first."""
    if not all(n and n.translate(_TO_SPACES) == n for n in needles):
        return False
    entry = _MODULES.get(path)
    if entry is not None and entry[0] == key:
        words = entry[1]
        return words is not None and not any(n in words for n in needles)
    if _SHARED is not None and _SHARED.holds_key(path, key):
        return _SHARED.lacks(path, needles)
    return False


def module_words(data: bytes) -> frozenset[bytes]:
    """`words_of` a module's bytes, and of their reading as Python reads names
    (`identifier_text.normalised_bytes`, NFKC) where that differs: a module calling `foo(...)`
    with a fullwidth `f` calls `foo`, and holds the word `foo` as every other reader of it
    finds. The raw words stay too (a scan of the raw text finds them). ASCII bytes, nearly
    every module's, are their own reading (`bytes.isascii`: no copy)."""
    words = words_of(data)
    if data.isascii():
        return words
    named = normalised_bytes(data)
    return words if named is data else words | words_of(named)


def words_of(data: bytes) -> frozenset[bytes]:
    """The distinct maximal runs of ASCII letters, digits and underscores in `data`: a name is
    one of them exactly where `references.spells` finds it."""
    return frozenset(data.translate(_TO_SPACES).split())


def reads() -> int:
    """How many times a module was read and cut into words in this process (tests, benchmarks)."""
    return _READS


def forget() -> None:
    """Drop every module read (tests)."""
    global _READS, _GENERATION, _WALKED
    _MODULES.clear()
    _FOUND.clear()
    _READS = 0
    _GENERATION += 1
    _WALKED = None


def share(words: SharedWords | None) -> None:
    """Answer from `words` (cut by `shared_words` for this run) where they are at the key
    asked; None: no more (the run is over, and the modules may change afterwards)."""
    global _SHARED, _GENERATION
    _SHARED = words
    _FOUND.clear()
    _GENERATION += 1


def _shared(path: str, key: tuple) -> bool:
    """Whether the shared words answer for the module at `key`. A module read before at
    another key is forgotten: the shared words are the current ones."""
    global _GENERATION
    if _SHARED is None or not _SHARED.holds_key(path, key):
        return False
    if _MODULES.pop(path, None) is not None:
        _FOUND.clear()
        _GENERATION += 1
    return True


def _plain(word: str) -> bytes | None:
    """`word` as bytes when it is made of word characters only (answered from the words)."""
    if not word or not word.isascii():
        return None
    needle = word.encode()
    return needle if needle.translate(_TO_SPACES) == needle else None


def _words(overlay: Mapping[str, str], path: str, key: tuple) -> bytes | None:
    global _READS, _GENERATION
    entry = _MODULES.get(path)
    if entry is not None and entry[0] == key:
        return entry[1]
    data = content_keys.content_bytes(overlay, path, key, MAX_BYTES)
    words = None if data is None else b"\n" + b"\n".join(module_words(data)) + b"\n"
    if len(_MODULES) >= _MAX_MODULES:
        _MODULES.clear()
    _MODULES[path] = (key, words)
    _FOUND.clear()
    _READS += 1
    _GENERATION += 1
    return words


def _found(needle: bytes) -> frozenset[str]:
    found = _FOUND.get(needle)
    if found is None:
        if len(_FOUND) >= _MAX_FOUND:
            _FOUND.clear()
        own = {p for p, (_, w) in list(_MODULES.items()) if w is not None and needle in w}
        if _SHARED is not None:
            own.update(p for p in _SHARED.holding(needle) if p not in _MODULES)
        found = _FOUND[needle] = frozenset(own)
    return found


def _read_holds(overlay: Mapping[str, str], path: str, key: tuple, word: str, whole: bool, known: Known | None) -> bool:
    """The text test itself, on the module's bytes read now (a word the runs cannot answer)."""
    answer = known.get(path) if known is not None else None
    if answer is not None and (answer is False or not whole):
        return answer
    data = content_keys.content_bytes(overlay, path, key, MAX_BYTES)
    if data is None:
        return False
    return text_spells(data, word) if whole else word.encode("utf-8", "surrogatepass") in data


__all__ = ["MAX_BYTES", "holding", "known_to_lack", "module_words", "reads", "spells", "words_of"]
