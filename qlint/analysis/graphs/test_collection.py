"""What pytest and unittest call by themselves in a test module: anything else in it runs
only through a call the project spells.

Test modules are not API: nobody imports a helper from `test_quant_api.py` to use it. A
test runner collects modules named `test_*.py` / `*_test.py` (and `conftest.py`, and modules
under a `test`/`tests` folder: support modules such as `test_xnnpack_utils.py` or
`tests/utils.py`), then calls `test*` functions and methods, fixtures (decorated), hooks
(`pytest_*`, `setup_module`, ...) and the `unittest.TestCase` methods it overrides.
"""

from __future__ import annotations

import ast
import os

# Names a runner calls by itself: unittest's and pytest's set-up and tear-down hooks, and
# every method `unittest.TestCase` has (an override of `run`, `shortDescription`, ... is
# called by the base).
_MODULE_HOOKS = frozenset(
    {
        "setUpModule",
        "tearDownModule",
        "load_tests",
        "setup_module",
        "teardown_module",
        "setup_function",
        "teardown_function",
        "setup",
        "teardown",
    }
)
_METHOD_HOOKS = frozenset({"setup_method", "teardown_method", "setup_class", "teardown_class", "setup", "teardown"})
_TEST_FOLDERS = frozenset({"test", "tests"})


def is_test_module(path: str, root: str) -> bool:
    """A module a test runner collects, or one beside the tests that supports them (folders
    counted below `root`, the project's top: where a checkout lies says nothing)."""
    name = os.path.basename(path)
    if name == "conftest.py" or name.startswith("test_") or name.endswith("_test.py"):
        return True
    folders = os.path.relpath(os.path.dirname(os.path.abspath(path)), os.path.abspath(root)).split(os.sep)
    return any(folder in _TEST_FOLDERS for folder in folders)


def called_by_runner(name: str, method: bool) -> bool:
    """Whether a test runner may call a function (or method) of this name by itself."""
    if name.startswith("test") or name.startswith("pytest_") or (name.startswith("__") and name.endswith("__")):
        return True
    if not method:
        return name in _MODULE_HOOKS
    return name in _METHOD_HOOKS or name in _test_case_names()


def _test_case_names() -> frozenset[str]:
    """Every name `unittest.TestCase` has (`test_case_names`): an override is called by the
    base. Loaded only when a test class's method is judged."""
    from qlint.analysis.graphs.test_case_names import TEST_CASE_NAMES

    return TEST_CASE_NAMES


def runner_base(base: ast.expr) -> bool:
    """A base whose own calls by name are known: `unittest.TestCase` (its hooks are listed
    above) or `object`."""
    if isinstance(base, ast.Attribute):
        return base.attr == "TestCase" and isinstance(base.value, ast.Name) and base.value.id == "unittest"
    return isinstance(base, ast.Name) and base.id in ("TestCase", "object")
