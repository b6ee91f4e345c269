"""Findings in code nothing in the project runs (issue 14's dead rows): a test module's helper
nothing calls, a function whose only calls follow an unconditional exit, a script nothing
imports that runs nothing. Loud look-alikes: a helper one test calls, a `test_` function, a
fixture, a helper named in a `parametrize`, a public library function nobody calls, a call
after a conditional exit, a script with a `__main__` guard, a module a sibling imports, a
lone script (its users are not in the project), a program's uncalled helper (the corpus labels
autoware's a bug) unless its only call is commented out (qtta's `do_pt2e`: then it is quiet),
a script of imports alone.

A script nothing imports is loud beside a program that loads modules from a path it computes
and names one of the script's functions (LLM2FPGA's adapters, loaded by the path a flag names
for their `export_program`); quiet when the loader names none of them (HBTGen's harness), its
path is a literal, or only a comment names the loader.

Not visible, so not taught: a module run by `python -m` or a path from a README or a shell
script. A dead script runs nothing at module level, so running it changes nothing but its
imports (a removed API's import would fail there: QL401/QL402 stay quiet in it regardless).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.conftest import check_file, rows_of

PRELUDE = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
"""
# QL204: converted without calibration, at the function's last line.
QUANTIZE = """

def {name}(model, quantizer, example):
    m = torch.export.export(model.eval(), example).module()
    m = prepare_pt2e(m, quantizer)
    return convert_pt2e(m)
"""
CONVERT_ROW = 8  # the convert's row in PRELUDE + QUANTIZE


