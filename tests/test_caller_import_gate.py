"""The search for a helper's callers skips, without parsing it, a module whose every use of
the helper's name is its one module-level import of another function of that name (issue 13:
on ExecuTorch the 45 Qualcomm scripts importing their own `build_executorch_binary` were
parsed whole for the search of MediaTek's). The summary's imports decide, as the parse would:
callers through the helper's own module, a re-export, a relative import, a renaming import,
a star import or a directory without `__init__.py` are still read, and so is a module that
binds the name any other way."""

from __future__ import annotations

import ast

import pytest

from qlint.analysis.flow import project_callers
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.references import REFERENCES
from tests.test_caller_search_work import _parsed
from tests.test_ql201_project_callers import BN_CALLER, EVAL_CALLER, HEAD, _check, _repo

OTHER = "def quantize_module(module, quantizer, x):\n    return module\n"
# A script calling another module's function of the helper's name with a batch-norm model:
# were it the helper, the finding would stay.
FOREIGN = """
from pkg.other import quantize_module

def main(q, x):
    quantize_module(nn.BatchNorm2d(3), q, x)
"""


def _sole(source: str) -> frozenset[str]:
    tree = ast.parse(source)
    return REFERENCES.load("m.py", None, REFERENCES.compute(tree, None, source)).sole_imports


def _modules_built(monkeypatch) -> list[str]:
    """The candidate modules the search builds a context for (parsing them unless a summary
    just did), by base name."""
    built: list[str] = []
    real = project_callers._module

    def module(ctx, path, data, *rest):
        built.append(str(path).rsplit("/", 1)[-1])
        return real(ctx, path, data, *rest)

    monkeypatch.setattr(project_callers, "_module", module)
    return built


def _with_other(root):
    (root / "pkg" / "other.py").write_text(OTHER)
    return root


# -- the fact --------------------------------------------------------------------------------------
def test_a_name_bound_only_by_one_module_level_import_is_a_sole_import():
    assert _sole("from m import f\n\ndef g(x):\n    return f(x)\n") == {"f"}
    assert _sole("try:\n    from m import f\nexcept ImportError:\n    pass\nf(1)\n") == {"f"}
    assert _sole("from m import f as g\ng(1)\n") == {"g"}
    assert _sole("if X:\n    from .m import f\nf()\n") == {"f"}


@pytest.mark.parametrize(
    "source",
    [
        "from m import f\nx.f(1)\n",  # also an attribute: another object's `f`
        "from m import f\nf = wrap(f)\n",  # rebound
        "from m import f\n\ndef g(f):\n    return f(1)\n",  # a parameter
        "from m import f\n\ndef g():\n    from n import f\n    return f(1)\n",  # imported in a function too
        "from m import f\nfrom n import f\nf(1)\n",  # two imports: which one binds it depends
        "from m import f\n\ndef f():\n    pass\n",  # defined
        "from m import f\nimport f\n",  # `import f`
        "from m import f\nfor f in xs:\n    f()\n",  # a loop variable
        "from m import f\ntry:\n    pass\nexcept E as f:\n    pass\n",  # an exception's name
        "from m import f\n\ndef g():\n    global f\n    f = 1\n",  # global
        "from m import f\nwith a as f:\n    pass\n",
        "from m import f\n[f for f in xs]\n",  # a comprehension's variable
        "from m import f\nlambda f: f\n",
        "from m import f\nfrom n import *\nf(1)\n",  # a star import may rebind it
        "from m import f\nmatch x:\n    case f:\n        pass\n",
        "from m import f\n\nclass f:\n    pass\n",
        "from m import f\ndel f\n",
        "from m import f\n(f := 2)\n",
    ],
)
def test_a_name_bound_or_used_otherwise_is_no_sole_import(source):
    assert "f" not in _sole(source)


def test_an_import_in_a_function_or_a_class_is_no_module_import():
    assert _sole("def g():\n    from m import f\n    return f(1)\n") == frozenset()
    assert _sole("class C:\n    from m import f\n") == frozenset()


