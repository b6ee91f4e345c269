"""QL101 and matchers in functions nothing can call, judged as QL102 judges insertions
(`never_called`): a private function (or a private method of a class without bases) whose
name no code of the project reads compares nothing (functorch's `_canonicalize`, left over
after `ts_compile` took its job). Loud look-alikes: a public function the project never calls
(API: users call it), a private function called, handed on, imported by another module,
listed in `__all__`, registered by a decorator or looked up at run time, a private method a
base class may call, and a packet table compared both in an uncalled helper and in live code."""

from __future__ import annotations

import textwrap
from pathlib import Path

MATCH = "return [n for n in gm.graph.nodes if n.target == torch.ops.aten._to_copy]"


def _rows(tmp_path: Path, text: str, extra: dict[str, str] | None = None) -> list[int]:
    """QL101's rows in `pkg/passes.py` of a one-package repository, `extra` its other files."""
    from tests.conftest import check_file, package_repository

    modules = {name.removesuffix(".py"): textwrap.dedent(other) for name, other in (extra or {}).items()}
    root = package_repository(tmp_path, passes=textwrap.dedent(text), **modules)
    return [d.range.start.row for d in check_file(root / "pkg" / "passes.py", ("QL101",)).diagnostics]


def _module(func: str, rest: str = "") -> str:
    return f"import torch\n\n\ndef {func}(gm):\n    {MATCH}\n" + textwrap.dedent(rest)


# -- quiet: nothing can call the function --------------------------------------------------------


def test_private_function_never_called_is_quiet(tmp_path):
    assert _rows(tmp_path, _module("_canonicalize")) == []


def test_private_function_whose_only_call_is_commented_out_is_quiet(tmp_path):
    rest = "\n\ndef compile(gm):\n    # _canonicalize(gm)\n    return gm\n"
    assert _rows(tmp_path, _module("_canonicalize", rest)) == []


def test_private_method_of_a_baseless_class_never_called_is_quiet(tmp_path):
    text = (
        "import torch\n\n\nclass Lowering:\n    def run(self, gm):\n        return gm\n\n"
        f"    def _copies(self, gm):\n        {MATCH}\n"
    )
    assert _rows(tmp_path, text) == []


def test_table_compared_only_in_an_uncalled_private_function_is_quiet(tmp_path):
    text = (
        "import torch\n\nCOPIES = {torch.ops.aten._to_copy}\n\n\n"
        "def _copies(gm):\n    return [n for n in gm.graph.nodes if n.target in COPIES]\n"
    )
    assert _rows(tmp_path, text) == []


# -- loud: the function may run ------------------------------------------------------------------


def test_public_function_the_project_never_calls_is_reported(tmp_path):
    assert _rows(tmp_path, _module("canonicalize")) == [5]


def test_private_function_called_in_its_module_is_reported(tmp_path):
    rest = "\n\ndef compile(gm):\n    return _canonicalize(gm)\n"
    assert _rows(tmp_path, _module("_canonicalize", rest)) == [5]


def test_private_function_handed_on_is_reported(tmp_path):
    rest = "\n\nPASSES = [_canonicalize]\n"
    assert _rows(tmp_path, _module("_canonicalize", rest)) == [5]


def test_private_function_imported_by_another_module_is_reported(tmp_path):
    other = "from pkg.passes import _canonicalize\n\n\ndef lower(gm):\n    return _canonicalize(gm)\n"
    assert _rows(tmp_path, _module("_canonicalize"), {"lower.py": other}) == [5]


def test_private_function_in_all_is_reported(tmp_path):
    rest = '\n\n__all__ = ["_canonicalize"]\n'
    assert _rows(tmp_path, _module("_canonicalize", rest)) == [5]


def test_decorated_private_function_is_reported(tmp_path):
    text = f"import torch\n\nfrom pkg.registry import register\n\n\n@register\ndef _canonicalize(gm):\n    {MATCH}\n"
    assert _rows(tmp_path, text, {"registry.py": "def register(f):\n    return f\n"}) == [8]


def test_module_looking_names_up_at_run_time_is_reported(tmp_path):
    rest = '\n\ndef run(gm, name):\n    return globals()["_" + name](gm)\n'
    assert _rows(tmp_path, _module("_canonicalize", rest)) == [5]


def test_private_method_of_a_subclass_is_reported(tmp_path):
    text = (
        "import torch\n\n\nclass Lowering(torch.nn.Module):\n"
        f"    def _load_from_state_dict(self, gm):\n        {MATCH}\n"
    )
    assert _rows(tmp_path, text) == [6]


def test_table_compared_in_an_uncalled_helper_and_in_live_code_is_reported(tmp_path):
    # The first comparison of the table sits in dead code; the second runs.
    text = (
        "import torch\n\nCOPIES = {torch.ops.aten._to_copy}\n\n\n"
        "def _copies(gm):\n    return [n for n in gm.graph.nodes if n.target in COPIES]\n\n\n"
        "def copies(gm):\n    return [n for n in gm.graph.nodes if n.target in COPIES]\n"
    )
    assert _rows(tmp_path, text) == [3]


def test_table_compared_first_in_a_nested_helper_never_called_then_in_live_code_is_reported(tmp_path):
    # A finding is dropped only when none of its uses runs, not when its first one does not.
    text = (
        "import torch\n\nCOPIES = {torch.ops.aten._to_copy}\n\n\n"
        "def prepare(gm):\n    def copies(g):\n        return [n for n in g.graph.nodes if n.target in COPIES]\n\n"
        "    return gm\n\n\ndef lower(gm):\n    return [n for n in gm.graph.nodes if n.target in COPIES]\n"
    )
    assert _rows(tmp_path, text) == [3]


def test_private_function_of_a_script_outside_any_package_is_reported(tmp_path):
    from qlint.engine import check_source
    from tests.conftest import settings_for

    path = tmp_path / "script.py"
    path.write_text(_module("_canonicalize"))
    result = check_source(path.read_bytes(), str(path), settings_for(("QL101",)))
    assert [d.range.start.row for d in result.diagnostics] == [5]
