"""A checkout whose root holds a package's layout resolves that package's imports to its own
files first, whatever its directory is called (issue 14, item 6; `package_map.root_packages`).

ExecuTorch maps `executorch` onto `src/executorch`, whose links name only some top-level
directories (`backends`, `examples/models`, ... but not `examples/qualcomm` at 6cca6e63), and
before the links its `setup.py` mapped subpackages one by one (`"executorch/backends":
"backends"`). Its scripts import `executorch.examples.qualcomm.utils` with the checkout's parent
on `PYTHONPATH`. In a directory not named `executorch`, those imports resolved to the installed
executorch (another version's code) or to nothing; the installed package is only for what the
checkout does not hold.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from qlint.analysis.names import package_map
from qlint.analysis.names.project import ProjectIndex

ROOT = Path(__file__).resolve().parents[1]
UTILS = "executorch.examples.qualcomm.utils"


pytestmark = pytest.mark.usefixtures("fresh_package_roots")


def _checkout(root: Path, *, links: dict[str, str] | None = None, setup_keys: str | None = None) -> Path:
    """An ExecuTorch-like checkout in `root` (a name that is no identifier: no package by its
    name): `backends/qnn/run.py` asks, `examples/qualcomm/utils.py` (no `__init__.py`) is
    what the checkout holds that no link or key names."""
    (root / ".git").mkdir(parents=True)
    for rel in ("backends/__init__.py", "backends/qnn/__init__.py", "backends/qnn/run.py", "exir/__init__.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    (root / "examples" / "qualcomm").mkdir(parents=True)
    (root / "examples" / "qualcomm" / "utils.py").write_text("def build(): ...\n")
    if links is not None:
        (root / "pyproject.toml").write_text('[tool.setuptools.package-dir]\nexecutorch = "src/executorch"\n')
        (root / "src" / "executorch").mkdir(parents=True)
        for link, target in links.items():
            path = root / "src" / "executorch" / link
            path.parent.mkdir(parents=True, exist_ok=True)
            path.symlink_to(target, target_is_directory=True)
    if setup_keys is not None:
        (root / "setup.py").write_text(f"from setuptools import setup\n\nsetup(package_dir={setup_keys})\n")
    return root


def _found(root: Path, module: str = UTILS) -> list[str | None]:
    """What a single check's lookup finds, and what a run's (`fixed_layout`) finds: the same."""
    requester = str(root / "backends" / "qnn" / "run.py")
    exact = ProjectIndex(track_dependents=False).find_module(module, requester)
    ProjectIndex.fix_layout(True)
    try:
        run = ProjectIndex(track_dependents=False).find_module(module, requester)
    finally:
        ProjectIndex.fix_layout(False)
    return [exact, run]


LINKS = {"backends": "../../backends", "exir": "../../exir"}
SETUP_KEYS = "{'executorch/backends': 'backends', 'executorch/exir': 'exir'}"


@pytest.mark.parametrize("layout", [{"links": LINKS}, {"setup_keys": SETUP_KEYS}], ids=["links", "setup-keys"])
def test_what_the_mapping_leaves_out_is_the_checkouts_own(tmp_path, layout):
    root = _checkout(tmp_path / "et-old", **layout)
    assert package_map.root_packages(str(root)) == ("executorch",)
    assert _found(root) == [str(root / "examples" / "qualcomm" / "utils.py")] * 2
    # What the mapping names resolves as before, and the package's own `__init__.py` is not
    # the checkout's (none at its root): left to the installed package.
    assert _found(root, "executorch.exir") == [str(root / "exir" / "__init__.py")] * 2
    assert _found(root, "executorch") == [None, None]


def test_a_module_the_checkout_does_not_hold_is_left_to_the_installed_package(tmp_path):
    root = _checkout(tmp_path / "et-old", links=LINKS)
    assert _found(root, "executorch.extension.pybindings.portable_lib") == [None, None]


def test_a_package_directory_holding_the_module_comes_first(tmp_path):
    # `src/executorch` is what setuptools installs: a module it holds itself is that one.
    root = _checkout(tmp_path / "et-old", links=LINKS)
    own = root / "src" / "executorch" / "examples" / "qualcomm"
    own.mkdir(parents=True)
    (own / "utils.py").write_text("")
    assert _found(root) == [str(own / "utils.py")] * 2


@pytest.mark.parametrize(
    "layout",
    [
        # A link to a directory of another path: the root's directories are not the package's.
        {"links": {"backends": "../../lib/backends", "exir": "../../exir"}},
        # A key mapping a subpackage elsewhere (TensorRT's `torch_tensorrt.fx` -> `py/...`).
        {"setup_keys": "{'executorch/backends': 'backends', 'executorch/exir': 'py/executorch/exir'}"},
        # Only the package itself mapped, no subpackage nor link: nothing says the root is it.
        {"links": {}},
    ],
    ids=["link-elsewhere", "key-elsewhere", "no-subpackage"],
)
def test_a_mapping_that_does_not_mirror_the_root_makes_no_package_of_it(tmp_path, layout):
    root = _checkout(tmp_path / "et-old", **layout)
    (root / "lib" / "backends").mkdir(parents=True)
    (root / "py" / "executorch" / "exir").mkdir(parents=True)
    assert package_map.root_packages(str(root)) == ()
    assert _found(root) == [None, None]


def test_a_root_holding_the_packages_own_directory_is_not_the_package(tmp_path):
    # `executorch/` at the root is the package (a flat layout with one subpackage mapped out):
    # `executorch.examples.qualcomm.utils` would be `executorch/examples/...`, not `examples/...`.
    root = _checkout(tmp_path / "et-old", setup_keys=SETUP_KEYS)
    (root / "executorch").mkdir()
    (root / "executorch" / "__init__.py").write_text("")
    assert package_map.root_packages(str(root)) == ()
    assert _found(root) == [None, None]


def test_a_checkout_named_for_its_package_is_one_as_before(tmp_path):
    root = _checkout(tmp_path / "executorch")
    assert package_map.root_packages(str(root)) == ("executorch",)
    assert _found(root) == [str(root / "examples" / "qualcomm" / "utils.py")] * 2
    (root / "__init__.py").write_text("")  # a package's directory: its parent imports it so
    package_map.forget_roots()
    assert package_map.root_packages(str(root)) == ()


# -- the warning on a copy without its `src/executorch` ------------------------------------------


@pytest.mark.parametrize(
    "name,setup_keys,said",
    [
        ("executorch", None, "resolve to the checkout's own directories: its directory is named `executorch`"),
        ("et-old", SETUP_KEYS, "resolve to the checkout's own directories: the packaging maps `executorch`'s"),
        ("et-old", None, "may not resolve"),
    ],
)
def test_the_warning_says_whether_the_imports_still_resolve(tmp_path, capsys, name, setup_keys, said):
    root = _checkout(tmp_path / name, setup_keys=setup_keys)
    (root / "pyproject.toml").write_text('[tool.setuptools.package-dir]\nexecutorch = "src/executorch"\n')
    package_map.warn_missing([str(root)])
    (line,) = capsys.readouterr().err.splitlines()
    assert "maps package `executorch` to 'src/executorch', which is not in the checkout" in line
    assert said in line


# -- a check from the checkout's root, beside an installed package of the same name ---------------

MODE_FREE = """\
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 1)
        self.relu = nn.ReLU()

    def forward(self, x):
        return self.relu(self.conv(x))
