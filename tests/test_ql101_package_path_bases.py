"""QL101 through a TestCase mixin named as a base through a package path (issue 14; stop 70's
leftovers): `import pkg.plain.checks`, then `class TestOps(pkg.plain.checks.NodeChecks,
unittest.TestCase)` calling the inherited `self.assert_order(self.gm, [torch.ops.aten.relu])`,
in the checked module or in a mixin's module another one subclasses (`class D(...)`).

Such a base was already followed wherever its module is the project's (a plain import of the
module or of a package above it, an alias, a from-import of the package), as `from
pkg.plain.checks import NodeChecks` is. It was followed too where Python would not let the
class statement run: the package's `__init__` binds `checks` to something else (`checks =
None`, `from .checks import assert_nodes as checks`, `def checks()`), so that `pkg.assigned.
checks` is that, not the module (an AttributeError at import). A call through such a path
was already quiet there (`package_paths`, `helper_lookup.module_attribute`); a base now is too
(`helper_lookup.base_class`, a mixin's own base in `wrapper_chains._mixed_in_by`, and a pass
interface whose method hands `self.targets` to a sink, `inherited_sinks._base`), unless
the module imports the submodule itself and `__init__` did not load it first (the import
system then sets the attribute: `import pkg.assigned.checks`).

Quiet look-alikes besides: `pkg` bound again to another module, a class the module does not
define, an installed library's module of the same stem. Real qlint processes sharing one
`--cache-dir` (`test_chain_depth_paths._every_path`), and after an edit of a package's
`__init__` on disk.

Not followed (yet): a mixin's module reaching its base through a package it imports alone
(`import pkg`, then `class D(pkg.plain.checks.NodeChecks)`): the index reads a mixin's
subclasses' modules by their import words (`mixin_sinks.importing_mixin_modules`), which then
spell only the package."""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from tests.conftest import check_file, json_findings, old_file, rows_of
from tests.test_chain_depth_paths import _every_path, _qlint, _write
from tests.test_chain_depth_paths import ql101_rows as _found
from tests.test_ql101_package_paths import PACKAGES, packages_repo
from tests.test_ql101_untriggered_and_mixins import MIXINS, RELU, _method, _test_class


def _inherits(imports: str, base: str) -> str:
    return _test_class(imports, f"{base}, unittest.TestCase", _method(f"self.assert_order(self.gm, [{RELU}])"))


def _mixin(imports: str, base: str) -> str:
    return f"{imports}\n\n\nclass D({base}):\n    pass\n"


# Name -> (the imports, the base), each used by a test class itself (`o_`) and by a mixin of
# its own module (`dm_`) that a test class imports by name (`t_`).
FOLLOWED = {
    "plain_imported": ("import pkg.plain.checks", "pkg.plain.checks.NodeChecks"),
    "through_init": ("import pkg.imports", "pkg.imports.checks.NodeChecks"),
    "assigned_imported": ("import pkg.assigned.checks", "pkg.assigned.checks.NodeChecks"),
}
# Followed from the checked module alone (see the module's docstring).
OWN_ONLY = {
    "package": ("import pkg", "pkg.plain.checks.NodeChecks"),
    "subpackage": ("import pkg.plain", "pkg.plain.checks.NodeChecks"),
    "alias": ("import pkg.plain as pp", "pp.checks.NodeChecks"),
    "from_package": ("from pkg import plain", "plain.checks.NodeChecks"),
}
LOOK_ALIKES = {
    "assigned": ("import pkg.assigned", "pkg.assigned.checks.NodeChecks"),
    "rebound_imported": ("import pkg.rebound.checks", "pkg.rebound.checks.NodeChecks"),
    "rebound": ("import pkg.rebound", "pkg.rebound.checks.NodeChecks"),
    "defined": ("import pkg.defined", "pkg.defined.checks.NodeChecks"),
    "shadowed": ("import pkg.plain.checks\nimport pkg.m0 as pkg", "pkg.plain.checks.NodeChecks"),
    "no_such_class": ("import pkg.plain.checks", "pkg.plain.checks.Nothing"),
    "library": ("import unittest.case", "unittest.case.NodeChecks"),
}


def _modules(cases: dict[str, tuple[str, str]], mixins: bool = True) -> dict[str, str]:
    out = {}
    for name, (imports, base) in cases.items():
        out[f"o_{name}"] = _inherits(imports, base)
        if mixins:
            out[f"dm_{name}"] = _mixin(imports, base)
            out[f"t_{name}"] = _inherits(f"from pkg.dm_{name} import D", "D")
    return out


LOUD = sorted(
    [(f"pkg/{w}_{name}.py", 10) for name in FOLLOWED for w in "ot"] + [(f"pkg/o_{name}.py", 10) for name in OWN_ONLY]
)


