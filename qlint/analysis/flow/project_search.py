"""Which modules of the project name a word: the text search behind the caller search
(`project_callers`) and the questions other analyses ask of it (`named_in_text`,
`named_elsewhere`, `paths_naming`). Modules are found from their words (`project_words`,
read once per content), what is learnt of each is kept per content key (`scan_memo`), and
only modules whose code loads the word are handed on: the search decides from texts and
summaries before any module is parsed.
"""

from __future__ import annotations

import ast
import os
import stat

from qlint.analysis import scan_memo
from qlint.analysis.context import FileContext
from qlint.analysis.graphs import file_keys, kept_answers
from qlint.analysis.module_keys import consult, project_keys, unrecorded_keys
from qlint.analysis.names import project_words
from qlint.analysis.names.live_trees import parse as live_parse
from qlint.analysis.names.modules import import_root, module_name_for
from qlint.analysis.names.package_map import project_root
from qlint.analysis.names.references import REFERENCES, References
from qlint.analysis.names.shadowed_names import INSTALL_DIRS
from qlint.analysis.project_files import disk_files, listing_dependency
from qlint.analysis.recent_entries import RecentEntries
from qlint.analysis.skipped_dirs import walked

_MAX_BYTES = project_words.MAX_BYTES
MAX_CANDIDATES = 80  # modules naming the helper; past this the answer is "unknown"


# `scan_memo`'s questions, each followed by a name: a module whose text does not hold the name
# (the editor checks the same helper at every keystroke, and reading the whole repository for
# its name each time cost ~100 ms on ExecuTorch; a changed module has another key, so it is
# read again), or whose text holds it but whose code never loads it (a docstring, a comment:
# its summary says so, and its tree is not built; it still counts as a candidate for
# `MAX_CANDIDATES`, as its text does).
_LACKS = "text-lacks:"
UNUSED = "never-loads:"
# A module whose every load of the name is, by its content alone, something of its own (a
# local, a function it defines: `foreign_references`), for any helper of that name: the 19
# ExecuTorch Arm scripts that each define and call their own `quantize_model` are read once,
# not once per script checked.
OWN = "own-name:"


def searchable(ctx: FileContext) -> bool:
    """The file lies in a project whose other modules can be searched (a repository, or a
    tree with a `pyproject.toml`; an installed package)."""
    return search_root(ctx.path) is not None


def named_in_text(ctx: FileContext, word: str) -> bool:
    """Another module of the project holds `word` in its text (True when the project is not
    known). One read of the project answers every later question about a module's callers:
    a module whose file name no other module's text holds is imported by none of them (an
    import, relative or not, a re-export, `importlib` all spell it), so none calls its
    functions (ExecuTorch's Arm export scripts)."""
    root = search_root(ctx.path)
    if root is None:
        return True
    kept = _kept_holder(ctx, root, word)
    if kept is not None:  # it decides alone, as a holder found by the search below would
        if ctx.project.wants_dependencies:
            ctx.project.record_read(ctx.path, kept[0], ctx.project.digest(*kept))
        return True
    holders = modules_holding(ctx, root, word, 1)
    if holders:  # it decides alone, while it holds the word (the answer asked, not which)
        if ctx.project.wants_dependencies:
            keys = unrecorded_keys(ctx, root)
            ctx.project.record_read(ctx.path, holders[0], ctx.project.digest(holders[0], keys[holders[0]]))
        return True
    _record_search(ctx, root, word)  # held nowhere: any module may come to hold it
    return False


def _kept_holder(ctx: FileContext, root: str, word: str) -> tuple[str, tuple] | None:
    """(path, content key) of a module other than the one checked that an earlier run found
    to hold `word` (`scan_memo`), while it keeps the stat it was found at: the answer it
    decides needs no listing of the project. The search stat'ed every module to vouch for the
    saved answers first (`modules_holding`): ~20 ms of each one-file check of ExecuTorch's qualcomm
    test_qnn_delegate.py, whose module name its test scripts spell."""
    if not scan_memo.keeps(root := os.path.abspath(root)):
        consult(ctx.project, root)
    own, project = os.path.abspath(ctx.path), ctx.project
    for path, mtime, size in scan_memo.saved_holders(root, _LACKS + word):
        if path != own and path not in project.overlay and _holds_still(project, root, path, (mtime, size)):
            return path, (mtime, size)
    return None


