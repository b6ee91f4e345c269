"""The mode a construction of an installed package's class starts in.

ExecuTorch's installed `examples/qualcomm/util_scripts/gen_etrecord.py` captures
`SimpleModel()` from `backends/qualcomm/tests/models.py`, whose `__init__` ends with
`self.eval()`. The installed `executorch/` has no `__init__.py`, so the project lookup does
not find the class; its source beside the project (`installed_classes`) says both what it
holds and the mode it starts in.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_apis import init_sets_eval


def starts_in_eval(built) -> bool:
    """A construction (`built_models.Built`), in an installed package, of that package's
    class whose `__init__` switches the instance to eval mode."""
    call = built.call
    if built.cls is not None or not isinstance(call, ast.Call):
        return False
    name = built.resolver.qualname(call.func)
    # Only a class of the installed package being checked: other packages' classes (torch's,
    # a model zoo's) would be parsed for every construction of them, for no case seen.
    # Asked of the check's class index, which notes what depends on the file checked.
    if not name or name.split(".")[0] != built.index.installed_package():
        return False
    found = built.index.installed_source(name)
    return found is not None and init_sets_eval(found[0])


__all__ = ["starts_in_eval"]
