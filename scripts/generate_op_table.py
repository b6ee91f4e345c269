"""Regenerate qlint/data/optable.json from the live op registry (or check it for drift).

The linter and the language server must not import torch (2+ s, torchao 4+ s more), yet
rules need to know which overloads an op packet has and which one FX graphs really carry
before they can call a matcher wrong or offer a `.default` fix. So that knowledge is
snapshotted here, from the registry itself, and a test reruns this script with `--check`
so the bundled table cannot silently drift from the pinned torch/torchao/executorch.

`carried` is evidence, not a guess. Ops the probes below meet as FX node targets (after
torch.export in eval and train mode, core-ATen decomposition, the PT2E XNNPACK flows, an
affine-observer flow, re-export, and ExecuTorch's to_edge) record exactly the overloads
seen; ops with several graph overloads (arange, factories, splits, reductions, arithmetic,
convolutions) are called in each form that picks another one (`qlint.runtime.call_forms`,
the list QL101's runtime check exports too), so a matcher naming one of them can be told
which others graphs carry. Every other op falls back to a schema rule: if
exactly one overload is not an out= variant and takes a Tensor, graphs can only carry that
one; otherwise we say nothing (empty list). A bare "default exists, so default" rule would be wrong for ops
like sum/mean/std whose graphs mostly carry `.dim...` overloads, which is the mistake
the linter exists to catch. In-place overloads (`add_.Tensor`) stay candidates because
training-IR graphs do carry them.

The file is layered so `--check` works without executorch: the "base" layer comes from
torch+torchao, the "executorch" layer holds only what importing ExecuTorch adds (its
namespaces, extra overloads such as `.out` on quantized_decomposed ops, edge dialect
facts, QuantizationRecipe fields). A layer whose package is missing is kept as stored.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import importlib
import importlib.util
import json
import logging
import re
import sys
import warnings
from collections import defaultdict
from pathlib import Path

TABLE = Path(__file__).resolve().parent.parent / "qlint" / "data" / "optable.json"
FORMAT = 1
BASE_NAMESPACES = ("aten", "quantized_decomposed", "torchao")
# Modules that register ExecuTorch's op namespaces. Backend-specific registries (cadence,
# vulkan, arm) are left out: cadence even adds aten ops, which would blur the aten table.
ET_MODULES = (
    "executorch.exir",
    "executorch.export",
    "executorch.kernels.quantized",
    "executorch.extension.llm.custom_ops.custom_ops",
)


def _version(module) -> str:
    return module.__version__.split("+")[0]  # "+cpu" depends on the wheel, not the API


def _registry() -> dict[str, dict[str, dict[str, tuple]]]:
    """ns -> op -> overload -> (schema, in dispatcher), for every torch.ops.<ns>.<op>.<ovl>.

    The JIT registry is the superset Python attribute access resolves against; overloads
    only TorchScript knows (aten.add.default is `add(Scalar a, Scalar b) -> Scalar`, .int,
    .str, ...) are not dispatcher ops, so torch.export can never put them in a graph.
    """
    import torch

    dispatched = set(torch._C._dispatch_get_all_op_names())
    reg: dict = defaultdict(lambda: defaultdict(dict))
    for schema in torch._C._jit_get_all_schemas():
        ns, name = schema.name.split("::", 1)
        key = f"{schema.name}.{schema.overload_name}" if schema.overload_name else schema.name
        reg[ns][name][schema.overload_name or "default"] = (schema, key in dispatched)
    return reg


_TENSOR_TYPE = re.compile(r"(Optional\[)?(List\[)?(Optional\[)?Tensor\]*")


def schema_carried(overloads: dict[str, tuple]) -> list[str]:
    """The overload a graph must carry when the schemas leave only one choice, else [].

    Candidates are dispatcher overloads that are not out= variants; a sole candidate wins
    (executorch_prim.add.Scalar, aten.relu_.default). Among several, one that alone takes
    a Tensor wins (choose_qparams_symmetric.tensor). Otherwise graphs may carry several
    (sum.default vs sum.dim_IntList, add.Tensor vs add.Scalar) and we do not guess.
    """
    cands = {
        name: schema
        for name, (schema, dispatched) in overloads.items()
        if dispatched and not any(a.alias_info and a.alias_info.is_write and a.kwarg_only for a in schema.arguments)
    }
    if len(cands) > 1:
        cands = {
            name: schema
            for name, schema in cands.items()
            if any(_TENSOR_TYPE.fullmatch(str(a.type)) for a in schema.arguments)
        }
    return sorted(cands) if len(cands) == 1 else []


class Recorder:
    """Collects the call_function targets of probe graphs, per flow."""

    def __init__(self) -> None:
        self.seen: dict = defaultdict(lambda: defaultdict(set))  # (ns, op) -> ovl -> flows
        self.packets: dict = defaultdict(set)  # "ns.op" -> flows that carried the packet

    def record(self, flow: str, gm) -> None:
        import torch

        for node in gm.graph.nodes:
            if node.op != "call_function":
                continue
            target = node.target
            if not isinstance(target, (torch._ops.OpOverload, torch._ops.OpOverloadPacket)):
                target = getattr(target, "_op", target)  # unwrap an EdgeOpOverload
            if isinstance(target, torch._ops.OpOverload):
                key = (target.namespace, target._opname)
                self.seen[key][target._overloadname].add(flow)
            elif isinstance(target, torch._ops.OpOverloadPacket):
                self.packets[target._qualified_op_name.replace("::", ".")].add(flow)


def _probe_models():
    import torch
    import torch.nn as nn
    import torch.nn.functional as F

    class Zoo(nn.Module):
        """One module touching the ops DESIGN.md names, in the call forms code uses."""

        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3)
            self.same = nn.Conv2d(4, 4, 3, padding="same")
            self.bn = nn.BatchNorm2d(4)
            self.up = nn.ConvTranspose2d(4, 4, 2)
            self.lin = nn.Linear(8, 8)
            self.drop = nn.Dropout(0.5)

        def forward(self, x, y):
            a = self.drop(F.hardtanh(self.up(self.bn(self.same(F.relu(self.conv(x)))))))
            b = self.lin(torch.flatten(a, 1)[:, :8]) + y
            b = torch.cat([(b * 2) - y, y], 1)
            c = b[:, 0] + b.transpose(0, 1)[0]
            d = F.softmax(b, -1).mean(-1) + b.mean()
            e = b.clamp(0, 1) + b.clamp(min=y.sum(1, keepdim=True))
            f = b.view(-1).view(2, -1).unsqueeze(1).squeeze() + b.unsqueeze(1).squeeze(1)
            return c, d, e, f, b.unsqueeze(2).unsqueeze(3).squeeze((2, 3))

    class Dyn(nn.Module):
        def forward(self, x):
            return x.view(x.size(0), -1).view(torch.int32)

    class Small(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.conv = nn.Conv2d(3, 4, 3)
            self.lin = nn.Linear(4, 4)

        def forward(self, x):
            a = F.relu(self.conv(x)).mean((2, 3))
            return self.lin(a) + a

    zoo_args = (torch.randn(2, 3, 10, 10), torch.randn(2, 8))
    return Zoo, zoo_args, Dyn, Small, (torch.randn(2, 3, 8, 8),)


def _forms_model():
    """Ops with several graph overloads, in each call form that picks another one: the list
    lives in `qlint.runtime.call_forms`, which QL101's runtime check exports too (per op)."""
    root = str(Path(__file__).resolve().parent.parent)
    if root not in sys.path:
        sys.path.insert(0, root)  # this checkout's list, not an installed qlint's
    return importlib.import_module("qlint.runtime.call_forms").forms_model()


