"""The bundled op table: what torch.ops namespaces hold, without importing torch.

Rules must know that `torch.ops.aten.add` has no `.default` a graph could carry (graphs
carry `.Tensor`), or that every torchao op has only `.default`, before they call a matcher
wrong or offer a fix. Importing torch for that costs seconds on every linter run and every
keystroke in the language server, so `scripts/generate_op_table.py` snapshots the real
registry into `qlint/data/optable.json` and this module only reads JSON.

The file is layered ("base" from torch+torchao, "executorch" for what ExecuTorch adds) so
the generator can check the base layer on machines without executorch; the layers are
merged here and callers never see them.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Mapping
from pathlib import Path

from qlint.value_classes import value_class

__all__ = ["DEFAULT_PATH", "OpInfo", "OpTable", "load_op_table"]

DEFAULT_PATH = Path(__file__).with_name("data") / "optable.json"
LAYER_ORDER = ("base", "executorch")  # later layers add overloads / override `carried`
_PREFIX = "torch.ops."
_READING = threading.Lock()  # one thread reads a deferred table, the others wait for it


@value_class(frozen=True)
class OpInfo:
    """One op packet, e.g. torch.ops.quantized_decomposed.dequantize_per_tensor.

    `carried` lists the overloads FX graphs carry in practice: observed by the generator's
    export/PT2E probes (`evidence == "probe"`) or forced by the schemas because only one
    overload could appear (`evidence == "schema"`). It is empty when unknown, and may hold
    several overloads (then no single `.overload` is a safe replacement for the packet).
    `jit_only` are TorchScript-only overloads (aten.add.default is Scalar+Scalar): they
    resolve as attributes but never appear in exported graphs.
    """

    namespace: str
    name: str
    overloads: tuple[str, ...]
    carried: tuple[str, ...] = ()
    evidence: str = ""
    jit_only: tuple[str, ...] = ()

    def qualified(self) -> str:
        return f"{_PREFIX}{self.namespace}.{self.name}"

    @property
    def single_carried(self) -> str | None:
        """The overload to rewrite a packet to, when graphs carry exactly one."""
        return self.carried[0] if len(self.carried) == 1 else None


class OpTable:
    """Read-only view of the merged table; OpInfo objects are built lazily on lookup."""

    def __init__(self, ops: dict[str, dict[str, dict]], meta: dict) -> None:
        self._ops = ops
        self._cache: dict[tuple[str, str], OpInfo | None] = {}
        self.meta = meta

    @classmethod
    def deferred(cls, path: Path) -> OpTable:
        """The table at `path`, read at its first use. Most checks ask it nothing: decoding
        the bundled 170 KB of JSON cost every `qlint check -` ~21 M instructions (callgrind)
        whether or not a rule looked up an op; ExecuTorch's edited export/stages.py asks none."""
        table = cls.__new__(cls)
        table._cache = {}
        table._source = path
        return table

    def __getattr__(self, name: str):
        # Asked only for an attribute not set yet: `_ops` and `meta` of a deferred table.
        # Under a lock: the language server's checker thread and a hover may ask at once.
        if name not in ("_ops", "meta") or "_source" not in self.__dict__:
            raise AttributeError(name)
        with _READING:
            if "_ops" not in self.__dict__:
                read = _load(self.__dict__["_source"])
                self.meta = read.meta
                self._ops = read._ops  # last: `is_loaded` says so only once both are there
        return self.__dict__[name]

    @property
    def is_loaded(self) -> bool:
        return "_ops" in self.__dict__

    def loaded(self) -> OpTable:
        """This table, read now if it was deferred (before a fork: workers inherit it)."""
        self._ops  # noqa: B018  (reading it is what loads it)
        return self

    @classmethod
    def from_json(cls, data: Mapping) -> OpTable:
        layers = data.get("layers", {})
        order = [n for n in LAYER_ORDER if n in layers] + sorted(set(layers) - set(LAYER_ORDER))
        ops: dict[str, dict[str, dict]] = {}
        meta: dict = {"format": data.get("format"), "layers": order}
        for lname in order:
            layer = layers[lname]
            for key, value in layer.get("meta", {}).items():
                if isinstance(value, dict) and isinstance(meta.get(key), dict):
                    meta[key] = {**meta[key], **value}
                elif isinstance(value, list) and isinstance(meta.get(key), list):
                    meta[key] = sorted({*meta[key], *value})
                else:
                    meta[key] = value
            for ns, entries in layer.get("ops", {}).items():
                target = ops.setdefault(ns, {})
                for name, entry in entries.items():
                    old = target.get(name)
                    if old is None:
                        target[name] = entry
                        continue
                    merged = dict(old)
                    for field in ("overloads", "jit_only"):
                        if field in entry:
                            merged[field] = sorted({*old.get(field, ()), *entry[field]})
                    for field in ("carried", "evidence", "flows"):
                        if field in entry:
                            merged[field] = entry[field]
                    target[name] = merged
        return cls(ops, meta)

    def lookup(self, namespace: str, name: str) -> OpInfo | None:
        key = (namespace, name)
        if key not in self._cache:
            entry = self._ops.get(namespace, {}).get(name)
            self._cache[key] = None if entry is None else _info(namespace, name, entry)
        return self._cache[key]

    def resolve(self, dotted: str) -> tuple[OpInfo, str | None] | None:
        """Parse "torch.ops.ns.op[.overload]" (or "ns.op[.overload]") against the table.

        Returns the op and the overload named (None for a bare packet), or None when the
        name is not an op, or names an attribute that is not one of its overloads.
        """
        parts = dotted.removeprefix(_PREFIX).split(".")
        if len(parts) not in (2, 3):
            return None
        info = self.lookup(parts[0], parts[1])
        if info is None:
            return None
        if len(parts) == 2:
            return info, None
        return (info, parts[2]) if parts[2] in info.overloads else None

    def is_overload(self, namespace: str, name: str, attr: str) -> bool:
        info = self.lookup(namespace, name)
        return info is not None and attr in info.overloads

    def namespaces(self) -> frozenset[str]:
        return frozenset(self._ops)

    def op_names(self, namespace: str) -> frozenset[str]:
        return frozenset(self._ops.get(namespace, ()))

    def feature(self, key: str, default=None):
        """A fact the generator learned by importing the dependencies, e.g.
        "executorch.export.QuantizationRecipe.preserve_ops" -> False."""
        return self.meta.get("features", {}).get(key, default)

    def __contains__(self, item: object) -> bool:
        return isinstance(item, tuple) and len(item) == 2 and self.lookup(*item) is not None

    def __len__(self) -> int:
        return sum(len(ops) for ops in self._ops.values())


def _info(namespace: str, name: str, entry: dict) -> OpInfo:
    return OpInfo(
        namespace=namespace,
        name=name,
        overloads=tuple(entry.get("overloads", ())),
        carried=tuple(entry.get("carried", ())),
        evidence=entry.get("evidence", ""),
        jit_only=tuple(entry.get("jit_only", ())),
    )


@functools.cache
def _load_default() -> OpTable:
    return OpTable.deferred(DEFAULT_PATH)


def _load(path: Path) -> OpTable:
    with open(path, encoding="utf-8") as f:
        return OpTable.from_json(json.load(f))


def load_op_table(path: str | Path | None = None) -> OpTable:
    """The bundled table (cached), or the table at `path` (read each call)."""
    return _load_default() if path is None else _load(Path(path))