@pytest.fixture
def repo(tmp_path) -> Path:
    modules = {**_modules(FOLLOWED), **_modules(OWN_ONLY, mixins=False), **_modules(LOOK_ALIKES)}
    repo = packages_repo(tmp_path, mixins=MIXINS, **modules)
    assert _found(_qlint(repo, "--cache-dir", "cache", "pkg")) == LOUD
    return repo


def test_bases_through_a_package_path_are_followed_on_every_path(repo):
    targets = ["o_plain_imported", "t_plain_imported", "t_assigned_imported", "o_package", "o_alias"]
    assert _found(_every_path(repo, *targets, buffer_alone=True)) == LOUD


def test_the_look_alikes_stay_quiet_on_every_path(repo):
    targets = ["o_assigned", "o_rebound_imported", "t_rebound_imported", "o_defined", "t_shadowed"]
    assert _found(_every_path(repo, *targets, buffer_alone=True)) == LOUD


def test_an_edit_of_the_packages_init_is_seen_on_every_path(repo):
    # `plain` comes to bind `checks` to its function; `rebound` to nothing but its module.
    _write(repo, **{"plain/__init__": PACKAGES["rebound"], "rebound/__init__": PACKAGES["imports"]})
    found = _every_path(repo, "o_plain_imported", "o_package", "o_rebound", "t_rebound_imported")
    gone = {f"pkg/o_{name}.py" for name in ("plain_imported", "package", "subpackage", "alias", "from_package")}
    gone.add("pkg/t_plain_imported.py")
    came = [("pkg/o_rebound.py", 10), ("pkg/o_rebound_imported.py", 10), ("pkg/t_rebound_imported.py", 10)]
    assert _found(found) == sorted([row for row in LOUD if row[0] not in gone] + came)


# The same paths to a pass interface whose method loops `self.targets` into a sink, subclassed
# by a pass that lists a packet among its targets (`inherited_sinks`: the finding sits on the
# subclass's packet).
INTERFACE = "RemoveOrReplacePassInterface"
INHERITED_INITS = {**PACKAGES, "rebound": f"from .checks import {INTERFACE} as checks\n"}
INHERITED = [
    ("import pkg.plain.checks", "pkg.plain.checks", [10]),
    ("import pkg", "pkg.plain.checks", [10]),
    ("import pkg.plain as pp", "pp.checks", [10]),
    ("import pkg.assigned.checks", "pkg.assigned.checks", [10]),
    ("import pkg.assigned", "pkg.assigned.checks", []),
    ("import pkg.rebound.checks", "pkg.rebound.checks", []),
    ("import pkg.rebound", "pkg.rebound.checks", []),
    ("import pkg.defined", "pkg.defined.checks", []),
    ("import pkg.plain.checks\nimport pkg.m0 as pkg", "pkg.plain.checks", []),
]


def _interface_repo(tmp_path: Path) -> Path:
    from tests.test_ql101_inherited_sinks import BASE

    repo = tmp_path / "repo"
    for name, init in INHERITED_INITS.items():
        (repo / "pkg" / name).mkdir(parents=True)
        (repo / "pkg" / name / "__init__.py").write_text(init)
        (repo / "pkg" / name / "checks.py").write_text(textwrap.dedent(BASE))
    (repo / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    (repo / "pkg" / "__init__.py").write_text("")
    (repo / "pkg" / "m0.py").write_text("X = 1\n")
    return repo


@pytest.mark.parametrize(("imports", "module", "rows"), INHERITED)
def test_a_pass_interface_through_a_package_path(tmp_path, imports, module, rows):
    from tests.test_ql101_inherited_sinks import PROPERTY, _pass

    repo = _interface_repo(tmp_path)
    user = repo / "pkg" / "user.py"
    text = _pass(PROPERTY).replace(f"from pkg.pass_utils import {INTERFACE}", imports)
    user.write_text(text.replace(f"({INTERFACE})", f"({module}.{INTERFACE})"))
    assert rows_of(check_file(user, ("QL101",)).diagnostics) == rows


def test_an_edit_of_the_interfaces_package_init_is_seen_by_a_cached_run(tmp_path):
    from tests.test_ql101_inherited_sinks import PROPERTY, _pass

    repo = _interface_repo(tmp_path)
    text = _pass(PROPERTY).replace(f"from pkg.pass_utils import {INTERFACE}", "import pkg.plain")
    (repo / "pkg" / "user.py").write_text(text.replace(f"({INTERFACE})", f"(pkg.plain.checks.{INTERFACE})"))

    def rows() -> list[int]:
        found = json_findings(repo, "--select", "QL101", "--cache-dir", "cache", "pkg/user.py")
        return [d["location"]["row"] for d in found]

    assert rows() == [10]
    old_file(repo / "pkg" / "plain" / "__init__.py", INHERITED_INITS["rebound"])
    assert rows() == []