"""
WITH_BN = MODE_FREE.replace("nn.ReLU()", "nn.BatchNorm2d(3)")
EXPORT = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from fakeet.examples.{where}.model import Net


def main(quantizer, x):
    model = Net()
    captured = torch.export.export(model, (x,)).module()
    return prepare_pt2e(captured, quantizer)
"""


def _check_beside_installed(tmp_path, checkout_model: str, installed_model: str, keys: str, where="qnn"):
    """`fakeet` installed (`lib/site-packages/fakeet/examples/qnn/model.py`) and checked out
    in `et-old/`, whose `setup.py` maps `keys`; `examples/qnn/export.py` captures a `Net()`."""
    site = tmp_path / "lib" / "site-packages"
    (site / "fakeet" / "examples" / "qnn").mkdir(parents=True)
    (site / "fakeet" / "examples" / "qnn" / "model.py").write_text(installed_model)
    root = tmp_path / "et-old"
    for rel in ("backends/__init__.py", "exir/__init__.py", "lib/backends/__init__.py"):
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text("")
    (root / "examples" / "qnn").mkdir(parents=True)
    (root / "examples" / "qnn" / "model.py").write_text(checkout_model)
    (root / "examples" / "qnn" / "export.py").write_text(EXPORT.format(where=where))
    (root / "setup.py").write_text(f"from setuptools import setup\n\nsetup(package_dir={keys})\n")
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(site)])}
    cmd = [sys.executable, "-m", "qlint", "check", "--no-cache", "--exit-zero", "-q", "--select", "QL201", "."]
    run = subprocess.run(cmd, cwd=root, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0 and "Traceback" not in run.stderr, run.stderr
    return [line for line in run.stdout.splitlines() if "QL201" in line and ".py:" in line]


FAKEET_KEYS = "{'fakeet/backends': 'backends', 'fakeet/exir': 'exir'}"


def test_the_checkouts_model_is_judged_not_the_installed_one(tmp_path):
    # The checkout's `Net` holds batch norm, the installed one's does not: the capture is loud.
    (finding,) = _check_beside_installed(tmp_path, WITH_BN, MODE_FREE, FAKEET_KEYS)
    assert finding.startswith("examples/qnn/export.py:9:") and "BatchNorm2d" in finding


def test_a_mode_free_model_of_the_checkout_is_quiet_beside_an_installed_one_with_batch_norm(tmp_path):
    assert _check_beside_installed(tmp_path / "a", MODE_FREE, WITH_BN, FAKEET_KEYS) == []


def test_where_the_root_is_not_the_package_the_installed_model_is_judged(tmp_path):
    # `fakeet.backends` is `lib/backends`: `examples/qnn/` is not the package's, the installed
    # `Net` (batch norm) is the one imported.
    keys = "{'fakeet/backends': 'lib/backends', 'fakeet/exir': 'exir'}"
    (finding,) = _check_beside_installed(tmp_path, MODE_FREE, WITH_BN, keys)
    assert "BatchNorm2d" in finding


def test_a_module_only_installed_is_read_from_the_installed_package(tmp_path):
    # The checkout holds no `examples/other/`: the import is the installed package's.
    other = tmp_path / "lib" / "site-packages" / "fakeet" / "examples" / "other"
    other.mkdir(parents=True)
    (other / "model.py").write_text(WITH_BN)
    (finding,) = _check_beside_installed(tmp_path, MODE_FREE, MODE_FREE, FAKEET_KEYS, where="other")
    assert "BatchNorm2d" in finding
