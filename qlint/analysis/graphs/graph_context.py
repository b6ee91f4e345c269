"""Graphs that really carry packets, where comparing with or inserting packets is right.

- Legacy FX graph mode (`symbolic_trace`, `prepare_fx`) records the callables user code
  called, packets included.
- Graphs converted from TorchScript IR (`torch._C.Node`), which are re-traced before any
  matcher sees them.
- Compiler-internal IRs (Dynamo's output graph, Inductor's pre- and post-grad graphs) are
  re-traced or lowered by code that accepts packets and overloads alike; Inductor's own
  passes insert packets and match them.

A module is judged by what it imports, so the decision costs one look at its scope.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.context import FileContext
from qlint.analysis.identifier_text import normalised_bytes
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.resolver import dotted_parts

_LEGACY = (
    "torch.fx.symbolic_trace",
    "torch.fx.Tracer",
    "torch.fx._symbolic_trace",
    "torch.ao.quantization.quantize_fx",
    "torch.ao.quantization.fx",
    "torch.quantization.quantize_fx",
    "torch.ao.ns",
)
# Any of these means graphs from export, Dynamo or PT2E flow through the module.
_MODERN = (
    "torch.export",
    "torch._export",
    "torch._dynamo",
    "torch._inductor",
    "torch.fx.experimental.proxy_tensor",
    "torch._functorch",
    "torchao.quantization.pt2e",
    "torch.ao.quantization.quantize_pt2e",
    "torch.ao.quantization.pt2e",
    "executorch",
)
COMPILER_PACKAGES = ("torch._inductor.", "torch._dynamo.", "torch._functorch.")
_INDUCTOR_PASS_APIS = ("torch._inductor.pattern_matcher", "torch._inductor.lowering", "torch._inductor.fx_passes")
_CACHE_KEY = "graph_context"
COMPILER_INTERNAL = "compiler-internal graph (Dynamo/Inductor), which accepts packets"
LEGACY_FX = "legacy FX graph mode, whose graphs carry packets"
_TRACERS = ("symbolic_trace", "export", "make_fx")


# What a module's text holds (or its path, for a compiler's or the numeric suite's own modules,
# which import each other relatively) whenever `packet_graph_context` can be anything but
# None: every import of a name `_classify` asks about spells one of these.
_MARKERS = (b"fx", b"symbolic_trace", b"Tracer", b"torch.ao", b"torch._C", b"_inductor")
_MARKED_DIRS = ("_inductor", "_dynamo", "_functorch", f"{os.sep}ns{os.sep}")
# A run of word characters of each marker (`torch.ao`: `ao`): a text holding the marker holds
# it inside one of its words, so a module whose words (`project_words`) hold none of these
# holds no marker, and `may_carry_packets` is False for it unless its path is marked.
MARKER_WORDS = (b"fx", b"symbolic_trace", b"Tracer", b"ao", b"_C", b"_inductor")


def may_carry_packets(data: bytes, path: str) -> bool:
    """Whether the module with these bytes may be one whose graphs carry packets: asked by a
    scan of many modules before parsing any (most of a tree holds none of the markers). Read
    as `packet_graph_context` reads the text (`FileContext.words`: `fx.symbolic_trace` with a fullwidth
    `s` is `fx.symbolic_trace`) where the raw bytes hold none (most texts are ASCII: O(1))."""
    return (
        any(m in data for m in _MARKERS)
        or marked_path(path)
        or (not data.isascii() and any(m in normalised_bytes(data) for m in _MARKERS))
    )


def marked_path(path: str) -> bool:
    """Whether graphs of the module at `path` may carry packets whatever its text holds."""
    return any(d in path for d in _MARKED_DIRS)


def compiler_internal(module: str | None) -> bool:
    """Modules of torch's own compilers, known from the module name alone."""
    return bool(module) and module.startswith(COMPILER_PACKAGES)


def packet_graph_context(ctx: FileContext) -> str | None:
    """Why graphs in this module carry packets, or None when they carry overloads."""
    if _CACHE_KEY not in ctx.cache:
        ctx.cache[_CACHE_KEY] = _classify(ctx)
    return ctx.cache[_CACHE_KEY]


def _classify(ctx: FileContext) -> str | None:
    module = ctx.module or ""
    imports = [*ctx.scope.imports.values(), *ctx.scope.imported_modules]
    if compiler_internal(module) or any(n.startswith(_INDUCTOR_PASS_APIS) for n in imports):
        return COMPILER_INTERNAL
    if "torch._C.Node" in ctx.words or "torch._C.Graph" in ctx.words:
        return "graph converted from TorchScript IR and re-traced"
    if not (any(n.startswith(_LEGACY) for n in imports) or "symbolic_trace" in ctx.words):
        return None
    if any(_modern(n) for n in imports):
        return None  # what the module's code names cannot make it legacy-only
    # An attribute ends on the row its name is written on: only those rows are walked.
    rows = ctx.lines_containing(*_TRACERS)
    names = imports + [
        ".".join(dotted_parts(n, tail=True))
        for body in bodies(ctx.tree, ctx.scope, ctx.cache)
        for n in body.nodes(rows)
        if isinstance(n, ast.Attribute) and n.attr in _TRACERS
    ]
    legacy = any(n.startswith(_LEGACY) or n.endswith("symbolic_trace") for n in names)
    modern = any(_modern(n) for n in names)
    return LEGACY_FX if legacy and not modern else None


def _modern(name: str) -> bool:
    return name.startswith(_MODERN) or name.endswith((".export", ".make_fx"))
