"""A name a module both imports and defines (`def`/`class`) is bound by whichever binding runs
last at the module's level: a later `def` shadows an earlier import, a later import an
earlier `def`. A binding in an `if`/`try` branch may not run, so both stay known there, as
before (issue 14)."""

from __future__ import annotations

import ast
import textwrap

import pytest

from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import ModuleScope
from qlint.analysis.names.summary import ModuleSummary
from tests.conftest import lint


def _scope(src: str) -> ModuleScope:
    return ModuleScope.build(ast.parse(textwrap.dedent(src)), "m", "m.py")


def _bound(src: str) -> tuple[str | None, bool, bool]:
    """(the import `f` names, `f` is a function, `F` is a class) of the module."""
    scope = _scope(src)
    return scope.imports.get("f") or scope.imports.get("F"), "f" in scope.functions, "F" in scope.classes


@pytest.mark.parametrize(
    "src, bound",
    [
        ("from x import f\ndef f(): pass\n", (None, True, False)),
        ("def f(): pass\nfrom x import f\n", ("x.f", False, False)),
        ("import f\ndef f(): pass\n", (None, True, False)),
        ("from x import g as F\nclass F: pass\n", (None, False, True)),
        ("class F: pass\nfrom x import g as F\n", ("x.g", False, False)),
        # A `with` body and a `finally` run with the module.
        ("from x import f\nwith ctx():\n    def f(): pass\n", (None, True, False)),
        ("def f(): pass\ntry:\n    pass\nfinally:\n    from x import f\n", ("x.f", False, False)),
    ],
    ids=["def-after-import", "import-after-def", "plain-import", "class", "import-after-class", "with", "finally"],
)
def test_the_last_binding_at_the_modules_level_wins(src, bound):
    assert _bound(src) == bound


@pytest.mark.parametrize(
    "src",
    [
        # The fallback for an import that may fail, and its mirror.
        "try:\n    from x import f\nexcept ImportError:\n    def f(): pass\n",
        "def f(): pass\ntry:\n    from x import f\nexcept ImportError:\n    pass\n",
        "from x import f\nif OLD:\n    def f(): pass\n",
        "def f(): pass\nif NEW:\n    from x import f\nelse:\n    pass\n",
    ],
    ids=["try-fallback", "try-import", "if-def", "if-import"],
)
def test_a_binding_in_a_branch_leaves_both_known(src):
    assert _bound(src) == ("x.f", True, False)


def test_the_summary_binds_as_the_scope_does():
    src = "from x import f\ndef f(): pass\ndef g(): pass\nfrom y import g\nclass C: pass\n"
    scope = _scope(src)
    summary = ModuleSummary.of(ast.parse(src), scope, "m", "digest")
    assert summary.imports == {"g": "y.g"}
    assert set(summary.functions) == {"f"} and set(summary.classes) == {"C"}
    rebuilt = summary.scope("m.py", lambda: src)
    assert rebuilt.imports == scope.imports and set(rebuilt.functions) == set(scope.functions)


def test_a_later_def_is_what_the_name_resolves_to():
    scope = _scope("from torch.export import export\n\ndef export(model, args):\n    pass\n")
    resolver = Resolver(scope, ProjectIndex(), None)
    assert resolver.qualname(ast.parse("export").body[0].value) == "m.export"


HEAD = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
"""
OWN_EXPORT = """

def export(model, args):
    model.eval()
    return torch.export.export(model, args)
"""
QUANTIZE = """

def quantize(model, quantizer, x):
    captured = export(model, (x,)).module()
    return prepare_pt2e(captured, quantizer)
"""


def test_an_import_after_the_def_is_what_runs():
    # torch's export replaces the module's own, which evaluated the model first.
    src = HEAD + OWN_EXPORT + "\n\nfrom torch.export import export  # noqa: E402\n" + QUANTIZE
    assert [(d.code, d.range.start.row) for d in lint(src, select=("QL201",))] == [("QL201", 14)]


@pytest.mark.parametrize(
    "src",
    [
        # The module's own export (evaluating first) replaces the imported one.
        HEAD + "from torch.export import export\n" + OWN_EXPORT + QUANTIZE,
        # A fallback def in the `except` of an import: the own function is read, as before.
        HEAD + "try:\n    from pkg.compat import export\nexcept ImportError:\n    pass\n" + OWN_EXPORT + QUANTIZE,
    ],
    ids=["def-after-import", "def-after-guarded-import"],
)
def test_a_def_after_the_import_is_what_runs(src):
    assert lint(src, select=("QL201",)) == []


def test_another_modules_def_after_its_import(tmp_path):
    # `pkg/utils.py` imports torch's export and then defines its own, which evaluates.
    (tmp_path / ".git").mkdir()
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").touch()
    (pkg / "utils.py").write_text("import torch\nfrom torch.export import export\n" + OWN_EXPORT)
    run = HEAD + "from pkg.utils import export\n" + QUANTIZE
    assert lint(run, path=str(pkg / "run.py"), select=("QL201",)) == []
    (pkg / "utils.py").write_text("import torch\n" + OWN_EXPORT + "\n\nfrom torch.export import export\n")
    assert [d.code for d in lint(run, path=str(pkg / "run.py"), select=("QL201",))] == ["QL201"]
