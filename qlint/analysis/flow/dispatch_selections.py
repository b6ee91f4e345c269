"""Which calls of a helper reach the capture behind a registry's dispatch (issue 14,
`decorator_registries.Selection`): a call whose argument is a construction of a class the
registry does not hold under the selected keys never runs the class's method, so its caller
vouches for nothing and needs to vouch for nothing. Asked by the caller verdicts
(`caller_verdicts`) of each call they read, only of registries nothing but their decorator
fills (`registry_closure.closed`).
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.flow.decorator_registries import class_key
from qlint.analysis.flow.function_flows import CallSite, FunctionFlow
from qlint.analysis.flow.model_values import CONSTRUCTED, PARAM
from qlint.analysis.flow.project_callers import ProjectCall


def reaching_selection(ctx: FileContext, found: ProjectCall, node: ast.AST) -> tuple[int, frozenset[str]] | None:
    """The parameter of `node` and the class keys that must be passed there for the found call
    (a registry's dispatch in `node`) to reach the capture, when the registry is closed."""
    selection = found.site.selection if found.site is not None else None
    from qlint.analysis.flow.registry_closure import closed

    if selection is None or selection.owner is not node or not closed(ctx, selection):
        return None
    return selection.index, selection.keys


def forwarded(found: ProjectCall, node: ast.AST, select: tuple[int, frozenset[str]]):
    """`select` on the caller's own parameter, when the found call passes that parameter, as
    it came, for the selecting one (`def quantize_for(model, config): prepare(model, config)`)."""
    index, keys = select
    site = found.site
    origins = site.origins.get(index) if site is not None and site.origins else None
    if not origins or any(o.kind != PARAM or o.node is not node or o.index is None for o in origins):
        return None
    indices = {o.index for o in origins}
    return (indices.pop(), keys) if len(indices) == 1 else None


def keyed_elsewhere(ctx: FileContext, site: CallSite | None) -> bool:
    """A registry's dispatch whose key, known at the call, selects another class, in a closed
    registry (`decorator_registries.Selection` without a parameter)."""
    selection = site.selection if site is not None else None
    from qlint.analysis.flow.registry_closure import closed

    return selection is not None and selection.index is None and closed(ctx, selection)


def site_of(flows: list[FunctionFlow], func: ast.AST, call: ast.Call) -> CallSite | None:
    return next((c for f in flows for c in f.calls if c.call is call and c.callee is func), None)


def selected_out(site: CallSite | None, select: tuple[int, frozenset[str]]) -> bool:
    """The call passes, for the selecting parameter, only constructions of classes that are
    not among the keys: `type(config)` picks another class of the registry."""
    index, keys = select
    origins = site.origins.get(index) if site is not None and site.origins else None
    if not origins:
        return False
    return all(
        o.kind == CONSTRUCTED and getattr(o.built, "cls", None) is not None and class_key(o.built.cls) not in keys
        for o in origins
    )
