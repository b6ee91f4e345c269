"""Whether a call's path through a package's attributes reaches the package's module:
`import pkg`, then `pkg.checks.assert_nodes(...)` (issue 14).

`import pkg` binds the package alone; `pkg.checks` is the submodule once anything in the
process has imported it (the package's `__init__` itself, another module, a test runner's
collection), and an AttributeError before. qlint cannot see the process: it takes the path to
work wherever the project has the module `pkg.checks`, whether or not `__init__` imports it (a
call that raised would fail the test on its own; the chain in a suite that runs is one that
works). It does not take it where the package's `__init__` binds `checks` to something else
(`from .checks import checks`, `checks = None`, `def checks()`): the attribute is then that,
not the module, unless the module asking imports the submodule itself (`import pkg.checks`;
the checked module, or another on a helper chain, whose summary keeps the modules it imports),
which sets the attribute when it loads the submodule, and `__init__` did not load it first
(`from .checks import checks`).
"""

from __future__ import annotations

import os
from collections.abc import Callable

from qlint.analysis.graphs.forwarding_texts import searched_text, text_names
from qlint.analysis.graphs.forwarding_trails import module_file, read_module


def runs_through(fw, project, scope, head: str, middle: list[str]) -> bool:
    """Whether the path `head.<middle>...` (each of `middle` an attribute of the module
    before it) may reach the module `head.<middle>` of the module of `scope`: no package on
    the way binds the next name to anything but its submodule (a dependency of the answer:
    `read_module`)."""
    return _runs_through(
        lambda module, requester: module_file(fw, module, requester),
        lambda path: read_module(fw, project, path),
        project,
        scope,
        head,
        middle,
    )


def runs_through_project(project, requester: str, scope, head: str, middle: list[str]) -> bool:
    """`runs_through` for a reader without the helper search (`inherited_sinks`): modules found
    as the check finds them, each `__init__` read a dependency of the check of `requester`."""
    return _runs_through(
        project.find_module_in_check,
        lambda path: project.record_read(requester, path, project.digest(path)),
        project,
        scope,
        head,
        middle,
    )


def _runs_through(find: Callable, read: Callable, project, scope, head: str, middle: list[str]) -> bool:
    imported = scope.imported_modules
    package = head
    for name in middle:
        module = f"{package}.{name}"
        bound = _bound_otherwise(find, read, project, package, name, module, scope.path)
        if bound == _FROM_IT or (bound and module not in imported):
            return False
        package = module
    return True


# How a package's `__init__` binds a submodule's name otherwise: to a name of another module or
# a value of its own, which a later first import of the submodule replaces (`import pkg.checks`
# in the module asking: the import system sets the package's attribute when it loads one); or
# to a name of the submodule itself (`from .checks import checks`), which loaded it first, so
# that no later import sets the attribute again.
_OTHER, _FROM_IT = 1, 2


def _bound_otherwise(
    find: Callable, read: Callable, project, package: str, name: str, module: str, requester: str
) -> int:
    path = find(package, requester)
    if path is None or os.path.basename(path) != "__init__.py":
        return 0
    from qlint.analysis.graphs.packet_modules import may_be_assigned

    read(path)
    defined, _, imports = text_names(project, path)
    bound = imports.get(name, module)
    if bound.startswith(module + "."):
        return _FROM_IT
    if name in defined or bound != module or may_be_assigned(searched_text(project, path), name):
        return _OTHER
    return 0