# -- the skip --------------------------------------------------------------------------------------
def test_a_module_calling_another_function_of_the_name_is_not_parsed_for_the_search(tmp_path, monkeypatch):
    root = _with_other(_repo(tmp_path, a=EVAL_CALLER, b=FOREIGN))
    project = ProjectIndex()
    built = _modules_built(monkeypatch)
    assert _check(root, project).diagnostics == []  # its batch-norm model is no caller's
    assert built == ["a.py"]
    # Known from an earlier check's summary: still not parsed (the 45 Qualcomm scripts' case).
    parsed = _parsed(monkeypatch)
    assert _check(root, project).diagnostics == []
    assert "b.py" not in parsed


@pytest.mark.parametrize(
    "caller",
    [
        BN_CALLER,  # the helper's own module
        # Through a re-export of the package (`pkg/utils/__init__.py`), renamed or not.
        BN_CALLER.replace("from pkg.utils.export_utils import", "from pkg.utils import"),
        BN_CALLER.replace("from pkg.utils.export_utils import quantize_module", "from pkg.api import qm").replace(
            "quantize_module(", "qm("
        ),
        # Renamed where it is imported.
        BN_CALLER.replace("import quantize_module", "import quantize_module as quantize").replace(
            "    quantize_module(", "    quantize("
        ),
        BN_CALLER.replace("from pkg.utils.export_utils import quantize_module", "from pkg.utils.export_utils import *"),
        # From a module that star-imports the helper's.
        BN_CALLER.replace("pkg.utils.export_utils", "pkg.hub"),
        # From a directory of the project the index finds no module for: it may be the helper.
        FOREIGN.replace("pkg.other", "pkg.shapes"),
        # Imported from elsewhere, then bound to the helper: not decided by the import alone.
        FOREIGN.replace("def main", "from pkg.utils.export_utils import quantize_module\n\ndef main"),
        FOREIGN + "\nquantize_module = __import__('pkg.utils.export_utils').utils.export_utils.quantize_module\n",
    ],
)
def test_callers_of_the_helper_are_still_read(tmp_path, monkeypatch, caller):
    root = _with_other(_repo(tmp_path, a=EVAL_CALLER, b=caller))
    (root / "pkg" / "utils" / "__init__.py").write_text("from .export_utils import quantize_module\n")
    (root / "pkg" / "api.py").write_text("from .utils.export_utils import quantize_module as qm\n")
    (root / "pkg" / "hub.py").write_text("from .utils.export_utils import *\n")
    (root / "pkg" / "shapes").mkdir()
    built = _modules_built(monkeypatch)
    assert len(_check(root).diagnostics) == 1
    assert "b.py" in built


def test_a_relative_import_of_the_helper_is_read(tmp_path):
    root = _with_other(_repo(tmp_path, a=EVAL_CALLER))
    relative = BN_CALLER.replace("from pkg.utils.export_utils import", "from .utils.export_utils import")
    (root / "pkg" / "run.py").write_text(HEAD + relative)
    assert len(_check(root).diagnostics) == 1
    # A relative import of the other module's function: skipped, and the helper is quiet.
    (root / "pkg" / "run.py").write_text(HEAD + FOREIGN.replace("from pkg.other import", "from .other import"))
    assert _check(root).diagnostics == []


def test_a_caller_in_a_directory_without_init_is_read(tmp_path):
    # `tools/` has no `__init__.py`: its script imports a sibling that re-exports the helper.
    root = _with_other(_repo(tmp_path, a=EVAL_CALLER))
    (root / "tools").mkdir()
    (root / "tools" / "shim.py").write_text("from pkg.utils.export_utils import quantize_module\n")
    (root / "tools" / "run.py").write_text(HEAD + BN_CALLER.replace("pkg.utils.export_utils", "shim"))
    assert len(_check(root).diagnostics) == 1
    (root / "tools" / "shim.py").write_text("from pkg.other import quantize_module\n")
    assert _check(root).diagnostics == []
