"""Programs that load a module from a file path they get at run time (issue 14's dead rows).

A program that builds a module object from a path it is handed (`importlib.util.
spec_from_file_location(name, path)` and `exec_module`, or `SourceFileLoader(name, path)`) and
calls what the module defines reaches a module of the project without spelling its name:
LLM2FPGA's `scripts/compile-pytorch.py` loads whichever adapter its `--adapter` argument names
(the flake passes `src/pt2e_static_quant_linear_adapter.py` and a dozen more) and calls its
`export_program`. A script of definitions is no leftover when such a loader names one of them:
it is what the loader is for. A loader that names none of them is meant for other modules
(HBTGen's harness, which runs the `trigger_known_bugs` of the scripts it generates, not its
issue reproductions). A loader whose path is a string literal names its one file, which the
search for the script's own name already finds.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.project_texts import texts_spelling
from qlint.analysis.names.live_trees import parse as live_parse
from qlint.analysis.word_search import spells_word

# The loaders, and the keyword each takes its path as when it is not the second argument.
_LOADERS = {"spec_from_file_location": "location", "SourceFileLoader": "path"}


def loaded_by_path(ctx: FileContext, root: str) -> bool:
    """Whether another module under `root` loads modules from a path it computes and names a
    function or class the checked module defines at module level."""
    defined = [s.name for s in ctx.tree.body if isinstance(s, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef))]
    for path, text, _ in texts_spelling(ctx, tuple(_LOADERS), root):
        if any(spells_word(text, name) for name in defined) and _computed_load(text, path):
            return True
    return False


def _computed_load(text: str, path: str) -> bool:
    try:
        tree = live_parse(text, path)  # the run's tree of it, when it has one
    except (SyntaxError, ValueError, RecursionError):
        return False
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
        if name not in _LOADERS:
            continue
        path = (
            node.args[1]
            if len(node.args) > 1
            else next((k.value for k in node.keywords if k.arg == _LOADERS[name]), None)
        )
        if path is not None and not (isinstance(path, ast.Constant) and isinstance(path.value, str)):
            return True
    return False
