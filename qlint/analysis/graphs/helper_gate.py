"""Whether a module's text can lead to a helper the project's wrapper index names, asked
before `Forwarding.imports_helper` reads its imports one by one.

With the index of a batch run (`wrapper_index`), each way `imports_helper` can find a helper
first asks the index about a name the text spells:
- an imported function, or a base class named by its import alone: the import's dotted name
  ends in one of the index's functions or classes, or passes a directory the listing skips
  (`WrapperIndex.may_lead_to_helper` of the import);
- a function called `mod.helper(...)`, a class built `mod.Builder(...)`: a path the text
  calls on an imported name (`attributes_called`) ends in a function or class of the index,
  or passes a skipped directory;
- a base class written `mod.Base`: a dotted name of the class statement (`class_bases`)
  ends in a class of the index, or passes a skipped directory.
A name after a dot, blanks, line continuations or comments between, is what
`may_call_attribute` finds in one scan of the text: when it finds none of those names and
no import leads to one, no helper can be found, and the answer is False without the
per-import search (on ExecuTorch, 2,735 of the 3,157 files QL102's import trigger asks).
A text with characters outside ASCII is also searched for the class names as they are
(`holds_any`, what the class search itself asks first): there the scan reads identifiers
in NFKC, which `class_bases` does not.

Each of those dotted names starts at a name the module imports: in an ASCII text a name after
a dot opens the gate only where the dotted name it ends may hold one (`dotted_heads`; on
ExecuTorch `x.run(...)` let 318 files through, `run` being a method of a wrapper class).
"""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

from qlint.analysis.graphs.called_names import attribute_pattern, may_call, may_call_attribute
from qlint.analysis.graphs.dotted_heads import reaches_from_imports
from qlint.analysis.graphs.forwarding_texts import of_torch
from qlint.analysis.graphs.word_trie import holds_any
from qlint.analysis.names.text_imports import class_bases
from qlint.lazy_patterns import lazy


def may_lead_to_helper(text: str, imports: list[tuple[str, str]], index, instances: bool = True) -> bool:
    """False only when `imports_helper` would find no helper in `text` (whose imports, as
    `file_imports` reads them, are `imports`) with the wrapper index `index`; without
    `instances` (QL101's sink helpers: `Forwarding.instances` off), `_sink_helper_gate`."""
    if not instances:
        return _sink_helper_gate(text, imports, index)
    for _, full in imports:  # asked of most files: no generator made each time
        if index.may_lead_to_helper(full):
            return True
    if text.isascii() and "\r" not in text:
        heads = frozenset(name for name, _ in imports)
        return reaches_from_imports(text, attribute_pattern(index.attribute_or_class_names), heads)
    if may_call_attribute(text, index.attribute_or_class_names):
        return True
    return not text.isascii() and holds_any(text, index.classes)


def _sink_helper_gate(text: str, imports: list[tuple[str, str]], index) -> bool:
    """`may_lead_to_helper` for a search that builds no class: each way `imports_helper` has
    to a helper, asked as it asks it before looking a name up. An imported function leads to
    one where the text may call it (`may_call`), a class only as a base of a class statement
    (`class_bases`), and a dotted name only as a call of a function (`mod.helper(...)`, the
    index's `attribute_names`) or as a base (`class T(mod.Mixin)`). On ExecuTorch the files
    QL101's import trigger asks that hold none of its trigger texts are ~2,800: the test
    models they import (`Conv2dModule`) are classes of modules naming a sink they never
    subclass, and `nn.Module` ends in one of those names (`Module`)."""
    for _ in named_ways(text, imports, index):
        return True
    if "\r" not in text:
        heads = frozenset(name for name, _ in imports)
        read = text if text.isascii() else _in_ascii(text, heads, index.attribute_names)
        if read is not None:
            return reaches_from_imports(read, attribute_pattern(index.attribute_names), heads)
    return may_call_attribute(text, index.attribute_names)


def named_ways(text: str, imports: list[tuple[str, str]], index, dotted: bool = True) -> Iterator[tuple[str, str]]:
    """The imports, in order, through which the sink helper search (`imports_helper`) may
    reach a helper by a name the text imports: a function of the index bound by a from-import
    that the text may call (`may_call`), or a class of the index it subclasses by that name
    (`class T(Mixin)`), or (`dotted`) by a path under it (`class T(mod.Mixin)`); none of torch
    (`torch.nn.Module` ends in a name of ExecuTorch's index).
    Without the index (one file, an editor's buffer), any name such an import binds. Each
    import's name is first asked of the index's names with one lookup: QL101's import trigger
    asks every import of every module holding no trigger text (`sinks._untriggered`; ao: 541
    files, nearly none of whose imports the index holds), and the gate's (`_sink_helper_gate`)."""
    heads: dict[str, list[tuple[str, ...]]] | None = None
    leads = None if index is None else index.may_lead_to_helper
    for name, full in imports:
        if name != full and (leads is None or leads(full)) and not of_torch(full):
            if (index is None or index.may_lead_to_function(full)) and may_call(text, name):
                yield name, full
                continue
            if heads is None:
                heads = _class_heads(text)
            if (name,) in heads.get(name, ()) and (index is None or index.may_lead_to_class(full)):
                yield name, full
                continue
        if not dotted:
            continue
        if heads is None:
            heads = _class_heads(text)
        for parts in heads.get(name, ()) if not of_torch(full) else ():
            # A base named by a from-import alone was asked above.
            if (len(parts) > 1 or name == full) and (
                index is None or index.may_lead_to_class(".".join([full, *parts[1:]]))
            ):
                yield name, full
                break


def _class_heads(text: str) -> dict[str, list[tuple[str, ...]]]:
    """The bases of the text's class statements (`class_bases`) by the name they start at."""
    heads: dict[str, list[tuple[str, ...]]] = {}
    for parts in class_bases(text):  # none where the text holds no `class`
        heads.setdefault(parts[0], []).append(parts)
    return heads


_NOT_ASCII = lazy(r"[^\x00-\x7f]")


def _in_ascii(text: str, heads: frozenset[str], names: frozenset[str]) -> str | None:
    """A text with characters outside ASCII as `reaches_from_imports` can read it: in NFKC
    (the identifiers Python reads, as the search's `called_names` reads them), each character
    still outside ASCII turned into `?`, which no name holds: reading back stops at it, where
    the search's ASCII reading of a head's start does too. None where one of the `heads` or of
    the `names` called is not ASCII itself. On ExecuTorch 368 files hold such a character (a
    `—` in a docstring): the gate let most through on a `.run(...)` or a
    `super().__init__(...)` that no import starts."""
    if not (all(h.isascii() for h in heads) and all(n.isascii() for n in names)):
        return None
    return _NOT_ASCII.sub("?", unicodedata.normalize("NFKC", text))
