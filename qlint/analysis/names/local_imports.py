"""Names a function binds by importing inside its own body (`def f(): import torch`).

Libraries that keep torch optional import it inside the function that needs it (optimum's
exporters, transformers' integrations): `torch.export.export_for_training(...)` or
`n.target == torch.ops.aten.relu` there names torch's API as surely as after a module-level
import. A local import is recorded as an `ImportedName` carrying the dotted name it binds, so
the resolver reads `torch.ops.aten.relu` through it as through the module's imports.
Relative imports are left out: the body does not know its module's package.
"""

from __future__ import annotations

import ast


class ImportedName(ast.expr):
    """The value a function-local import binds a name to: the module or object `qualname`."""

    _fields = ()

    def __init__(self, qualname: str, stmt: ast.stmt) -> None:
        super().__init__()
        self.qualname = qualname
        ast.copy_location(self, stmt)
        self.end_lineno = stmt.end_lineno
        self.end_col_offset = stmt.end_col_offset


def bind_imports(local: dict[str, list[ast.AST]], stmt: ast.stmt) -> None:
    """Record the names an absolute `import` / `from ... import` statement binds."""
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            if alias.asname:
                local.setdefault(alias.asname, []).append(ImportedName(alias.name, stmt))
            else:
                top = alias.name.split(".")[0]
                local.setdefault(top, []).append(ImportedName(top, stmt))
    elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
        for alias in stmt.names:
            if alias.name != "*":
                name = alias.asname or alias.name
                local.setdefault(name, []).append(ImportedName(f"{stmt.module}.{alias.name}", stmt))
