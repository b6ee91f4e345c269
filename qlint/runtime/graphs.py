"""Reference graphs that carry real ops, built once per worker process and reused.

Each family runs a small reference model through the real pipeline and yields several
*forms* of the result, because the same op shows up differently depending on a graph's
history: what `convert_pt2e` emits, the same module re-exported with `torch.export`
(packets inserted by a pass become overloads), core ATen after `run_decompositions`, and
ExecuTorch's edge dialect after `to_edge` when executorch is installed.

Families:
- `xnnpack_static` / `xnnpack_dynamic`: `quantized_decomposed` q/dq ops from the XNNPACK
  quantizer copy in torchao (static per-channel; dynamic linear).
- `affine_static` / `affine_dynamic`: `torchao.*_affine` ops through a small quantizer that
  annotates linears with `AffineQuantizedMinMaxObserver` (dynamic: a placeholder observer).
- `zoo`: a module calling ~60 common aten ops, exported in eval and train mode, with a
  dynamic batch, and decomposed to core ATen.
- `forms:<op>`: the op table's call forms of one ATen op (`qlint.runtime.call_forms`:
  `arange(n)`, `arange(a, b)`, `arange(a, b, s)`; splits; reductions with and without dims;
  arithmetic by scalar and tensor ...), exported as the probe does (eval, train, core ATen,
  a dynamic first dimension): the overloads graphs carry beside the one a table keys on.
- `carriers:<op>`: the same for an op of one graph overload that no other family carries
  (`call_forms.CARRIERS`: `x.cos()`, `x.t()`, `x.detach()` for `alias` in core ATen, slice
  assignment for `slice_scatter` ...), with the ATen IR of `run_decompositions({})` too.
- `edge_*`: `to_edge` of the above.
"""

from __future__ import annotations

import copy
import functools
from collections.abc import Callable
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

_SEED = 0


@dataclass
class GraphForm:
    label: str
    module: torch.fx.GraphModule  # runnable with `inputs`
    inputs: tuple

    def call_function_nodes(self) -> list[torch.fx.Node]:
        return [n for n in self.module.graph.nodes if n.op == "call_function"]

    def copy(self) -> GraphForm:
        return GraphForm(self.label, copy.deepcopy(self.module), self.inputs)


class _ConvLinear(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 4, 3)
        self.linear = nn.Linear(4 * 6 * 6, 5)

    def forward(self, x):
        return self.linear(torch.relu(self.conv(x)).flatten(1))


class _MLP(nn.Module):
    def __init__(self):
        super().__init__()
        self.fc1 = nn.Linear(8, 8)
        self.fc2 = nn.Linear(8, 4)

    def forward(self, x):
        return self.fc2(torch.relu(self.fc1(x)))


class _Zoo(nn.Module):
    """Calls the aten ops backends match most; every branch reaches an output."""

    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 8, 3, padding=1)
        self.bn = nn.BatchNorm2d(8)
        self.deconv = nn.ConvTranspose2d(8, 4, 2, stride=2)
        self.conv1d = nn.Conv1d(4, 4, 3, padding=1)
        self.linear = nn.Linear(16, 10)
        self.embedding = nn.Embedding(10, 16)
        self.norm = nn.LayerNorm(10)
        self.dropout = nn.Dropout(0.5)

    def forward(self, x, seq, idx):  # x: N,3,16,16  seq: N,4,16  idx: N
        y = F.hardtanh(torch.relu(self.bn(self.conv(x))))
        y = F.hardswish(y) + torch.sigmoid(y) * torch.tanh(y) - F.silu(y)
        y = F.adaptive_avg_pool2d(F.avg_pool2d(F.max_pool2d(y, 2), 2), (4, 4))
        y = F.interpolate(self.deconv(self.dropout(y)), scale_factor=2.0, mode="nearest")
        y = F.leaky_relu(F.pad(y, (1, 1, 1, 1)), 0.1) / 2.0
        z = self.conv1d(seq)
        z = torch.cat([z, z.clamp(-1, 1)], dim=1).transpose(1, 2)
        z = z.permute(0, 2, 1).reshape(z.shape[0], 8, 16).view(-1, 16)
        w = self.linear(z.view(idx.shape[0], 8, 16) + self.embedding(idx).unsqueeze(1))
        w = F.gelu(self.norm(w)).softmax(dim=-1)
        m = torch.matmul(w, w.transpose(-1, -2)) + torch.bmm(w, w.transpose(1, 2))
        a, b = m.chunk(2, dim=-1)
        c = torch.stack([a, b]).sum(0)
        d = c.mean(dim=-1, keepdim=True) * c.select(2, 0).unsqueeze(-1).squeeze(-1).unsqueeze(-1)
        r = torch.where(d > 0, d.exp(), d.neg().abs().sqrt()).rsqrt() ** 2
        r = r.amax(dim=1) + r.max(dim=1).values + torch.maximum(r, r).min(dim=1).values
        g = torch.index_select(c, 1, idx[:1]) + c[:, 0:1, :]
        return y.flatten(1), r, g, w.argmax(-1).to(torch.float32)