def _holds_still(project, root: str, path: str, key: tuple) -> bool:
    """Whether a module an earlier run found to decide an answer alone (`_kept_holder`'s
    holder of a word, `_still_named`'s module loading a name) still decides it: it keeps the
    content key it was found at, and the project's listing still names it (a search would
    not find a module that left it, as one under a directory moved out and linked back in
    its place: its stat is the same). An editor's buffer is one of the project's modules as
    the search lists them (`python_files`)."""
    if project.content_key(path, True) != key:
        return False
    return path in project.overlay or listed_module(os.path.abspath(root), path)


def listed_module(root: str, path: str) -> bool:
    """Whether `path` (absolute) is one of the `.py` files the recursive listing of `root`
    (absolute) names now (`project_files.disk_files`), asking only the directories between
    them: each one below `root` is walked into while it is a directory, no symbolic link, of
    a name the listing walks (`listing_of`), and the last one's own files are its listing,
    kept while its stamp holds. A few stats, not the project's listing."""
    directory, name = os.path.split(path)
    if not name.endswith(".py") or not (directory == root or directory.startswith(root + os.sep)):
        return False
    below = root
    for part in directory[len(root) + 1 :].split(os.sep) if directory != root else ():
        below += os.sep + part
        try:
            if not walked(part) or not stat.S_ISDIR(os.lstat(below).st_mode):
                return False
        except OSError:
            return False
    return path in disk_files(directory, recursive=False)


def paths_naming(ctx: FileContext, name: str) -> list[str] | None:
    """The project's modules, other than the one checked, whose text holds `name` (None when
    the project is not known or too many do)."""
    root = search_root(ctx.path)
    found = candidate_modules(ctx, root, name) if root is not None else None
    if found is None:
        return None
    return [path for path, _, key in found if references_loading(ctx, path, key, name) is not None]


def search_root(path: str) -> str | None:
    """The repository holding the file; for an installed package, its top-level package."""
    module = module_name_for(path)
    parts = os.path.abspath(path).split(os.sep)
    for i in range(len(parts) - 1, -1, -1):
        if parts[i] in INSTALL_DIRS:
            if not module or i + 1 >= len(parts) - 1 or module.split(".")[0] != parts[i + 1]:
                # Not named from the install directory (a directory that is no identifier).
                return os.path.join(import_root(path), module.split(".")[0]) if module else None
            return os.sep.join(parts[: i + 2])
    return project_root(path)


def named_elsewhere(ctx: FileContext, name: str, besides: str) -> bool | None:
    """Whether a module other than the one checked and `besides` loads `name` (None: not
    known): `paths_naming`, which stops at the first such module, as the callers asking only
    want to know whether one does (`self._test_quantizer(...)` in 20 modules of ao's tests).
    """
    root = search_root(ctx.path)
    if root is None:
        return None
    besides = os.path.abspath(besides)
    kept_answers.asked("named", (root, name))
    if _still_named(ctx, root, name, besides):
        return True
    found = candidate_modules(ctx, root, name, record=False)
    for path, _, key in found or ():
        if os.path.abspath(path) != besides and references_loading(ctx, path, key, name) is not None:
            _NAMED[root, name] = (True, ((path, key),))
            # What `kept_answers` writes beside the stat, and the check's one dependency for the
            # answer: that module names it whatever the others hold.
            digest = file_keys.digest(ctx.project, path, key)
            if ctx.project.wants_dependencies:
                ctx.project.record_read(ctx.path, path, digest)
            return True
    _record_search(ctx, root, name)  # named nowhere, or too often to tell: every module decides
    return None if found is None else False


# (root, name) -> (True, ((path, content key),) of a module whose code loads the name): while
# it keeps its content, another module names it whatever the others hold (or so many hold it
# that the search gives up: None, which the callers take as they take True: not known to be
# named nowhere). Kept between runs (`kept_answers`): a one-file check of ExecuTorch's
# qualcomm/tests/utils.py otherwise listed and stat'ed the ~3,800 modules for the name of each
# of its methods that another module subclassing its class loads.
_NAMED: dict[tuple[str, str], tuple[bool, tuple]] = {}
kept_answers.register("named", _NAMED, lambda key, entry: entry[:-1], small=True)