def _affine_quantizer(dynamic: bool):
    import torch
    from torchao.quantization import MappingType, PerAxis, PerTensor
    from torchao.quantization.pt2e._affine_quantization import AffineQuantizedMinMaxObserver as MinMax
    from torchao.quantization.pt2e._affine_quantization import AffineQuantizedMovingAverageMinMaxObserver as Moving
    from torchao.quantization.pt2e.quantizer import QuantizationAnnotation, QuantizationSpec, Quantizer

    def spec(obs, dtype, lo, hi, mapping, gran, **kw):
        ctr = obs.with_args(mapping_type=mapping, target_dtype=dtype, granularity=gran, **kw)
        return QuantizationSpec(dtype, ctr, quant_min=lo, quant_max=hi, is_dynamic=kw.get("is_dynamic", False))

    dyn = {"is_dynamic": True, "averaging_constant": 1}
    act = (
        spec(Moving, torch.int8, -128, 127, MappingType.ASYMMETRIC, PerTensor(), **dyn)
        if dynamic
        else spec(MinMax, torch.uint8, 0, 255, MappingType.ASYMMETRIC, PerTensor())
    )
    weight = spec(MinMax, torch.int8, -127, 127, MappingType.SYMMETRIC, PerAxis(0))

    class AffineQuantizer(Quantizer):
        def annotate(self, gm):
            for n in gm.graph.nodes:
                if n.op == "call_function" and n.target == torch.ops.aten.linear.default:
                    qmap = {n.args[0]: act, n.args[1]: weight}
                    ann = QuantizationAnnotation(input_qspec_map=qmap, _annotated=True)
                    n.meta["quantization_annotation"] = ann
            return gm

        def validate(self, gm) -> None:
            pass

    return AffineQuantizer()


