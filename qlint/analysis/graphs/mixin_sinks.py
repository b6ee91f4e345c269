"""TestCase mixins of QL101's sink helpers: a module whose classes may reach a sink through
a method of `self` the class they are mixed into provides (`self.checkGraphModuleNodes`,
`unittest.TestCase`'s subclass's). Their subclasses in other modules inherit the helpers, and
are read for them (`wrapper_candidates.candidates` for the index, `wrapper_chains._links_of`
for the search); subclasses of other classes naming a sink (a pass base class calling
`graph.find_nodes(...)`) are not.
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from qlint.analysis.names.modules import module_stem
from qlint.analysis.wrapper_record import QL101_NEEDLES

_DEFAULT_NEEDLES = tuple(n.decode() for n in QL101_NEEDLES)
# How many modules down from one calling a sink on `self` a mixin's module may lie, its bases
# each imported from the one before (`class FarChecks(MoreChecks)` where `MoreChecks(NodeChecks)`
# is of another module: 2). The index reads the subclasses' modules in rounds until a round
# finds no new one (`wrapper_candidates.candidates`), the search follows bases until one calls
# the sink (`wrapper_chains._mixed_in_by`), each at most this many: the depth to which the
# search resolves a class's bases for the helper methods it inherits (`helper_lookup.MAX_DEPTH`,
# `imported_helpers._inherited_helpers`), past which a mixin hands the check no helper however
# it is reached.
MIXIN_ROUNDS = 4


def calls_sink_on_self(masked: str, needles: tuple[str, ...] | None = None) -> bool:
    """Whether a module's text (strings and comments blanked, `ModuleText.masked`) may call a
    sink on `self` (`self.checkGraphModuleNodes(gm, expected_node_list=nodes)`), or hand a
    sink keyword to some call, which may be of a method of `self` (`self._test_quantizer(m,
    expected_node_occurrence=occ)`): the methods of a TestCase mixin, which the class it is
    mixed into provides. Only the subclasses of such a module's classes are read for sink
    helpers they inherit (`wrapper_candidates.candidates`, `wrapper_chains._links_of`): the
    modules subclassing a pass base class that calls a sink on another receiver
    (`graph.find_nodes(op=..., target=op)`: ExecuTorch's `ArmPass`, hundreds of passes) are
    not. A superset (a keyword handed to any call counts), read at each needle the text holds."""
    if "self" not in masked:
        return False
    for needle in _DEFAULT_NEEDLES if needles is None else needles:
        at = masked.find(needle)
        while at >= 0:
            end = at + len(needle)
            whole = (not at or not _word(masked[at - 1])) and (end == len(masked) or not _word(masked[end]))
            if whole and (_keyword(masked, end) or _on_self(masked, at)):
                return True
            at = masked.find(needle, end)
    return False


def _word(c: str) -> bool:
    return c.isalnum() or c == "_"


def _keyword(masked: str, end: int) -> bool:
    """Whether `=` (not `==`) follows the name ending at `end`, blanks between."""
    i, n = end, len(masked)
    while i < n and masked[i] in " \t":
        i += 1
    return i < n and masked[i] == "=" and masked[i + 1 : i + 2] != "="


def _on_self(masked: str, at: int) -> bool:
    """Whether the name starting at `at` is an attribute of `self` (`self.name`, blanks and
    line continuations between)."""
    i = at
    while i and masked[i - 1] in " \t\\\n":
        i -= 1
    if not i or masked[i - 1] != ".":
        return False
    i -= 1
    while i and masked[i - 1] in " \t\\\n":
        i -= 1
    return masked[max(0, i - 4) : i] == "self" and (i < 5 or not _word(masked[i - 5]))


def importing_mixin_modules(paths: list[str], rows: list[frozenset[bytes]], mixins: Iterable[str]) -> set[int]:
    """The modules (`paths`, each with its import words, `rows`) that may import one of the
    modules `mixins` as a module, to subclass a class of it through it (`class
    OpChecks(checks.NodeChecks)`): those `imports_as_module` lets through. The index reads
    them for the mixins they hold (`wrapper_candidates.candidates`)."""
    out: set[int] = set()
    for mixin in mixins:
        place = _Place(mixin)
        out.update(i for i, words in enumerate(rows) if place.spelled_in(paths[i], words))
    return out


def imports_as_module(path: str, words: frozenset[bytes], mixin: str) -> bool:
    """Whether the module at `path`, whose import statements' words are `words`
    (`import_words.import_words`), may import the module `mixin` as a module (`from pkg
    import checks`, `import pkg.checks as c`, `from ..pkg import checks`): its import words
    hold the module's stem and the names of its packages below the package it shares with
    `path` (below the top one where it shares none: a repository's copy of `executorch` may
    lie in a directory of another name). Not looked for: a path through a package a module
    imports (`import pkg`, then `pkg.checks.NodeChecks`). Asked alike by the index
    (`importing_mixin_modules`) and the search (`wrapper_chains._mixed_in_by`). The stem alone
    lets too many through: ao's `torchao/testing/pt2e/utils.py` has one 293 modules import,
    whose words cost its index ~65 M instructions; with the package names, one module is left
    (`_xnnpack_quantizer_utils.py`, beside it)."""
    return _Place(mixin).spelled_in(path, words)


class _Place:
    """A module's stem, and its packages' directories (each with a separator after it) and
    names, from the top one down."""

    def __init__(self, mixin: str):
        self.stem = module_stem(mixin).encode()
        packages: list[str] = []
        directory = os.path.dirname(os.path.abspath(mixin))
        while os.path.isfile(os.path.join(directory, "__init__.py")):
            packages.append(directory)
            parent = os.path.dirname(directory)
            if parent == directory:
                break
            directory = parent
        self.directories = [d + os.sep for d in reversed(packages)]
        self.names = [os.path.basename(d).encode() for d in reversed(packages)]

    def spelled_in(self, path: str, words: frozenset[bytes]) -> bool:
        """Whether the import words `words` of the module at `path` spell the stem and the
        package names `imports_as_module` asks for."""
        if self.stem not in words:
            return False
        names = self.names
        shared = 1  # the top package's name: not asked (see `imports_as_module`)
        if all(name in words for name in names[shared:]):
            return True  # most imports of it: all of them spelled
        here = os.path.dirname(path if os.path.isabs(path) else os.path.abspath(path)) + os.sep
        directories = self.directories
        while shared < len(directories) and here.startswith(directories[shared]):
            shared += 1
        return all(name in words for name in names[shared:])
