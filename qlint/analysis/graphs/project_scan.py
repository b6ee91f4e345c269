"""What other modules of the project do to graphs, asked only when a finding is at stake.

Two facts decide whether a packet matcher is right that cannot be read from its module:
- another module inserts that very packet into graphs (directly or through the project's
  own wrapper), so the graphs the matcher sees carry it;
- the graphs are normalised to packets before the matcher sees them: a function that runs
  `strip_overloads` (or rewrites `n.target = n.target.overloadpacket`) and then calls the
  matcher, or a decorator whose wrapper does so (found by `project_normalisers` among the
  modules this scan keeps).

The project is the top-level package holding the file. What the scan keeps is keyed on
each module's content (its stat, or the editor's buffer through the project index's
overlay), and the directory is listed again at each check that asks, so a module created or
edited later is seen by the next check; every module the scan read is recorded as a
dependency of the check, for the results cache and the language server's dependents.

Here: which modules the scan keeps, and whether a kept module's text holds a probe's needles.
The facts asked of those modules are `scanned_facts`'; searches of every module's text for a
name, and the parses of other modules, are `project_texts`'.
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Callable
from typing import Any

from qlint.analysis import scan_memo
from qlint.analysis.context import FileContext
from qlint.analysis.graphs import file_keys
from qlint.analysis.graphs.graph_context import MARKER_WORDS, marked_path, may_carry_packets
from qlint.analysis.module_keys import project_keys
from qlint.analysis.names import project_words
from qlint.analysis.names.content_keys import known_digest
from qlint.analysis.names.modules import module_name_for
from qlint.short_digests import content_sha256_hex
from qlint.source import DecodeError, decode_source, read_source
from qlint.value_classes import field, value_class

_INSERTS = ("call_function", "create_node")
# The last: a library decorator whose wrapper strips the graph (`project_normalisers`).
NORMALISES = ("strip_overloads", "overloadpacket", "make_simple_dynamo_backend")
_NEEDLE_BYTES = tuple(n.encode() for n in _INSERTS + NORMALISES)
MAX_BYTES = 2_000_000
# `scan_memo`'s question: the module's bytes hold one of the needles (its text is kept).
_QUESTION = "project-scan:" + ",".join(_INSERTS + NORMALISES)
UNREAD: Any = object()  # in `_Project.files`: holds a needle, text not read yet


def scan_root(path: str) -> str | None:
    """The directory of the top-level package `path` belongs to (None for a module outside any
    package: a script's neighbours are not its project), counted up from the file by its
    module name. In a repository whose package maps onto its root, that is the repository,
    even where a directory on the way lacks `__init__.py` (ExecuTorch's
    `backends/nxp/aten_passes`): the import root joined with the package's name would then
    name no directory at all."""
    module = module_name_for(path)
    if not module or "." not in module:
        return None
    directory = os.path.dirname(os.path.abspath(path))
    levels = module.count(".") - (0 if os.path.basename(path) in ("__init__.py", "__init__.pyi") else 1)
    for _ in range(levels):
        directory = os.path.dirname(directory)
    return directory


@value_class
class _Project:
    # path -> (content key, text when it holds an insertion or normalisation, else None; `UNREAD`
    # until a scan needs the text, and always in a command-line run: `keeps_texts`)
    files: dict[str, tuple[tuple | None, str | None]] = field(default_factory=dict)
    # path -> (content key, {fact: (its value,) or None when the module does not parse}): what
    # was read off each module's parse. The parse itself is dropped: whole-tree contexts kept
    # for the run were a third of each worker's memory on ao.
    facts: dict[str, tuple[tuple | None, dict[Callable, tuple | None]]] = field(default_factory=dict)
    # qualified names normalisers call or decorate, and the keys of the modules they came from
    normalised: tuple[tuple, set[str]] | None = None
    keys: dict | None = None  # the check's `project_keys` the files were brought up to date with


_PROJECTS: dict[str, _Project] = {}
_BATCH = 64  # modules to look up at once, past which the saved answers are read in one pass
_NO_PROJECT = _Project()


def scanned_project(root: str | None, ctx: FileContext) -> _Project:
    """The project's modules as they are now (`module_keys.project_keys`: listed and
    stat-checked once per check, each a dependency of it), with the text of those that insert
    or normalise kept per content."""
    if root is None:
        return _NO_PROJECT
    root = os.path.abspath(root)
    found = _PROJECTS.setdefault(root, _Project())
    keys = project_keys(ctx, root)
    if found.keys is keys:
        return found
    project = ctx.project
    files = found.files
    # What earlier runs found about the modules not kept at their key yet, in one pass over the
    # saved answers (`known_sets`) when they are many: asked module by module, torch's 2,285
    # cost ~10 ms of each fresh process's check. An editor's next check asks about a few.
    pending = {
        path: key
        for path, key in keys.items()
        if key is not None and key[0] != "overlay" and ((known := files.get(path)) is None or known[0] != key)
    }
    holds, misses = scan_memo.known_sets(pending, [_QUESTION])[0] if len(pending) > _BATCH else (set(), set())
    seen: dict[str, tuple[tuple | None, str | None]] = {}
    for path, key in keys.items():
        known = files.get(path)
        if known is not None and known[0] == key:
            seen[path] = known
        elif (path in holds) != (path in misses):  # answered, and by every root alike
            seen[path] = (key, UNREAD if path in holds else None)
        else:
            seen[path] = _read(project, path, key)
    found.files = seen
    found.keys = keys
    return found


def keeps_texts(project) -> bool:
    """Whether the scan keeps the texts of the modules that insert or normalise, for the next
    probe of them. An editor's index does (a keystroke's check asks anew over all of them); a
    command-line run re-reads one when a probe not answered yet needs it (ExecuTorch: ~4,000
    reads over a run, each one a page-cache read): kept for the whole run, the ~500 texts were
    ~11 MiB in each process, both workers' copies at the run's peak."""
    return project.track_dependents


def _read(project, path: str, key: tuple | None) -> tuple[tuple | None, str | None]:
    """(key, the text if the module inserts or normalises, else None); `UNREAD` for a module
    an earlier run found does (`scan_memo`), or that does in a run that keeps no texts
    (`keeps_texts`): read when a scan asks for its text."""
    if key is None:
        return key, None
    if key[0] == "overlay":
        text = project.overlay[path]
        return key, text if any(n in text for n in _INSERTS + NORMALISES) else None
    held = scan_memo.answers(path, key, [_QUESTION])[0]
    if held is not None:
        return key, UNREAD if held else None
    if _words_rule_out(path, key):
        # What `_text` would find and keep, without a read and a hash of the module (ExecuTorch:
        # 2,816 of 3,784 modules, read by every process of the run).
        scan_memo.note(path, _QUESTION, key, False)
        NO_PACKET_INSERTS[path] = key
        return key, None
    return _text(path, key, keeps_texts(project), project.wants_dependencies)


def _words_rule_out(path: str, key: tuple) -> bool:
    """Whether the module's words, cut already at `key` (a parallel run's child cut every
    module's before the checks began: `shared_words`), show that its text holds no needle and
    that it inserts no packet (`_text`'s `NO_PACKET_INSERTS`): no `ops`, or no marker of
    graphs that carry packets (`graph_context.MARKER_WORDS`) in a module whose path has none.
    False where they cannot tell (not cut at this key, or over their size limit)."""
    if not project_words.known_to_lack(path, key, _NEEDLE_BYTES):
        return False
    if project_words.known_to_lack(path, key, (b"ops",)):
        return True
    return not marked_path(path) and project_words.known_to_lack(path, key, MARKER_WORDS)


def _text(path: str, key: tuple, keep: bool = True, digest: bool = True) -> tuple[tuple | None, str | None]:
    """`digest`: its digest is worked out now, as it is read, for the dependencies the run
    records. A `--no-cache` run records none (`ProjectIndex.wants_dependencies`): a module the
    index summarises later is hashed then, the others never (ao: 2.0 of 3.1 MB hashed)."""
    try:
        with open(path, "rb") as fh:
            data = fh.read()
    except OSError:
        return None, None
    if digest and known_digest(path, key) is None:  # a module the index summarised is not hashed again
        file_keys.remember_digest(path, key, content_sha256_hex(data))
    # Bytes first: most modules hold neither, and decoding them all costs more.
    holds = len(data) <= MAX_BYTES and any(n in data for n in _NEEDLE_BYTES)
    scan_memo.note(path, _QUESTION, key, holds)
    if not holds:
        if b"ops" not in data or not may_carry_packets(data, path):
            NO_PACKET_INSERTS[path] = key
        return key, None
    if not keep:
        return key, UNREAD
    try:
        return key, decode_source(data)
    except DecodeError:
        return key, None


# `scan_memo`'s questions of `module_facts(saved=True)`: the module's text holds these needles
# and matches that pattern (its source in the question: a changed pattern asks anew).
_PROBE = "project-facts:"


def probe_question(needles: tuple[str, ...], pattern) -> str | None:
    """The memo's question for a probe, None for a pattern that cannot be named: a compiled
    pattern by its source and flags, a filter object by its `question`."""
    if pattern is None:
        described = ""
    elif isinstance(pattern, re.Pattern):
        described = f"{pattern.pattern}/{pattern.flags}"
    else:
        described = getattr(pattern, "question", None)
        if not isinstance(described, str):
            return None
    return f"{_PROBE}{','.join(needles)}:{described}"


def kept_module_holds(
    project: _Project, path: str, key, text, needles, pattern, question: str | None, keep: bool = True
):
    """(whether the kept module's text holds one of `needles` and matches `pattern`, its text
    or `UNREAD`). A module whose text was not read in this process (`UNREAD`) is answered
    from what an earlier run found (`question`) when it can be: on torch, one check of an edit
    of `ao/quantization/observer.py` read and searched the 251 kept modules for the front-end
    rename (~60 ms of its ~180), none of which holds it. (None, None): the module cannot be read."""
    if text is UNREAD and question is not None and scan_memo.answers(path, key, [question])[0] is False:
        return False, text
    if text is UNREAD and project_words.known_to_lack(path, key, _encoded(needles)):
        # Its words, cut at this key, hold none of the needles (op names: word characters, which
        # a text holds exactly where its bytes do): no read (ExecuTorch: most of the ~2,000
        # reads of inserting modules that probes for one op made in each process).
        if question is not None:
            scan_memo.note(path, question, key, False)
        return False, text
    if text is UNREAD:
        text = read_kept(project, path, key, keep)
        if text is None:
            return None, None
    holds = any(n in text for n in needles) and (pattern is None or pattern.search(text) is not None)
    if question is not None:
        scan_memo.note(path, question, key, holds)
    return holds, text


@functools.lru_cache(maxsize=256)
def _encoded(needles: tuple[str, ...]) -> tuple[bytes, ...]:
    """The needles as the words hold them (UTF-8; a needle outside ASCII is never answered
    from the words: `project_words.known_to_lack`)."""
    return tuple(n.encode("utf-8", "surrogatepass") for n in needles)


def read_kept(project: _Project, path: str, key, keep: bool = True) -> str | None:
    """The text of a kept module not read yet in this process, kept from now on unless the
    run keeps no texts (`keeps_texts`): then read again at each ask, and only decoded (its
    digest and the memo's answer were taken at its first read)."""
    if key is None:
        return None
    if not keep:
        return read_source(path)
    entry = project.files[path] = _text(path, key)
    return entry[1]


# path -> the content key of a version the scan read that can insert no packet into graphs
# that carry packets: it spells no op (no `ops`: not `torch.ops`, `exir_ops`, nor an alias
# assigned from one), or nothing makes its graphs carry packets (`may_carry_packets`).
NO_PACKET_INSERTS: dict[str, tuple] = {}