def probe_base(rec: Recorder) -> tuple[dict, dict]:
    """Run the torch/torchao flows; returns features learned on the way, and the programs
    (plain and PT2E-quantized, by flow) that the ExecuTorch probe lowers with to_edge."""
    import torch
    from torch.export import Dim, export
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
    from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

    torch.manual_seed(0)
    Zoo, zoo_args, Dyn, Small, args = _probe_models()
    ep = export(Zoo().eval(), zoo_args)
    rec.record("export", ep.graph_module)
    rec.record("export_train", export(Zoo().train(), zoo_args).graph_module)
    rec.record("core_aten", ep.run_decompositions().graph_module)
    dyn = export(Dyn(), (torch.randn(3, 2, 2),), dynamic_shapes=({0: Dim("b")},))
    rec.record("export_dynamic", dyn.graph_module)
    Forms, forms_args = _forms_model()
    forms = export(Forms().eval(), forms_args)
    rec.record("export", forms.graph_module)
    rec.record("export_train", export(Forms().train(), forms_args).graph_module)
    rec.record("core_aten", forms.run_decompositions().graph_module)
    n = Dim("n", min=3)  # x[:, 0] and the splits of a 1-row input would specialise
    forms_dynamic = export(Forms(), forms_args, dynamic_shapes=({0: n}, None, {0: n}))
    rec.record("export_dynamic", forms_dynamic.graph_module)
    try:
        ep.module().eval()
        eval_on_exported = "noop"
    except NotImplementedError:
        eval_on_exported = "raises NotImplementedError"

    def pt2e(flow, quantizer, model, inputs):
        prepared = prepare_pt2e(export(model.eval(), inputs).module(), quantizer)
        prepared(*inputs)
        converted = convert_pt2e(prepared)
        rec.record(flow, converted)
        reexported = export(converted, inputs)
        rec.record(flow + "_reexport", reexported.graph_module)
        return reexported

    configs = {
        "pt2e_static": get_symmetric_quantization_config(),
        "pt2e_per_channel": get_symmetric_quantization_config(is_per_channel=True),
        "pt2e_dynamic": get_symmetric_quantization_config(is_dynamic=True),
    }
    programs = {"edge": ep}
    for flow, cfg in configs.items():
        programs[flow] = pt2e(flow, XNNPACKQuantizer().set_global(cfg), Small(), args)
    linear_args = (torch.randn(2, 4),)
    for flow, dynamic in (("affine", False), ("affine_dynamic", True)):
        pt2e(flow, _affine_quantizer(dynamic), torch.nn.Sequential(torch.nn.Linear(4, 4)), linear_args)

    import torchao.quantization.pt2e as ao_pt2e

    features = {
        "torch.ao.quantization.quantize_pt2e": _has_module("torch.ao.quantization.quantize_pt2e"),
        "torchao.quantization.pt2e.quantize_pt2e": True,
        "torchao.quantization.pt2e.move_exported_model_to_eval": hasattr(ao_pt2e, "move_exported_model_to_eval"),
        "torchao.quantization.pt2e.move_exported_model_to_train": hasattr(ao_pt2e, "move_exported_model_to_train"),
        "torch.fx.GraphModule.eval_on_exported": eval_on_exported,
        "torchao.AffineQuantizedObserverBase.convert_inserts_packets": any(
            "affine" in flow for flows in rec.packets.values() for flow in flows
        ),
    }
    return features, {"edge": [ep, forms], "edge_pt2e": [programs["pt2e_static"]]}


