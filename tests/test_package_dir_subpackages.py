"""`package_dir` keys naming a subpackage (`pkg.sub`, or ExecuTorch's `executorch/backends`
before its `src/executorch` links): setuptools installs the directory as that subpackage, so
its files are named so (`package_map`) and imports of the subpackage resolve to it
(`import_paths`), as for a top-level package's key. A most specific key wins, as in
setuptools' `find_package_path`."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.package_dir_keys import package_key
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.pyproject_reads import pyproject_declarations
from qlint.analysis.names.setup_scripts import setup_cfg_declarations

pytestmark = pytest.mark.usefixtures("fresh_package_roots")


@pytest.mark.parametrize(
    "written,name",
    [("", ""), ("pkg", "pkg"), ("pkg.sub", "pkg.sub"), ("pkg/sub/inner", "pkg.sub.inner"), ("pkg.sub-x", None)],
)
def test_a_key_names_the_package_setuptools_installs(written, name):
    assert package_key(written) == name


def test_setup_cfg_and_pyproject_read_subpackage_keys_too():
    assert setup_cfg_declarations(b"[options]\npackage_dir =\n    pkg.sub = lib/sub\n") == (
        ("pkg.sub", "lib/sub", False),
    )
    toml = b'[tool.setuptools.package-dir]\n"pkg.sub" = "lib/sub"\n"pkg.x-y" = "other"\n'
    assert pyproject_declarations(toml) == (("pkg.sub", "lib/sub", False),)


def _executorch(root: Path, keys: str) -> Path:
    """ExecuTorch at 57ef8348: `backends/` installed as `executorch.backends`, no `__init__.py`."""
    (root / ".git").mkdir()
    (root / "setup.py").write_text(f"from setuptools import setup\n\nsetup(package_dir={keys})\n")
    passes = root / "backends" / "qnn" / "_passes"
    passes.mkdir(parents=True)
    (passes / "decompose.py").write_text("class Decompose: ...\n")
    (root / "backends" / "qnn" / "quantizer.py").write_text(
        "from executorch.backends.qnn._passes.decompose import Decompose\n"
    )
    return root


@pytest.mark.parametrize("key", ["executorch/backends", "executorch.backends"])
def test_files_of_a_mapped_subpackage_are_named_and_imported_as_installed(tmp_path, key):
    root = _executorch(tmp_path, f"{{{key!r}: 'backends'}}")
    assert (
        module_name_for(str(root / "backends/qnn/_passes/decompose.py")) == "executorch.backends.qnn._passes.decompose"
    )
    found = ProjectIndex(track_dependents=False).find_module(
        "executorch.backends.qnn._passes.decompose", str(root / "backends/qnn/quantizer.py")
    )
    assert found == str(root / "backends/qnn/_passes/decompose.py")


def test_without_the_key_the_file_has_no_package(tmp_path):
    root = _executorch(tmp_path, "{'executorch/backends-old': 'backends'}")
    assert module_name_for(str(root / "backends/qnn/_passes/decompose.py")) == "decompose"


def test_the_most_specific_key_wins(tmp_path):
    # `pkg.sub` mapped onto `elsewhere/`: `lib/pkg/sub/` is not what `pkg.sub` imports, however
    # the keys are ordered.
    (tmp_path / ".git").mkdir()
    (tmp_path / "setup.py").write_text(
        "from setuptools import setup\n\nsetup(package_dir={'pkg': 'lib/pkg', 'pkg.sub': 'elsewhere'})\n"
    )
    for d in ("lib/pkg/sub", "elsewhere"):
        (tmp_path / d).mkdir(parents=True)
        (tmp_path / d / "__init__.py").touch()
        (tmp_path / d / "mod.py").write_text("")
    (tmp_path / "run.py").write_text("")
    found = ProjectIndex(track_dependents=False).find_module("pkg.sub.mod", str(tmp_path / "run.py"))
    assert found == str(tmp_path / "elsewhere" / "mod.py")
    assert module_name_for(str(tmp_path / "elsewhere" / "mod.py")) == "pkg.sub.mod"
