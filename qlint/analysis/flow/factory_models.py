"""What a library factory builds, as far as train/eval mode goes, from a bundled table.

`timm.create_model("vit_base_patch16_224")` and `torchvision.models.resnet18()` build models
whose source is not in the project checked. `scripts/generate_factory_models.py` built every
model these factories register and wrote which of their parts depend on the mode to
`qlint/data/factory_models.json`; this module answers from that table without importing
torch. The table is read on the first factory call met, never at start-up.

A call is judged only when the table covers it: a model name written as a constant (or a
name bound once to one), keywords that only load weights, and the keywords the generator
built models with (`num_classes`, drop rates at 0 or at a non-zero constant). A dynamic
name, `**kwargs`, a positional argument the factory does not take by position, or any other
keyword makes the content unknown, as for any model we cannot see.
"""

from __future__ import annotations

import ast
import functools
import json
from pathlib import Path

from qlint.analysis.names.resolver import Resolver

# Model builders that return a freshly initialised module, i.e. one in train mode.
FACTORIES = ("torchvision.models.", "timm.create_model")
TABLE = Path(__file__).resolve().parents[2] / "data" / "factory_models.json"
TIMM = "timm.create_model"
GET_MODEL = "torchvision.models.get_model"
# timm's create_model(model_name, pretrained, ...): the positions a call may fill.
_TIMM_POSITIONAL = ("model_name", "pretrained")


class _Table:
    """The generator's groups, indexed by how a call names a model."""

    def __init__(self, data: dict):
        self.neutral = {library: frozenset(names) for library, names in data["neutral"].items()}
        self.timm: dict[str, dict] = {}
        self.paths: dict[str, dict] = {}  # `torchvision.models.resnet18` -> its group
        self.registered: dict[str, dict] = {}  # get_model's names
        for group in data["groups"]:
            for name in group.get("timm", ()):
                self.timm[name] = group
            for name, paths in group.get("torchvision", {}).items():
                self.registered[name] = group
                for path in paths:
                    self.paths[path] = group


@functools.cache
def table(path: Path = TABLE) -> _Table:
    return _Table(json.loads(path.read_text()))


def factory_content(call: ast.Call, name: str, resolver: Resolver) -> tuple[str, tuple[str, ...] | None]:
    """(the model's name for messages, its mode-dependent parts); parts None: not known.

    `name` is the callee's qualified name, one of `FACTORIES`."""
    if any(isinstance(a, ast.Starred) for a in call.args) or any(k.arg is None for k in call.keywords):
        return _written(name), None
    if name == TIMM:
        return _timm(call, resolver)
    known = table()
    if name == GET_MODEL:
        model = _string(_argument(call, 0, "name"), resolver)
        group = known.registered.get(model) if model is not None else None
        keywords = [k for k in call.keywords if k.arg != "name"]
        if call.args[1:]:
            group = None
        return model or _written(name), _parts(group, keywords, known.neutral["torchvision"], False)
    # Builders take keywords only (a position raises TypeError).
    group = known.paths.get(name) if not call.args else None
    return name.rpartition(".")[2], _parts(group, call.keywords, known.neutral["torchvision"], False)


def _timm(call: ast.Call, resolver: Resolver) -> tuple[str, tuple[str, ...] | None]:
    model = _string(_argument(call, 0, "model_name"), resolver)
    if model is None or len(call.args) > len(_TIMM_POSITIONAL):
        return _written(TIMM), None
    known = table()
    arch, dot, _ = model.partition(".")
    group = known.timm.get(arch)
    if group is not None and dot and not group.get("tags"):
        group = None  # a pretrained tag whose builds were not all judged alike
    keywords = [k for k in call.keywords if k.arg not in _TIMM_POSITIONAL]
    return model, _parts(group, keywords, known.neutral["timm"], True)


def _parts(group: dict | None, keywords: list[ast.keyword], neutral: frozenset[str], none_is_default: bool):
    """The parts a covered call's model holds, None when the table does not cover the call."""
    if group is None or group["parts"] is None:
        return None
    found = set(group["parts"])
    probed = group.get("with", {})
    zero = set(group.get("zero", ()))
    for kw in keywords:
        value = kw.value
        if kw.arg in neutral or (none_is_default and isinstance(value, ast.Constant) and value.value is None):
            continue  # weights only; timm's create_model drops keywords set to None
        if kw.arg not in probed:
            return None
        rate = value.value if isinstance(value, ast.Constant) and type(value.value) in (int, float) else None
        if kw.arg == "num_classes":
            # Probed with one head size: any other is covered when the head size did not
            # change the answer.
            if rate is None and probed[kw.arg] != group["parts"]:
                return None
            found.update(probed[kw.arg])
        elif rate is None or rate < 0:
            return None
        elif rate == 0:
            if kw.arg not in zero:
                return None
        else:
            found.update(probed[kw.arg])
    return tuple(sorted(found))


def _argument(call: ast.Call, position: int, keyword: str) -> ast.expr | None:
    if len(call.args) > position:
        return call.args[position]
    return next((k.value for k in call.keywords if k.arg == keyword), None)


def _string(node: ast.expr | None, resolver: Resolver) -> str | None:
    """The model name written, or bound once to a constant (`MODEL = "resnet50"`)."""
    if isinstance(node, ast.Name):
        located = resolver.value_of(node)
        node = located.node if located is not None else None
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def _written(name: str) -> str:
    return name if name == TIMM else name.rpartition(".")[2]
