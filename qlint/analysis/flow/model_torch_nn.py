"""What train/eval mode does to torch.nn's own modules, from an explicit table.

A class is judged only when it is listed: mode-free (`Linear`, activations, pooling, ...),
mode-dependent (batch norm, `RReLU`), or dependent through its arguments (dropout's `p`,
`dropout`, `track_running_stats`). Any other torch.nn class is unknown, so a model holding it is not
known to be mode-free.
"""

from __future__ import annotations

import ast

# `torch.nn.Module` methods (torch 2.13, `torch/nn/modules/module.py`) that return `self` after
# moving or casting its parameters and buffers (`_apply`: `xpu`, `type`, `share_memory`, `to_empty`
# too), or setting their `requires_grad`, never reading or setting `training`: the module they hand
# back is the one they were called on, in its mode (each run here in both modes, but for the device
# moves a CPU build refuses, whose source reads `return self._apply(lambda t: t.xpu(device))`).
MODE_KEEPING_METHODS = frozenset(
    {
        *("to", "cpu", "cuda", "xpu", "ipu", "mtia", "to_empty", "share_memory"),
        *("float", "half", "double", "bfloat16", "type", "requires_grad_"),
    }
)
# The methods that return `self` and run nothing of the caller's: those, and the two that set
# the mode. `apply(fn)` returns `self` too, after running `fn` on every module; the tables that
# may take it say so where they add it (`moved_graphs`).
SELF_RETURNING_METHODS = MODE_KEEPING_METHODS | {"train", "eval"}
# The methods by which a module's mode may be set: the two switches, and `apply(fn)`, whose `fn`
# runs on every module.
SWITCHING_METHODS = frozenset({"train", "eval", "apply"})
# The methods that iterate a module's submodules (every one, or its direct children).
MODULE_ITERATORS = frozenset({"modules", "named_modules", "children", "named_children"})
# What evaluating a mode-keeping call's arguments may run and still leave the module alone
# (`switched_stores`, `evaled_parts`): no function written there, no name bound, no suspension,
# and no call but `torch.device(...)`, which builds a device from a string or an index and runs
# no code of the project's. Any other call (the project's `make_device()`, `pick(model)`) may
# reach the module, through an argument or through whatever else holds it (the caller that
# passed it, a global), and switch it before the cast.
_RUNS_CODE = (ast.Lambda, ast.NamedExpr, ast.Await, ast.Yield, ast.YieldFrom)
# Forward depends on `self.training` whatever the arguments (running statistics, dropping,
# RReLU's random slope).
ALWAYS = frozenset(
    {
        "BatchNorm1d",
        "BatchNorm2d",
        "BatchNorm3d",
        "SyncBatchNorm",
        "LazyBatchNorm1d",
        "LazyBatchNorm2d",
        "LazyBatchNorm3d",
        "RReLU",
    }
)
# Dropping in train mode unless built with `p=0` (first positional; default 0.5): at p=0 each
# is the identity in either mode (torch 2.13, measured in eager mode and through `export`).
_DROPPING = frozenset({"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"})
# Dropout by default (p=0.1), unless built with `dropout=0`; the value is the position of
# `dropout` among the positional parameters.
_DROPOUT_DEFAULT = {
    "Transformer": 5,
    "TransformerEncoderLayer": 3,
    "TransformerDecoderLayer": 3,
    "TransformerEncoder": None,  # its layers' dropout: conservative, as before
    "TransformerDecoder": None,
}
# Dropout only when built with a non-zero `dropout`.
_DROPOUT_ARG = {"MultiheadAttention": 2, "RNN": 5, "LSTM": 5, "GRU": 5}
# Running statistics in eval mode only with `track_running_stats=True` (fifth positional).
_TRACKING = frozenset(f"{lazy}InstanceNorm{d}d" for lazy in ("", "Lazy") for d in (1, 2, 3))
# Those whose mode is their own `training` flag alone (no submodule's): setting that flag
# switches them whole (`direct_children`). Not the transformers, whose dropouts are submodules.
OWN_FLAG = ALWAYS | _DROPPING | _TRACKING
# Classes whose arguments are modules rather than hyperparameters.
CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict", "DataParallel", "DistributedDataParallel"})
# No `self.training` in their forward (torch 2.x), whatever the arguments.
_MODE_FREE = frozenset(
    {
        *[
            "Module",
            "Parameter",
            "ParameterList",
            "ParameterDict",
            "Identity",
            "Linear",
            "LazyLinear",
            "Bilinear",
            "ReLU",
            "ReLU6",
            "LeakyReLU",
            "PReLU",
            "ELU",
            "SELU",
            "CELU",
            "GELU",
            "SiLU",
            "Mish",
            "Sigmoid",
            "Tanh",
            "Hardtanh",
            "Hardswish",
            "Hardsigmoid",
            "Hardshrink",
            "Softshrink",
            "Tanhshrink",
            "Softplus",
            "Softsign",
            "LogSigmoid",
            "Threshold",
            "GLU",
            "Softmax",
            "Softmax2d",
            "Softmin",
            "LogSoftmax",
            "Embedding",
            "EmbeddingBag",
            "LayerNorm",
            "GroupNorm",
            "RMSNorm",
            "LocalResponseNorm",
            "Flatten",
            "Unflatten",
            "Upsample",
            "UpsamplingNearest2d",
            "UpsamplingBilinear2d",
            "PixelShuffle",
            "PixelUnshuffle",
            "ChannelShuffle",
            "Fold",
            "Unfold",
            "CosineSimilarity",
            "PairwiseDistance",
            "RNNCell",
            "LSTMCell",
            "GRUCell",
            "LPPool1d",
            "LPPool2d",
            "LPPool3d",
        ],
        *(f"{k}{d}d" for k in ("Conv", "ConvTranspose", "LazyConv", "LazyConvTranspose") for d in (1, 2, 3)),
        *(f"{k}{d}d" for k in ("MaxPool", "AvgPool", "AdaptiveAvgPool", "AdaptiveMaxPool") for d in (1, 2, 3)),
        *(f"{k}Pad{d}d" for k in ("Zero", "Constant", "Reflection", "Replication", "Circular") for d in (1, 2, 3)),
    }
)


