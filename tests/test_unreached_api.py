"""A library's public function whose only call its authors commented out (issue 14's dead API
rows: the Gaudi bridge's softmax replacement). Loud look-alikes: a function nothing names in a
module another imports (AITemplate's `nchw2nhwc_pass`, labelled a bug) or in a module no file
names (the shape of a small package), a re-export from `__init__` by name or with `import *`, a
name in `__all__`, a `getattr` with the name as a literal, an entry point in `pyproject.toml`,
a page of the docs, a test that calls it, a comment that names it without a call, a test
module's function. A script's function whose only call is commented out is quiet too (qtta's
`do_pt2e`), unless another module names it.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

from tests.conftest import check_file, rows_of

# QL204 (converted without calibration) at CONVERT_ROW, in the public function `quantize`.
QUANT = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def quantize(model, quantizer, example):
    m = torch.export.export(model.eval(), example).module()
    m = prepare_pt2e(m, quantizer)
    return convert_pt2e(m)


def calibrate(model):
    return model
"""
CONVERT_ROW = 8
# A sibling that imports the module (by another of its names): the module is not an orphan.
IMPORTER = "from pkg.quant import calibrate\n"
DISABLED = "\n\ndef run(model, quantizer, example):\n    # quantize(model, quantizer, example)\n    return model\n"


def _rows(tmp_path: Path, files: dict[str, str], checked: str = "pkg/quant.py") -> list[int]:
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return rows_of(check_file(tmp_path / checked, ("QL204",)).diagnostics)


# -- quiet: its only call is commented out ------------------------------------------------------


def test_function_whose_only_call_is_commented_out_is_quiet(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/quant.py": QUANT + DISABLED, "pkg/run.py": IMPORTER}
    assert _rows(tmp_path, files) == []


def test_function_whose_only_call_is_commented_out_and_that_comments_elsewhere_name_is_quiet(tmp_path):
    importer = IMPORTER + "# quantize(model, None, ()) went away with the old flow\n"
    files = {"pkg/__init__.py": "", "pkg/quant.py": QUANT + DISABLED, "pkg/run.py": importer}
    assert _rows(tmp_path, files) == []


# -- loud: a way in ------------------------------------------------------------------------------


def test_function_of_a_module_another_imports_is_reported(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/quant.py": QUANT, "pkg/run.py": IMPORTER}
    assert _rows(tmp_path, files) == [CONVERT_ROW]


def test_function_of_a_module_no_file_names_is_reported(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/quant.py": QUANT, "pkg/other.py": "x = 1\n"}
    assert _rows(tmp_path, files) == [CONVERT_ROW]


def test_function_reexported_by_name_from_init_is_reported(tmp_path):
    files = {"pkg/__init__.py": "from .quant import quantize\n", "pkg/quant.py": QUANT + DISABLED}
    assert _rows(tmp_path, files) == [CONVERT_ROW]


def test_disabled_function_of_a_module_reexported_with_a_star_is_reported(tmp_path):
    files = {"pkg/__init__.py": "from .quant import *\n", "pkg/quant.py": QUANT + DISABLED}
    assert _rows(tmp_path, files) == [CONVERT_ROW]


def test_function_named_in_all_is_reported(tmp_path):
    files = {"pkg/__init__.py": "", "pkg/quant.py": '__all__ = ["quantize"]\n' + QUANT + DISABLED}
    assert _rows(tmp_path, files) == [CONVERT_ROW + 1]


def test_function_looked_up_by_a_literal_getattr_is_reported(tmp_path):
    lookup = 'def load(plugins):\n    return getattr(plugins, "quantize")\n'
    files = {"pkg/__init__.py": "", "pkg/quant.py": QUANT + DISABLED, "pkg/plugins.py": lookup}
    assert _rows(tmp_path, files) == [CONVERT_ROW]


def test_function_an_entry_point_names_is_reported(tmp_path):
    pyproject = '[project]\nname = "pkg"\n\n[project.scripts]\npkg-quantize = "pkg.quant:quantize"\n'
    files = {"pkg/__init__.py": "", "pkg/quant.py": QUANT + DISABLED, "pyproject.toml": pyproject}
    assert _rows(tmp_path, files) == [CONVERT_ROW]


def test_function_a_page_of_the_docs_names_is_reported(tmp_path):
    page = "# Quantizing\n\nCall `quantize(model, quantizer, example)` on an eval-mode model.\n"
    files = {"pkg/__init__.py": "", "pkg/quant.py": QUANT + DISABLED, "docs/guide/quantizing.md": page}
    assert _rows(tmp_path, files) == [CONVERT_ROW]


def test_function_a_test_outside_the_package_calls_is_reported(tmp_path):
    test = "from pkg import quant\n\n\ndef test_quantize():\n    quant.quantize(None, None, ())\n"
    files = {"pkg/__init__.py": "", "pkg/quant.py": QUANT + DISABLED, "tests/test_quant.py": test}
    assert _rows(tmp_path, files) == [CONVERT_ROW]


def test_function_a_comment_names_without_a_call_is_reported(tmp_path):
    text = QUANT + "\n\ndef run(model):\n    # quantize is for the CLI; here the model stays float\n    return model\n"
    files = {"pkg/__init__.py": "", "pkg/quant.py": text, "pkg/run.py": IMPORTER}
    assert _rows(tmp_path, files) == [CONVERT_ROW]


def test_function_of_a_script_whose_call_is_commented_out_is_quiet(tmp_path):
    # No package: a script's function is no API, and its only call is turned off.
    files = {"tools/quant.py": QUANT + DISABLED, "tools/other.py": "x = 1\n"}
    assert _rows(tmp_path, files, "tools/quant.py") == []


def test_function_of_a_script_whose_call_is_commented_out_and_a_sibling_calls_is_reported(tmp_path):
    files = {"tools/quant.py": QUANT + DISABLED, "tools/other.py": "from quant import quantize\nquantize(1, 2, 3)\n"}
    assert _rows(tmp_path, files, "tools/quant.py") == [CONVERT_ROW]


def test_function_of_a_test_module_of_a_package_is_judged_by_the_runner(tmp_path):
    # A test module's functions are the runner's: `test_*` runs though nothing names it.
    test = (QUANT + DISABLED).replace("quantize(", "test_quantize(")
    files = {"pkg/__init__.py": "", "pkg/tests/__init__.py": "", "pkg/tests/test_quant.py": test}
    assert _rows(tmp_path, files, "pkg/tests/test_quant.py") == [CONVERT_ROW]
