"""Library calls that wrap a model in an engine which hands the same model back by an attribute.

`deepspeed.init_inference(model, ...)` returns DeepSpeed's `InferenceEngine`, whose constructor
stores the model it was given as `self.module` and neither switches it to train nor to eval:
`model = deepspeed.init_inference(model, **kwargs).module` is the model passed in, in the mode
the caller left it (optimum-habana's distributed text-generation setup evals the model, wraps
it and hands `.module` to its PT2E helper). Its injection policies swap some layers of the
model in place for DeepSpeed's inference layers (tensor-parallel linears, fused inference
kernels), built for inference only; the rest of the model is untouched.

Resolved by the callee's qualified name, so a project function that happens to be called
`init_inference` is not DeepSpeed's. The engine itself is no model qlint follows: only the
attribute that holds the model is, and only until something assigns to it.

Other wrappers hand the model back as the wrapper itself (`MODE_KEEPING_WRAPPERS`: torch's
`DataParallel`, ai-edge-torch's `to_channel_last_io`): their construction leaves the model's
mode as it is and their forward runs it, so the walk reads the wrapper as the model.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.model_values import Obj
from qlint.value_classes import value_class


@value_class(frozen=True)
class Engine:
    """Where the call takes the model (`position`, or `keyword`), and the engine's attribute
    that holds it afterwards."""

    position: int
    keyword: str
    attribute: str


# deepspeed/__init__.py: `def init_inference(model, config=None, **kwargs)`.
ENGINES = {"deepspeed.init_inference": Engine(0, "model", "module")}


def wrapped_model(name: str | None, node: ast.Call, args: list[Obj | None], kwargs: dict) -> tuple[str, Obj] | None:
    """(the engine's attribute, the model it holds) for a call of a known engine factory whose
    model argument is a value the walk follows; None otherwise."""
    engine = ENGINES.get(name) if name is not None else None
    if engine is None:
        return None
    if len(node.args) > engine.position and not any(
        isinstance(a, ast.Starred) for a in node.args[: engine.position + 1]
    ):
        model = args[engine.position]
    else:
        model = kwargs.get(engine.keyword)
    return (engine.attribute, model) if model is not None else None


# Wrappers whose construction leaves the wrapped module's mode as it is and whose forward runs it.
# ai-edge-torch's `to_channel_last_io(module, args, outputs)` (`_convert/to_channel_last_io.py`,
# read at v0.4.0, v0.6.0 and as litert-torch at v0.8.0) returns a `ChannelLastIOWrapper` that
# stores the module as its child `wrapped` and whose forward only permutes inputs and outputs
# around it, reading no `training`: `.eval()` of the wrapper evals the module (elastic-ai.explorer's
# Pico generator evals `to_channel_last_io(model, args=[0])`, then captures `model` for PT2E).
MODE_KEEPING_WRAPPERS = frozenset(
    {
        "torch.nn.DataParallel",
        "torch.nn.parallel.DataParallel",
        "torch.nn.parallel.data_parallel.DataParallel",
        "torch.nn.parallel.DistributedDataParallel",
        "torch.nn.parallel.distributed.DistributedDataParallel",
        *(
            f"{package}.{path}"
            for package in ("ai_edge_torch", "litert_torch")
            for path in (
                "to_channel_last_io",
                "_convert.to_channel_last_io.to_channel_last_io",
                "_convert.to_channel_last_io.ChannelLastIOWrapper",
            )
        ),
    }
)


__all__ = ["ENGINES", "MODE_KEEPING_WRAPPERS", "Engine", "wrapped_model"]
