"""The facts the helper search shares across checks of one process (and, through
`kept_answers`, across runs), and the trails that keep them honest: each fact carries the
modules (and module lookups) it was read from, and is reused only while those are unchanged;
whatever a fact was read from is also a recorded dependency of the check that uses it.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from qlint.analysis.graphs import file_keys, kept_answers
from qlint.analysis.graphs.forwarding_texts import _import_root

# Facts shared by the checks of one process, each with the modules (and their content keys)
# it was read from: reused only while those are unchanged.
_IMPORTED: dict[tuple, tuple[bool | frozenset[str], tuple]] = {}
_SHARED: dict[tuple, tuple[ast.AST, frozenset[str], tuple]] = {}
# (module, sink kind, without an index) -> its chain links (`Forwarding._links_of`).
_LINKS_OF: dict[tuple, tuple[bool, tuple[tuple[str, str, str], ...], tuple]] = {}
# (module, name, links left, sink kind, without an index) -> `Forwarding._passes_on`.
_PASSING: dict[tuple, tuple[bool, tuple]] = {}


# What of each memo's entries outlives the process (`kept_answers`): all but the trail; of
# `_SHARED`, the answer about another module's function (known by its summary's key), not
# the function itself, nor answers about functions known only by their trees.
_MEMO_NAMES = {id(_IMPORTED): "imported", id(_LINKS_OF): "links", id(_PASSING): "passing", id(_SHARED): "shared"}
kept_answers.register("imported", _IMPORTED, lambda key, entry: entry[:-1])
kept_answers.register("links", _LINKS_OF, lambda key, entry: entry[:-1])
kept_answers.register("passing", _PASSING, lambda key, entry: entry[:-1])
kept_answers.register("shared", _SHARED, lambda key, entry: entry[1:-1] if isinstance(key[0], tuple) else None)


def _unkept_function(value: tuple) -> tuple:
    """A kept `_SHARED` answer as the memo holds it: the function itself is not kept."""
    return (None, *value)


class FactTrails:
    """The part of `Forwarding` that looks modules up and keeps a fact's trail (see the module)."""

    def _find(self, module: str, requester: str) -> str | None:
        """The file of `module` as `requester` imports it, looked up once per check and root.
        The answer is a dependency of the fact being worked out: a module created where the
        lookup found none, or ahead of the one it found, changes it (`_key`)."""
        root = _import_root(requester)
        found = self._lookup(module, root, requester)
        if self._trails:
            self._trails[-1].append((("find", module, root), found))
        return found

    def _lookup(self, module: str, root: str, requester: str | None = None) -> str | None:
        key = (module, root)
        if key not in self._found:
            asker = requester if requester is not None else kept_answers.root_requester(root)
            self._found[key] = self._project.find_module_in_check(module, asker)
        return self._found[key]

    def _read(self, project, path: str) -> None:
        key = self._key(path)
        if self._trails:  # the innermost fact; each hands its trail on to the one around it
            self._trails[-1].append((path, key))
        self._record(((path, key),))

    def _key(self, path: str | tuple) -> tuple | str | None:
        """A module's content key; for a lookup in a trail (`_find`), the file it finds now."""
        if type(path) is tuple:
            return self._lookup(path[1], path[2])
        if path not in self._keys:
            self._keys[path] = file_keys.content_key(self._project, path)
        return self._keys[path]

    def _valid(self, deps) -> bool:
        return self._project is not None and all(self._key(path) == key for path, key in deps)

    def _shared(self, memo: dict, key, load: Callable[[tuple], tuple] | None = None) -> tuple | None:
        """The entry of a memo of facts shared across checks (value..., trail) while its trail
        holds; else the one an earlier run kept (`kept_answers`), if its trail holds now."""
        known = memo.get(key)
        if known is not None and self._valid(known[-1]):
            return known
        name = _MEMO_NAMES.get(id(memo))  # None: a memo put in its place (tests)
        kept = kept_answers.saved(name, key) if name is not None else None
        if kept is None or self._project is None:
            return None
        project = self._project
        trail = kept_answers.valid_trail(
            kept[-1], self._key, lambda path, now: file_keys.digest(project, path, now), self._lookup
        )
        if trail is None:
            return None
        known = memo[key] = (*(load(kept[:-1]) if load is not None else kept[:-1]), trail)
        kept_answers.took(known)
        return known

    def _record(self, deps) -> None:
        new = tuple((p, k) for p, k in deps if type(p) is str and p not in self._recorded)
        if new and self._project is not None:
            self._recorded.update(p for p, _ in new)
            file_keys.record(self._project, self.own_path, new)

    def _replay(self, deps) -> None:
        if self._trails:
            self._trails[-1].extend(deps)
        self._record(deps)