def _has_module(name: str) -> bool:
    with contextlib.suppress(ImportError):
        return importlib.util.find_spec(name) is not None
    return False


def probe_executorch(rec: Recorder, programs: dict) -> dict:
    """Lower the base probe's programs with to_edge; returns ExecuTorch features."""
    from executorch.exir import to_edge
    from executorch.exir.dialects._ops import ops as exir_ops
    from executorch.exir.dialects.backend._ops import _BACKEND_OP_LIB
    from executorch.export import QuantizationRecipe

    for flow, flow_programs in programs.items():
        for program in flow_programs:
            rec.record(flow, to_edge(program).exported_program().graph_module)

    fields = (
        [f.name for f in dataclasses.fields(QuantizationRecipe)] if dataclasses.is_dataclass(QuantizationRecipe) else []
    )
    features = {
        "executorch.export.QuantizationRecipe.module": QuantizationRecipe.__module__,
        "executorch.export.QuantizationRecipe.fields": fields,
        "executorch.export.QuantizationRecipe.preserve_ops": "preserve_ops" in fields,
    }
    backend = sorted(ns for ns in _BACKEND_OP_LIB if "TEST" not in ns)
    return {"features": features, "backend_namespaces": backend, "exir_ops": exir_ops}


def _entry(schemas: dict, seen: dict | None, only: set[str] | None = None) -> dict:
    """One op's JSON entry; `only` restricts the overload list to a layer's additions."""
    overloads = sorted(only if only is not None else schemas)
    entry: dict = {"overloads": overloads}
    if jit_only := [o for o in overloads if not schemas[o][1]]:
        entry["jit_only"] = jit_only
    if seen:
        entry["carried"] = sorted(seen)
        entry["evidence"] = "probe"
        entry["flows"] = {ovl: sorted(flows) for ovl, flows in sorted(seen.items())}
    elif carried := schema_carried(schemas):
        entry["carried"] = carried
        entry["evidence"] = "schema"
    return entry


def build_base(rec: Recorder) -> tuple[dict, dict, dict]:
    import torch
    import torchao

    features, programs = probe_base(rec)
    reg = _registry()  # after the probes: anything they register lazily counts as base
    ops = {
        ns: {name: _entry(ovls, rec.seen.get((ns, name))) for name, ovls in reg[ns].items()} for ns in BASE_NAMESPACES
    }
    flows = sorted({f for per in rec.seen.values() for fs in per.values() for f in fs})
    meta = {
        "versions": {"torch": _version(torch), "torchao": _version(torchao)},
        "namespaces": list(BASE_NAMESPACES),
        "features": features,
        "probe": {
            "flows": flows,
            "packet_targets": {k: sorted(v) for k, v in sorted(rec.packets.items())},
        },
    }
    return {"meta": meta, "ops": ops}, reg, programs


