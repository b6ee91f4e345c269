"""QL101 through a helper's module reached as an attribute of its package (issue 14; stop 68's
"not followed" list): `import pkg` (or `import pkg as p`), then `pkg.checks.assert_nodes(case,
gm, {torch.ops.aten.relu: 1})` in a module holding none of the rule's trigger texts, or
`class TestOps(pkg.mixins.MoreChecks, unittest.TestCase)`.

`import pkg` binds only the package, whose stem no helper's module had: the index now keeps
the stems of the helpers' packages too (`sink_index.helper_module_stems`), and a one-file
check asks the paths called on a package it imports (`helper_modules`). The search follows
the path where Python would let it run (`package_paths`): the project has the module
`pkg.checks`, whether or not the package's `__init__` imports it (something else in the
process may have), and `__init__` binds `checks` to nothing else (`from .checks import
checks`, `checks = None`). Quiet look-alikes: those bindings, a parameter named like the
package, a function of the module that calls no sink, the overload passed.

Real qlint processes sharing one `--cache-dir` (`test_chain_depth_paths._every_path`): a tree
run, then each test module as `qlint check FILE` and as an editor's buffer, cached and not,
every answer the fresh tree run's; and after edits of the package's `__init__` on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_chain_depth_paths import OTHERS, _every_path, _qlint, _write
from tests.test_chain_depth_paths import ql101_rows as _found
from tests.test_ql101_through_modules import CHECKS_MORE
from tests.test_ql101_untriggered_and_mixins import MIXINS, RELU, _method, _test_class

# Subpackages of `pkg`, each with its own `checks` module, and what its `__init__` holds.
PACKAGES = {
    "plain": "",  # imports nothing: the path is taken to work (see `package_paths`)
    "imports": "from . import checks\n",
    "rebound": "from .checks import assert_nodes as checks\n",  # `checks` is the function
    "assigned": "from . import checks\nchecks = None\n",
    "defined": "def checks():\n    pass\n",
}


def _function(imports: str, call: str, params: str = "case, gm") -> str:
    return f"import torch\n\n{imports}\n\n\ndef test_relu({params}):\n    {call}\n"


def _call(head: str, helper: str = "assert_nodes", key: str = RELU) -> str:
    return f"{head}.checks.{helper}(case, gm, {{{key}: 1}})"


USERS = {
    "t_package": _function("import pkg", _call("pkg")),
    "t_alias": _function("import pkg as p", _call("p")),
    "t_plain": _function("import pkg.plain", _call("pkg.plain")),
    "t_imports": _function("import pkg.imports as pi", _call("pi")),
    "t_from_package": _function("from pkg import imports", _call("imports")),
    # The module imports the submodule itself: the import system sets the attribute.
    "t_assigned_imported": _function("import pkg.assigned.checks", _call("pkg.assigned")),
    # A TestCase mixin reached so (its module calls the sink on `self`).
    "t_mixin": _test_class(
        "import pkg", "pkg.mixins.MoreChecks, unittest.TestCase", _method(f"self.assert_order(self.gm, [{RELU}])")
    ),
}
LOUD = [(f"pkg/{name}.py", 10 if name == "t_mixin" else 7) for name in sorted(USERS)]
QUIET = {
    "q_rebound": _function("import pkg.rebound", _call("pkg.rebound")),
    "q_rebound_imported": _function("import pkg.rebound.checks", _call("pkg.rebound")),
    "q_assigned": _function("import pkg.assigned", _call("pkg.assigned")),
    "q_defined": _function("import pkg.defined as d", _call("d")),
    "q_parameter": _function("import pkg", _call("pkg"), params="pkg, case, gm"),
    "q_not_a_sink": _function("import pkg", _call("pkg", helper="describe")),
    "q_overload": _function("import pkg", _call("pkg", key=f"{RELU}.default")),
    "q_no_module": _function("import pkg", _call("pkg.plain.nothing")),
}


def packages_repo(tmp_path: Path, **modules: str) -> Path:
    """`tmp_path/repo`: package `pkg` holding `checks`, the subpackages of `PACKAGES` each with
    its own `checks`, `OTHERS` (enough modules for a tree run to make the index) and `modules`."""
    repo = tmp_path / "repo"
    for name in PACKAGES:
        (repo / "pkg" / name).mkdir(parents=True)
    (repo / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    packages = {f"{name}/__init__": init for name, init in PACKAGES.items()}
    checks = {f"{name}/checks": CHECKS_MORE for name in PACKAGES}
    _write(repo, __init__="", checks=CHECKS_MORE, **packages, **checks, **OTHERS, **modules)
    return repo


@pytest.fixture
def repo(tmp_path) -> Path:
    repo = packages_repo(tmp_path, mixins=MIXINS, **USERS, **QUIET)
    assert _found(_qlint(repo, "--cache-dir", "cache", "pkg")) == LOUD
    return repo


def test_paths_through_a_package_are_followed_on_every_path(repo):
    assert _found(_every_path(repo, *USERS, buffer_alone=True)) == LOUD


def test_the_look_alikes_stay_quiet_on_every_path(repo):
    assert _found(_every_path(repo, *QUIET, buffer_alone=True)) == LOUD


def test_an_edit_of_the_packages_init_is_seen_on_every_path(repo):
    # `plain` comes to bind `checks` to its function, `rebound` to its module.
    _write(repo, **{"plain/__init__": PACKAGES["rebound"], "rebound/__init__": PACKAGES["imports"]})
    found = _every_path(repo, "t_plain", "q_rebound", "q_rebound_imported")
    expected = [row for row in LOUD if row[0] != "pkg/t_plain.py"]
    expected += [("pkg/q_rebound.py", 7), ("pkg/q_rebound_imported.py", 7)]
    assert _found(found) == sorted(expected)
