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
Each of those dotted names starts at a name the module imports: a name after a dot opens the
gate only where the dotted name it ends may hold one (`dotted_heads`; on ExecuTorch
`x.run(...)` let 318 files through, `run` being a method of a wrapper class). A text with
`\\r` or characters outside ASCII is read so first (`read_in_ascii`, both gates): the search
reads its dotted names in NFKC; and its class bases are also asked as `class_bases` reads
them, in the raw text.
"""

from __future__ import annotations

from collections.abc import Iterator

from qlint.analysis.graphs.called_names import attribute_pattern, may_call, may_call_attribute
from qlint.analysis.graphs.dotted_heads import reaches_from_imports
from qlint.analysis.graphs.forwarding_texts import of_torch
from qlint.analysis.identifier_text import normalised
from qlint.analysis.names.text_imports import class_bases_by_head


def may_lead_to_helper(text: str, imports: list[tuple[str, str]], index, instances: bool = True) -> bool:
    """False only when `imports_helper` would find no helper in `text` (whose imports, as
    `file_imports` reads them, are `imports`) with the wrapper index `index`; without
    `instances` (QL101's sink helpers: `Forwarding.instances` off), `_sink_helper_gate`."""
    if not instances:
        return _sink_helper_gate(text, imports, index)
    for _, full in imports:  # asked of most files: no generator made each time
        if index.may_lead_to_helper(full):
            return True
    if _reaches_a_name(text, imports, index.attribute_or_class_names):
        return True
    # `class_bases` reads the raw text (`mod.Base` before a combining accent is `Base` to it).
    return not text.isascii() and _subclasses(text, imports, index)


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
    return _reaches_a_name(text, imports, index.attribute_names)


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
                heads = class_bases_by_head(text)
            if (name,) in heads.get(name, ()) and (index is None or index.may_lead_to_class(full)):
                yield name, full
                continue
        if not dotted:
            continue
        if heads is None:
            heads = class_bases_by_head(text)
        for parts in heads.get(name, ()) if not of_torch(full) else ():
            # A base named by a from-import alone was asked above.
            if (len(parts) > 1 or name == full) and (
                index is None or index.may_lead_to_class(".".join([full, *parts[1:]]))
            ):
                yield name, full
                break


def _subclasses(text: str, imports: list[tuple[str, str]], index) -> bool:
    """Whether a base of a class statement (`class_bases`, as the search reads them) starts at
    an import and may name a class of the index (`T(Base)`, `T(mod.Base)`)."""
    heads = class_bases_by_head(text)
    for name, full in imports if heads else ():
        if any(index.may_lead_to_class(".".join([full, *parts[1:]])) for parts in heads.get(name, ())):
            return True
    return False


def _reaches_a_name(text: str, imports: list[tuple[str, str]], names: frozenset[str]) -> bool:
    """Whether a dotted name the search reads (`attributes_called`) may start at an import and
    end in, or pass, one of `names`; read back from each such name after a dot
    (`dotted_heads`), in the text as `read_in_ascii` gives it. Where it gives none, whether
    any dotted name ends in one (`may_call_attribute`)."""
    heads = frozenset(name for name, _ in imports)
    if text.isascii() and "\r" not in text:
        return reaches_from_imports(text, attribute_pattern(names), heads)
    read = read_in_ascii(text, heads, names)
    if read is None:
        return may_call_attribute(text, names)
    return reaches_from_imports(read[0], attribute_pattern(names), heads, read[1])


def read_in_ascii(text: str, heads: frozenset[str], names: frozenset[str]) -> tuple[str, str] | None:
    """A text as `reaches_from_imports` can read it where the search would read it alike
    (`called_names`: its dotted names, in NFKC, the identifiers Python reads), with the NFKC
    text it stands for, character for character: `\\r` a blank (the search takes it for one,
    and a comment runs on past it to `\\n`), each character outside ASCII `?`, which no name
    holds. Reading back stops at one, where the search's reading of a head's start does too
    (it reads `h` in `éh.f(...)`); where the NFKC text holds a word character there, a part
    goes on over it (`x.aé.f(...)`: one part to the search's `[A-Za-z_]\\w*`). None where one
    of the `heads` or of the `names` called is not ASCII itself. On ExecuTorch 368 files hold
    such a character (most a dash or a quote in a docstring): read as they were, QL101's gate
    let most through on a `.run(...)` or a `super().__init__(...)` that no import starts, and
    QL102's 22 of the 232 it asks on any name of its index after a dot (`x.run()`; 11 still
    on `subprocess.run(...)`)."""
    if not (all(h.isascii() for h in heads) and all(n.isascii() for n in names)):
        return None
    global _READ
    if _READ is None or _READ[0] is not text:
        words = normalised(text).replace("\r", " ")
        # One pass in C (a pattern's scan of such texts cost ExecuTorch's ~250 ~0.1 s of CPU).
        _READ = (text, (words.encode("ascii", "replace").decode("ascii"), words))
    return _READ[1]


# (the text last read, how `read_in_ascii` reads it): QL101's and QL102's gates read the same file
_READ: tuple[str, tuple[str, str]] | None = None
