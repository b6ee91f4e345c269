"""QL201/QL202/QL203: the capture mode, measured on the real PT2E pipeline (worker side).

QL201 (PTQ capture without `eval()`): each reference model (and each opt-in user model) is
quantized as the code does it, captured in train mode (a freshly built model, an explicit
`.train()`, or a parameter whose mode the function cannot know), and as fixed, with
`.eval()` first. Reported: max error and SQNR of the converted model against the float
model in eval mode, whether batch-norm statistics moved during calibration, and whether
two runs of the whole pipeline agree.

QL202 (QAT capture in eval mode): captured in eval mode as written against train mode as
fixed; reported: whether batch-norm statistics are updated by QAT training and how many
activations dropout zeroes during it (none means the graph trains without dropout).

QL203 (`.eval()`/`.train()` on an exported module): the call on a module of the same origin
(export, prepare_pt2e, prepare_qat_pt2e, convert_pt2e) against
`move_exported_model_to_eval`/`_train`.
"""

from __future__ import annotations

import copy
from typing import Any

import torch

from qlint.evidence import CaptureEvidence, ModeSwitchEvidence
from qlint.runtime import pipelines

_WORSE = 2.0  # "as written" counts as broken when its error is this many times the fixed one


def _subjects(params: dict[str, Any]) -> tuple[list[pipelines.Subject], list[str]]:
    subjects: list[pipelines.Subject] = pipelines.reference_subjects()
    problems: list[str] = []
    for item in pipelines.user_subjects(params.get("models") or [], params.get("root")):
        (problems if isinstance(item, str) else subjects).append(item)
    return subjects, problems


def _ptq_row(subject: pipelines.Subject, via: str) -> tuple[str, bool, bool]:
    """Evidence for one model, whether the written mode hurt it, whether the fix is clean."""
    ref = pipelines.float_reference(subject)
    runs = {}
    for mode in ("train", "eval"):
        first = pipelines.ptq(subject, mode, seed=0, via=via)
        second = pipelines.ptq(subject, mode, seed=1, via=via)
        with torch.no_grad():
            out, again = first.converted(*subject.test), second.converted(*subject.test)
        runs[mode] = (pipelines.max_error(out, ref), pipelines.sqnr(out, ref), first.bn_moved, torch.equal(out, again))
    (w_err, w_sqnr, w_moved, w_same), (f_err, f_sqnr, f_moved, f_same) = runs["train"], runs["eval"]
    text = (
        f"{subject.label}: max error {w_err:.3g} vs {f_err:.3g} (SQNR {w_sqnr:.1f} vs {f_sqnr:.1f} dB), "
        f"batch-norm statistics moved during calibration: {_yes(w_moved)} vs {_yes(f_moved)}, "
        f"two pipeline runs agree: {_yes(w_same)} vs {_yes(f_same)}"
    )
    hurt = w_moved or not w_same or w_err > _WORSE * f_err + 1e-6
    clean = not f_moved and f_same and f_err <= w_err
    return text, hurt, clean


def _yes(flag: bool) -> str:
    return "yes" if flag else "no"


def check_ptq(params: dict[str, Any], evidence: CaptureEvidence) -> dict[str, Any]:
    api = evidence.api or "torch.export.export"
    via = "executorch" if api.startswith("executorch") and _has_executorch() else "torch.export"
    subjects, problems = _subjects(params)
    rows = [_ptq_row(s, via) for s in subjects]
    pipeline = "ExecuTorch's QuantizeStage" if via == "executorch" else "torch.export.export → prepare_pt2e"
    text = (
        f"PTQ with the XNNPACK quantizer ({pipeline}, {pipelines.CALIBRATION_BATCHES} calibration batches), "
        "captured in train mode as written vs with `.eval()` first, against the float model in eval mode: "
        + "; ".join(r[0] for r in rows)
    )
    return _record(text, rows, problems, params)


def check_qat(params: dict[str, Any]) -> dict[str, Any]:
    subjects, problems = _subjects(params)
    rows = []
    for subject in subjects:
        written, fixed = pipelines.qat(subject, "eval", seed=0), pipelines.qat(subject, "train", seed=0)
        has_dropout = any(isinstance(m, torch.nn.Dropout) for m in subject.model.modules())
        has_bn = any(isinstance(m, torch.nn.modules.batchnorm._BatchNorm) for m in subject.model.modules())
        text = (
            f"{subject.label}: batch-norm statistics updated by training: {_yes(written.bn_moved)} vs "
            f"{_yes(fixed.bn_moved)}, activations zeroed by dropout: {written.zeroed:.0%} vs {fixed.zeroed:.0%}"
        )
        hurt = (has_bn and not written.bn_moved) or (has_dropout and written.zeroed < fixed.zeroed / 2)
        clean = (not has_bn or fixed.bn_moved) and (not has_dropout or fixed.zeroed > 0)
        rows.append((text, hurt, clean))
    text = (
        "QAT (prepare_qat_pt2e, 4 SGD steps) captured in eval mode as written vs with `.train()` first: "
        + "; ".join(r[0] for r in rows)
    )
    return _record(text, rows, problems, params)


