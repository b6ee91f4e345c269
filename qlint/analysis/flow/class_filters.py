"""Which of a model's mode-dependent parts an `isinstance` test of torch.nn classes selects.

A loop that switches only the modules of some classes (`isinstance(mod, nn.BatchNorm2d)`,
`isinstance(mod, _BatchNorm)`) switches the parts a model holds of those classes and of their
subclasses. The parts are named as `class_contents.Content.dependent` names them (the torch.nn
leaf class, "`self.training`" for a project class reading it, "LSTM (dropout)"); the families
below are torch 2.x's class tree (`__mro__`) for the mode-dependent classes `model_torch_nn`
lists. A test of a class outside torch.nn, or of a container, selects modules whose content
is not known: no answer.
"""

from __future__ import annotations

from qlint.analysis.flow.model_torch_nn import ALWAYS

_BATCH_NORMS = frozenset(
    {"BatchNorm1d", "BatchNorm2d", "BatchNorm3d", "SyncBatchNorm", *(f"LazyBatchNorm{d}d" for d in (1, 2, 3))}
)
_INSTANCE_NORMS = frozenset(f"{lazy}InstanceNorm{d}d" for lazy in ("", "Lazy") for d in (1, 2, 3))
_DROPOUTS = frozenset({"Dropout", "Dropout1d", "Dropout2d", "Dropout3d", "AlphaDropout", "FeatureAlphaDropout"})
_RNNS = frozenset({"RNN", "LSTM", "GRU"})
_FAMILIES = {
    "_BatchNorm": _BATCH_NORMS,
    "_NormBase": _BATCH_NORMS | _INSTANCE_NORMS,
    "_InstanceNorm": _INSTANCE_NORMS,
    "_DropoutNd": _DROPOUTS,
    "RNNBase": _RNNS,
}
# Classes whose instances are themselves the mode-dependent part (no subclass in torch.nn).
_LEAVES = (
    ALWAYS
    | _DROPOUTS
    | _INSTANCE_NORMS
    | _RNNS
    | {"MultiheadAttention", "TransformerEncoderLayer", "TransformerDecoderLayer"}
)
_KNOWN = _LEAVES | _BATCH_NORMS | _DROPOUTS
EVERY = "every"  # `isinstance(mod, nn.Module)`: the test selects every module


def selected(qualnames: list[str | None]) -> frozenset[str] | str | None:
    """The mode-dependent torch.nn classes a test of these classes selects (with subclasses);
    EVERY for `nn.Module`; None when one of them is not a torch.nn class this module knows."""
    out: set[str] = set()
    for name in qualnames:
        if not name or not name.startswith("torch.nn."):
            return None
        last = name.rpartition(".")[2]
        if last == "Module":
            return EVERY
        if last in _FAMILIES:
            out |= _FAMILIES[last]
        elif last in _LEAVES:
            out.add(last)
        else:
            return None
    return frozenset(out)


def named(tests) -> frozenset[str]:
    """The mode-dependent torch.nn classes whose name a class-name test (`looped_switches.ClassName`)
    accepts. A project class whose name it accepts is switched too, with what it holds: what
    depends on the mode in it is named "`self.training`" or by its torch.nn parts, which the
    test is not taken to select unless their own names pass it."""
    return frozenset(k for k in _KNOWN for t in tests if (k == t.text if t.whole else t.text in k))


def covered(dependent: tuple[str, ...], classes: frozenset[str]) -> tuple[str, ...]:
    """The parts of `dependent` (`Content.dependent` names) those classes select."""
    return tuple(d for d in dependent if d.partition(" (")[0] in classes)


__all__ = ["EVERY", "covered", "named", "selected"]
