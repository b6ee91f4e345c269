"""Generate qlint/data/pt2e_moves.json: where the PT2E API torch removed from `torch.ao.quantization` lives now.

torch 2.13 no longer ships `torch.ao.quantization.quantize_pt2e`, `.pt2e`, `.quantizer`, nor
the pre-release `_quantize_pt2e`/`_pt2e`; the code moved to `torchao.quantization.pt2e`, and
the XNNPACK quantizer to ExecuTorch. QL401 rewrites imports from this table, so every
destination in it must really resolve: this script imports the installed torch, torchao and
executorch (the linter never does) and records only what it finds. A test regenerates the
table and fails when it drifts from the installed packages.

What existed on the torch side cannot be imported any more. `HISTORY` records it as data,
read from pytorch/pytorch's history (torch 2.0 to 2.9): each removed module with the names
it defined or re-exported that user code imported.

    python scripts/generate_pt2e_moves.py            # rewrite the JSON
    python scripts/generate_pt2e_moves.py --check    # exit 1 if the JSON is stale
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import importlib.util
import io
import json
import logging
import pkgutil
import re
import sys
import warnings
from pathlib import Path

OUT = Path(__file__).resolve().parents[1] / "qlint" / "data" / "pt2e_moves.json"
OLD = "torch.ao.quantization"
FORMAT = 1

# --- what torch had ----------------------------------------------------------------------
# Names moved out of the `torch.ao.quantization` package itself (its `__init__` re-exported
# them from `.pt2e`); everything else it exports is eager / FX-graph-mode API that torch
# still ships and QL401 leaves alone.
TOP_LEVEL = (
    "allow_exported_model_train_eval",
    "move_exported_model_to_eval",
    "move_exported_model_to_train",
    "generate_numeric_debug_handle",
    "CUSTOM_KEY",
    "NUMERIC_DEBUG_HANDLE_KEY",
    "prepare_for_propagation_comparison",
    "extract_results_from_loggers",
    "compare_results",
)

_QUANTIZER_SPECS = (
    "Quantizer",
    "QuantizationSpecBase",
    "QuantizationSpec",
    "FixedQParamsQuantizationSpec",
    "SharedQuantizationSpec",
    "DerivedQuantizationSpec",
    "QuantizationAnnotation",
    "EdgeOrNode",
)
_XNNPACK_UTILS = (
    "QuantizationAnnotation",
    "QuantizationSpec",
    "QuantizationSpecBase",
    "SharedQuantizationSpec",
    "OperatorConfig",
    "OperatorPatternType",
    "QuantizationConfig",
    "get_input_act_qspec",
    "get_output_act_qspec",
    "get_weight_qspec",
    "get_bias_qspec",
    "OP_TO_ANNOTATOR",
    "AnnotatorType",
    "register_annotator",
    "propagate_annotation",
    "_is_annotated",
    "_mark_nodes_as_annotated",
    "_convert_scalars_to_attrs",
)
_INDUCTOR_COMMON = ("QUANT_ANNOTATION_KEY", "FilterFn", "int8_in_int8_out_ops", "_is_any_annotated")

# Released modules (torch 2.1-2.9): module -> names.
HISTORY: dict[str, tuple[str, ...]] = {
    f"{OLD}.quantize_pt2e": (
        "prepare_pt2e",
        "prepare_qat_pt2e",
        "convert_pt2e",
        *_QUANTIZER_SPECS[:-1],
        "_QUANT_OPS",
        "_quant_node_constraint",
        "_convert_to_reference_decomposed_fx",
    ),
    f"{OLD}.quantizer": (
        *_QUANTIZER_SPECS,
        "ComposableQuantizer",
        "EmbeddingQuantizer",
        "OperatorConfig",
        "OperatorPatternType",
        "QuantizationConfig",
        "X86InductorQuantizer",
        "XNNPACKQuantizer",
    ),
    f"{OLD}.quantizer.quantizer": (
        *_QUANTIZER_SPECS,
        "OperatorConfig",
        "OperatorPatternType",
        "QuantizationConfig",
        "SUPPORTED_DTYPES",
        "SUPPORTED_QSCHEMES",
    ),
    f"{OLD}.quantizer.utils": (
        "_annotate_input_qspec_map",
        "_annotate_output_qspec",
        "_get_module_name_filter",
        "_node_only_used_for_sym_size",
    ),
    f"{OLD}.quantizer.composable_quantizer": ("ComposableQuantizer",),
    f"{OLD}.quantizer.embedding_quantizer": ("EmbeddingQuantizer", "get_embedding_operators_config"),
    f"{OLD}.quantizer.xnnpack_quantizer": (
        "XNNPACKQuantizer",
        "get_symmetric_quantization_config",
        "_get_module_type_filter",
        "_get_not_module_type_or_name_filter",
    ),
    f"{OLD}.quantizer.xnnpack_quantizer_utils": _XNNPACK_UTILS,
    f"{OLD}.quantizer.x86_inductor_quantizer": (
        "X86InductorQuantizer",
        "get_default_x86_inductor_quantization_config",
        "get_x86_inductor_linear_dynamic_fp16_config",
        "default_quantizable_ops",
        "propagation_quantizable_ops",
        "quantizable_ops",
        "int8_in_int8_out_ops_pt2e",
        "quantizable_ops_pt2e",
        *_INDUCTOR_COMMON,
    ),
    f"{OLD}.quantizer.xpu_inductor_quantizer": ("XPUInductorQuantizer", "get_default_xpu_inductor_quantization_config"),
    f"{OLD}.quantizer.arm_inductor_quantizer": (
        "ArmInductorQuantizer",
        "get_default_arm_inductor_quantization_config",
        "get_arm_inductor_linear_dynamic_fp16_config",
        *_INDUCTOR_COMMON,
    ),
    f"{OLD}.quantizer.onednn_inductor_quantizer": (),
    f"{OLD}.quantizer.openvino_quantizer": ("OpenVINOQuantizer",),
    f"{OLD}.pt2e": (),
    f"{OLD}.pt2e.export_utils": (
        "model_is_exported",
        "_move_exported_model_to_eval",
        "_move_exported_model_to_train",
        "_allow_exported_model_train_eval",
        "_replace_dropout",
        "_replace_batchnorm",
        "_WrapperModule",
    ),
    f"{OLD}.pt2e.utils": (
        "fold_bn_weights_into_conv_node",
        "get_aten_graph_module",
        "remove_tensor_overload_for_qdq_ops",
        "_get_aten_graph_module_for_pattern",
        "_WrapperModule",
        "_disallow_eval_train",
        "_fuse_conv_bn_",
        "_get_node_name_to_scope",
        "_is_conv",
        "_is_conv_transpose",
        "_is_conv_node",
        "_is_conv_transpose_node",
        "_is_bn_node",
        "_is_sym_size_node",
        "_filter_sym_size_users",
        "_is_valid_annotation",
        "_get_all_arguments",
        "_get_tensor_constant_from_node",
        "_replace_literals_with_new_placeholders",
        "_replace_literals_with_existing_placeholders",
        "_conv1d_bn_example_inputs",
        "_conv2d_bn_example_inputs",
    ),
    f"{OLD}.pt2e.graph_utils": (
        "find_sequential_partitions",
        "get_equivalent_types",
        "update_equivalent_types_dict",
        "bfs_trace_with_node_process",
    ),
    f"{OLD}.pt2e._numeric_debugger": (
        "generate_numeric_debug_handle",
        "NUMERIC_DEBUG_HANDLE_KEY",
        "CUSTOM_KEY",
        "prepare_for_propagation_comparison",
        "extract_results_from_loggers",
        "compare_results",
        "OutputLogger",
        "QuantizationComparisonResult",
        "NodeAccuracySummary",
    ),
    f"{OLD}.pt2e.prepare": ("prepare",),
    f"{OLD}.pt2e.qat_utils": ("_fuse_conv_bn_qat", "_fold_conv_bn_qat"),
    f"{OLD}.pt2e.representation": ("reference_representation_rewrite",),
    f"{OLD}.pt2e.representation.rewrite": ("reference_representation_rewrite",),
    f"{OLD}.pt2e.duplicate_dq_pass": ("DuplicateDQPass",),
    f"{OLD}.pt2e.port_metadata_pass": ("PortNodeMetaForQDQ",),
    f"{OLD}.pt2e.lowering": ("lower_pt2e_quantized_to_x86",),
    f"{OLD}.pt2e._affine_quantization": (
        "AffineQuantizedMinMaxObserver",
        "AffineQuantizedMovingAverageMinMaxObserver",
        "AffineQuantizedPlaceholderObserver",
        "_get_reduction_params",
        "choose_qparams_affine_with_min_max",
    ),
    # Short-lived modules of torch nightlies; nothing of them survives under their name.
    f"{OLD}.pt2e.eval_utils": (),
    f"{OLD}.pt2e.generate_numeric_debug_handle": (),
    f"{OLD}.pt2e.numeric_debugger": (),
    f"{OLD}.pt2e.affine_quantization": (),
    f"{OLD}.pt2e.quant_lift_up_pass": (),
    f"{OLD}.pt2e.util_passes": (),
}

# Pre-release APIs (torch 2.0/2.1 nightlies): signatures changed before the release
# (`_quantize_pt2e.prepare_pt2e` took a QConfigMapping), so QL401 only points at the
# successor and never rewrites.
PRERELEASE: dict[str, tuple[str, ...]] = {
    f"{OLD}._quantize_pt2e": ("prepare_pt2e", "prepare_qat_pt2e", "convert_pt2e"),
    f"{OLD}._pt2e": (),
    f"{OLD}._pt2e.quantizer": ("Quantizer", "QuantizationAnnotation", "OperatorConfig", "X86InductorQuantizer"),
    f"{OLD}._pt2e.quantizer.quantizer": _QUANTIZER_SPECS[:-1],
    f"{OLD}._pt2e.quantizer.qnnpack_quantizer": ("QNNPackQuantizer", "get_symmetric_quantization_config"),
    f"{OLD}._pt2e.quantizer.x86_inductor_quantizer": (
        "X86InductorQuantizer",
        "get_default_x86_inductor_quantization_config",
    ),
    f"{OLD}._pt2e.quantizer.composable_quantizer": ("ComposableQuantizer",),
    f"{OLD}._pt2e.quantizer.embedding_quantizer": ("EmbeddingQuantizer",),
    f"{OLD}._pt2e.quantizer.utils": (),
    f"{OLD}._pt2e.prepare": ("prepare",),
    f"{OLD}._pt2e.qat_utils": (),
    f"{OLD}._pt2e.utils": (),
    f"{OLD}._pt2e.graph_utils": ("find_sequential_partitions", "get_equivalent_types", "update_equivalent_types_dict"),
    f"{OLD}._pt2e.representation": (),
    f"{OLD}._pt2e.representation.rewrite": ("reference_representation_rewrite",),
    f"{OLD}._pt2e._propagate_annotation": ("propagate_annotation",),
    f"{OLD}.quantizer.qnnpack_quantizer": ("QNNPackQuantizer", "get_symmetric_quantization_config"),
    f"{OLD}.pt2e._propagate_annotation": ("propagate_annotation",),
    f"{OLD}.pt2e.quantizer": ("Quantizer", "QuantizationAnnotation", "X86InductorQuantizer", "QNNPackQuantizer"),
    f"{OLD}.pt2e.quantizer.quantizer": _QUANTIZER_SPECS[:-1],
    f"{OLD}.pt2e.quantizer.qnnpack_quantizer": ("QNNPackQuantizer", "get_symmetric_quantization_config"),
    f"{OLD}.pt2e.quantizer.xnnpack_quantizer": ("XNNPACKQuantizer", "get_symmetric_quantization_config"),
    f"{OLD}.pt2e.quantizer.x86_inductor_quantizer": ("X86InductorQuantizer",),
    f"{OLD}.pt2e.quantizer.embedding_quantizer": ("EmbeddingQuantizer",),
    f"{OLD}.pt2e.quantizer.utils": (),
}

# --- where it went -------------------------------------------------------------------------
# Module moves that are not the mechanical `torch.ao.quantization.pt2e.X` ->
# `torchao.quantization.pt2e.X` / `torch.ao.quantization.Y` -> `torchao.quantization.pt2e.Y`.
MODULE_MOVES = {
    f"{OLD}.quantizer.xnnpack_quantizer": "executorch.backends.xnnpack.quantizer.xnnpack_quantizer",
    f"{OLD}.quantizer.xnnpack_quantizer_utils": "executorch.backends.xnnpack.quantizer.xnnpack_quantizer_utils",
    f"{OLD}.pt2e.representation": "torchao.quantization.pt2e.reference_representation_rewrite",
    f"{OLD}.pt2e.representation.rewrite": "torchao.quantization.pt2e.reference_representation_rewrite",
    f"{OLD}.pt2e.duplicate_dq_pass": "torchao.quantization.pt2e.quantizer.duplicate_dq_pass",
    f"{OLD}.pt2e.port_metadata_pass": "torchao.quantization.pt2e.quantizer.port_metadata_pass",
    f"{OLD}._quantize_pt2e": "torchao.quantization.pt2e.quantize_pt2e",
    f"{OLD}._pt2e": "torchao.quantization.pt2e",
    f"{OLD}._pt2e.representation": "torchao.quantization.pt2e.reference_representation_rewrite",
    f"{OLD}._pt2e.representation.rewrite": "torchao.quantization.pt2e.reference_representation_rewrite",
    f"{OLD}.pt2e.quantizer.xnnpack_quantizer": "executorch.backends.xnnpack.quantizer.xnnpack_quantizer",
}
# Names whose successor is spelled differently (torchao made private helpers public, or
# the other way round). Rewrites to them are unsafe: the rename may hide other changes.
RENAMES = {
    f"{OLD}.quantizer.utils._annotate_input_qspec_map": (
        "torchao.quantization.pt2e.quantizer.utils",
        "annotate_input_qspec_map",
    ),
    f"{OLD}.quantizer.utils._annotate_output_qspec": (
        "torchao.quantization.pt2e.quantizer.utils",
        "annotate_output_qspec",
    ),
    f"{OLD}.quantizer.utils._get_module_name_filter": (
        "torchao.quantization.pt2e.quantizer.utils",
        "get_module_name_filter",
    ),
    f"{OLD}.pt2e.utils._is_valid_annotation": ("torchao.quantization.pt2e.quantizer.utils", "is_valid_annotation"),
    f"{OLD}.pt2e.utils._WrapperModule": ("torchao.quantization.pt2e", "WrapperModule"),
    f"{OLD}.pt2e.export_utils._WrapperModule": ("torchao.quantization.pt2e", "WrapperModule"),
    f"{OLD}.pt2e.utils.get_aten_graph_module": (
        "torchao.quantization.pt2e.utils",
        "_get_aten_graph_module_for_pattern",
    ),
}
# Where to look for a name that is not in its module's successor, in order.
FALLBACK_MODULES = (
    "torchao.quantization.pt2e",
    "torchao.quantization.pt2e.quantizer",
    "torchao.quantization.pt2e.quantizer.x86_inductor_quantizer",
    "torchao.quantization.pt2e.quantizer.embedding_quantizer",
    "executorch.backends.xnnpack.quantizer.xnnpack_quantizer",
    "executorch.backends.xnnpack.quantizer.xnnpack_quantizer_utils",
)


# Eager-mode modules whose observer / fake-quantize classes torchao ships its own copies of.
# torch 2.13 keeps them, so they are not moves; but torchao's prepare_pt2e does not insert
# torch.ao observers (a `with_args` constructor fails, a bare class yields no q/dq nodes),
# so QL401 must not migrate a file's quantizer API while it keeps torch.ao observers.
TWIN_MODULES = (OLD, f"{OLD}.observer", f"{OLD}.fake_quantize")
TWIN_NAME = re.compile(r"(Observer|FakeQuantize)(Base)?$|^(enable|disable)_(observer|fake_quant)$|_fake_quant$")
TWIN_HOME = "torchao.quantization.pt2e"

# The packages whose every module and name the table lists (`surfaces`), so that QL401 can
# tell an import from them that fails on the stack it targets: a `try` body importing
# `prepare_pt2e` from `torchao.quantization.pt2e` (which does not export it) raises, and its
# `except ImportError:` handler's torch.ao import runs on torch 2.13. A module defining a
# module-level `__getattr__` may answer any name: it is listed with no names (`None`).
SURVEYED = ("torchao.quantization.pt2e", "executorch.backends.xnnpack.quantizer")


def successor_module(old: str) -> str:
    if old in MODULE_MOVES:
        return MODULE_MOVES[old]
    head, _, tail = old[len(OLD) + 1 :].partition(".")
    if head in ("pt2e", "_pt2e"):
        return "torchao.quantization.pt2e" + (f".{tail}" if tail else "")
    return f"torchao.quantization.pt2e.{head}" + (f".{tail}" if tail else "")


@contextlib.contextmanager
def quiet():
    """torchao and executorch print kernel-loading noise on import; keep stdout clean."""
    logging.disable(logging.CRITICAL)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        try:
            yield
        finally:
            logging.disable(logging.NOTSET)


def load(module: str):
    try:
        with quiet():
            return importlib.import_module(module)
    except Exception:  # ImportError, or a backend module failing at import: no home there
        return None


def has(module: str, name: str) -> bool:
    mod = load(module)
    return mod is not None and (hasattr(mod, name) or load(f"{module}.{name}") is not None)


def still_in_torch(module: str, name: str | None = None) -> bool:
    try:
        spec = importlib.util.find_spec(module)
    except ImportError:
        return False
    if spec is None:
        return False
    return name is None or has(module, name)


def place(old_module: str, name: str, new_module: str | None) -> tuple[str | None, str | None, bool]:
    """(module, name, renamed) of the successor of `old_module.name`, or (None, None, False)."""
    qualified = f"{old_module}.{name}"
    if qualified in RENAMES:
        mod, new = RENAMES[qualified]
        if not has(mod, new):
            raise SystemExit(f"RENAMES: {mod}.{new} does not exist")
        return mod, new, True
    for candidate in (new_module, *FALLBACK_MODULES):
        if candidate and has(candidate, name):
            return candidate, name, False
    return None, None, False


def classify(old_name: str, new_module: str | None, new_name: str | None, renamed: bool, prerelease: bool) -> str:
    if new_module is None or prerelease:
        return "display"
    if renamed or old_name.startswith("_") or new_name.startswith("_"):
        return "unsafe"
    return "safe"


def surfaces() -> dict[str, list[str] | None]:
    """Every module of the `SURVEYED` packages with the names a `from` import finds there."""
    found: dict[str, list[str] | None] = {}
    for package in SURVEYED:
        root = load(package)
        if root is None:
            raise SystemExit(f"{package} does not import: the table needs it")
        with quiet():
            subs = [m.name for m in pkgutil.walk_packages(root.__path__, package + ".")]
        for name in (package, *subs):
            mod = load(name)
            if mod is None:
                continue  # a backend module failing at import: an import of it fails too
            if "__getattr__" in vars(mod):
                found[name] = None
                continue
            children = {s.rpartition(".")[2] for s in subs if s.rpartition(".")[0] == name}
            found[name] = sorted({n for n in dir(mod) if not n.startswith("__")} | children)
    return dict(sorted(found.items()))


def build() -> dict:
    with quiet():
        import executorch  # noqa: F401  (fail loudly: the table needs all three)
        import torch
        import torchao
    from importlib.metadata import version

    modules: dict[str, dict] = {}
    names: dict[str, dict] = {}
    for table, prerelease in ((HISTORY, False), (PRERELEASE, True)):
        for old_module, old_names in table.items():
            if still_in_torch(old_module):
                raise SystemExit(f"{old_module} still exists in torch {torch.__version__}: remove it from the data")
            new_module = successor_module(old_module)
            if load(new_module) is None:
                new_module = None
            modules[old_module] = {"new": new_module, "status": "prerelease" if prerelease else "moved"}
            for name in old_names:
                mod, new, renamed = place(old_module, name, new_module)
                entry = {"module": mod, "name": new, "fix": classify(name, mod, new, renamed, prerelease)}
                names[f"{old_module}.{name}"] = entry
    for name in TOP_LEVEL:
        if still_in_torch(OLD, name):
            raise SystemExit(f"{OLD}.{name} still exists in torch {torch.__version__}: remove it from the data")
        mod, new, renamed = place(OLD, name, "torchao.quantization.pt2e")
        names[f"{OLD}.{name}"] = {"module": mod, "name": new, "fix": classify(name, mod, new, renamed, False)}
    home = load(TWIN_HOME)
    twins = {}
    for module in TWIN_MODULES:
        mod = load(module)
        for name in sorted(getattr(home, "__all__", ())):
            if TWIN_NAME.search(name) and hasattr(mod, name) and getattr(mod, name) is not getattr(home, name):
                twins[f"{module}.{name}"] = f"{TWIN_HOME}.{name}"
    return {
        "format": FORMAT,
        "generated_by": "scripts/generate_pt2e_moves.py",
        "versions": {
            "torch": torch.__version__.split("+")[0],
            "torchao": torchao.__version__.split("+")[0],
            "executorch": version("executorch"),
        },
        "modules": dict(sorted(modules.items())),
        "names": dict(sorted(names.items())),
        "twins": twins,
        "surveyed": list(SURVEYED),
        "surfaces": surfaces(),
    }


def render(data: dict) -> str:
    return json.dumps(data, indent=1, sort_keys=False) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the JSON differs from a fresh build")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    text = render(build())
    if args.check:
        current = args.out.read_text() if args.out.exists() else ""
        if current != text:
            print(f"{args.out} is stale: run python scripts/generate_pt2e_moves.py", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text)
    data = json.loads(text)
    fixes = [e["fix"] for e in data["names"].values()]
    print(
        f"wrote {args.out}: {len(data['modules'])} modules, {len(fixes)} names "
        f"({fixes.count('safe')} safe, {fixes.count('unsafe')} unsafe, {fixes.count('display')} display-only)"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