def _record(text: str, rows: list[tuple[str, bool, bool]], problems: list[str], params) -> dict[str, Any]:
    if problems:
        text += ". Not run: " + "; ".join(problems)
    hurt = any(r[1] for r in rows)
    return {
        "verdict": "confirmed" if hurt else "refuted",
        "evidence": text,
        "fix_verified": all(r[2] for r in rows) if params.get("verify_fix") and params.get("fix") else None,
        # Verdicts that ran a user's model depend on their code: never cached.
        "transient": bool(params.get("models")),
    }


def _has_executorch() -> bool:
    try:
        import executorch.export  # noqa: F401
    except Exception:
        return False
    return True


def _origin_module(origin: str) -> tuple[torch.fx.GraphModule, tuple, torch.Tensor]:
    """A module of the given origin from Conv→ReLU→BN→Dropout captured in train mode, its
    input, and the float model's eval output."""
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e

    torch.manual_seed(0)
    bn, drop = pipelines.reference_subjects()
    model = torch.nn.Sequential(bn.model, drop.model.dropout).train()
    inputs = bn.test
    with torch.no_grad():
        ref = copy.deepcopy(model).eval()(*inputs)
    # Captured in train mode on purpose: this is the "as written" side of the comparison.
    module = torch.export.export(model, inputs).module()  # noqa: QL201
    with pipelines.skip_impossible_conv_bn_search():
        if origin in ("prepare_pt2e", "convert_pt2e"):
            from torchao.testing.pt2e._xnnpack_quantizer import XNNPACKQuantizer, get_symmetric_quantization_config

            module = prepare_pt2e(module, XNNPACKQuantizer().set_global(get_symmetric_quantization_config()))
            module(*inputs)
            if origin == "convert_pt2e":
                module = convert_pt2e(module)
        elif origin == "prepare_qat_pt2e":
            module = prepare_qat_pt2e(module, pipelines.conv_annotating_quantizer())
    return module, inputs, ref


def _behaviour(module: torch.fx.GraphModule, inputs: tuple, ref: torch.Tensor) -> str:
    with torch.no_grad():
        first, second = module(*inputs), module(*inputs)
    if not torch.equal(first, second):
        return "training behaviour (two calls differ: dropout is active)"
    return f"eval behaviour (deterministic, max error {pipelines.max_error(first, ref):.3g} against the float model)"


_ORIGINS = {
    "export": "from `torch.export.export(...).module()`",
    "prepare_pt2e": "returned by `prepare_pt2e`",
    "prepare_qat_pt2e": "returned by `prepare_qat_pt2e`",
    "convert_pt2e": "returned by `convert_pt2e`",
}


def check_mode_switch(params: dict[str, Any]) -> dict[str, Any]:
    from torchao.quantization.pt2e import move_exported_model_to_eval, move_exported_model_to_train

    evidence = ModeSwitchEvidence.from_json(params.get("evidence"))
    mode, origin = evidence.mode or "eval", evidence.origin or "export"
    module, inputs, ref = _origin_module(origin)
    try:
        getattr(module, mode)()
        written = f"`.{mode}()` runs and leaves {_behaviour(module, inputs, ref)}"
        broken = mode == "eval" and "training behaviour" in written
    except NotImplementedError as exc:
        first_line = next((line.strip() for line in str(exc).splitlines() if line.strip()), "")
        written, broken = f"`.{mode}()` raises NotImplementedError ({first_line})", True
    module, inputs, ref = _origin_module(origin)
    if evidence.allowed_fix:  # the fix keeps the helper's switch and allows the graph first
        from torchao.quantization.pt2e import allow_exported_model_train_eval

        allow_exported_model_train_eval(module)
        getattr(module, mode)()
        helper_name = f"allow_exported_model_train_eval` then `.{mode}()"
    else:
        helper = move_exported_model_to_eval if mode == "eval" else move_exported_model_to_train
        helper_name = f"move_exported_model_to_{'eval' if mode == 'eval' else 'train'}"
        helper(module)
    switched = _behaviour(module, inputs, ref)
    works = ("eval behaviour" in switched) == (mode == "eval")
    text = (
        f"On the GraphModule {_ORIGINS.get(origin, origin)} of Conv→ReLU→BN→Dropout captured in train mode: "
        f"{written}; `{helper_name}` leaves {switched}"
    )
    verify = params.get("verify_fix") and params.get("fix")
    return {
        "verdict": "confirmed" if broken else "refuted",
        "evidence": text,
        "fix_verified": works if verify else None,
    }


def run(params: dict[str, Any]) -> dict[str, Any]:
    """The evidence says which check: a capture for a flow (PTQ or QAT), or a mode switch."""
    if "flow" not in (params.get("evidence") or {}):
        return check_mode_switch(params)
    capture = CaptureEvidence.from_json(params["evidence"])
    return check_ptq(params, capture) if capture.flow == "ptq" else check_qat(params)
