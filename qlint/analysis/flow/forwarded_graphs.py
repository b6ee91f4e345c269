"""Imported helpers that hand on what a helper of a third module returns (QL203's import trigger,
`graph_returns.returning_calls`).

`gm = capture_a(model, x); gm.eval()` with `capture_a` in module A calling `capture_b` of
module B, which returns `torch.export.export(...).module()`: A's text names no graph source, so
its `GraphReturns` fact is empty and the file was never read for QL203 (one imported helper
worked, two in a row did not). The fact stays what one module's text says (it is kept per
module content); the chain is followed here, when the trigger asks about a helper the file
switches the result of: a module-level function of A whose text calls a function A imports from
another module of the project (`capture_b(` of `from b import capture_b`, `b.capture_b(` of
`import b`), or a method of an instance of a class A imports, made in the call's expression
(`Exporter(x).export(` of `from b import Exporter`, the chain's last link: GraphReturns lists
it as `Exporter.export`), that is itself such a helper, up to `DEPTH` modules further, each
(module, function) once. The model flow then decides on the helpers' real returns and stores, as it does for one.

What it reads: the text of each module on the way (its import statements, and the lines of the
function, from its `def` at the start of a line to the next line starting a statement of the
module), not its parse; each one is a dependency of the check, as a summary read is.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable

from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.text_imports import text_imports
from qlint.lazy_patterns import lazy

DEPTH = 3  # modules past the first helper's (a chain of four imported helpers in a row)
# Names imported from these are never helpers of the project.
LIBRARY_ROOTS = frozenset({"torch", "torchao", "numpy", "copy", "typing", "collections", "unittest", "pytest"})
_RELATIVE = lazy(r"from[ \t]+\.")
# A line that starts a module-level statement (not a signature's closing bracket).
_TOP_LEVEL = lazy(r"^[^\s)#]", re.MULTILINE)
_DEFINITION = lazy(r"^()(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", re.MULTILINE)
_CLASS = lazy(r"^()class[ \t]+(\w+)[ \t]*[(:]", re.MULTILINE)
_METHOD = lazy(r"^([ \t]+)(?:async[ \t]+)?def[ \t]+(\w+)[ \t]*\(", re.MULTILINE)
_IDENTIFIER = lazy(r"[A-Za-z_]\w*")


def returns_graph(
    project, module: str, attr: str, requester: str, direct: Callable, depth: int = DEPTH, seen=frozenset()
) -> bool:
    """Function `attr` of `module` (imported by the module at `requester`) may return or store
    an exported graph: its module's fact lists it (`direct(project, module, requester)`, the
    `GraphReturns` names), or it calls an imported helper of another module that may."""
    names = direct(project, module, requester)
    if names is None:
        return False
    if attr in names:
        return True
    if depth <= 0:
        return False
    path = project.find_module_in_check(module, requester)
    if path is None or (path, attr) in seen:
        return False
    text = project.text(path)
    body = _function_text(text, attr) if text is not None else None
    if body is None:
        return False
    seen = seen | {(path, attr)}
    imports = text_imports(text, module_name_for(path) if _RELATIVE.search(text) else None, path)
    try:
        for other, name in _called_imports(body, imports, lambda m: may_be_module(project, m, path)):
            if returns_graph(project, other, name, path, direct, depth - 1, seen):
                return True
        return False
    finally:
        # What the search read of the modules on the way rests on this check, not on a later
        # check of the module at `path`.
        project.hand_over_dependencies(path, requester)


def may_be_module(project, module: str, requester: str) -> bool:
    """Whether a name `module` imports (`from pkg import Exporters`) may be a module of its own:
    `module` is a package, or no file of the project (a directory without `__init__.py`). A
    plain module's file holds no submodule, so a CapWords name imported from one is a class
    (or another value), and no lookup of a module of that name is paid for it."""
    found = project.find_module_in_check(module, requester)
    return found is None or os.path.basename(found) == "__init__.py"


def _called_imports(body: str, imports: list[tuple[str, str]], may_be_module: Callable[[str], bool]):
    """(module, function) of each imported function of the project the body calls; a CapWords
    name imported from a package is looked up both as a class and as a module (`may_be_module`,
    asked of its package only when the body calls a function on the name)."""
    for local, full in imports:
        if full.partition(".")[0] in LIBRARY_ROOTS or local not in body:
            continue
        # `from b import capture_b`: `capture_b(`
        module, _, attr = full.rpartition(".")
        if module and any(_opens_call(body, end) for end in _word_ends(body, local)):
            yield module, attr
            # `from b import Exporter`: `Exporter(x).export(`, a method of an instance made there
            for method in _made_methods(body, local) if local[:1].isupper() else ():
                yield module, f"{attr}.{method}"
        # `import b` / `from pkg import b`: `b.capture_b(`; `from b import Exporter`:
        # `Exporter.capture(`, a static or class method called on the class (CapWords, as
        # `class_calls` reads such calls), listed by b's fact as `Exporter.capture`
        on_class = bool(module) and attr[:1].isupper()
        as_module = None  # whether a CapWords name may be a module, once asked
        for end in _word_ends(body, local + "."):
            m = _IDENTIFIER.match(body, end)
            if m is None:
                continue
            if _opens_call(body, m.end()):
                if not on_class:
                    yield full, m.group()
                    continue
                yield module, f"{attr}.{m.group()}"
                if as_module is None:
                    as_module = may_be_module(module)
                if as_module:
                    yield full, m.group()  # `from pkg import Exporters`, pkg/Exporters.py
            elif not on_class and m.group()[:1].isupper() and body[m.end() : m.end() + 1] == ".":
                # `b.Exporter.capture(`
                method = _IDENTIFIER.match(body, m.end() + 1)
                if method is not None and _opens_call(body, method.end()):
                    yield full, f"{m.group()}.{method.group()}"


# Searched with `str.find`, not with a pattern built per name: such patterns miss `re`'s cache
# across a tree's thousands of imported names, and compiling one costs more than the search.
def _word_ends(text: str, word: str):
    """Where each occurrence of `word` not preceded by a word character or a dot ends.

    Not `word_search`'s word test: a dot before it makes an attribute of another name, and
    this loop runs for every imported name of ExecuTorch's modules (QL203's import trigger),
    where the test is written inline rather than paid as a call per occurrence."""
    start = 0
    while (i := text.find(word, start)) != -1:
        start = i + 1
        if i == 0 or not (text[i - 1].isalnum() or text[i - 1] in "_."):
            yield i + len(word)


def _made_methods(body: str, cls: str):
    """The methods called on an instance of `cls` made in the same expression (`cls(x).m(`),
    its arguments without a bracket or a line break."""
    for end in _word_ends(body, cls + "("):
        close = end
        while close < len(body) and body[close] not in "()[]{}\n":
            close += 1
        if body[close : close + 2] == ").":
            m = _IDENTIFIER.match(body, close + 2)
            if m is not None and _opens_call(body, m.end()):
                yield m.group()


def _opens_call(text: str, i: int) -> bool:
    """Whether `(` follows position `i`, after spaces and tabs."""
    while i < len(text) and text[i] in " \t":
        i += 1
    return i < len(text) and text[i] == "("


def _function_text(text: str, name: str) -> str | None:
    """The lines of the module-level function `name`, from its `def` to the next line that
    starts a statement of the module (a closing bracket of its signature aside); for
    `Class.method`, those of the method's `def` in the module-level class's lines, to the next
    line indented no deeper."""
    cls, dot, method = name.rpartition(".")
    if dot:
        block = _block(text, cls, _CLASS)
        return _block(block, method, _METHOD) if block is not None else None
    return _block(text, name, _DEFINITION)


def _block(text: str, name: str, definition) -> str | None:
    m = next((d for d in definition.finditer(text) if d.group(2) == name), None) if name in text else None
    if m is None:
        return None
    end = text.find("\n", m.end())
    if end == -1:
        return text[m.start() :]
    indent = len(m.group(1))
    if not indent:
        line = _TOP_LEVEL.search(text, end + 1)
        return text[m.start() : line.start() if line is not None else len(text)]
    # A method: to the next line starting a statement indented no deeper (in the class's lines).
    while end != -1:
        start = end + 1
        end = text.find("\n", start)
        line = text[start : end if end != -1 else len(text)]
        code = line.lstrip(" \t")
        if code and code[0] not in ")#" and len(line) - len(code) <= indent:
            return text[m.start() : start]
    return text[m.start() :]


__all__ = ["DEPTH", "LIBRARY_ROOTS", "may_be_module", "returns_graph"]