def _still_named(ctx: FileContext, root: str, name: str, besides: str) -> bool:
    project = ctx.project
    kept = _NAMED.get((root, name))
    if kept is None:
        saved = kept_answers.saved("named", (root, name))
        if saved is None or saved[:-1] != (True,):
            return False
        trail = kept_answers.one_module_trail(project, saved[-1])
        if trail is None:
            return False
        kept = _NAMED[root, name] = (True, trail)
        kept_answers.took(kept)
    ((path, key),) = kept[-1]
    if key is None or not _holds_still(project, root, path, key):
        del _NAMED[root, name]
        return False
    if path in (besides, os.path.abspath(ctx.path)):
        return False
    # As the search would find it: a candidate (not found since to load only its own name).
    if scan_memo.known_miss(path, OWN + name, key) or scan_memo.known_miss(path, UNUSED + name, key):
        return False
    if project.wants_dependencies:
        project.record_read(ctx.path, path, project.digest(path, key))
    return True


def _record_search(ctx: FileContext, root: str, name: str) -> None:
    """What a search of the project for `name` depends on when no one module decided its
    answer: every module (any may come to name it, or stop) and the listing (a module
    created later that names it)."""
    ctx.project.record_listing(ctx.path, listing_dependency(root, True, [name]))
    project_keys(ctx, root)


def candidate_modules(
    ctx: FileContext, root: str, name: str, record: bool = True
) -> list[tuple[str, bytes, tuple]] | None:
    """`_scan`, once per check and name (a check asks for a helper's callers again: QL201's
    verdict, then the walk of its branches), with the text of each module found. Unless
    `record` is False (the caller records what decided its answer), every module of the
    project and its listing are dependencies of the check (`_record_search`)."""
    if record:
        _record_search(ctx, root, name)
    memo = ("project_callers.candidates", root, name)
    known = ctx.cache.get(memo, False)
    if known is False:
        known = ctx.cache[memo] = _scan_again(ctx, root, name)
    if known is None:
        return None
    read = ((path, file_keys.content_bytes(ctx.project, path, key, _MAX_BYTES), key) for path, key in known)
    return [(path, data, key) for path, data, key in read if data is not None]


# (root, name, checked path) -> (the project's content keys, what `_scan` found at them): an
# editor checks a module again at every keystroke while the other modules stay as they were,
# and a method's callers are searched in ExecuTorch's ~3,800 modules (~6 ms a check for
# qualcomm/tests/utils.py, whose TestQNN methods other modules subclass and call).
_SCANS: RecentEntries[tuple[str, str, str], tuple[dict, list[tuple[str, tuple]] | None]] = RecentEntries(64)


def _scan_again(ctx: FileContext, root: str, name: str) -> list[tuple[str, tuple]] | None:
    """`_scan`, or what it found for the same check at the same content keys of the project
    (the checked module's own is not read by it). The answer is the same: a module's text and
    what was learnt of it are keyed on its content key (`scan_memo` may have learnt more since,
    which only spares reading a module found to be no caller)."""
    own = os.path.abspath(ctx.path)
    keys = unrecorded_keys(ctx, root)
    kept = _SCANS.get((root, name, own))
    if kept is not None and _same_besides(kept[0], keys, own):
        return kept[1]
    found = _scan(ctx, root, name)
    _SCANS[root, name, own] = (keys, found)
    return found


def _same_besides(before: dict, now: dict, own: str) -> bool:
    """The same content keys for every module but the checked one (its buffer is never read
    by the scan, and changes at every keystroke)."""
    if before is now or before == now:
        return True
    if len(before) != len(now):
        return False
    return all(key == now.get(path) for path, key in before.items() if path != own)


def _scan(ctx: FileContext, root: str, name: str) -> list[tuple[str, tuple]] | None:
    """Modules whose text spells the name as an identifier (`references.spells`) and whose
    code was not found not to load it (their path and content key; `references_loading` tells
    whether the code loads it), from the words of each module (`project_words`: read once per
    content). None past `MAX_CANDIDATES` modules whose text holds it (spelled or inside
    longer names), decided from the texts alone before any is parsed."""
    hits = []
    keys = unrecorded_keys(ctx, root)
    # One holder past the limit decides: the modules after it are not asked.
    for counted, path in enumerate(modules_holding(ctx, root, name, MAX_CANDIDATES + 1), 1):
        key = keys[path]
        if not scan_memo.known_miss(path, UNUSED + name, key) and not scan_memo.known_miss(path, OWN + name, key):
            if project_words.spells(ctx.project.overlay, path, key, name):
                hits.append((path, key))
            else:
                # Only inside longer identifiers: its code cannot load the name, and it is not
                # parsed; it still counts as a candidate, as every module holding the text does.
                scan_memo.note_miss(path, UNUSED + name, key)
        if counted > MAX_CANDIDATES:
            return None
    return hits