def build_executorch(before: dict, base_ops: dict, programs: dict) -> dict | None:
    if importlib.util.find_spec("executorch") is None:
        return None
    for module in ET_MODULES:
        importlib.import_module(module)
    import executorch.version

    rec = Recorder()
    found = probe_executorch(rec, programs)
    after = _registry()
    new_ns = sorted(set(after) - set(before))
    ops: dict = {}
    for ns in (*BASE_NAMESPACES, *new_ns):
        for name, schemas in after[ns].items():
            old = before.get(ns, {}).get(name, {})
            added = set(schemas) - set(old)
            seen = rec.seen.get((ns, name)) if not old else None
            if not added:
                continue
            entry = _entry(schemas, seen, only=added)
            if old:  # base op gaining overloads: carried stays the base's unless the
                entry.pop("carried", None)  # schema rule now answers differently
                entry.pop("evidence", None)
                merged = schema_carried(schemas)
                if base_ops[ns][name].get("evidence") != "probe" and merged != schema_carried(old):
                    entry.update(carried=merged, evidence="schema" if merged else "")
            ops.setdefault(ns, {})[name] = entry
    namespaces = sorted({*BASE_NAMESPACES, *new_ns})
    exir_ops = found["exir_ops"]
    edge = {
        # The edge dialect mirrors torch.ops lazily: check each namespace really resolves.
        "namespaces": [ns for ns in namespaces if _edge_resolves(exir_ops, ns, after[ns])],
        "backend_namespaces": found["backend_namespaces"],
        "extra_ops": _edge_yaml_extra_ops(after),
        "carried": {f"{ns}.{name}": sorted(per) for (ns, name), per in sorted(rec.seen.items()) if ns in namespaces},
    }
    meta = {
        "versions": {"executorch": _version(executorch.version)},
        "namespaces": new_ns,
        "features": found["features"],
        "edge": edge,
    }
    return {"meta": meta, "ops": ops}


def _edge_resolves(exir_ops, ns: str, ops: dict) -> bool:
    name = min(ops)
    with contextlib.suppress(AttributeError, RuntimeError):
        return getattr(getattr(getattr(exir_ops.edge, ns), name), min(ops[name])) is not None
    return False


def _edge_yaml_extra_ops(reg: dict) -> list[str]:
    """Ops the edge dialect spec (edge.yaml) names that the registry does not have."""
    spec = importlib.util.find_spec("executorch.exir.dialects.edge")
    path = Path(spec.origin).parent / "edge.yaml" if spec and spec.origin else None
    if path is None or not path.exists():
        return []
    names = re.findall(r"^- func: (\w+)::(\w+)", path.read_text(), flags=re.M)
    return sorted({f"{ns}.{op}" for ns, op in names if op not in reg.get(ns, {})})


def dumps(table: dict) -> str:
    """Stable text: sorted keys, one op per line, so a drift diff reads op by op."""

    def c(obj) -> str:
        return json.dumps(obj, sort_keys=True, separators=(",", ":"))

    out = ["{", f'"format":{table["format"]},', '"layers":{']
    layers = sorted(table["layers"].items())
    for li, (lname, layer) in enumerate(layers):
        out += [f"{c(lname)}:{{", f'"meta":{json.dumps(layer["meta"], sort_keys=True, indent=1)},']
        out.append('"ops":{')
        namespaces = sorted(layer["ops"].items())
        for ni, (ns, ops) in enumerate(namespaces):
            out.append(f"{c(ns)}:{{")
            names = sorted(ops)
            out += [f"{c(n)}:{c(ops[n])}" + ("," if i < len(names) - 1 else "") for i, n in enumerate(names)]
            out.append("}" + ("," if ni < len(namespaces) - 1 else ""))
        out.append("}}" + ("," if li < len(layers) - 1 else ""))
    out += ["}", "}", ""]
    return "\n".join(out)