def _inputs(*shapes):
    gen = torch.Generator().manual_seed(_SEED)
    return tuple(torch.randn(*s, generator=gen) for s in shapes)


def _reexport(label: str, module: torch.fx.GraphModule, inputs: tuple) -> GraphForm:
    return GraphForm(label, torch.export.export(module, inputs).module(), inputs)


def _pt2e(model: nn.Module, inputs: tuple, quantizer, fold_quantize: bool = True) -> torch.fx.GraphModule:
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e

    torch.manual_seed(_SEED)
    captured = torch.export.export(model.eval(), inputs).module()
    prepared = prepare_pt2e(captured, quantizer)
    prepared(*inputs)
    return convert_pt2e(prepared, fold_quantize=fold_quantize)


def _xnnpack(is_dynamic: bool):
    from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

    config = get_symmetric_quantization_config(is_per_channel=True, is_dynamic=is_dynamic)
    return XNNPACKQuantizer().set_global(config)


def _affine_quantizer(is_dynamic: bool):
    """Annotates every linear with torchao's affine observers (per-tensor activations,
    per-channel weights), the way backends that lower to `torchao.*_affine` ops do."""
    from torchao.quantization.granularity import PerAxis, PerTensor
    from torchao.quantization.pt2e import MappingType
    from torchao.quantization.pt2e._affine_quantization import (
        AffineQuantizedMinMaxObserver,
        AffineQuantizedPlaceholderObserver,
    )
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation, QuantizationSpec, Quantizer

    if is_dynamic:
        act_observer = AffineQuantizedPlaceholderObserver.with_args(
            mapping_type=MappingType.ASYMMETRIC,
            target_dtype=torch.int8,
            granularity=PerTensor(),
            is_dynamic=True,
            eps=torch.finfo(torch.float32).eps,
            scale_dtype=torch.float32,
            zero_point_dtype=torch.int8,
        )
    else:
        act_observer = AffineQuantizedMinMaxObserver.with_args(
            mapping_type=MappingType.ASYMMETRIC, target_dtype=torch.int8, granularity=PerTensor()
        )
    act = QuantizationSpec(dtype=torch.int8, observer_or_fake_quant_ctr=act_observer, is_dynamic=is_dynamic)
    weight = QuantizationSpec(
        dtype=torch.int8,
        observer_or_fake_quant_ctr=AffineQuantizedMinMaxObserver.with_args(
            mapping_type=MappingType.SYMMETRIC, target_dtype=torch.int8, granularity=PerAxis(0)
        ),
    )

    class AffineLinearQuantizer(Quantizer):
        def annotate(self, model):
            for node in model.graph.nodes:
                if node.op == "call_function" and node.target == torch.ops.aten.linear.default:
                    node.meta["quantization_annotation"] = QuantizationAnnotation(
                        input_qspec_map={node.args[0]: act, node.args[1]: weight}, _annotated=True
                    )
            return model

        def validate(self, model):
            pass

    return AffineLinearQuantizer()