def modules_holding(ctx: FileContext, root: str, word: str, limit: int | None = None) -> list[str]:
    """The project's modules but the one checked whose text holds `word` (`project_words`),
    the first `limit` of them in the order of the project's keys: the modules past the one that
    reaches it are not asked (the answer is decided); without a limit, every one (for a search
    that needs each, not a caller search's first few). Where the answers are kept between runs
    (`scan_memo`, with the results cache), what an earlier run found is asked first, so that a
    module unchanged since is not read, and what this one found of the modules it asked is kept
    for the next. Nothing is recorded: its callers do (`_record_search`)."""
    keys = unrecorded_keys(ctx, root)
    overlay = ctx.project.overlay
    own = os.path.abspath(ctx.path)
    if not scan_memo.keeps(root):
        return project_words.holding(overlay, keys, word, besides=own, limit=limit)
    questions = [_LACKS + word, UNUSED + word, OWN + word]
    # What is kept of every module, read in one pass: its text holds the word or lacks it, or
    # its code was found not to load it or to load only its own (which it found in it).
    (holds, lacks), (_, unused), (_, own_only) = scan_memo.known_sets(keys, questions)
    saved = dict.fromkeys(unused | own_only, True)
    saved.update(dict.fromkeys(holds, True))
    saved.update(dict.fromkeys(lacks, False))
    found = project_words.holding(overlay, keys, word, saved, own, limit)
    # The last module asked: the holder that reached the limit (none past it was asked), or
    # None when every module was.
    last = found[-1] if limit is not None and len(found) == limit else None
    noted = (root, word, project_words.reads(), last)
    if noted not in _NOTED:
        if len(_NOTED) > 4096:
            _NOTED.clear()
        _NOTED.add(noted)
        holders = set(found)
        # Only what this process read is new: an answer kept already is not noted again (noted,
        # every module of the project was a memo entry that `scan_memo.flush` then compared
        # with the kept one, ~45 ms of a one-file check that learned nothing). A module that
        # holds the word is noted too: it was read again by every later run (the ~1,000 of
        # ExecuTorch's modules that hold `utils`, the name of the module of vulkan's helpers).
        for path, key in keys.items():
            if path != own and saved.get(path) is None:
                scan_memo.note(path, questions[0], key, path in holders)
            if path == last:  # the modules after it were not asked: nothing is known of them
                break
    return found


# (root, word, reads so far, the last module asked when not all were) whose answers were noted
# for `scan_memo`: the same answers again while no module was read since.
_NOTED: set[tuple[str, str, int, str | None]] = set()


def references_loading(
    ctx: FileContext, path: str, key: tuple, name: str, keep_tree: bool = False
) -> References | None:
    """The references of a candidate module's summary, when its code loads `name` (None when
    it never does, or does not parse: it calls nothing, which is remembered for its content,
    unless it imports `name` under another name, which its callers may spell: `import_renames`)."""
    refs = ctx.project.fact_at(path, REFERENCES, keep_tree)
    if refs is not None and refs.rows(refs.names_for(name)):
        return refs
    if refs is None or not refs.aliases.get(name):
        scan_memo.note_miss(path, UNUSED + name, key)
    return None


def import_renames(ctx: FileContext, path: str, name: str) -> tuple[str, ...]:
    """The names a candidate module's imports bind `name` to (`from .x import f as qm`): other
    modules may import it from there under that name (its summary's fact, read already)."""
    refs = ctx.project.fact_at(path, REFERENCES)
    return refs.aliases.get(name, ()) if refs is not None else ()


def tree_at(ctx: FileContext, path: str) -> ast.Module | None:
    """The project's module at `path`, parsed (None: not read or not Python)."""
    text = ctx.project.text(path)
    if text is None:
        return None
    try:
        return live_parse(text, path)
    except (SyntaxError, ValueError, RecursionError):
        return None
