"""A name bound through a project helper that returns the value of the callable it is handed
(`callable_results`; issue 14, apple/coreai-optimization): `coreai = lazy_import(_import_ops)`,
whose nested `_import_ops` does `from torch.ops import coreai` and returns it, names
`torch.ops.coreai`, so QL102 reads the packets inserted through it. Left unknown (QL102 quiet)
when the helper returns anything else on some path, rebinds its parameter or is decorated, or
when the callable returns different things on different paths."""

from __future__ import annotations

from tests.conftest import lint, write_package

UTILS = """\
def lazy_import_module(import_func, error_message):
    try:
        return import_func()
    except ImportError as e:
        raise ImportError(error_message) from e


def lazy_import_ops(import_func):
    message = "install the ops package"
    return lazy_import_module(import_func, message)
"""

CALLABLE = """\
    def _import_ops():
        from torch.ops import coreai

        return coreai
"""

PASSES = """\
import torch

from pkg.import_utils import lazy_import_ops


def finalize(gm: torch.fx.GraphModule, node):
{callable}
    coreai = {binding}
    with gm.graph.inserting_before(node):
        q = gm.graph.call_function(coreai.quantize, (node.args[0],))
    node.replace_all_uses_with(q)
    gm.graph.erase_node(node)
    return gm
"""


def _rows(tmp_path, utils=UTILS, callable_=CALLABLE, binding="lazy_import_ops(_import_ops)") -> list[int]:
    passes = PASSES.format(callable=callable_.rstrip("\n"), binding=binding)
    pkg = write_package(tmp_path, "pkg", import_utils=utils, passes=passes)
    path = pkg / "passes.py"
    return [d.range.start.row for d in lint(path.read_text(), path=str(path), select=("QL102",))]


# The insertion's row in PASSES with CALLABLE.
ROW = 13


def test_loud_through_two_helpers_returning_the_callables_value(tmp_path):
    assert _rows(tmp_path) == [ROW]


def test_loud_with_the_callable_handed_by_keyword(tmp_path):
    assert _rows(tmp_path, binding="lazy_import_ops(import_func=_import_ops)") == [ROW]


def test_loud_when_the_callable_returns_one_namespace_on_every_path(tmp_path):
    callable_ = """\
    def _import_ops():
        import torch
        if torch.cuda.is_available():
            from torch.ops import coreai
            return coreai
        return torch.ops.coreai
"""
    assert _rows(tmp_path, callable_=callable_) == [ROW + 2]


MODULE_LEVEL = """\
import torch

from pkg.import_utils import lazy_import_ops


def _import_ops():
    from torch.ops import coreai

    return coreai


coreai = lazy_import_ops(_import_ops)


def finalize(gm: torch.fx.GraphModule, node):
    with gm.graph.inserting_before(node):
        q = gm.graph.call_function(coreai.quantize, (node.args[0],))
    node.replace_all_uses_with(q)
    gm.graph.erase_node(node)
    return gm
"""


def test_loud_with_a_module_level_binding_and_callable(tmp_path):
    pkg = write_package(tmp_path, "pkg", import_utils=UTILS, passes=MODULE_LEVEL)
    path = pkg / "passes.py"
    assert [d.range.start.row for d in lint(path.read_text(), path=str(path), select=("QL102",))] == [17]
    # A module-level function of that name is no callable the module binds once.
    twice = MODULE_LEVEL.replace("\n\ncoreai =", "\n\n_import_ops = print\ncoreai =")
    pkg = write_package(tmp_path, "pkg", import_utils=UTILS, passes=twice)
    assert lint(path.read_text(), path=str(path), select=("QL102",)) == []


def test_quiet_when_the_helper_returns_the_callable_itself(tmp_path):
    utils = UTILS.replace("        return import_func()", "        return import_func")
    assert _rows(tmp_path, utils=utils) == []