def _quantized_family(kind: str, model: nn.Module, inputs: tuple, quantizer_for: Callable, dynamic: bool):
    torch.manual_seed(_SEED)
    converted = _pt2e(model, inputs, quantizer_for(dynamic))
    forms = [GraphForm(f"{kind} convert_pt2e", converted, inputs)]
    if not dynamic:
        unfolded = _pt2e(model, inputs, quantizer_for(dynamic), fold_quantize=False)
        forms.append(GraphForm(f"{kind} convert_pt2e(fold_quantize=False)", unfolded, inputs))
    forms.append(_reexport(f"{kind} re-exported", converted, inputs))
    return forms


def _xnnpack_static():
    torch.manual_seed(_SEED)
    return _quantized_family("XNNPACK static", _ConvLinear(), _inputs((2, 3, 8, 8)), _xnnpack, False)


def _xnnpack_dynamic():
    torch.manual_seed(_SEED)
    return _quantized_family("XNNPACK dynamic", _MLP(), _inputs((3, 8)), _xnnpack, True)


def _affine_static():
    torch.manual_seed(_SEED)
    return _quantized_family("torchao affine static", _MLP(), _inputs((3, 8)), _affine_quantizer, False)


def _affine_dynamic():
    torch.manual_seed(_SEED)
    return _quantized_family("torchao affine dynamic", _MLP(), _inputs((3, 8)), _affine_quantizer, True)


def _zoo_inputs():
    x, seq = _inputs((2, 3, 16, 16), (2, 4, 16))
    return (x, seq, torch.tensor([1, 2]))


def _zoo():
    torch.manual_seed(_SEED)
    model, inputs = _Zoo().eval(), _zoo_inputs()
    ep = torch.export.export(model, inputs)
    train = torch.export.export(_Zoo().train(), inputs)
    return [
        GraphForm("aten zoo export (eval)", ep.module(), inputs),
        GraphForm("aten zoo export (train)", train.module(), inputs),
        GraphForm("aten zoo core ATen", ep.run_decompositions().module(), inputs),
    ]


def _zoo_dynamic():
    """Only symbolic sizes differ from the static zoo: built for `aten.sym_size` alone."""
    torch.manual_seed(_SEED)
    model, inputs = _Zoo().eval(), _zoo_inputs()
    batch = torch.export.Dim("batch", min=2, max=64)
    dynamic = torch.export.export(model, inputs, dynamic_shapes=({0: batch}, {0: batch}, {0: batch}))
    return [GraphForm("aten zoo export (dynamic batch)", dynamic.module(), inputs)]


def _edge(source: str) -> list[GraphForm]:
    from executorch.exir import EdgeCompileConfig, to_edge

    first = source == "zoo" or source.startswith((_FORMS, _CARRIERS))
    base = family(source)[0] if first else family(source)[-1]
    ep = torch.export.export(base.module, base.inputs)
    edge = to_edge(ep, compile_config=EdgeCompileConfig(_check_ir_validity=False))
    if source == "zoo":
        label = "aten zoo"
    elif source.startswith((_FORMS, _CARRIERS)):
        label = base.label.removesuffix(" export (eval)")
    else:
        label = base.label.rsplit(" ", 1)[0]
    return [GraphForm(f"{label} to_edge", edge.exported_program().module(), base.inputs)]


