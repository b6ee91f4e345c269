"""A package module also run as a script imports its siblings twice: `try: from .core import
build` and, in the `except ImportError:` handler, `from core import build` (issue 14, lane
fresh36d: fuleige/DLProjects' `quant_pt2e.py`, run as `python cv/.../quantization/train.py`).

Run as a script, the relative import fails and the plain one finds `core` in the script's
directory, the first entry of `sys.path`: the same file. The handler's binding, taken last,
replaced the body's by `core.build`, a name the package layout does not resolve from inside a
package, so the builder was unknown and a train-mode PTQ capture of what it returns was quiet.
The handler's restatement of the body's sibling import is now no binding of its own; a handler
that names another module still is.
"""

from __future__ import annotations

import ast
import textwrap

from qlint.analysis.names.scope import ModuleScope
from tests.conftest import check_file, package_repository
from tests.snippets import NET_AND_BUILD

CORE = (
    """
from torch import nn


"""
    + NET_AND_BUILD
)
OTHER = """
from pkg.core import Net


def build(train_mode=False):
    return Net()
"""
MAIN = """
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e

{imports}


def ptq(q):
    model = {builder}(train_mode={ptq_train})
    gm = torch.export.export(model, (torch.randn(1, 3, 8, 8),)).module()
    return prepare_pt2e(gm, q)


def qat(q):
    model = {builder}(train_mode={qat_train})
    gm = torch.export.export(model, (torch.randn(1, 3, 8, 8),)).module()
    return prepare_qat_pt2e(gm, q)
"""
FALLBACK = """
try:
    from .core import build
except ImportError:
    from core import build
"""
MODULE_FALLBACK = """
try:
    from . import core
except ImportError:
    import core
"""
OTHER_FALLBACK = """
try:
    from .core import build
except ImportError:
    from pkg.other import build
"""


def _findings(tmp_path, imports: str, builder: str = "build", ptq_train: bool = True, qat_train: bool = False):
    main = textwrap.dedent(MAIN).format(
        imports=textwrap.dedent(imports).strip(), builder=builder, ptq_train=ptq_train, qat_train=qat_train
    )
    root = package_repository(tmp_path / "repo", core=CORE, other=OTHER, main=main)
    diagnostics = check_file(root / "pkg" / "main.py", ("QL201", "QL202")).diagnostics
    rows = {d.code: [] for d in diagnostics}
    for d in diagnostics:
        rows[d.code].append(d.range.start.row)
    return main, rows


def _row(main: str, text: str) -> int:
    """The 1-based row of the capture in the function whose body holds `text`."""
    lines = main.splitlines()
    start = next(i for i, line in enumerate(lines) if text in line)
    return next(i for i in range(start, len(lines)) if "torch.export.export" in lines[i]) + 1


def test_the_script_fallback_of_a_sibling_import_leaves_the_builder_known(tmp_path):
    main, rows = _findings(tmp_path, FALLBACK)
    assert rows == {"QL201": [_row(main, "def ptq")], "QL202": [_row(main, "def qat")]}


def test_the_same_builder_asked_for_the_right_modes_stays_quiet(tmp_path):
    _, rows = _findings(tmp_path, FALLBACK, ptq_train=False, qat_train=True)
    assert rows == {}


def test_the_script_fallback_of_a_sibling_module_import_leaves_its_functions_known(tmp_path):
    main, rows = _findings(tmp_path, MODULE_FALLBACK, builder="core.build")
    assert rows == {"QL201": [_row(main, "def ptq")], "QL202": [_row(main, "def qat")]}


def test_a_handler_importing_another_module_keeps_its_binding(tmp_path):
    # `pkg.other.build` returns an unevaluated Net whatever it is asked: the handler's binding,
    # taken last as before, decides, so the PTQ capture is reported and the QAT one is not.
    main, rows = _findings(tmp_path, OTHER_FALLBACK, ptq_train=False, qat_train=True)
    assert rows == {"QL201": [_row(main, "def ptq")]}


def _imports(source: str) -> dict[str, str]:
    return ModuleScope.build(ast.parse(textwrap.dedent(source)), "pkg.main", "/repo/pkg/main.py").imports


def test_scope_keeps_the_relative_binding_only_for_a_restatement():
    assert _imports(FALLBACK) == {"build": "pkg.core.build"}
    assert _imports(MODULE_FALLBACK) == {"core": "pkg.core"}
    assert _imports(OTHER_FALLBACK) == {"build": "pkg.other.build"}
    # Another name, an alias of its own, or a handler the body's import does not restate in
    # full: the handler's binding stays, as before.
    assert _imports(
        """
        try:
            from .core import build
        except ImportError:
            from core import build, Net
        """
    ) == {"build": "core.build", "Net": "core.Net"}
    assert _imports(
        """
        try:
            from .core import build
        except ImportError:
            from core import build as make
        """
    ) == {"build": "pkg.core.build", "make": "core.build"}
    # Two dots name the parent package's module, not the script's directory.
    assert _imports(
        """
        try:
            from ..core import build
        except ImportError:
            from core import build
        """
    ) == {"build": "core.build"}
