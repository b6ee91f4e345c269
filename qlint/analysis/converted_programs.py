"""Programs exported or lowered from a converted model compute what the converted model computes.

QL204 lets a test that only inspects the converted graph's structure convert without
calibration, and reports one whose numbers matter. A test often checks those numbers on a
program derived from the converted model rather than on the model itself: ExecuTorch's
XNNPACK tests export it, hand it to `to_edge(...).transform(...)` and compare the lowered
program's outputs with eager ones. These steps change the graph's form, not the quantization
parameters convert chose, so the walk lets the derived value stand for the converted model.

Only converted models and a helper's parameters are carried: a parameter may be the converted
model its callers pass (`lower_and_compare(module=edge)` runs `module` when it runs what it
lowered from it). A prepared model handed to these calls already counts as run (an export is a
use of it), so carrying its token would change nothing.
"""

from __future__ import annotations

from collections.abc import Iterable

# Functions that take a captured program (or a module) and return one lowered from it.
LOWERING_FUNCTIONS = frozenset(
    {
        "executorch.exir.to_edge",
        "executorch.exir.to_edge_transform_and_lower",
        "executorch.exir.program.to_edge",
        "executorch.exir.program.to_edge_transform_and_lower",
        "executorch.exir.program._program.to_edge",
        "executorch.exir.program._program.to_edge_transform_and_lower",
        "executorch.exir.backend.backend_api.to_backend",
    }
)
# Methods of an ExportedProgram / EdgeProgramManager / ExecutorchProgramManager that return
# the same program in another form.
LOWERING_METHODS = frozenset(
    {
        "module",
        "exported_program",
        "run_decompositions",
        "transform",
        "to_backend",
        "to_executorch",
        "to_edge",
    }
)


def standing_for(tokens: Iterable, kinds: tuple[str, ...]) -> frozenset:
    """The tokens among `tokens` a program derived from them stands for (`kinds`: converted
    model, parameter)."""
    return frozenset(t for t in tokens if t.kind in kinds)


def is_lowering_function(qualname: str | None) -> bool:
    return qualname in LOWERING_FUNCTIONS


def is_lowering_method(attr: str) -> bool:
    return attr in LOWERING_METHODS
