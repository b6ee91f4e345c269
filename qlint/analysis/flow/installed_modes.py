"""The mode a construction of an installed package's class starts in.

ExecuTorch's installed `examples/qualcomm/util_scripts/gen_etrecord.py` captures
`SimpleModel()` from `backends/qualcomm/tests/models.py`, whose `__init__` ends with
`self.eval()`. The installed `executorch/` has no `__init__.py`, so the project lookup does
not find the class; its source beside the project (`installed_classes`) says both what it
holds and the mode it starts in.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.flow.installed_classes import installed_class
from qlint.analysis.flow.model_apis import init_sets_eval

_INSTALL_DIRS = ("site-packages", "dist-packages")


def starts_in_eval(built) -> bool:
    """A construction (`model_classes.Built`), in an installed package, of that package's
    class whose `__init__` switches the instance to eval mode."""
    call = built.call
    if built.cls is not None or not isinstance(call, ast.Call):
        return False
    name = built.resolver.qualname(call.func)
    requester = built.index.requester
    # Only a class of the installed package being checked: other packages' classes (torch's,
    # a model zoo's) would be parsed for every construction of them, for no case seen.
    if not name or name.split(".")[0] != _installed_package(requester):
        return False
    found = installed_class(name, built.index.project, requester)
    return found is not None and init_sets_eval(found[0])


def _installed_package(path: str) -> str | None:
    """The top-level package an installed file belongs to (the directory under site-packages)."""
    parts = os.path.abspath(path).split(os.sep)
    for i, part in enumerate(parts[:-2]):
        if part in _INSTALL_DIRS:
            return parts[i + 1]
    return None


__all__ = ["starts_in_eval"]
