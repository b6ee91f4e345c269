"""What a use of a PT2E-prepared model does to its observers, for `qlint.analysis.calibration`.

A prepared model is calibrated by running it. Anything qlint cannot see through (a call of
an unknown function, a store into an attribute or a container) may run it, so only the
uses listed here count as leaving the observers empty. The lists are short on purpose:
a use missing from them makes QL204 quiet, never noisy.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Mapping

from qlint.analysis.names.resolver import dotted_parts
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.statement_walk import statement_lists
from qlint.analysis.tree_walk import walk

# Methods that read or rewrite the module without running its forward.
INERT_METHODS = frozenset(
    {
        "print_readable",
        "recompile",
        "named_modules",
        "modules",
        "parameters",
        "named_parameters",
        "buffers",
        "named_buffers",
        "state_dict",
        "children",
        "named_children",
        "get_submodule",
        "delete_all_unused_submodules",
        "register_buffer",
    }
)
# Attributes whose reading (and whatever is done with the result) cannot run the model.
INERT_ATTRIBUTES = frozenset({"graph", "code", "meta", "training"})
# Functions that only look at a value.
INERT_FUNCTIONS = frozenset(
    {
        "print",
        "isinstance",
        "type",
        "id",
        "str",
        "repr",
        "hash",
        "len",
        "hasattr",
        "callable",
        "format",
        "logging.info",
        "logging.debug",
        "logging.warning",
        "logging.error",
    }
)
_LOGGERS = frozenset({"logger", "log", "LOGGER", "_logger", "LOG"})
_LOG_METHODS = frozenset({"info", "debug", "warning", "warn", "error", "exception", "critical"})
_TEST_DIRS = frozenset({"test", "tests", "testing"})


def is_inert_function(name: str | None, func: ast.expr) -> bool:
    if name in INERT_FUNCTIONS or (isinstance(func, ast.Name) and func.id in INERT_FUNCTIONS):
        return True
    parts = dotted_parts(func)
    return parts is not None and len(parts) == 2 and parts[0] in _LOGGERS and parts[1] in _LOG_METHODS


def inert_attribute_chain(func: ast.expr, holdings: Mapping[str, frozenset]) -> bool:
    """`prepared.graph.print_tabular()`, `prepared.meta[...]`: rooted at a name that holds
    tokens (in `holdings`, name -> tokens) through an attribute that holds no runnable part of
    the model."""
    parts = dotted_parts(func)
    return parts is not None and len(parts) >= 2 and parts[1] in INERT_ATTRIBUTES and bool(holdings.get(parts[0]))


def is_test_code(path: str, func: ast.AST) -> bool:
    """A test function, or a function in a test file or test-support directory."""
    if getattr(func, "name", "").startswith("test"):
        return True
    directory, filename = os.path.split(os.path.abspath(path))
    if filename.startswith("test_") or filename.endswith("_test.py") or filename == "conftest.py":
        return True
    return any(part in _TEST_DIRS for part in directory.split(os.sep))


def passes_is_qat(call: ast.Call) -> bool:
    """`get_symmetric_quantization_config(is_qat=True)`, `Quantizer(is_qat=flag)`: a QAT
    configuration (or maybe one), whose model a training loop runs."""
    return any(
        kw.arg == "is_qat" and not (isinstance(kw.value, ast.Constant) and kw.value.value is False)
        for kw in call.keywords
    )


def quantizer_is_qat(expr: ast.expr | None, module: dict) -> bool:
    """A module-level quantizer, or what it is built from, passes an `is_qat=` that is not the
    constant False (inside a function body the walk tracks this flow by flow)."""
    seen: set[str] = set()
    work = [expr] if expr is not None else []
    while work and len(seen) < 32:
        for node in ast.walk(work.pop()):
            if isinstance(node, ast.keyword) and node.arg == "is_qat":
                if not (isinstance(node.value, ast.Constant) and node.value.value is False):
                    return True
            elif isinstance(node, ast.Name) and node.id not in seen:
                seen.add(node.id)
                work.extend(v for v in module.get(node.id) or [] if isinstance(v, ast.expr))
    return False


def free_names(node: ast.AST) -> frozenset[str]:
    """Names a lambda, comprehension or nested function reads from the enclosing scope."""
    return _names(node)[0]


def called_names(node: ast.AST) -> frozenset[str]:
    """Names called directly (`m(x)`, `m.forward(x)`) inside a lambda, comprehension or nested function."""
    return _names(node)[1]


def _names(node: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
    """Both, from one walk, kept on the node: a loop's body is walked twice and each of its
    comprehensions was walked three times a pass."""
    return kept_on_node(node, _NAMES, _read_names)


_NAMES = "_qlint_calibration_names"


def _read_names(node: ast.AST) -> tuple[frozenset[str], frozenset[str]]:
    free: set[str] = set()
    called: set[str] = set()
    for n in walk(node):
        if isinstance(n, ast.Name):
            if isinstance(n.ctx, ast.Load):
                free.add(n.id)
        elif isinstance(n, ast.Call):
            func = n.func
            if isinstance(func, ast.Attribute) and func.attr in ("forward", "__call__"):
                func = func.value
            if isinstance(func, ast.Name):
                called.add(func.id)
    return frozenset(free), frozenset(called)


# -- syntax shared by the walk ---------------------------------------------------------
def assignment_pairs(targets: list[ast.expr], value: ast.expr | None):
    """`a, b = x, y`: pairs of target and value, else None."""
    if len(targets) != 1 or not isinstance(targets[0], (ast.Tuple, ast.List)):
        return None
    if not isinstance(value, (ast.Tuple, ast.List)) or len(value.elts) != len(targets[0].elts):
        return None
    if any(isinstance(x, ast.Starred) for x in (*targets[0].elts, *value.elts)):
        return None
    return list(zip(targets[0].elts, value.elts, strict=True))


def own_statements(func: ast.AST):
    """Statements of a body, not entering nested functions or classes."""
    stack = list(getattr(func, "body", []))
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            continue
        for block in statement_lists(node):
            stack.extend(block)
