"""Whether a module holding none of QL101's trigger texts may reach a sink helper through a
module it imports (`from pkg import checks`, or `import pkg.checks as checks`), then calls
(`checks.assert_nodes(case, gm, {aten.relu: 1})`) or subclasses (`class T(mixins.OpChecks,
TestCase)`): `sinks._untriggered` asks it when no name the module imports leads to one.

Such modules are most of a project (ExecuTorch: 2,800 of 3,800), and nearly all of them import
a module of it by name (`from executorch.backends.arm.test import common`): a scan of each
text for the paths called on those names cost ao 3.3% of a cold run. With the project's index
(`wrapper_index`) the question is a set lookup per import instead: the index keeps the stems
of the modules defining a sink helper or a class holding one (`sink_index.helper_module_stems`),
and only an import ending in one of them (ExecuTorch: a handful of files) goes on to the
helper search, gate first (`sinks.matches_through_imports`, as a file holding a trigger text).
Without the index (one file, an editor's buffer) the text is read for a path called on, or a
base written under, a name it imports, as the helper search reads them.

A package bound by a plain import (`import pkg`, or `import pkg as p`), then a path through
one of its modules (`pkg.checks.assert_nodes(...)`, `class T(pkg.checks.NodeChecks)`): the
package's stem is one the index keeps too (`sink_index.helper_module_stems`), and the paths
called on it are asked as of any import. Whether Python lets the path run (the package's
`__init__` binding `checks` to something else) is the search's to say
(`helper_lookup.module_attribute`).

A plain import of a module under a package (`import pkg.checks`, then
`pkg.checks.assert_nodes(...)` or `class T(pkg.checks.NodeChecks)`) binds only `pkg`, whose
stem no helper's module has: its whole dotted name, read from the same statements
(`plain_dotted_imports`), is what the stems are asked, and the paths called on `pkg` that run
through it what the index's helpers are.
"""

from __future__ import annotations

from qlint.analysis.graphs.called_names import attributes_called
from qlint.analysis.graphs.forwarding_texts import of_torch
from qlint.analysis.names.text_imports import class_bases, file_imports, plain_dotted_imports


def imports_helper_module(text: str, path: str, index) -> bool:
    """Whether the text imports, under a name of its own, a module that may define a sink
    helper (with `index`: its stem is one the index keeps, and a path the text calls on the
    name, or a base it writes under it, ends in one of the index's helpers), and uses that
    name as the head of a dotted call or base."""
    imports = file_imports(text, path)
    plain = plain_dotted_imports(text)
    if index is not None:
        return any(
            _reaches_helper(text, name, full, index)
            for name, full in imports
            if index.may_lead_to_module(full) and not of_torch(full)
        ) or any(
            _reaches_helper(text, name, name, index, dotted.split(".")[1:])
            for name, dotted in plain
            if index.may_lead_to_module(dotted) and not of_torch(dotted)
        )
    heads = [name for name, full in imports if name != full and not of_torch(full)]
    heads += [name for name, dotted in plain if not of_torch(dotted)]
    # A package bound by `import pkg`: a path through one of its modules (`pkg.checks.f`).
    packages = [name for name, full in imports if name == full and not of_torch(full)]
    if not heads and not packages:
        return False
    bases = class_bases(text)
    based = {parts[0] for parts in bases if len(parts) > 1}
    through = {parts[0] for parts in bases if len(parts) > 2}
    return any(name in based or attributes_called(text, name) for name in heads) or any(
        name in through or any(len(tail) > 1 for tail in attributes_called(text, name)) for name in packages
    )


def _reaches_helper(text: str, name: str, full: str, index, through: list[str] | None = None) -> bool:
    """`helper_gate`'s questions of one import (a function called `mod.helper(...)`, a class
    subclassed as `mod.Mixin`), asked of the few imports the stems let through. `through`:
    the parts a path on `name` runs through first (`pkg.checks.f` for `import pkg.checks`:
    `["checks"]`), the module the stems let through."""
    lead = tuple(through or ())
    if any(
        tail[: len(lead)] == lead and len(tail) > len(lead) and index.may_lead_to_function(".".join((full, *tail)))
        for tail in attributes_called(text, name)
    ):
        return True
    return any(
        parts[0] == name and parts[1 : 1 + len(lead)] == lead and index.may_lead_to_class(".".join((full, *parts[1:])))
        for parts in class_bases(text)
        if len(parts) > 1 + len(lead)
    )