def given_mode(args: list[ast.expr], keywords: list[ast.keyword]) -> list[ast.expr] | None:
    """What a call of `Module.train` passes for `mode` (`args` and `keywords` after the module):
    [] when nothing, [flag] for `train(flag)` or `train(mode=flag)`, None for anything else
    (a second argument, another keyword), which `Module.train` would not run as a switch."""
    given = [*args, *(kw.value for kw in keywords if kw.arg == "mode")]
    return given if len(given) == len(args) + len(keywords) and len(given) <= 1 else None


def arguments_run_nothing(call: ast.Call) -> bool:
    """Evaluating `call`'s arguments cannot switch the module it is called on (`_RUNS_CODE`)."""
    for arg in [*call.args, *(kw.value for kw in call.keywords)]:
        for node in ast.walk(arg):
            if isinstance(node, _RUNS_CODE) or (isinstance(node, ast.Call) and not _builds_device(node.func)):
                return False
    return True


def _builds_device(func: ast.expr) -> bool:
    """`torch.device`, read by its spelling (as `copy.deepcopy` is)."""
    return (
        isinstance(func, ast.Attribute)
        and func.attr == "device"
        and isinstance(func.value, ast.Name)
        and func.value.id == "torch"
    )


def torch_nn_kind(last: str, call: ast.Call | None) -> tuple[str | None, bool]:
    """(the mode-dependent part `torch.nn.<last>(...)` is, or None; whether the class is known).

    `call` None: the class named as a base, its arguments being those of `super().__init__`,
    which are not read: an argument-dependent class counts as dependent."""
    if last in ALWAYS:
        return last, True
    if last in _DROPPING:
        return (None, True) if _is_zero(_argument(call, "p", 0)) else (last, True)
    if last in _MODE_FREE or last in CONTAINERS:
        return None, True
    if last in _DROPOUT_DEFAULT or last in _DROPOUT_ARG:
        position = _DROPOUT_DEFAULT.get(last, _DROPOUT_ARG.get(last))
        value = _argument(call, "dropout", position)
        if value is _ABSENT and last in _DROPOUT_ARG:
            return None, True  # default 0
        return (None, True) if _is_zero(value) else (f"{last} (dropout)", True)
    if last in _TRACKING:
        value = _argument(call, "track_running_stats", 4)
        return (None, True) if value is _ABSENT or _is_zero(value) else (last, True)
    return None, False


_ABSENT = object()
_UNKNOWN = object()


def _argument(call: ast.Call | None, name: str, position: int | None):
    """The argument passed for parameter `name`: _ABSENT if none, _UNKNOWN if it cannot be told."""
    if call is None:
        return _UNKNOWN
    for kw in call.keywords:
        if kw.arg == name:
            return kw.value
        if kw.arg is None:  # `**kwargs`
            return _UNKNOWN
    if any(isinstance(a, ast.Starred) for a in call.args):
        return _UNKNOWN
    if position is not None and len(call.args) > position:
        return call.args[position]
    return _ABSENT


def _is_zero(value) -> bool:
    return isinstance(value, ast.Constant) and not value.value
