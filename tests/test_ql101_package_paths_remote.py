"""QL101 through a chain inside another module that reaches its sink as an attribute of a
package (issue 14; stop 69's leftovers of `package_paths`): a helper module does `import
pkg.assigned.checks`, then `pkg.assigned.checks.assert_nodes(case, gm, occ)` forwarding the
occurrence dict, and the checked module calls that helper with `{torch.ops.aten.relu: 1}`.

`pkg/assigned/__init__.py` binds `checks` to None; the import system sets the package's
attribute to the submodule when the helper's own `import pkg.assigned.checks` loads it, so the
path runs. The search asked that of the module being checked only: another module's summary
(`forwarding_facts.RemoteModule`) carried no imported modules, and the chain erred quiet. It
now carries the summary's (`ModuleSummary.imported_modules`, which it already kept).

Quiet look-alikes: the helper imports the package only (`import pkg.assigned`: `checks` is
None when the call runs); `__init__` loads the submodule first and rebinds the name
(`from .checks import assert_nodes as checks`: the helper's import sets nothing again); the
chain ends in a function that is no sink (`describe`); the overload passed. Real qlint
processes on every path (`test_chain_depth_paths._every_path`), and after an edit of the
helper on disk."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.test_chain_depth_paths import _every_path, _qlint, _write
from tests.test_chain_depth_paths import ql101_rows as _found
from tests.test_ql101_package_paths import packages_repo
from tests.test_ql101_untriggered_and_mixins import RELU


def _helper(imports: str, package: str, sink: str = "assert_nodes") -> str:
    return f"{imports}\n\n\ndef check(case, gm, occ):\n    {package}.checks.{sink}(case, gm, occ)\n"


HELPERS = {
    "h_imported": _helper("import pkg.assigned.checks", "pkg.assigned"),
    "h_package": _helper("import pkg.assigned", "pkg.assigned"),
    "h_rebound": _helper("import pkg.rebound.checks", "pkg.rebound"),
    "h_describe": _helper("import pkg.assigned.checks", "pkg.assigned", sink="describe"),
}


def _user(helper: str, key: str = RELU, imports: str = "", call: str = "check") -> str:
    imports = imports or f"from pkg.{helper} import check"
    return f"import torch\n\n{imports}\n\n\ndef test_relu(case, gm):\n    {call}(case, gm, {{{key}: 1}})\n"


USERS = {
    "t_imported": _user("h_imported"),
    # The helper itself reached through its package's attribute.
    "t_attribute": _user("h_imported", imports="import pkg.h_imported", call="pkg.h_imported.check"),
}
QUIET = {
    "q_package": _user("h_package"),
    "q_rebound": _user("h_rebound"),
    "q_describe": _user("h_describe"),
    "q_overload": _user("h_imported", key=f"{RELU}.default"),
}
LOUD = [("pkg/t_attribute.py", 7), ("pkg/t_imported.py", 7)]


@pytest.fixture
def repo(tmp_path) -> Path:
    repo = packages_repo(tmp_path, **HELPERS, **USERS, **QUIET)
    assert _found(_qlint(repo, "--cache-dir", "cache", "pkg")) == LOUD
    return repo


def test_a_helper_modules_own_import_of_the_submodule_is_followed_on_every_path(repo):
    assert _found(_every_path(repo, *USERS, buffer_alone=True)) == LOUD


def test_the_look_alikes_stay_quiet_on_every_path(repo):
    assert _found(_every_path(repo, *QUIET, buffer_alone=True)) == LOUD


def test_an_edit_of_the_helpers_import_is_seen_on_every_path(repo):
    # The helper comes to import the package only, and the other to import the submodule.
    _write(
        repo,
        h_imported=HELPERS["h_package"],
        h_package=HELPERS["h_imported"],
    )
    found = _every_path(repo, "t_imported", "t_attribute", "q_package")
    assert _found(found) == [("pkg/q_package.py", 7)]
