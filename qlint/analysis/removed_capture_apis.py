"""The capture APIs torch removed, and how a call of each maps onto `torch.export.export`.

torch 2.13 has neither `torch._export.capture_pre_autograd_graph` nor
`torch.export.export_for_training` (checked with `hasattr` on the installed wheel; the
runtime check re-checks it). Both traced the same pre-dispatch ATen graph that
`torch.export.export` produces now, but they returned different things:
`capture_pre_autograd_graph` a `GraphModule` (so its replacement needs `.module()`), and
`export_for_training` an `ExportedProgram`, exactly what `torch.export.export` returns.

The mapping is pure data plus one function that edits a call's arguments; the rule decides
where calls are and how safe the whole fix is.
"""

from __future__ import annotations

import ast
from typing import TYPE_CHECKING

from qlint.diagnostic import Edit, Position, Range
from qlint.value_classes import value_class

if TYPE_CHECKING:
    from qlint.analysis.context import FileContext

REPLACEMENT = "torch.export.export"
# The release that removed both APIs: version-gated code is judged by the branch it takes.
TARGET_RELEASE = (2, 13)


@value_class(frozen=True)
class RemovedApi:
    qualname: str
    returns: str  # what the old API returned: "GraphModule" or "ExportedProgram"
    # Old parameter names, positional order first; `keyword_only_from` is the first position
    # `torch.export.export` takes only by keyword.
    positional: tuple[str, ...]
    keyword_only_from: int
    renamed: dict[str, str]  # old keyword -> `torch.export.export` keyword

    @property
    def needs_module(self) -> bool:
        return self.returns == "GraphModule"

    @property
    def short(self) -> str:
        return self.qualname.rpartition(".")[2]

    @property
    def module(self) -> str:
        return self.qualname.rpartition(".")[0]


# torch 2.5's signatures: capture_pre_autograd_graph(f, args, kwargs=None, dynamic_shapes=None);
# export_for_training(mod, args, kwargs=None, *, dynamic_shapes=None, strict=...,
# preserve_module_call_signature=()). torch.export.export(mod, args, kwargs=None, *,
# dynamic_shapes, strict, preserve_module_call_signature, ...) takes all of them.
APIS: dict[str, RemovedApi] = {
    api.qualname: api
    for api in (
        *(
            RemovedApi(
                f"{module}.capture_pre_autograd_graph",
                "GraphModule",
                ("f", "args", "kwargs", "dynamic_shapes"),
                3,
                {"f": "mod", "args": "args", "kwargs": "kwargs", "dynamic_shapes": "dynamic_shapes"},
            )
            # Scripts try `torch.export` as the fallback of the `torch._export` import
            # (DiffuLex Edge's quantizer): torch 2.13's `torch.export` has no such name (checked),
            # so that fallback raises too and no branch of the shim works.
            for module in ("torch._export", "torch.export")
        ),
        *(
            RemovedApi(
                f"{module}.export_for_training",
                "ExportedProgram",
                ("mod", "args", "kwargs"),
                3,
                {
                    name: name
                    for name in ("mod", "args", "kwargs", "dynamic_shapes", "strict", "preserve_module_call_signature")
                },
            )
            # Scripts also reach for it through the private `torch._export` (Intel's model zoo),
            # which torch 2.13 does not have either: the same call, the same replacement.
            for module in ("torch.export", "torch._export")
        ),
    )
}
NAMES = frozenset(api.short for api in APIS.values())
# Spellings torch.export never had (the API was `torch._export`'s): "gone" would misdescribe them.
ABSENT = frozenset({"torch.export.capture_pre_autograd_graph"})


@value_class
class CallRewrite:
    edits: list[Edit]
    level: str  # "safe" | "unsafe" | "display"
    reason: str = ""


def rewrite_call(ctx: FileContext, call: ast.Call, api: RemovedApi, func_text: str | None) -> CallRewrite:
    """Edits that turn `old(...)` into `torch.export.export(...)` (+ `.module()` where the old
    API returned a GraphModule). `func_text` replaces the callee; None leaves it as written.

    Arguments that cannot be mapped make the rewrite display-only; arguments hidden in
    `*args`/`**kwargs` that may not map make it unsafe.
    """
    edits: list[Edit] = []
    level, reason = "safe", ""
    if func_text is not None:
        edits.append(Edit(ctx.range_of(call.func), func_text))
    for i, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            if len(api.positional) > api.keyword_only_from:
                level, reason = "unsafe", f"`*{ctx.source_of(arg.value)}` may hold arguments that must become keywords"
            continue
        if i >= len(api.positional):
            return CallRewrite([], "display", f"`{api.short}` took at most {len(api.positional)} positional arguments")
        if i >= api.keyword_only_from:
            start = ctx.range_of(arg).start
            edits.append(Edit(Range(start, start), f"{api.positional[i]}="))
    for kw in call.keywords:
        if kw.arg is None:
            if any(old != new for old, new in api.renamed.items()):
                level, reason = (
                    "unsafe",
                    (f"`**{ctx.source_of(kw.value)}` may name parameters `{REPLACEMENT}` spells differently"),
                )
            continue
        new = api.renamed.get(kw.arg)
        if new is None:
            return CallRewrite([], "display", f"`{api.short}` keyword `{kw.arg}` has no counterpart in `{REPLACEMENT}`")
        if new != kw.arg:
            start = ctx.range_of(kw).start
            edits.append(Edit(Range(start, Position(start.row, start.col + len(kw.arg))), new))
    if api.needs_module:
        end = ctx.range_of(call).end
        edits.append(Edit(Range(end, end), ".module()"))
    return CallRewrite(edits, level, reason)
