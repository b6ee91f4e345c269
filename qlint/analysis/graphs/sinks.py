"""QL101's sinks (APIs that compare the ops they are given with node targets exactly) and
its prefilter, which the engine asks before importing the rule.

A matcher sits on a row where a node target is written (`n.target`, `getattr(n, "target")`)
or on a row of a sink call, or of a call of a helper that forwards a parameter to a sink
(the check's base lines). A file holding neither of the first two (whatever else of the
rule's trigger texts it holds, or none of them) can only match through a helper it imports
from another module of the project: `matches_through_imports`, the rule's import trigger,
asks the helper search about those imports from the text, and the file is
not parsed when none is one (`.target_dtype`, `self.target` in prose, ...). Either way a
packet must be able to reach the file (`packet_text`: it spells one, or imports a name bound
to one), or there is nothing to match with. In a run over many files, the search (the
check's and the trigger's) asks only about names the project index of sink helpers holds
(`sink_index_for`).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from typing import TYPE_CHECKING

from qlint.analysis.graphs.call_parts import callee_name
from qlint.analysis.graphs.last_text import last_text
from qlint.analysis.graphs.packet_imports import may_hold_packet
from qlint.analysis.graphs.packet_text import spells_packet
from qlint.analysis.text_needles import holds, holds_any
from qlint.lazy_patterns import lazy
from qlint.short_digests import sha256_hex

if TYPE_CHECKING:  # imported by the helper search alone: the triggers turn most files away first
    from qlint.analysis.graphs.forwarding import Forwarding

# "callee:N" is positional argument N, "callee:name" a keyword argument; "*:name" any callee.
DEFAULT_SINKS = (
    "add_dont_constant_fold:0",
    "*:expected_node",
    "*:expected_node_occurrence",
    "*:expected_node_list",
    "checkGraphModuleNodes:1",
    "checkGraphModuleNodes:2",
    "checkGraphModuleNodes:3",
    # `Graph.find_nodes(op=..., target=op)` looks nodes up in a table keyed by their target:
    # a packet is a key no node of an exported graph has.
    "find_nodes:target",
)
# The rule's trigger substrings (its manifest's): a file holding none is never checked.
TRIGGERS = (".target", "getattr(", "add_dont_constant_fold", "expected_node", "checkGraphModuleNodes", "find_nodes")

_MENTIONED = tuple(t for t in TRIGGERS if t != "getattr(")
_GETATTR_TARGET = lazy(r"""getattr\(\s*[\w.]+\s*,\s*["']target["']""")


@last_text  # QL101's text trigger asked it of this text; its import trigger asks again
def mentions(text: str) -> bool:
    """The triggers: `getattr(` alone is everywhere; only `getattr(x, "target")` counts
    (generated data files are full of `'target'` strings and are the largest files to parse)."""
    # The registry searched the text for `TRIGGERS` a moment ago (`text_needles`): a file that
    # lacks them all (most files the import trigger asks) is answered without a search. The
    # pattern starts with `getattr(`: a text without it has no match.
    return holds_any(text, _MENTIONED) or (holds(text, "getattr(") and _GETATTR_TARGET.search(text) is not None)


def may_match_here(text: str, needles: tuple[str, ...]) -> bool:
    """Whether the text writes a node target or names a sink (`needles`) on some row."""
    return writes_target(text) or holds_any(text, needles)


_QUOTES = "'\""
_TARGET = "target"


@last_text  # as `mentions`: both triggers ask it (`may_match_here`)
def writes_target(text: str) -> bool:
    r"""Whether a node target can be written somewhere in `text` (`fx_targets._TARGET_TEXT`,
    whose rows the check reads, over the whole text): a word `target` that follows a `.` or
    starts a row (`\n` or `\r` ends one), blanks between them allowed, or `"target"` quoted.

    That is what the pattern `(?:\.|^|\r)\s*target\b|["']target["']` (multi-line) matches, decided
    at each occurrence of `target` instead: the pattern has no literal to start from, so `re`
    tried it at every position, 14 ms on torch's 2,158-line observer.py, for every file
    holding `target` (`\s` is `str.isspace`, a word character `str.isalnum` or `_`)."""
    find, end = text.find, len(text)
    i = find(_TARGET)
    while i >= 0:
        after = i + 6
        if i and after < end and text[i - 1] in _QUOTES and text[after] in _QUOTES:
            return True
        if after == end or not (text[after].isalnum() or text[after] == "_"):
            j = i
            while j and text[j - 1].isspace():
                j -= 1
            if not j or text[j - 1] == "." or "\n" in text[j:i] or "\r" in text[j:i]:
                return True
        i = find(_TARGET, i + 1)
    return False


def may_hold_matcher(text: str) -> bool:
    """QL101's `triggered_by` with its default sinks (its `text_trigger`): a matcher's row,
    and a packet the text itself can make (`packet_text`)."""
    return mentions(text) and may_match_here(text, _DEFAULT_NEEDLES) and spells_packet(text)


def parse_sinks(specs: tuple[str, ...]) -> dict[str, set]:
    sinks: dict[str, set] = {}
    for spec in specs:
        callee, _, arg = spec.rpartition(":")
        sinks.setdefault(callee, set()).add(int(arg) if arg.isdigit() else arg)
    return sinks


def sink_needles(sinks) -> tuple[str, ...]:
    """Text every sink call holds on one of its rows: the callee's name or, for a keyword
    accepted by any callee, the keyword."""
    out = [c for c in sinks if c != "*"]
    out += [str(k) for k in sinks.get("*", ()) if isinstance(k, str)]
    return tuple(out)


_DEFAULT_NEEDLES = sink_needles(parse_sinks(DEFAULT_SINKS))


def sinks_key(sinks: dict[str, set]) -> str:
    """Names the sinks in other modules' summaries (`extra-sinks` changes what forwards)."""
    spelled = repr(sorted((callee, sorted(map(str, args))) for callee, args in sinks.items()))
    return "ql101-sinks-" + sha256_hex(spelled.encode())[:16]


def direct_sink_args(node: ast.Call, sinks) -> Iterator[ast.expr]:
    wanted = sinks.get(callee_name(node) or "", set()) | sinks.get("*", set())
    if wanted:
        yield from (a for i, a in enumerate(node.args) if i in wanted)
        yield from (kw.value for kw in node.keywords if kw.arg in wanted)


def sink_search(project, optable, path: str, sinks, needles: tuple[str, ...], key: str) -> Forwarding:
    """The helper search for functions that forward a parameter to one of `sinks`: for the
    default ones, which a tree run answers with the wrapper-name index (`sink_index_for`),
    chains run as deep as there (`Forwarding.chain_links`)."""
    from qlint.analysis.graphs.forwarding import Forwarding
    from qlint.analysis.names.resolver import Resolver

    return Forwarding(
        lambda call, _resolver: direct_sink_args(call, sinks),
        lambda scope, cls: Resolver(scope, project, optable, class_scope=cls),
        needles,
        path,
        key,
        deep=sinks == _DEFAULTS,
    )


def _helper_imports(text: str, path: str, project, index) -> list[tuple[str, str]]:
    """The imports through which the file may call a function of another module that forwards
    a parameter to a sink, or subclass a class with such a method (`helper_imports`: most
    files none, and no search is made for them)."""
    from qlint.analysis.graphs.imported_helpers import helper_imports

    return helper_imports(project, path, text, index, instances=False)


def _sink_helper_found(
    text: str, path: str, project, sinks: dict[str, set], index, imports, named: bool = False
) -> bool:
    """The helper search through `imports` (what `_helper_imports` kept of the file's): the
    answers `find_helpers` gives the check, read from the text (`Forwarding.imports_helper`;
    `named`: through the names imported alone)."""
    search = sink_search(project, None, path, sinks, sink_needles(sinks), sinks_key(sinks))
    return search.imports_helper(project, path, text, index, imports, named)


def _named_imports(text: str, path: str, project, index) -> list[tuple[str, str]]:
    """The names a file holding no trigger text imports from another module of the project
    (`from m import helper`) that may be sink helpers or classes with such methods: only
    those lead it to a helper (`_untriggered`). Asked as the gate of the search asks them
    (`helper_gate.named_ways`), through names alone: a function it may call, a class it
    subclasses by that name (ExecuTorch: the test models most of those files import are
    built, not subclassed). Its imports are read once per text, for QL102's import trigger
    too (`file_imports`); with the index, a set lookup per import."""
    from qlint.analysis.graphs.helper_gate import named_ways
    from qlint.analysis.names.text_imports import file_imports

    imports = file_imports(text, path)
    if index is not None:
        # The names it did not hold are answered by it: a dependency of the result.
        project.record_derived(path, index.dependency, index.digest)
    return list(named_ways(text, imports, index, dotted=False))


def sink_index_for(path: str, project, sinks: dict[str, set]):
    """The project's index of the names of helpers forwarding to the default sinks, in a run
    over many files (`wrapper_index`, `sink_index`); None otherwise, or for other sinks."""
    if sinks != _DEFAULTS:
        return None
    from qlint.analysis.graphs.wrapper_index import index_for

    index = index_for(path, project)
    return index.sinks if index is not None else None


_DEFAULTS = parse_sinks(DEFAULT_SINKS)


def matches_through_imports(text: str, path: str, project, sinks: dict[str, set] | None = None) -> bool:
    """QL101's import trigger (a rule given `extra-sinks` asks with its own `sinks`), for a
    file `triggered_by` turned away: it may match here or through an imported helper, and a
    packet can reach it, from its text or from what it imports (`packet_imports`).

    A file holding none of the rule's triggers (`mentions`) can still call a helper it
    imports by name (`check_ops(case, gm, {aten.relu: 1})` is all a test module needs):
    `_untriggered`."""
    sinks = _DEFAULTS if sinks is None else sinks
    if not mentions(text):
        return _untriggered(text, path, project, sinks)
    if may_match_here(text, sink_needles(sinks)):
        return may_hold_packet(text, path, project)
    return _imported_helper_found(text, path, project, sinks, sink_index_for(path, project, sinks))


def _imported_helper_found(text: str, path: str, project, sinks: dict[str, set], index) -> bool:
    """Whether the file may match through a helper it imports: the helper search's own gate
    first (most files import no helper), then the packet question, which reads only the
    modules the file imports from, and the search last: it resolves the names the gate let
    through, through the project's modules."""
    imports = _helper_imports(text, path, project, index)
    return (
        bool(imports)
        and may_hold_packet(text, path, project)
        and _sink_helper_found(text, path, project, sinks, index, imports)
    )


def _untriggered(text: str, path: str, project, sinks: dict[str, set]) -> bool:
    """`matches_through_imports` for a file holding none of the rule's trigger texts: it may
    match only through a helper it imports by name (`from m import check_ops`, then
    `check_ops(case, gm, {aten.relu: 1})`, or a TestCase mixin it subclasses), or through a
    module it imports that may define one (`_through_modules`), and a packet must reach it.
    Such files are most of a project (ExecuTorch: 2,800 of 3,800), each asked a set lookup
    per import at most in a run over many files. Through the names, with the index, the
    search goes before the packet question: QL102's import trigger has not asked that of most
    of these files; without it (one file, an editor's buffer) the search resolves every name
    the file may call, and goes last, as QL102's."""
    index = sink_index_for(path, project, sinks)
    named = _named_imports(text, path, project, index)
    if named and _named_helper_found(text, path, project, sinks, index, named):
        return True
    return _through_modules(text, path, project, sinks, index)


def _named_helper_found(text: str, path: str, project, sinks: dict[str, set], index, named) -> bool:
    """`_untriggered` through the names the file imports (`_named_imports`)."""
    if index is not None:
        return _sink_helper_found(text, path, project, sinks, index, named, named=True) and may_hold_packet(
            text, path, project
        )
    return may_hold_packet(text, path, project) and _sink_helper_found(
        text, path, project, sinks, index, named, named=True
    )


def _through_modules(text: str, path: str, project, sinks: dict[str, set], index) -> bool:
    """`_untriggered` through a module the file imports (`checks.assert_nodes(...)`, `class
    T(mixins.OpChecks, ...)`): asked as of a file holding a trigger text, once the file is
    found to import a module that may define a helper (`helper_modules`)."""
    from qlint.analysis.graphs.helper_modules import imports_helper_module

    if not imports_helper_module(text, path, index):
        return False
    if index is None and not may_hold_packet(text, path, project):
        return False  # asked first without the index, as `_untriggered` asks it
    return _imported_helper_found(text, path, project, sinks, index)
