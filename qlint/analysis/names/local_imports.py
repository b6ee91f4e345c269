"""Names a function binds by importing inside its own body (`def f(): import torch`).

Libraries that keep torch optional import it inside the function that needs it (optimum's
exporters, transformers' integrations): `torch.export.export_for_training(...)` or
`n.target == torch.ops.aten.relu` there names torch's API as surely as after a module-level
import. The resolver reads such a name through the import, as it reads the module's.

Kept beside the function's locals, not among them: analyses ask `name in body.local` to mean
"a variable of the function, whose value is its own" (the project's caller search skips such
a name, and reads a local import of the helper itself). Relative imports are left out: a body
does not know its module's package.
"""

from __future__ import annotations

import ast


class LocalNames(dict):
    """A function's parameters and local bindings, plus `imports`: the dotted name each
    absolute import statement of the body binds a name to (a set: two imports of one name
    make it unknowable), and `functions`: the functions it defines (a list: two `def`s of
    one name make it unknowable)."""

    __slots__ = ("functions", "imports")

    def __init__(self, *args, **kwargs) -> None:
        super().__init__(*args, **kwargs)
        self.imports: dict[str, set[str]] = {}
        self.functions: dict[str, list[ast.FunctionDef | ast.AsyncFunctionDef]] = {}

    def imported(self, name: str) -> str | None:
        found = self.imports.get(name)
        return next(iter(found)) if found is not None and len(found) == 1 else None


def bind_imports(local: LocalNames, stmt: ast.stmt) -> None:
    """Record the names an absolute `import` / `from ... import` statement binds."""
    if isinstance(stmt, ast.Import):
        for alias in stmt.names:
            name = alias.asname or alias.name.split(".")[0]
            local.imports.setdefault(name, set()).add(alias.name if alias.asname else name)
    elif isinstance(stmt, ast.ImportFrom) and not stmt.level and stmt.module:
        for alias in stmt.names:
            if alias.name != "*":
                local.imports.setdefault(alias.asname or alias.name, set()).add(f"{stmt.module}.{alias.name}")
