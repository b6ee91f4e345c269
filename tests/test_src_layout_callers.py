"""A src layout (`src/<package>/`, `tests/` beside `src/`, no `where` in `pyproject.toml`):
a test module's `import <package>` is the checkout's `src/<package>`, so its calls of a
helper that captures its parameter are read like any other caller's (timmx's LiteRT helper,
called from `tests/` with an evaled model).

Quiet when the test passes an evaled model (imported at module level or inside the test).
Loud when it passes a train-mode model, and when `src/` is itself a package (then `pkg` is
not what `src/pkg` holds).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import check_file

HELPER = """\
import torch
from torchao.quantization.pt2e import quantize_pt2e


def helper(model, example_input, *, batches):
    ep = torch.export.export(model, (example_input,)).module()
    prepared = quantize_pt2e.prepare_pt2e(ep, object())
    for b in batches:
        prepared(b)
    return quantize_pt2e.convert_pt2e(prepared)
"""

TEST = """\
import torch
TOP_IMPORT


class _Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)


def test_it():
    LOCAL_IMPORT
    model = MODEL
    x = torch.randn(1, 3, 4, 4)
    assert helper(model, x, batches=[x]) is not None
"""


def _repo(root: Path, model: str, local: bool, src_is_package: bool = False) -> Path:
    (root / ".git").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[project]\nname = "pkg"\nversion = "0"\n')
    pkg = root / "src" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").touch()
    (pkg / "lite.py").write_text(HELPER)
    if src_is_package:
        (root / "src" / "__init__.py").touch()
    (root / "tests").mkdir()
    imp = "from pkg.lite import helper"
    test = TEST.replace("MODEL", model)
    test = test.replace("TOP_IMPORT", "" if local else imp).replace("LOCAL_IMPORT", imp if local else "pass")
    (root / "tests" / "test_lite.py").write_text(test)
    return pkg / "lite.py"


def _rows(path: Path) -> list[int]:
    return [d.range.start.row for d in check_file(path, select=("QL201",)).diagnostics]


@pytest.mark.parametrize("local", [False, True])
def test_a_test_beside_src_that_passes_an_evaled_model_vouches_for_the_helper(tmp_path, local):
    assert _rows(_repo(tmp_path, "_Net().eval()", local)) == []


@pytest.mark.parametrize("local", [False, True])
def test_a_test_beside_src_that_passes_a_train_mode_model_keeps_the_finding(tmp_path, local):
    assert _rows(_repo(tmp_path, "_Net()", local)) == [6]


def test_src_that_is_a_package_is_no_import_root(tmp_path):
    assert _rows(_repo(tmp_path, "_Net().eval()", False, src_is_package=True)) == [6]
