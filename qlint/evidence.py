"""What a rule hands its runtime check: one typed contract that both sides import.

A rule builds one of these dataclasses; `to_json` turns it into the plain JSON a
`Diagnostic` carries (cached with the finding, sent to the worker, part of the verdict
cache key). The worker side reads it back with `from_json`, which checks every field's
type and raises `EvidenceError` naming the field, so a check never guesses at a missing
key or a wrong type. Rule classes name their type (`Rule.evidence_type`).

Torch-free and dependency-free: the linter, the language server and the worker import it.
"""

from __future__ import annotations

import dataclasses
import types
import typing
from dataclasses import dataclass, field
from typing import Any, TypeVar

T = TypeVar("T", bound="Evidence")


class EvidenceError(ValueError):
    """Evidence that does not fit its type (a bug in a rule, or a stale or foreign request)."""


class Evidence:
    """Base of every evidence type: dataclass fields <-> JSON, validated on the way in.

    A field's JSON key is its name unless `field(metadata={"json": ...})` says otherwise
    (`pass` is a Python keyword). Tuples travel as lists; nested evidence as objects.
    """

    def to_json(self) -> dict[str, Any]:
        return _encode(self)

    @classmethod
    def from_json(cls: type[T], data: Any) -> T:
        return _decode(cls, data, cls.__name__)


def _json_name(f: dataclasses.Field) -> str:
    return f.metadata.get("json", f.name)


def _encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return {_json_name(f): _encode(getattr(value, f.name)) for f in dataclasses.fields(value)}
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    return value


def _hints(cls: type) -> dict[str, Any]:
    return typing.get_type_hints(cls, globalns=globals())


def _decode(tp: Any, value: Any, where: str) -> Any:
    origin = typing.get_origin(tp)
    if origin in (typing.Union, types.UnionType):
        args = typing.get_args(tp)
        if value is None and type(None) in args:
            return None
        (inner,) = [a for a in args if a is not type(None)]
        return _decode(inner, value, where)
    if origin is tuple:
        if not isinstance(value, list):
            raise EvidenceError(f"{where}: expected a list, got {_shown(value)}")
        (item,) = [a for a in typing.get_args(tp) if a is not Ellipsis]
        return tuple(_decode(item, v, f"{where}[{i}]") for i, v in enumerate(value))
    if isinstance(tp, type) and dataclasses.is_dataclass(tp):
        if not isinstance(value, dict):
            raise EvidenceError(f"{where}: expected an object, got {_shown(value)}")
        hints = _hints(tp)
        kwargs = {}
        for f in dataclasses.fields(tp):
            if not f.init:
                continue
            key = _json_name(f)
            if key in value:
                kwargs[f.name] = _decode(hints[f.name], value[key], f"{where}.{key}")
            elif f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING:
                raise EvidenceError(f"{where}: missing {key!r}")
        return tp(**kwargs)
    if tp is int:
        ok = isinstance(value, int) and not isinstance(value, bool)
    else:
        ok = isinstance(value, tp)
    if not ok:
        raise EvidenceError(f"{where}: expected {tp.__name__}, got {_shown(value)}")
    return value


def _shown(value: Any) -> str:
    text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."


def _one_of(value: str, allowed: tuple[str, ...], where: str) -> None:
    if value not in allowed:
        raise EvidenceError(f"{where}: {value!r} is not one of {', '.join(allowed)}")


# ------------------------------------------------------------------ QL101, QL102


@dataclass(frozen=True)
class OpRef(Evidence):
    """An op as written: `torch.ops.<namespace>.<op>[.<overload>]`, or an ExecuTorch edge op."""

    namespace: str
    op: str
    overload: str | None = None
    dialect: str | None = None  # "edge" for `exir_ops.edge...`, None for torch.ops


@dataclass(frozen=True)
class OpEvidence(Evidence):
    """A packet that meets FX node targets (`kind`: how) or is inserted into a graph
    (`kind == "insertion"`), with what the op table says about its overloads."""

    kind: str  # "comparison", "collection" (an element of a set, dict or case) or "insertion"
    ops: tuple[OpRef, ...]
    carried: tuple[str, ...] = ()
    overloads: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        _one_of(self.kind, ("comparison", "collection", "insertion"), "OpEvidence.kind")


# ------------------------------------------------------------------ QL201, QL202


@dataclass(frozen=True)
class SourcePoint(Evidence):
    row: int
    col: int


@dataclass(frozen=True)
class SinkPoint(Evidence):
    """Where the captured program reaches `prepare_pt2e` / `prepare_qat_pt2e`."""

    path: str
    row: int


@dataclass(frozen=True)
class CaptureEvidence(Evidence):
    """A capture whose model is in the wrong mode for its flow (`ptq` or `qat`)."""

    flow: str
    api: str
    capture: SourcePoint
    model: str | None = None  # the model expression as written
    reasons: tuple[str, ...] = ()
    sinks: tuple[SinkPoint, ...] = ()

    def __post_init__(self) -> None:
        _one_of(self.flow, ("ptq", "qat"), "CaptureEvidence.flow")


# ------------------------------------------------------------------ QL203


@dataclass(frozen=True)
class ModeSwitchEvidence(Evidence):
    """`.eval()`/`.train()` on a GraphModule that came from `origin` (export, prepare, ...);
    `mode` is None for `.train(flag)` with a flag known only at run time."""

    mode: str | None
    origin: str
    origin_row: int

    def __post_init__(self) -> None:
        if self.mode is not None:
            _one_of(self.mode, ("eval", "train"), "ModeSwitchEvidence.mode")


# ------------------------------------------------------------------ QL301


@dataclass(frozen=True)
class DecompositionEvidence(Evidence):
    """A `pre_prepare_passes` entry that decomposes; `preserve_ops` is what the fix keeps."""

    pass_name: str = field(metadata={"json": "pass"})
    decomposition: str
    path: str
    line: int
    preserve_ops: tuple[str, ...] | None = None
    kind: str = "pre-prepare-decomposition"


# ------------------------------------------------------------------ QL401


@dataclass(frozen=True)
class Move(Evidence):
    """A name that left `torch.ao.quantization`: where it went (None: nowhere) and how the
    rule's fix treats it."""

    old: str
    new: str | None = None
    fix: str | None = None


@dataclass(frozen=True)
class MovedImportEvidence(Evidence):
    moves: tuple[Move, ...]
    kind: str = "moved-import"


# ------------------------------------------------------------------ QL103


@dataclass(frozen=True)
class FoldingConvert(Evidence):
    """A `convert_pt2e` call that feeds a matcher, and whether it folds weight quantize ops."""

    path: str
    folds: str


@dataclass(frozen=True)
class WeightMatcherEvidence(Evidence):
    """A matcher that tests for a weight only behind a quantize-op match."""

    function: str
    weight_test: str
    convert_calls: tuple[FoldingConvert, ...]
    kind: str = "weight-quantize-matcher"


# ------------------------------------------------------------------ QL204


@dataclass(frozen=True)
class SourceRow(Evidence):
    path: str
    row: int


@dataclass(frozen=True)
class CalibrationEvidence(Evidence):
    """Where the model was prepared and converted; `helper` names the function that converts."""

    prepare: SourceRow
    convert: SourceRow
    helper: str | None = None


# ------------------------------------------------------------------ QL402


@dataclass(frozen=True)
class RemovedCaptureEvidence(Evidence):
    """A removed capture API, what it returned, and the call that replaces it."""

    api: str
    returns: str
    replacement: str
    keywords: tuple[str, ...] = ()
    kind: str = "removed-capture-api"