def generate() -> tuple[dict, list[str]]:
    """Build every layer whose packages import; returns the table and the layers built."""
    base, reg, programs = build_base(Recorder())
    layers = {"base": base}
    et = build_executorch(reg, base["ops"], programs)
    if et is not None:
        layers["executorch"] = et
    return {"format": FORMAT, "layers": layers}, sorted(layers)


def _short(value, limit: int = 160) -> str:
    text = json.dumps(value, sort_keys=True)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def diff_layers(name: str, old: dict | None, new: dict, limit: int = 40) -> list[str]:
    if old is None:
        return [f"layer {name!r}: missing from the stored table"]
    lines = []
    for key in sorted(set(old["meta"]) | set(new["meta"])):
        a, b = old["meta"].get(key), new["meta"].get(key)
        if a != b:
            lines.append(f"  meta.{key}: {_short(a)} -> {_short(b)}")
    old_ops = {(ns, n): e for ns, ops in old["ops"].items() for n, e in ops.items()}
    new_ops = {(ns, n): e for ns, ops in new["ops"].items() for n, e in ops.items()}
    removed = sorted(old_ops.keys() - new_ops.keys())
    added = sorted(new_ops.keys() - old_ops.keys())
    changed = sorted(k for k in old_ops.keys() & new_ops.keys() if old_ops[k] != new_ops[k])
    for label, keys in (("removed", removed), ("added", added)):
        if keys:
            shown = ", ".join(f"{ns}.{n}" for ns, n in keys[:limit])
            more = f" (+{len(keys) - limit} more)" if len(keys) > limit else ""
            lines.append(f"  {len(keys)} op(s) {label}: {shown}{more}")
    for ns, n in changed[:limit]:
        a, b = old_ops[(ns, n)], new_ops[(ns, n)]
        fields = [f for f in sorted(set(a) | set(b)) if a.get(f) != b.get(f)]
        detail = "; ".join(f"{f}: {_short(a.get(f), 80)} -> {_short(b.get(f), 80)}" for f in fields)
        lines.append(f"  changed {ns}.{n}: {detail}")
    if len(changed) > limit:
        lines.append(f"  ... {len(changed) - limit} more changed op(s)")
    return [f"layer {name!r}:", *lines] if lines else []


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the table drifted")
    parser.add_argument("--output", type=Path, default=TABLE)
    args = parser.parse_args(argv)
    warnings.filterwarnings("ignore")
    logging.disable(logging.WARNING)
    if missing := [dep for dep in ("torch", "torchao") if importlib.util.find_spec(dep) is None]:
        print(f"generate_op_table: {', '.join(missing)} not installed", file=sys.stderr)
        return 2
    table, built = generate()
    stored = json.loads(args.output.read_text()) if args.output.exists() else {}
    kept = sorted(set(stored.get("layers", {})) - set(built))
    table["layers"].update({name: stored["layers"][name] for name in kept})  # package missing here
    text = dumps(table)
    note = f" (layer(s) {', '.join(kept)} kept as stored: package not installed)" if kept else ""
    if not args.check:
        args.output.parent.mkdir(parents=True, exist_ok=True)
        args.output.write_text(text)
        counts = {f"{n}:{ns}": len(ops) for n, layer in table["layers"].items() for ns, ops in layer["ops"].items()}
        print(f"wrote {args.output} ({len(text.encode())} bytes){note}: {counts}")
        return 0
    old = stored.get("layers", {})
    report = [line for n in built for line in diff_layers(n, old.get(n), table["layers"][n])]
    if not report and stored and args.output.read_text() != text:
        fmt = stored.get("format")
        report = [f"format {fmt} -> {FORMAT}" if fmt != FORMAT else "same content, different layout (hand-edited?)"]
    if report:
        print(f"{args.output} is out of date{note}:", *report, sep="\n", file=sys.stderr)
        print("regenerate with: python scripts/generate_op_table.py", file=sys.stderr)
        return 1
    print(f"{args.output}: up to date (checked {', '.join(built)}){note}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
