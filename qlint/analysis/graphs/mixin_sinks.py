"""TestCase mixins of QL101's sink helpers: a module whose classes may reach a sink through
a method of `self` the class they are mixed into provides (`self.checkGraphModuleNodes`,
`unittest.TestCase`'s subclass's). Their subclasses in other modules inherit the helpers, and
are read for them (`wrapper_candidates.candidates` for the index, `wrapper_chains._links_of`
for the search); subclasses of other classes naming a sink (a pass base class calling
`graph.find_nodes(...)`) are not.
"""

from __future__ import annotations

from qlint.analysis.wrapper_record import QL101_NEEDLES

_DEFAULT_NEEDLES = tuple(n.decode() for n in QL101_NEEDLES)
# How many modules down from one calling a sink on `self` a mixin's module may lie, its bases
# each imported by name from the one before: 2, `class FarChecks(MoreChecks)` where
# `MoreChecks(NodeChecks)` is of another module (the index reads the subclasses' modules in as
# many rounds: `wrapper_candidates.candidates`; the search follows as many bases:
# `wrapper_chains._mixes_in`).
MIXIN_ROUNDS = 2


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