def _forms(op: str, carriers: bool = False) -> list[GraphForm]:
    """The call forms of `op` alone: a module of a few calls exports in a fraction of a
    second, where all the probe's forms together take seconds. A carrier's graphs add the
    ATen IR of `run_decompositions({})`, the only flow that keeps `_unsafe_view` (core ATen
    makes it `view`; FlatFlow's graphs are that IR, with SDPA decomposed)."""
    from qlint.runtime.call_forms import CARRIERS, FORMS, forms_model

    torch.manual_seed(_SEED)
    model, inputs = forms_model([op], CARRIERS if carriers else FORMS)
    kind = f"{op} carrier forms" if carriers else f"{op} call forms"
    ep = torch.export.export(model().eval(), inputs)
    train = torch.export.export(model().train(), inputs)
    n = torch.export.Dim("n", min=3)  # as the probe: `x[:, 0]` of a 1-row input specialises
    dynamic = torch.export.export(model(), inputs, dynamic_shapes=({0: n}, None, {0: n}))
    forms = [
        GraphForm(f"{kind} export (eval)", ep.module(), inputs),
        GraphForm(f"{kind} export (train)", train.module(), inputs),
        GraphForm(f"{kind} core ATen", ep.run_decompositions().module(), inputs),
    ]
    if carriers:
        forms.append(GraphForm(f"{kind} ATen IR", ep.run_decompositions({}).module(), inputs))
    return [*forms, GraphForm(f"{kind} export (dynamic size)", dynamic.module(), inputs)]


FAMILIES: dict[str, Callable[[], list[GraphForm]]] = {
    "xnnpack_static": _xnnpack_static,
    "xnnpack_dynamic": _xnnpack_dynamic,
    "affine_static": _affine_static,
    "affine_dynamic": _affine_dynamic,
    "zoo": _zoo,
    "zoo_dynamic": _zoo_dynamic,
    "edge_xnnpack_static": lambda: _edge("xnnpack_static"),
    "edge_xnnpack_dynamic": lambda: _edge("xnnpack_dynamic"),
    "edge_affine_static": lambda: _edge("affine_static"),
    "edge_zoo": lambda: _edge("zoo"),
}

# Which families can carry an op, per dialect and namespace (and a few single ops). Fixed
# (not "whatever is built already") so a verdict never depends on what ran before it.
_BY_OP = {("aten", "aten", "sym_size"): ("zoo_dynamic",)}
_BY_NAMESPACE = {
    ("aten", "quantized_decomposed"): ("xnnpack_static", "xnnpack_dynamic"),
    ("aten", "torchao"): ("affine_static", "affine_dynamic"),
    ("aten", "aten"): ("zoo",),
    ("edge", "quantized_decomposed"): ("edge_xnnpack_static", "edge_xnnpack_dynamic"),
    ("edge", "torchao"): ("edge_affine_static",),
    ("edge", "aten"): ("edge_zoo",),
}
_ALL = {
    "aten": ("xnnpack_static", "xnnpack_dynamic", "affine_static", "affine_dynamic", "zoo"),
    "edge": ("edge_xnnpack_static", "edge_xnnpack_dynamic", "edge_affine_static", "edge_zoo"),
}


_FORMS = "forms:"
_CARRIERS = "carriers:"


@functools.cache
def family(name: str) -> list[GraphForm]:
    """Built once per process: 50 findings on the same ops share these graphs. A build cut
    short by a timeout leaves nothing cached (functools.cache stores only results)."""
    if name.startswith(("edge_" + _FORMS, "edge_" + _CARRIERS)):
        return _edge(name.removeprefix("edge_"))
    if name.startswith(_FORMS):
        return _forms(name.removeprefix(_FORMS))
    if name.startswith(_CARRIERS):
        return _forms(name.removeprefix(_CARRIERS), carriers=True)
    return FAMILIES[name]()


def family_names(namespace: str, op: str, dialect: str) -> tuple[str, ...]:
    if (dialect, namespace, op) in _BY_OP:
        return _BY_OP[(dialect, namespace, op)]
    names = _BY_NAMESPACE.get((dialect, namespace), _ALL.get(dialect, ()))
    if namespace == "aten":
        from qlint.runtime.call_forms import carried_ops, covered_ops

        for prefix, ops in ((_FORMS, covered_ops()), (_CARRIERS, carried_ops())):
            if op in ops:
                forms = prefix + op
                names = (*names, forms if dialect == "aten" else "edge_" + forms)
    return names


def forms_for(namespace: str, op: str, dialect: str) -> list[GraphForm]:
    return [form for name in family_names(namespace, op, dialect) for form in family(name)]
