"""ATen ops with several graph overloads, called in each form that picks another one.

One list, two readers: the op table's forms probe (`scripts/generate_op_table.py`) exports a
module calling every form to record which overloads graphs carry (`carried`), and QL101's
runtime check (`qlint.runtime.graphs`) exports a module calling only the forms of the op a
finding names, to show on real graphs which overloads a table's keys leave unmatched. A
second list, `CARRIERS`, only the runtime check reads: ops no probe flow meets, called so
their packets have real nodes to be checked against.

User code compares node targets with a packet beside one overload (`aten.arange` next to
`aten.arange.start`); whether that leaves an overload graphs carry unmatched depends on
every form an export records: `arange(n)` is `.default`, `arange(a, b)` `.start`,
`arange(a, b, s)` `.start_step`. Each output is computed on its own, so a form's shape
never constrains another's; the first dimension is dynamic in one of the flows, where
sizes become `sym_size.int` nodes and factories take symbolic sizes.

Torch is imported inside the functions: the list itself is plain data the linter could
read, and the runtime worker pays for torch only when it builds a module.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any, NamedTuple


class Form(NamedTuple):
    ops: tuple[str, ...]  # the ATen ops (packet names) the call is there for
    call: Callable[[Any], Any]  # takes the `Inputs` of one forward


class Inputs(NamedTuple):
    module: Any  # the forms module: its convolutions
    x: Any  # (n, 4)
    i: Any  # index tensor [0, 2]
    s: Any  # (n, 4), a tensor operand where `x` has a scalar one
    n: Any  # x.size(0): symbolic in the dynamic flow
    c: Any  # (n, 3, 4), the convolutions' input


def _t():
    import torch

    return torch


# Grouped as the probe's outputs are; the order is the probe's.
FORMS: dict[str, tuple[Form, ...]] = {
    "factories": (
        Form(("arange",), lambda a: _t().arange(a.n)),
        Form(("arange",), lambda a: _t().arange(1, a.n + 1)),
        Form(("arange",), lambda a: _t().arange(0, 2 * a.n, 2)),
        Form(("full",), lambda a: _t().full((a.n,), 2.0)),
        Form(("zeros",), lambda a: _t().zeros(a.n)),
        Form(("ones",), lambda a: _t().ones(a.n)),
        Form(("empty", "fill", "fill_"), lambda a: _t().empty(a.n).fill_(0)),
        Form(("zeros_like",), lambda a: _t().zeros_like(a.x)),
        Form(("ones_like",), lambda a: _t().ones_like(a.x)),
        Form(("full_like",), lambda a: _t().full_like(a.x, 3.0)),
        Form(("new_zeros",), lambda a: a.x.new_zeros(a.n)),
        Form(("new_ones",), lambda a: a.x.new_ones(a.n)),
        Form(("new_full",), lambda a: a.x.new_full((a.n,), 1.0)),
    ),
    "pieces": (
        Form(("split",), lambda a: a.x.split(2, 1)),
        Form(("split", "split_with_sizes"), lambda a: a.x.split([1, 3], 1)),
        Form(("chunk", "split"), lambda a: a.x.chunk(2, 1)),
        Form(("unbind",), lambda a: a.x.unbind(1)),
        Form(("slice",), lambda a: a.x[:, 1:3]),
        Form(("select",), lambda a: a.x.select(1, 0)),
        Form(("select", "slice"), lambda a: a.x[:, 0]),
        Form(("index",), lambda a: a.x[a.i]),
        Form(("narrow", "slice"), lambda a: a.x.narrow(1, 0, 2)),
        Form(("index_select",), lambda a: a.x.index_select(1, a.i)),
    ),
    "reductions": (
        Form(("clamp",), lambda a: a.x.clamp(0, 1)),
        Form(("clamp",), lambda a: a.x.clamp(min=a.s)),
        Form(("clamp_min", "clamp"), lambda a: a.x.clamp_min(0)),
        Form(("clamp_max", "clamp"), lambda a: a.x.clamp_max(1)),
        Form(("sum",), lambda a: a.x.sum()),
        Form(("sum",), lambda a: a.x.sum(1)),
        Form(("sum",), lambda a: a.x.sum((0, 1))),
        Form(("mean",), lambda a: a.x.mean()),
        Form(("mean",), lambda a: a.x.mean(1)),
        Form(("amax",), lambda a: a.x.amax(1)),
        Form(("max",), lambda a: a.x.max()),
        Form(("max",), lambda a: a.x.max(1)),
        Form(("min",), lambda a: a.x.min()),
        Form(("min",), lambda a: a.x.min(1)),
        Form(("var",), lambda a: a.x.var(1)),
        Form(("std",), lambda a: a.x.std()),
    ),
    "arithmetic": (
        Form(("div",), lambda a: a.x / 2),
        Form(("div",), lambda a: a.x / a.s),
        Form(("div",), lambda a: _t().div(a.x, 2, rounding_mode="floor")),
        Form(("div",), lambda a: _t().div(a.x, a.s, rounding_mode="trunc")),
        Form(("mul",), lambda a: a.x * 3),
        Form(("mul",), lambda a: a.x * a.s),
        Form(("add",), lambda a: a.x + 1),
        Form(("add",), lambda a: a.x + a.s),
        Form(("sub",), lambda a: a.x - 1),
        Form(("sub",), lambda a: a.x - a.s),
        Form(("pow",), lambda a: a.x.pow(2)),
        Form(("pow",), lambda a: a.x.pow(a.s)),
        # Core ATen turns the scalar into a `scalar_tensor` node.
        Form(("where", "gt", "scalar_tensor"), lambda a: _t().where(a.x > 0, a.x, 0.0)),
        Form(("gt",), lambda a: a.x > a.s),
        Form(("eq",), lambda a: a.x == 0),
        Form(("eq",), lambda a: a.x.eq(a.s)),
    ),
    "convs": (
        Form(("conv1d", "convolution"), lambda a: a.module.c1(a.c)),
        Form(("conv1d", "convolution"), lambda a: a.module.same1(a.c)),
        Form(
            ("conv3d", "convolution"),
            lambda a: a.module.c3(a.x.reshape(1, 1, 1, a.n, 4).expand(1, 3, 1, a.n, 4)),
        ),
    ),
}


def _assigned(a: Inputs):
    y = a.x.clone()
    y[:, 1:3] = a.s[:, :2]
    return y


def _copied(a: Inputs):
    return a.x.clone().copy_(a.s)


# Ops that none of the probe's flows meets, each in the pattern that puts it in a real graph.
# The probe leaves them out: the schema rule settles `carried` for all but `mm`, whose
# `.dtype` (`torch.mm(..., out_dtype=)`) graphs carry too but no CPU kernel runs, so a probe
# of runnable forms would record `.default` alone. QL101's runtime check exports them
# (`qlint.runtime.graphs`, `carriers:<op>`) so a packet of theirs has nodes to be counted
# against. Which flow carries each (torch 2.13): `t`, `tril`, `triu` all but core ATen,
# which decomposes them; `mm` and `alias` only core ATen (`matmul` and `detach` before it);
# `copy` and `slice_scatter` once functionalised (core ATen, ATen IR: `copy_` and slice
# assignment before); `_unsafe_view` only the ATen IR of `run_decompositions({})`, as
# FlatFlow exports: a reshape that cannot be a view is `clone` + `_unsafe_view` there,
# `view` in core ATen.
CARRIERS: dict[str, tuple[Form, ...]] = {
    "pointwise": (
        Form(("cos",), lambda a: a.x.cos()),
        Form(("sin",), lambda a: a.x.sin()),
        Form(("bitwise_not",), lambda a: ~(a.x > 0)),
        Form(("cumsum",), lambda a: a.x.cumsum(1)),
        Form(("tril",), lambda a: a.x.tril()),
        Form(("triu",), lambda a: a.x.triu(1)),
    ),
    "matrices": (
        Form(("t",), lambda a: a.x.t()),
        Form(("mm",), lambda a: a.x @ a.s.t()),
        Form(("_unsafe_view",), lambda a: a.x.t().reshape(-1)),
    ),
    "functionalised": (
        Form(("alias",), lambda a: a.x.detach()),
        Form(("copy",), _copied),
        Form(("slice_scatter", "copy"), _assigned),
    ),
}


def covered_ops() -> frozenset[str]:
    """The ATen ops some probe form is there for."""
    return _ops(FORMS)


def carried_ops() -> frozenset[str]:
    """The ATen ops some carrier form is there for."""
    return _ops(CARRIERS)


def _ops(table: dict[str, tuple[Form, ...]]) -> frozenset[str]:
    return frozenset(op for forms in table.values() for form in forms for op in form.ops)


def forms_model(ops: Iterable[str] | None = None, table: dict[str, tuple[Form, ...]] = FORMS):
    """The module calling every form of `table` (`ops` None: the probe's), or only those
    there for one of `ops`, and its inputs: `x` (6, 4), an index tensor, `s` (6, 4). Export
    it with the first dimension of `x` and `s` dynamic (min 3: `x[:, 0]` and the splits of a
    1-row input would specialise) for the dynamic flow."""
    import torch
    import torch.nn as nn

    wanted = None if ops is None else frozenset(ops)
    groups = tuple(
        (name, tuple(f for f in forms if wanted is None or wanted.intersection(f.ops))) for name, forms in table.items()
    )
    groups = tuple((name, forms) for name, forms in groups if forms)

    class Forms(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.c1 = nn.Conv1d(3, 4, 3)
            self.same1 = nn.Conv1d(3, 3, 3, padding="same")
            self.c3 = nn.Conv3d(3, 4, 1)

        def forward(self, x, i, s):
            n = x.size(0)
            c = x.unsqueeze(0).expand(3, n, 4).transpose(0, 1)
            inputs = Inputs(self, x, i, s, n, c)
            return tuple(tuple(form.call(inputs) for form in forms) for _, forms in groups)

    args = (torch.randn(6, 4), torch.tensor([0, 2]), torch.randn(6, 4))
    return Forms, args