def test_quiet_when_the_helper_returns_something_else_on_one_path(tmp_path):
    utils = UTILS.replace(
        "    try:\n        return import_func()",
        "    if error_message is None:\n        return None\n    try:\n        return import_func()",
    )
    assert _rows(tmp_path, utils=utils) == []


def test_quiet_when_the_helper_may_run_off_its_end(tmp_path):
    utils = UTILS.replace(
        "    try:\n        return import_func()\n    except ImportError as e:\n"
        "        raise ImportError(error_message) from e",
        "    if error_message:\n        return import_func()",
    )
    assert "if error_message:" in utils
    assert _rows(tmp_path, utils=utils) == []


def test_quiet_when_the_helper_calls_the_callable_with_arguments(tmp_path):
    utils = UTILS.replace("        return import_func()", "        return import_func(error_message)")
    assert _rows(tmp_path, utils=utils) == []


def test_quiet_when_the_helper_rebinds_its_parameter(tmp_path):
    utils = UTILS.replace("    try:\n", "    import_func = _fallback\n    try:\n")
    utils += "\n\ndef _fallback():\n    return None\n"
    assert _rows(tmp_path, utils=utils) == []


def test_quiet_when_the_helper_is_decorated(tmp_path):
    utils = "import functools\n\n\n" + UTILS.replace(
        "def lazy_import_ops(import_func):", "@functools.cache\ndef lazy_import_ops(import_func):"
    )
    assert _rows(tmp_path, utils=utils) == []


def test_quiet_when_the_relayed_helper_is_handed_another_callable(tmp_path):
    utils = (
        UTILS.replace(
            "    return lazy_import_module(import_func, message)", "    return lazy_import_module(_other, message)"
        )
        + "\n\ndef _other():\n    return None\n"
    )
    assert _rows(tmp_path, utils=utils) == []


def test_quiet_when_the_callable_returns_another_namespace_on_one_path(tmp_path):
    callable_ = """\
    def _import_ops():
        import torch
        if torch.cuda.is_available():
            from torch.ops import coreai
            return coreai
        return torch.ops.otherai
"""
    assert _rows(tmp_path, callable_=callable_) == []


def test_quiet_when_the_callable_is_bound_twice(tmp_path):
    callable_ = CALLABLE + "\n    _import_ops = _import_ops\n"
    assert _rows(tmp_path, callable_=callable_) == []


def test_quiet_when_the_helper_is_no_function_of_the_project(tmp_path):
    binding = "importlib.import_module(_import_ops)"
    assert _rows(tmp_path, binding=binding) == []


# A generator's `return x` is no value a caller gets: the helper and the callable are read
# only when they yield nothing themselves. A function or lambda they define in a block
# (`if DEBUG: def trace(): yield ...`) yields for itself, not for them.
NESTED_GENERATOR = "    if error_message:\n\n        def trace():\n            yield error_message\n\n"


def test_loud_when_a_generator_is_defined_in_a_block_of_the_helper(tmp_path):
    utils = UTILS.replace("    try:\n", NESTED_GENERATOR + "    try:\n", 1)
    assert "def trace():" in utils
    assert _rows(tmp_path, utils=utils) == [ROW]


def test_loud_when_a_generator_lambda_is_bound_in_a_block_of_the_callable(tmp_path):
    callable_ = """\
    def _import_ops():
        if __debug__:
            trace = lambda: (yield)  # noqa: E731
        from torch.ops import coreai

        return coreai
"""
    assert _rows(tmp_path, callable_=callable_) == [ROW + 2]


def test_quiet_when_the_helper_yields_in_a_block_of_its_own(tmp_path):
    utils = UTILS.replace("    try:\n", "    if error_message is None:\n        yield error_message\n    try:\n", 1)
    assert _rows(tmp_path, utils=utils) == []


def test_quiet_when_the_callable_yields_in_a_nested_block(tmp_path):
    callable_ = """\
    def _import_ops():
        from torch.ops import coreai

        for _ in range(1):
            with open(__file__):
                yield coreai
        return coreai
"""
    assert _rows(tmp_path, callable_=callable_) == []
