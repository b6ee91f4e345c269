"""QL201: a model factory a package takes from `from .mobilenet import *`, called as an attribute
of the package (`import models`, then `models.mobilenet()`; lane fresh39's miss, stop 55).

The attribute is what the package's star import binds, as `from models import mobilenet` finds
it: the last star-imported module exporting the name (its `__all__` when it has one), through
nested star imports; a name the package binds itself wins; star imports of packages outside the
project are not followed.
"""

from __future__ import annotations

import os

from qlint.analysis.names.project import ProjectIndex
from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import check_file

MOBILENET = """\
from torch import nn


class MobileNet(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)

    def forward(self, x):
        return self.bn(x)


def mobilenet(width=1.0):
    return MobileNet()
"""
EVALUATED = MOBILENET.replace("    return MobileNet()\n", "    return MobileNet().eval()\n")
STAR = "from .mobilenet import *  # noqa: F403\n"
SCRIPT = """\
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

{imports}


def main(quantizer, x):
    net = {call}
    return prepare_pt2e(export(net, (x,)).module(), quantizer)
"""


def _repo(tmp_path, package: str = STAR, imports: str = "import models", call: str = "models.mobilenet()", **modules):
    """A repository: `models/__init__.py` holds `package`, `models/<name>.py` each of `modules`
    (`mobilenet=MOBILENET` unless given), and `script.py` calls `call` after `imports`."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "models").mkdir()
    (root / "models" / "__init__.py").write_text(package)
    for name, text in {"mobilenet": MOBILENET, **modules}.items():
        (root / "models" / f"{name}.py").write_text(text)
    script = root / "script.py"
    script.write_text(SCRIPT.format(imports=imports, call=call))
    return script


def _found(script, project: ProjectIndex | None = None) -> list[str]:
    return [d.message for d in check_file(script, ("QL201",), project).diagnostics]


def test_a_factory_a_package_star_imports_is_read_through_the_package_attribute(tmp_path):
    # `import models` then `models.mobilenet()`: the function, as Python binds it over the submodule.
    found = _found(_repo(tmp_path))
    assert len(found) == 1 and "BatchNorm2d" in found[0]


def test_the_other_spellings_of_the_factory_are_reported_alike(tmp_path):
    assert len(_found(_repo(tmp_path / "f", imports="from models import mobilenet", call="mobilenet()"))) == 1
    assert len(_found(_repo(tmp_path / "a", imports="import models as zoo", call="zoo.mobilenet()"))) == 1
    # A submodule of another name, imported as a name: its own function.
    sub = _repo(tmp_path / "s", "from .sub import *  # noqa: F403\n", "import models.sub as m", "m.factory()")
    sub.with_name("models").joinpath("sub.py").write_text(MOBILENET.replace("def mobilenet", "def factory"))
    assert len(_found(sub)) == 1
    # A package's subpackage star-importing the factory, reached as an attribute of the package.
    nested = _repo(tmp_path / "p", "", "import models.zoo", "models.zoo.mobilenet()")
    zoo = nested.with_name("models") / "zoo"
    zoo.mkdir()
    (zoo / "__init__.py").write_text(STAR)
    (zoo / "mobilenet.py").write_text(MOBILENET)
    assert len(_found(nested)) == 1


def test_nested_star_imports_are_followed(tmp_path):
    script = _repo(tmp_path, "from .zoo import *  # noqa: F403\n", zoo=STAR)
    assert len(_found(script)) == 1


def test_a_factory_that_evaluates_its_model_is_quiet(tmp_path):
    assert _found(_repo(tmp_path, mobilenet=EVALUATED)) == []


def test_all_decides_what_the_star_import_binds(tmp_path):
    listed = MOBILENET + '\n__all__ = ["MobileNet", "mobilenet"]\n'
    assert len(_found(_repo(tmp_path / "l", mobilenet=listed))) == 1
    # Left out of `__all__`: the package has no such attribute, the call builds nothing known.
    hidden = MOBILENET + '\n__all__ = ["MobileNet"]\n'
    assert _found(_repo(tmp_path / "h", mobilenet=hidden)) == []
    # A star import that binds nothing of that name leaves it to the next one written before it.
    other = _repo(tmp_path / "o", STAR + "from .other import *  # noqa: F403\n", other='__all__ = ["x"]\nx = 1\n')
    assert len(_found(other)) == 1


def test_a_function_the_package_defines_itself_wins_over_the_star_import(tmp_path):
    evaluated = "\n\ndef mobilenet():\n    from .mobilenet import MobileNet\n\n    return MobileNet().eval()\n"
    assert _found(_repo(tmp_path / "e", STAR + evaluated)) == []
    # The other way round: the package's own train-mode factory over an evaluating one.
    train = evaluated.replace("MobileNet().eval()", "MobileNet()")
    assert len(_found(_repo(tmp_path / "t", STAR + train, mobilenet=EVALUATED))) == 1


def test_a_star_import_cycle_ends(tmp_path):
    cycle = _repo(
        tmp_path / "c", STAR + "from .zoo import *  # noqa: F403\n", zoo="from models import *  # noqa: F403\n"
    )
    assert len(_found(cycle)) == 1
    # A name no module of the cycle binds: nothing known, no endless search.
    absent = _repo(tmp_path / "a", "from .zoo import *  # noqa: F403\n", zoo="from models import *  # noqa: F403\n")
    assert _found(absent) == []


def test_a_star_import_of_an_installed_package_is_not_followed(tmp_path):
    # torchvision's factories are known by name (a train-mode model): imported by name, reported.
    named = _repo(tmp_path / "n", imports="from torchvision.models import resnet18", call="resnet18()")
    assert len(_found(named)) == 1
    # Through a package's star import of torchvision.models: not followed, as for a bare name.
    star = "from torchvision.models import *  # noqa: F403\n"
    assert _found(_repo(tmp_path / "s", star, call="models.resnet18()")) == []
    assert _found(_repo(tmp_path / "b", star, imports="from models import resnet18", call="resnet18()")) == []


def test_an_edit_of_the_star_imported_module_reaches_the_script(tmp_path):
    # The language server: the factory's module is a dependency of the script's check, and its
    # edited buffer decides the next check.
    script = _repo(tmp_path)
    mobilenet = str(script.with_name("models") / "mobilenet.py")
    project = ProjectIndex()
    result = check_file(script, ("QL201",), project)
    assert len(result.diagnostics) == 1
    assert mobilenet in result.dependencies
    assert str(script.with_name("models") / "__init__.py") in result.dependencies
    project.update(mobilenet, EVALUATED)
    assert _found(script, project) == []
    project.update(mobilenet, None)
    assert len(_found(script, project)) == 1


def test_a_cached_result_is_checked_again_after_the_star_imported_module_changes(tmp_path):
    script = _repo(tmp_path)
    root = script.parent
    settings = Settings(select=("QL201",), root=root, cache_dir=tmp_path / "cache")
    first = run_check([str(script)], settings, use_cache=True, jobs=1)
    assert [len(r.diagnostics) for r in first.results] == [1]
    assert run_check([str(script)], settings, use_cache=True, jobs=1).cached == 1
    mobilenet = root / "models" / "mobilenet.py"
    mobilenet.write_text(EVALUATED + "\n")
    past = os.stat(mobilenet).st_mtime_ns + 10**9
    os.utime(mobilenet, ns=(past, past))
    again = run_check([str(script)], settings, use_cache=True, jobs=1)
    assert again.cached == 0
    assert [r.diagnostics for r in again.results] == [[]]


def test_a_package_of_a_namespace_directory_is_read_by_the_name_it_is_imported_by(tmp_path):
    # `ns/` has no `__init__.py`: the package calls itself `models`, the script `ns.models`. Its
    # `from .mobilenet import *` is `ns.models.mobilenet` from the script, where `models.mobilenet`
    # names nothing.
    script = _repo(tmp_path / "a", imports="import ns.models as models")
    ns = script.parent / "ns"
    ns.mkdir()
    script.with_name("models").rename(ns / "models")
    assert len(_found(script)) == 1
    script.write_text(SCRIPT.format(imports="from ns.models import mobilenet", call="mobilenet()"))
    assert len(_found(script)) == 1
