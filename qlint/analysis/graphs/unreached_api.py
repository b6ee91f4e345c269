"""A function whose authors turned its only call off (issue 14's dead API rows): a library's
public function, or any module-level function of a script.

A public function of a package module is API: a user of the library may call it though the
project never does (AITemplate's `nchw2nhwc_pass`, quantized-training's `is_pooling`: the
corpus labels the first's finding a bug, so "nothing names it" is not enough). It is dead
where the repository says so: its own module calls it only in a comment (the Gaudi bridge's
`replace_pattern_quant_dequant_softmax`, whose call in `PatternMatchAndReplacer.run` is
commented out), no other place spells its name but in comments, and no module re-exports its
module with `import *`. (A call commented out in another module alone is not looked for: the
module's own text is the gate that spares the repository-wide search for every other finding.)

A name in code anywhere in the repository keeps it live: a call, a reference, an import or
re-export by name, a string holding it as a word (`__all__`, `getattr(m, "f")`, a registry),
in the Python modules under the repository's root (tests and examples too) or in its documents
and packaging files (an entry point `f = "pkg.mod:f"`, a page naming it). A module that no
other file names is not enough either (dmx-compressor's `utils/fx/qdq_graph.py`): a small
package's modules look just so. The caller has already ruled out decorators and run-time
lookups in the module.

A script's function is judged the same way, its name aside: a program (qtta's `quantize.py`,
whose `__main__` block runs `do_quantize` and comments out `do_pt2e(...)`) is reached by being
run or imported, so a call commented out in its own text, with no other spelling anywhere, is
the authors switching that function off, as for the Gaudi bridge's API. A comment that only
names it (autoware's "we will not use the run_validation helper here") is not a call: it stays
live, as it does in a package.
"""

from __future__ import annotations

import io
import os
import re
from collections.abc import Iterator

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.never_called import read_in
from qlint.analysis.graphs.project_texts import texts_naming

# Non-Python files that may name a function or a module for a user: documents and packaging
# metadata at the repository's top, under its documentation folders, and beside the module.
_TEXT_SUFFIXES = (".md", ".rst", ".txt", ".toml", ".cfg", ".ini", ".yaml", ".yml", ".ipynb")
_DOC_FOLDERS = ("docs", "doc")
_MAX_BYTES = 2_000_000


def unreached_public(ctx: FileContext, func, repo: str) -> bool:
    """Whether the public module-level function `func` of the package module `ctx` is one
    nothing can reach: its module calls it only in a comment, and no code or document of the
    repository names it."""
    name = func.name
    if name.startswith("_") or os.path.basename(ctx.path) in ("__init__.py", "__init__.pyi"):
        return False  # private ones are `never_called`'s; an `__init__`'s are the package's face
    return _turned_off(ctx, func, repo)


def unreached_script_function(ctx: FileContext, func, repo: str) -> bool:
    """Whether the module-level function `func` of a script (a module outside any package) is
    one its authors turned off: its module calls it only in a comment (qtta's `do_pt2e`, under
    a `__main__` block that runs the other experiment), and no code or document of the
    repository names it. A script is no library: running it or importing it by its file's name
    are the only ways in, and the first runs only what its text calls; a private name is no
    different here (`never_called` judges those of packages only)."""
    return _turned_off(ctx, func, repo)


def _turned_off(ctx: FileContext, func, repo: str) -> bool:
    name = func.name
    # The gate, read off the module's text: most findings' functions have no call in a comment.
    if not _commented_call(ctx.text, name) or read_in(ctx.tree, func):
        return False
    if any(_in_code(text, name) for _, text in texts_naming(ctx, name, repo)):
        return False
    stem = os.path.splitext(os.path.basename(ctx.path))[0]
    return not _in_documents(ctx, repo, name) and not _star_exported(ctx, repo, stem)


def _tokens(text: str) -> list[tuple[str, str]] | None:
    """(kind, text) of each token: `comment`, `name` or `other` (None: it does not tokenize).
    `tokenize` is imported here: a check that never gets this far (an editor's, on every
    keystroke) does not pay for its import."""
    import tokenize

    kinds = {tokenize.COMMENT: "comment", tokenize.NAME: "name"}
    try:
        return [(kinds.get(t.type, "other"), t.string) for t in tokenize.generate_tokens(io.StringIO(text).readline)]
    except (tokenize.TokenError, SyntaxError, ValueError):
        return None


def _in_code(text: str, name: str) -> bool:
    """Whether a module spells `name` outside its comments: as a name, or as a word of a
    string (a module that does not tokenize counts as naming it)."""
    tokens = _tokens(text)
    if tokens is None:
        return True
    word = re.compile(rf"\b{re.escape(name)}\b")
    return any(
        kind != "comment" and (string == name if kind == "name" else bool(word.search(string)))
        for kind, string in tokens
    )


def _commented_call(text: str, name: str) -> bool:
    """Whether a comment of the module holds a call of `name` (a call its authors turned off)."""
    call = re.compile(rf"\b{re.escape(name)}\s*\(")
    if not re.search(rf"#[^\n]*\b{re.escape(name)}\s*\(", text):
        return False  # no line holds one: no tokenizing
    tokens = _tokens(text)
    return tokens is not None and any(kind == "comment" and call.search(string) for kind, string in tokens)


def _star_exported(ctx: FileContext, repo: str, stem: str) -> bool:
    """Whether a module re-exports the function's module with `from ...stem import *`."""
    star = re.compile(rf"^\s*from\s+[\w.]*\b{re.escape(stem)}\s+import\s+\*", re.MULTILINE)
    return any(star.search(text) for _, text in texts_naming(ctx, stem, repo))


def _in_documents(ctx: FileContext, repo: str, word: str) -> bool:
    """Whether a document or packaging file of the repository spells `word`."""
    pattern = re.compile(rf"\b{re.escape(word)}\b")
    needle = word.encode()
    for path in _documents(repo, os.path.dirname(os.path.abspath(ctx.path))):
        try:
            with open(path, "rb") as fh:
                data = fh.read(_MAX_BYTES)
        except OSError:
            continue
        if needle in data and pattern.search(data.decode("utf-8", "replace")):
            return True
    return False


def _documents(repo: str, folder: str) -> Iterator[str]:
    """The document and packaging files at the repository's top, in its documentation
    folders, and beside the module."""
    for directory in dict.fromkeys((repo, folder)):
        yield from _text_files(directory)
    for name in _DOC_FOLDERS:
        top = os.path.join(repo, name)
        for directory, folders, _ in os.walk(top):
            folders[:] = [f for f in folders if not f.startswith(".")]
            yield from _text_files(directory)


def _text_files(directory: str) -> Iterator[str]:
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return
    for name in names:
        path = os.path.join(directory, name)
        named = name.lower().endswith(_TEXT_SUFFIXES) or name.upper().startswith(("README", "SETUP"))
        if named and os.path.isfile(path):
            yield path
