"""What a rule hands its runtime check: one typed contract that both sides import.

A rule builds one of these value classes (`qlint.value_classes`); `to_json` turns it into the plain JSON a
`Diagnostic` carries (cached with the finding, sent to the worker, part of the verdict
cache key). The worker side reads it back with `from_json`, which checks every field's
type and raises `EvidenceError` naming the field, so a check never guesses at a missing
key or a wrong type. Rule classes name their type (`Rule.evidence_type`).

Torch-free and dependency-free: the linter, the language server and the worker import it.
Each rule's types live in a module of their own (`qlint.evidence.capture` ...), still importable
from here: creating a class compiles its methods, and a check imports only the rules a file
triggers, so it should create only their evidence types. Not `dataclasses`, which a check
otherwise no longer imports (with `inspect`, `dis` and `copy`: ~10 ms of every `qlint check -`).
"""

from __future__ import annotations

import importlib
import types
import typing
from typing import Any, TypeVar

from qlint.value_classes import MISSING, Field, fields, is_value_class

T = TypeVar("T", bound="Evidence")


class EvidenceError(ValueError):
    """Evidence that does not fit its type (a bug in a rule, or a stale or foreign request)."""


class Evidence:
    """Base of every evidence type: value-class fields <-> JSON, validated on the way in.

    A field's JSON key is its name unless `field(metadata={"json": ...})` says otherwise
    (`pass` is a Python keyword). Tuples travel as lists; nested evidence as objects.
    """

    def to_json(self) -> dict[str, Any]:
        return _encode(self)

    @classmethod
    def from_json(cls: type[T], data: Any) -> T:
        return _decode(cls, data, cls.__name__)


def _json_name(f: Field) -> str:
    return f.metadata.get("json", f.name)


def _encode(value: Any) -> Any:
    if not isinstance(value, type) and is_value_class(value):
        return {_json_name(f): _encode(getattr(value, f.name)) for f in fields(value)}
    if isinstance(value, tuple):
        return [_encode(v) for v in value]
    return value


def _hints(cls: type) -> dict[str, Any]:
    # The annotations name types of the class's own module (`from __future__ import annotations`).
    return typing.get_type_hints(cls)


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
    if isinstance(tp, type) and is_value_class(tp):
        if not isinstance(value, dict):
            raise EvidenceError(f"{where}: expected an object, got {_shown(value)}")
        hints = _hints(tp)
        kwargs = {}
        for f in fields(tp):
            key = _json_name(f)
            if key in value:
                kwargs[f.name] = _decode(hints[f.name], value[key], f"{where}.{key}")
            elif f.default is MISSING and f.default_factory is MISSING:
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


def one_of(value: str, allowed: tuple[str, ...], where: str) -> None:
    if value not in allowed:
        raise EvidenceError(f"{where}: {value!r} is not one of {', '.join(allowed)}")


# Type name -> the module under qlint.evidence that defines it.
_HOMES = {
    "OpRef": "ops",
    "OpEvidence": "ops",
    "SourcePoint": "capture",
    "SinkPoint": "capture",
    "CaptureEvidence": "capture",
    "ModeSwitchEvidence": "mode_switch",
    "DecompositionEvidence": "decomposition",
    "Move": "moved_imports",
    "MovedImportEvidence": "moved_imports",
    "FoldingConvert": "weight_matchers",
    "WeightMatcherEvidence": "weight_matchers",
    "SourceRow": "calibration",
    "CalibrationEvidence": "calibration",
    "RemovedCaptureEvidence": "removed_capture",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{home}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *_HOMES])