def _repo(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def _rows(tmp_path: Path, files: dict[str, str], checked: str, select=("QL204",)) -> list[int]:
    root = _repo(tmp_path, files)
    return rows_of(check_file(root / checked, select).diagnostics)


def _helper(name: str, rest: str = "") -> str:
    return PRELUDE + QUANTIZE.format(name=name) + textwrap.dedent(rest)


# -- a test module's helper ----------------------------------------------------------------------


def test_uncalled_helper_of_a_test_module_is_quiet(tmp_path):
    rest = "\n\ndef test_linear():\n    assert True\n"
    files = {"tests/test_quant.py": _helper("dynamic_quant", rest), "lib.py": "x = 1\n"}
    assert _rows(tmp_path, files, "tests/test_quant.py") == []


def test_uncalled_helper_beside_a_computed_getattr_on_a_model_is_quiet(tmp_path):
    rest = "\n\ndef test_names(m, name):\n    assert getattr(m, name) is not None\n"
    assert _rows(tmp_path, {"tests/test_quant.py": _helper("dynamic_quant", rest)}, "tests/test_quant.py") == []


def test_helper_a_computed_getattr_on_the_module_may_reach_is_reported(tmp_path):
    rest = "\n\ndef test_names(name):\n    assert getattr(sys.modules[__name__], name)\n"
    text = "import sys\n" + _helper("dynamic_quant", rest)
    assert _rows(tmp_path, {"tests/test_quant.py": text}, "tests/test_quant.py") == [CONVERT_ROW + 1]


def test_uncalled_method_of_a_test_case_is_quiet(tmp_path):
    text = PRELUDE + (
        "import unittest\n\n\nclass TestXNNPACK(unittest.TestCase):\n"
        "    def quantize_with_quantizer(self, model, quantizer, example):\n"
        "        m = prepare_pt2e(torch.export.export(model.eval(), example).module(), quantizer)\n"
        "        return convert_pt2e(m)\n"
    )
    assert _rows(tmp_path, {"backends/test/test_utils.py": text}, "backends/test/test_utils.py") == []


def test_helper_a_test_calls_is_reported(tmp_path):
    rest = "\n\ndef test_linear():\n    dynamic_quant(None, None, ())\n"
    files = {"tests/test_quant.py": _helper("dynamic_quant", rest)}
    assert _rows(tmp_path, files, "tests/test_quant.py") == [CONVERT_ROW]


def test_support_helper_a_test_elsewhere_calls_is_reported(tmp_path):
    files = {
        "tests/utils.py": _helper("dynamic_quant"),
        "tests/test_quant.py": "from utils import dynamic_quant\n\n\ndef test_it():\n    dynamic_quant(1, 2, 3)\n",
    }
    assert _rows(tmp_path, files, "tests/utils.py") == [CONVERT_ROW]


def test_test_function_is_reported(tmp_path):
    assert _rows(tmp_path, {"tests/test_quant.py": _helper("test_quantize")}, "tests/test_quant.py") == [CONVERT_ROW]


def test_fixture_is_reported(tmp_path):
    text = "import pytest\n" + _helper("quantized").replace("\n\ndef", "\n\n@pytest.fixture\ndef")
    assert _rows(tmp_path, {"tests/test_quant.py": text}, "tests/test_quant.py") == [CONVERT_ROW + 2]


def test_helper_named_in_a_parametrize_is_reported(tmp_path):
    rest = '\n\n@pytest.mark.parametrize("quantize", [dynamic_quant])\ndef test_it(quantize):\n    quantize(1, 2, 3)\n'
    text = "import pytest\n" + _helper("dynamic_quant", rest)
    assert _rows(tmp_path, {"tests/test_quant.py": text}, "tests/test_quant.py") == [CONVERT_ROW + 1]


def test_unittest_hook_override_is_reported(tmp_path):
    text = PRELUDE + (
        "import unittest\n\n\nclass TestQ(unittest.TestCase):\n"
        "    def setUp(self):\n"
        "        m = torch.export.export(torch.nn.ReLU().eval(), (1,)).module()\n"
        "        m = prepare_pt2e(m, self.quantizer)\n"
        "        return convert_pt2e(m)\n"
    )
    assert _rows(tmp_path, {"tests/test_q.py": text}, "tests/test_q.py") == [10]


def test_public_function_of_a_library_package_nobody_calls_is_reported(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/quant.py": _helper("quantize"), "tests/test_x.py": "def test_x():\n    pass\n"}
    assert _rows(tmp_path, files, "pkg/quant.py") == [CONVERT_ROW]


# -- a function whose only calls never run -------------------------------------------------------


def test_function_called_only_after_an_exit_is_quiet(tmp_path):
    rest = "\n\ndef export(model):\n    print(model)\n    exit(0)\n    return static_quantize(model, None, ())\n"
    files = {"pkg/__init__.py": "", "pkg/quant.py": _helper("static_quantize", rest)}
    assert _rows(tmp_path, files, "pkg/quant.py") == []


def test_function_called_only_after_a_raise_is_quiet(tmp_path):
    rest = '\n\ndef export(model):\n    raise NotImplementedError("later")\n    static_quantize(model, None, ())\n'
    files = {"pkg/__init__.py": "", "pkg/quant.py": _helper("static_quantize", rest)}
    assert _rows(tmp_path, files, "pkg/quant.py") == []


def test_function_called_after_a_conditional_exit_is_reported(tmp_path):
    rest = "\n\ndef export(model, dry):\n    if dry:\n        exit(0)\n    return static_quantize(model, None, ())\n"
    files = {"pkg/__init__.py": "", "pkg/quant.py": _helper("static_quantize", rest)}
    assert _rows(tmp_path, files, "pkg/quant.py") == [CONVERT_ROW]


def test_function_called_after_an_exit_and_by_another_module_is_reported(tmp_path):
    rest = "\n\ndef export(model):\n    exit(0)\n    static_quantize(model, None, ())\n"
    files = {
        "pkg/__init__.py": "",
        "pkg/quant.py": _helper("static_quantize", rest),
        "pkg/run.py": "from pkg.quant import static_quantize\n\nstatic_quantize(1, 2, 3)\n",
    }
    assert _rows(tmp_path, files, "pkg/quant.py") == [CONVERT_ROW]


def test_function_calling_only_itself_after_an_exit_is_quiet(tmp_path):
    text = _helper("static_quantize") + "\n\ndef export(model):\n    exit(0)\n    static_quantize(model, None, ())\n"
    recursion = "    if example is None:\n        return static_quantize(model, quantizer, ())\n"
    text = text.replace("    m = torch.export", recursion + "    m = torch.export")
    files = {"pkg/__init__.py": "", "pkg/quant.py": text}
    assert _rows(tmp_path, files, "pkg/quant.py") == []


# -- a program's helper, a script nothing runs ---------------------------------------------------


def test_program_helper_whose_only_call_is_commented_out_is_quiet(tmp_path):
    # qtta's `do_pt2e`: its `__main__` block runs the other experiment and comments this one out.
    rest = '\n\nif __name__ == "__main__":\n    # do_pt2e("resnet18")\n    print("timing")\n'
    files = {"quantize.py": _helper("do_pt2e", rest), "utils.py": "x = 1\n"}
    assert _rows(tmp_path, files, "quantize.py") == []


def test_helper_of_a_program_named_like_a_test_whose_only_call_is_commented_out_is_quiet(tmp_path):
    rest = '\n\nif __name__ == "__main__":\n    # with_checkpoint(1, 2, 3)\n    print("timing")\n'
    files = {"qat/test_jira_836.py": _helper("with_checkpoint", rest), "utils.py": "x = 1\n"}
    assert _rows(tmp_path, files, "qat/test_jira_836.py") == []


def test_test_function_of_a_program_named_like_a_test_whose_call_is_commented_out_is_reported(tmp_path):
    # torch_script's `test_rn50_fp32`: commented out under `__main__`, but pytest collects it.
    rest = '\n\nif __name__ == "__main__":\n    # test_rn50_fp32(1, 2, 3)\n    print("timing")\n'
    files = {"qat/test_rn50.py": _helper("test_rn50_fp32", rest), "utils.py": "x = 1\n"}
    assert _rows(tmp_path, files, "qat/test_rn50.py") == [CONVERT_ROW]


def test_private_program_helper_whose_only_call_is_commented_out_is_quiet(tmp_path):
    rest = '\n\nif __name__ == "__main__":\n    # _do_pt2e("resnet18")\n    print("timing")\n'
    files = {"quantize.py": _helper("_do_pt2e", rest), "utils.py": "x = 1\n"}
    assert _rows(tmp_path, files, "quantize.py") == []


def test_script_helper_whose_module_level_call_is_commented_out_is_quiet(tmp_path):
    rest = '\n\n# do_pt2e("resnet18")\nprint("timing")\n'
    files = {"quantize.py": _helper("do_pt2e", rest), "utils.py": "x = 1\n"}
    assert _rows(tmp_path, files, "quantize.py") == []


def test_lone_program_helper_whose_only_call_is_commented_out_is_quiet(tmp_path):
    rest = '\n\nif __name__ == "__main__":\n    # do_pt2e("resnet18")\n    print("timing")\n'
    assert _rows(tmp_path, {"quantize.py": _helper("do_pt2e", rest)}, "quantize.py") == []


def test_program_helper_a_comment_only_names_is_reported(tmp_path):
    # autoware's `run_validation`: a comment saying the helper is not used here is no call
    # turned off; the helper may be run by hand.
    rest = '\n\nif __name__ == "__main__":\n    # we do not use do_pt2e here\n    print("timing")\n'
    files = {"quantize.py": _helper("do_pt2e", rest), "utils.py": "x = 1\n"}
    assert _rows(tmp_path, files, "quantize.py") == [CONVERT_ROW]


def test_program_helper_called_beside_its_commented_out_call_is_reported(tmp_path):
    rest = '\n\nif __name__ == "__main__":\n    # do_pt2e("resnet18")\n    do_pt2e(1, 2, 3)\n'
    files = {"quantize.py": _helper("do_pt2e", rest), "utils.py": "x = 1\n"}
    assert _rows(tmp_path, files, "quantize.py") == [CONVERT_ROW]


def test_program_helper_held_in_a_table_beside_its_commented_out_call_is_reported(tmp_path):
    rest = '\n\nRUNS = {"pt2e": do_pt2e}\n\nif __name__ == "__main__":\n    # do_pt2e("resnet18")\n    RUNS[1]()\n'
    files = {"quantize.py": _helper("do_pt2e", rest), "utils.py": "x = 1\n"}
    assert _rows(tmp_path, files, "quantize.py") == [CONVERT_ROW]


def test_program_helper_whose_call_is_commented_out_and_a_sibling_imports_is_reported(tmp_path):
    rest = '\n\nif __name__ == "__main__":\n    # do_pt2e("resnet18")\n    print("timing")\n'
    files = {"quantize.py": _helper("do_pt2e", rest), "bench.py": "from quantize import do_pt2e\n"}
    assert _rows(tmp_path, files, "quantize.py") == [CONVERT_ROW]


def test_program_helper_whose_call_is_commented_out_and_the_readme_names_is_reported(tmp_path):
    rest = '\n\nif __name__ == "__main__":\n    # do_pt2e("resnet18")\n    print("timing")\n'
    readme = "Run `python -c 'import quantize; quantize.do_pt2e(\"resnet18\")'` for the PT2E trial.\n"
    files = {"quantize.py": _helper("do_pt2e", rest), "utils.py": "x = 1\n", "README.md": readme}
    assert _rows(tmp_path, files, "quantize.py") == [CONVERT_ROW]


def test_helper_of_a_test_module_that_starts_unittest_is_quiet(tmp_path):
    rest = '\n\nif __name__ == "__main__":\n    unittest.main()\n'
    files = {"tests/test_quant.py": "import unittest\n" + _helper("dynamic_quant", rest)}
    assert _rows(tmp_path, files, "tests/test_quant.py") == []


def test_program_helper_its_main_block_calls_is_reported(tmp_path):
    rest = '\n\nif __name__ == "__main__":\n    do_pt2e(1, 2, 3)\n'
    files = {"quantize.py": _helper("do_pt2e", rest), "utils.py": "x = 1\n"}
    assert _rows(tmp_path, files, "quantize.py") == [CONVERT_ROW]


def test_program_helper_a_sibling_imports_is_reported(tmp_path):
    rest = '\n\nif __name__ == "__main__":\n    print("timing")\n'
    files = {"quantize.py": _helper("do_pt2e", rest), "bench.py": "from quantize import do_pt2e\n"}
    assert _rows(tmp_path, files, "quantize.py") == [CONVERT_ROW]


def test_script_nothing_imports_is_quiet(tmp_path):
    text = "from torch._export import capture_pre_autograd_graph\n" + _helper("old_qat")
    files = {"scripts/old_or_unfinished.py": text, "scripts/run.py": 'print("run")\n'}
    assert _rows(tmp_path, files, "scripts/old_or_unfinished.py", ("QL204", "QL402")) == []


def test_script_a_sibling_imports_is_reported(tmp_path):
    text = "from torch._export import capture_pre_autograd_graph\n" + _helper("old_qat")
    files = {"scripts/old_or_unfinished.py": text, "scripts/run.py": "import old_or_unfinished\n"}
    rows = _rows(tmp_path, files, "scripts/old_or_unfinished.py", ("QL204", "QL402"))
    assert rows == [1, CONVERT_ROW + 1]


def test_script_with_a_main_guard_is_reported(tmp_path):
    text = "from torch._export import capture_pre_autograd_graph\n" + _helper("old_qat")
    text += '\n\nif __name__ == "__main__":\n    print("nothing")\n'
    files = {"scripts/old_or_unfinished.py": text, "scripts/run.py": 'print("run")\n'}
    assert _rows(tmp_path, files, "scripts/old_or_unfinished.py", ("QL402",)) == [1]


def test_script_running_code_at_module_level_is_reported(tmp_path):
    text = "from torch._export import capture_pre_autograd_graph\n" + _helper("old_qat") + "\nold_qat(1, 2, 3)\n"
    files = {"scripts/old_or_unfinished.py": text, "scripts/run.py": 'print("run")\n'}
    assert _rows(tmp_path, files, "scripts/old_or_unfinished.py", ("QL204", "QL402")) == [1, CONVERT_ROW + 1]


LOADER = """\
import importlib.util
import sys
from pathlib import Path

path = Path(sys.argv[1])
spec = importlib.util.{call}
module = importlib.util.module_from_spec(spec)
spec.loader.exec_module(module)
module.{entry}(None, None, ())
"""


def _loaded(tmp_path: Path, call: str, entry: str = "old_qat") -> list[int]:
    text = "from torch._export import capture_pre_autograd_graph\n" + _helper("old_qat")
    files = {
        "scripts/old_or_unfinished.py": text,
        "scripts/run.py": 'print("run")\n',
        "tools/compile.py": LOADER.format(call=call, entry=entry),
    }
    return _rows(tmp_path, files, "scripts/old_or_unfinished.py", ("QL204", "QL402"))


def test_script_a_program_loads_from_the_path_it_is_given_is_reported(tmp_path):
    # LLM2FPGA: `compile-pytorch.py --adapter src/<adapter>.py` loads it and calls it.
    assert _loaded(tmp_path, "spec_from_file_location(path.stem, path)") == [1, CONVERT_ROW + 1]


def test_script_a_source_file_loader_takes_by_keyword_is_reported(tmp_path):
    call = "spec_from_loader(path.stem, SourceFileLoader(path.stem, path=str(path)))"
    assert _loaded(tmp_path, call) == [1, CONVERT_ROW + 1]


def test_script_beside_a_loader_of_one_named_file_is_quiet(tmp_path):
    # A literal path names its file: the search for the script's own name decides.
    assert _loaded(tmp_path, 'spec_from_file_location("config", "config.py")') == []


def test_script_beside_a_loader_that_names_none_of_its_definitions_is_quiet(tmp_path):
    # HBTGen: its harness loads the scripts it generates and runs their `trigger_known_bugs`.
    call = "spec_from_file_location(path.stem, path)"
    assert _loaded(tmp_path, call, entry="trigger_known_bugs") == []


def test_script_beside_a_comment_naming_a_loader_is_quiet(tmp_path):
    assert _loaded(tmp_path, "find_spec(path.stem)  # not spec_from_file_location(name, path)") == []


def test_lone_script_is_reported(tmp_path):
    text = "from torch._export import capture_pre_autograd_graph\n" + _helper("old_qat")
    assert _rows(tmp_path, {"quant.py": text}, "quant.py", ("QL204", "QL402")) == [1, CONVERT_ROW + 1]


def test_script_of_definitions_beside_a_package_is_reported(tmp_path):
    # No program beside it: a flat library module, or an entry point a packaging file names.
    text = "from torch._export import capture_pre_autograd_graph\n" + _helper("main")
    files = {"run.py": text, "pkg/__init__.py": "", "pkg/models.py": "x = 1\n"}
    assert _rows(tmp_path, files, "run.py", ("QL204", "QL402")) == [1, CONVERT_ROW + 1]


def test_script_of_imports_alone_is_reported(tmp_path):
    # Nothing defined to be dead: its imports are what it does when run.
    text = "import torch\nfrom torch._export import capture_pre_autograd_graph\n"
    files = {"scripts/imports.py": text, "scripts/run.py": 'print("run")\n'}
    assert _rows(tmp_path, files, "scripts/imports.py", ("QL402",)) == [2]


def test_definitions_beside_a_module_that_only_binds_values_stay_reported(tmp_path):
    # A flat layout: `ops.py` binds an op at import, which runs code but makes no program.
    files = {
        "src/ops.py": "import torch\nDQ = torch.ops.quantized_decomposed.dequantize_per_tensor\n",
        "src/m.py": "from ops import DQ\n\n\ndef f(n):\n    return n.target == DQ\n",
    }
    assert _rows(tmp_path, files, "src/m.py", ("QL101",)) == [5]
