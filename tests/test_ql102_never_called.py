"""QL102 and insertions in functions nothing can call: a private function (or a private method
of a class without bases) whose name no code of the project reads, or a nested function its
enclosing body never reads. Loud look-alikes: a public function the project never calls
(public API: users call it; AITemplate's `nchw2nhwc_pass`; one whose only call is commented
out, the Gaudi bridge's softmax replacement, is dead: `test_unreached_api.py`), a private
function called from another module, handed on, registered by a decorator, listed in
`__all__` or looked up at run time, and a private method a base class may call."""

from __future__ import annotations

import textwrap

from tests.test_ql102_stripped_later import _rows  # the same one-module project, QL102 only

INSERT = "gm.graph.call_function(torch.ops.aten.relu, (x,))"


def _module(func: str, rest: str = "") -> str:
    return f"import torch\n\n\ndef {func}(gm, x):\n    {INSERT}\n" + textwrap.dedent(rest)


# -- quiet: nothing can call the function --------------------------------------------------------


def test_private_function_never_called_is_quiet(tmp_path):
    assert _rows(tmp_path, _module("_replace_relu")) == []


def test_private_function_whose_only_call_is_commented_out_is_quiet(tmp_path):
    rest = "\n\ndef run(gm, x):\n    # _replace_relu(gm, x)\n    return gm\n"
    assert _rows(tmp_path, _module("_replace_relu", rest)) == []


def test_nested_function_its_body_never_reads_is_quiet(tmp_path):
    text = f"import torch\n\n\ndef run(gm, x):\n    def replace(gm, x):\n        {INSERT}\n\n    return gm\n"
    assert _rows(tmp_path, text) == []


def test_public_function_nested_in_an_uncalled_private_one_is_quiet(tmp_path):
    text = f"import torch\n\n\ndef _unused(gm, x):\n    def replace(gm, x):\n        {INSERT}\n\n    replace(gm, x)\n"
    assert _rows(tmp_path, text) == []


def test_private_method_of_a_baseless_class_never_called_is_quiet(tmp_path):
    text = (
        "import torch\n\n\nclass Replacer:\n    def run(self, gm, x):\n        return gm\n\n"
        f"    def _replace(self, gm, x):\n        {INSERT}\n"
    )
    assert _rows(tmp_path, text) == []


# -- loud: the function may run ------------------------------------------------------------------


def test_public_function_the_project_never_calls_is_reported(tmp_path):
    rest = "\n\ndef run(gm, x):\n    return gm\n"
    assert _rows(tmp_path, _module("replace_relu", rest)) == [5]


def test_private_function_called_in_its_module_is_reported(tmp_path):
    rest = "\n\ndef run(gm, x):\n    _replace_relu(gm, x)\n"
    assert _rows(tmp_path, _module("_replace_relu", rest)) == [5]


def test_private_function_handed_on_is_reported(tmp_path):
    rest = "\n\nPASSES = [_replace_relu]\n"
    assert _rows(tmp_path, _module("_replace_relu", rest)) == [5]


def test_private_function_imported_by_another_module_is_reported(tmp_path):
    other = "from pkg.passes import _replace_relu\n\n\ndef lower(gm, x):\n    _replace_relu(gm, x)\n"
    assert _rows(tmp_path, _module("_replace_relu"), {"lower.py": other}) == [5]


def test_private_function_in_all_is_reported(tmp_path):
    rest = '\n\n__all__ = ["_replace_relu"]\n'
    assert _rows(tmp_path, _module("_replace_relu", rest)) == [5]


def test_decorated_private_function_is_reported(tmp_path):
    text = f"import torch\n\nfrom pkg.registry import register\n\n\n@register\ndef _replace(gm, x):\n    {INSERT}\n"
    assert _rows(tmp_path, text, {"registry.py": "def register(f):\n    return f\n"}) == [8]


def test_module_looking_names_up_at_run_time_is_reported(tmp_path):
    rest = '\n\ndef run(gm, x, name):\n    globals()["_" + name](gm, x)\n'
    assert _rows(tmp_path, _module("_replace_relu", rest)) == [5]


def test_nested_function_returned_is_reported(tmp_path):
    text = f"import torch\n\n\ndef make(x):\n    def replace(gm):\n        {INSERT}\n\n    return replace\n"
    assert _rows(tmp_path, text) == [6]


def test_private_method_of_a_subclass_is_reported(tmp_path):
    text = (
        "import torch\n\n\nclass Replacer(torch.nn.Module):\n"
        f"    def _load_from_state_dict(self, gm, x):\n        {INSERT}\n"
    )
    assert _rows(tmp_path, text) == [6]


def test_method_reached_through_a_computed_getattr_is_reported(tmp_path):
    text = (
        "import torch\n\n\nclass Replacer:\n    def run(self, gm, x, kind):\n"
        '        getattr(self, "_replace_" + kind)(gm, x)\n\n'
        f"    def _replace_relu(self, gm, x):\n        {INSERT}\n"
    )
    assert _rows(tmp_path, text) == [9]


def test_private_function_of_a_script_outside_any_package_is_reported(tmp_path):
    from qlint.engine import check_source
    from tests.conftest import settings_for

    path = tmp_path / "script.py"
    path.write_text(_module("_replace_relu"))
    result = check_source(path.read_bytes(), str(path), settings_for(("QL102",)))
    assert [d.range.start.row for d in result.diagnostics] == [5]
