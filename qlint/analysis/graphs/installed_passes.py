"""Graph passes of installed packages, read from their source (never imported) (QL102).

Between a pass that inserts a packet and the strip that turns every target into one, a
caller may run another library's pass on the graph: SHARK's importer runs brevitas's
`replace_call_fn_target(fx_g, src=placeholder, target=op)` in its quantized arm, a loop that
retargets only the nodes whose target is the function it is handed. Whether such a pass can be
keyed on the inserted op's overload is written in the source installed beside the project,
which is the code the call runs: it is read as a pass of another module of the project is
(`blind_passes.blind_function`, `strip_loops.strip_helper`). A library that is not
installed stays unknown, and so does the insertion: it is reported.

The function is looked up in the module its import names, then through that module's own
imports (a package that re-exports it), a few steps at most.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.flow.installed_classes import installed_module

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_MAX_REEXPORTS = 3


def installed_function(qualname: str, ctx: FileContext) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The module-level function `qualname` (`pkg.mod.func`) as written in an installed
    package; None when no site directory holds it."""
    module, _, attr = qualname.rpartition(".")
    for _ in range(_MAX_REEXPORTS + 1):
        if not module:
            return None
        scope = installed_module(module, ctx.project, ctx.path)
        if scope is None:
            return None
        func = scope.functions.get(attr)
        if func is not None:
            return func if isinstance(func, _FUNCS) else None
        further = scope.imports.get(attr)
        if not further or further == f"{module}.{attr}":
            return None
        module, _, attr = further.rpartition(".")
    return None
