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

from qlint.analysis.graphs.called_names import attribute_pattern, may_call_attribute
from qlint.analysis.graphs.dotted_heads import reaches_from_imports
from qlint.analysis.graphs.word_trie import holds_any


def may_lead_to_helper(text: str, imports: list[tuple[str, str]], index) -> bool:
    """False only when `imports_helper` would find no helper in `text` (whose imports, as
    `file_imports` reads them, are `imports`) with the wrapper index `index`."""
    for _, full in imports:  # asked of most files: no generator made each time
        if index.may_lead_to_helper(full):
            return True
    if text.isascii() and "\r" not in text:
        heads = frozenset(name for name, _ in imports)
        return reaches_from_imports(text, attribute_pattern(index.attribute_or_class_names), heads)
    if may_call_attribute(text, index.attribute_or_class_names):
        return True
    return not text.isascii() and holds_any(text, index.classes)
