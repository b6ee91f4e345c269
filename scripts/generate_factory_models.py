"""Regenerate qlint/data/factory_models.json from timm and torchvision (or check it for drift).

QL201 and QL202 stay quiet on a capture in the wrong mode when nothing in the model reads
the mode. A model built by a library factory (`timm.create_model("vit_base_patch16_224")`,
`torchvision.models.resnet18()`) has no source in the checked project, and the linter must
not import torch, so what those factories build is snapshotted here from the libraries
themselves: every registered model is built (on the meta device, no weights) and each of
its submodules is judged.

A submodule makes the mode matter when it is

- batch or instance norm that tracks running statistics (`_NormBase.track_running_stats`),
- a torch.nn dropout with `p > 0`,
- anything whose class (below torch.nn.Module) reads `self.training` where the read is not
  settled: each read is evaluated on the built instance in both modes (attributes of `self`,
  constants, comparisons, `and`/`or`/`not`, conditional expressions). A read that gives the
  same value in both modes is settled (`self.attn_drop.p if self.training else 0.` with
  `attn_drop.p == 0`; `if self.training and self.drop_rate > 0:` with a zero rate), and so is
  the `training` argument of a dropout-like function whose probability evaluates to 0
  (`drop_path(x, self.drop_prob, self.training)`). Where the values differ, the part is
  named by its class; where the read cannot be evaluated (a local, a call, another
  module's `.training`), the whole model is unknown.

Factory arguments change what is built, so the table covers only what was built:

- a pretrained tag (`vit_base_patch14_dinov2.lvd142m`) only when no tag of that model changes
  anything but the head size, which the `num_classes` probe showed does not matter (a tag only
  sets defaults for `num_classes`, `global_pool`, `in_chans` and a fixed `img_size`: timm's
  `_update_default_model_kwargs`, whose source is checked);
- `num_classes` (probed with 7), and for a model judged mode-free by default its drop rates
  (torchvision's `dropout`, `attention_dropout`, `stochastic_depth_prob`; timm's
  `drop_path_rate`, `drop_rate`, `attn_drop_rate`, `proj_drop_rate`, the ones training
  recipes set), each that the model accepts probed alone with 0.1 (the parts it then adds)
  and all at 0 at once (whether zero rates keep the default); timm's rarer rates
  (`pos_drop_rate`, `patch_drop_rate`, ...) are not probed;
- keywords that only load weights into the modules built (`pretrained`, `checkpoint_path`,
  `cache_dir`; torchvision's `weights`, `progress` and legacy `pretrained`) are neutral by
  reading of the factories, not by probe (weights cannot be fetched here);
- any other keyword is not covered: the analysis treats such a call as unknown.

Models are grouped by identical verdict, so the file stays small. Run with the libraries on
the path (they are not dependencies of qlint), e.g. installed with `pip install --no-deps
--target DIR timm torchvision safetensors pillow` and `PYTHONPATH=DIR`. A torchvision wheel
whose compiled ops do not load against the installed torch (a CUDA build beside a CPU torch)
still defines its models: the op registrations are then skipped (no model is run here).
"""

from __future__ import annotations

import argparse
import ast
import inspect
import json
import logging
import sys
import textwrap
import time
import types
import warnings
from collections.abc import Iterator
from pathlib import Path

TABLE = Path(__file__).resolve().parent.parent / "qlint" / "data" / "factory_models.json"
FORMAT = 1
# Keywords whose only effect is to load weights into the modules the factory builds.
NEUTRAL = {
    "timm": ["cache_dir", "checkpoint_path", "pretrained"],
    "torchvision": ["pretrained", "progress", "weights"],
}
# Probed per model: the value set, and how a call's constant is matched to the probe.
NUM_CLASSES = 7
# The drop rates probed (each probe is a build of every mode-free model that accepts the
# keyword; one that does not is left unprobed, and a call setting it unknown). timm's
# `drop_path_rate` turns a mode-free ViT's blocks into DropPath, which reads `self.training`
# (`timm.create_model("vit_base_patch16_224", drop_path_rate=0.1)`, common in fine-tuning
# code); `drop_rate` adds a Dropout before the head, `attn_drop_rate` and `proj_drop_rate`
# Dropouts in the attention blocks (recipes set them too).
DROP_KEYWORDS = {
    "timm": ["drop_path_rate", "drop_rate", "attn_drop_rate", "proj_drop_rate"],
    "torchvision": ["attention_dropout", "dropout", "stochastic_depth_prob"],
}
DROP_PROBE = 0.1
# Functions (read in the libraries' source) whose `training` argument only gates dropping:
# the positions and keywords of their probabilities. Zero probabilities: mode-free.
_DROPOUT_LIKE = {
    **{f: ((1, "p"),) for f in ("dropout", "dropout1d", "dropout2d", "dropout3d", "alpha_dropout")},
    "feature_alpha_dropout": ((1, "p"),),
    "drop_path": ((1, "drop_prob"),),  # timm.layers.drop
    "stochastic_depth": ((1, "p"),),  # torchvision.ops
    "shifted_window_attention": ((7, "attention_dropout"), (8, "dropout")),  # torchvision swin
    "shifted_window_attention_3d": ((7, "attention_dropout"), (8, "dropout")),  # torchvision video swin
}
_SECONDS = 20.0  # a model slower to build than this on the meta device is left unknown


class Unknown(Exception):
    """The generator cannot decide whether the mode matters for this model."""


_UNSET = object()


def _evaluate(node: ast.expr, module, training: bool):
    """The value of `node` in a method of `module` when `module.training` is `training`."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id == "self":
            return module
        if node.id in ("True", "False", "None"):
            return {"True": True, "False": False, "None": None}[node.id]
        raise Unknown(f"name {node.id}")
    if isinstance(node, ast.Attribute):
        owner = _evaluate(node.value, module, training)
        if node.attr == "training":
            if owner is not module:
                raise Unknown("another module's .training")
            return training
        value = getattr(owner, node.attr, _UNSET)
        if value is _UNSET or inspect.isroutine(value):
            raise Unknown(f"attribute {node.attr}")
        return value
    if isinstance(node, ast.UnaryOp):
        value = _evaluate(node.operand, module, training)
        if isinstance(node.op, ast.Not):
            return not value
        if isinstance(node.op, ast.USub):
            return -value
        raise Unknown("operator")
    if isinstance(node, ast.BoolOp):
        value = None
        for operand in node.values:  # short-circuit, as Python does
            value = _evaluate(operand, module, training)
            if isinstance(node.op, ast.And) and not value:
                return value
            if isinstance(node.op, ast.Or) and value:
                return value
        return value
    if isinstance(node, ast.IfExp):
        test = _evaluate(node.test, module, training)
        return _evaluate(node.body if test else node.orelse, module, training)
    if isinstance(node, ast.Compare) and len(node.ops) == 1:
        left = _evaluate(node.left, module, training)
        right = _evaluate(node.comparators[0], module, training)
        ops = {
            ast.Eq: lambda a, b: a == b,
            ast.NotEq: lambda a, b: a != b,
            ast.Lt: lambda a, b: a < b,
            ast.LtE: lambda a, b: a <= b,
            ast.Gt: lambda a, b: a > b,
            ast.GtE: lambda a, b: a >= b,
            ast.Is: lambda a, b: a is b,
            ast.IsNot: lambda a, b: a is not b,
        }
        op = ops.get(type(node.ops[0]))
        if op is None:
            raise Unknown("comparison")
        return op(left, right)
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _CONVERSIONS
        and len(node.args) == 1
        and not node.keywords
    ):
        return _CONVERSIONS[node.func.id](_evaluate(node.args[0], module, training))
    raise Unknown(type(node).__name__)


_CONVERSIONS = {"float": float, "int": int, "bool": bool}


def _same(node: ast.expr, module) -> bool:
    return _evaluate(node, module, True) == _evaluate(node, module, False)


class _Reads:
    """The `.training` reads of a class's own methods, each with the node that decides
    what it does (an `if`, a conditional expression, a call it is passed to)."""

    def __init__(self, cls: type):
        try:
            source = textwrap.dedent(inspect.getsource(cls))
        except (OSError, TypeError) as exc:
            raise Unknown(f"no source for {cls.__qualname__}") from exc
        tree = ast.parse(source)
        parents: dict[int, ast.AST] = {}
        for node in ast.walk(tree):
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
        self.sites: list[tuple[ast.Attribute, ast.AST | None]] = []
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == "training" and isinstance(node.ctx, ast.Load):
                self.sites.append((node, _decider(node, parents)))
            elif isinstance(node, ast.Attribute) and node.attr == "training":
                raise Unknown(f"{cls.__qualname__} writes .training")


def _decider(read: ast.AST, parents: dict[int, ast.AST]) -> ast.AST | None:
    """The innermost `if` test, conditional expression or call argument holding `read`."""
    child, node = read, parents.get(id(read))
    while node is not None:
        if isinstance(node, (ast.If, ast.While)) and child is node.test:
            return node.test
        if isinstance(node, ast.IfExp):
            return node
        if isinstance(node, ast.Call) and child is not node.func:
            return node
        if isinstance(node, ast.Assert):
            return node
        if isinstance(node, (ast.stmt, ast.Lambda, ast.comprehension)):
            return None
        child, node = node, parents.get(id(node))
    return None


def _settled(read: ast.Attribute, decider: ast.AST | None, module) -> bool:
    """True: the read cannot change what `module` computes; False: it does. Unknown otherwise."""
    if isinstance(decider, ast.Assert):
        return True  # a check, not a computation
    if decider is None:
        raise Unknown("a .training read outside a test or a call")
    if not isinstance(decider, ast.Call):
        return _same(decider, module)
    func = decider.func
    name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
    if name == "train" and isinstance(func, ast.Attribute):
        return True  # a module made here is given the mode: the model's own mode, nothing computed
    args = [*decider.args, *(k.value for k in decider.keywords)]
    holder = next(a for a in args if read is a or any(n is read for n in ast.walk(a)))
    if _same(holder, module):
        return True
    if name not in _DROPOUT_LIKE:
        return False
    for position, keyword in _DROPOUT_LIKE[name]:
        prob = decider.args[position] if len(decider.args) > position else None
        prob = next((k.value for k in decider.keywords if k.arg == keyword), prob)
        if prob is None:
            raise Unknown(f"{name} without a probability")
        if _evaluate(prob, module, True):
            return False
    return True


class Judge:
    """The mode-dependent parts of built models, one class's source read once."""

    def __init__(self):
        import torch

        self.torch = torch
        self.reads: dict[type, _Reads] = {}
        self.unknown: dict[str, int] = {}  # why models were left unknown, for the summary

    def parts(self, model) -> list[str]:
        nn = self.torch.nn
        found: set[str] = set()
        for module in model.modules():
            cls = type(module)
            if isinstance(module, nn.modules.batchnorm._NormBase) and module.track_running_stats:
                found.add(cls.__name__)
                continue
            if isinstance(module, nn.modules.dropout._DropoutNd) and cls.forward.__module__.startswith("torch.nn"):
                if module.p > 0:
                    found.add(cls.__name__)
                continue
            if isinstance(module, nn.MultiheadAttention) and cls.forward is nn.MultiheadAttention.forward:
                # Its other `self.training` read only turns off a fused kernel of the same function.
                if module.dropout > 0:
                    found.add(cls.__name__)
                continue
            for klass in cls.__mro__:
                if klass is nn.Module or not issubclass(klass, nn.Module):
                    break
                if klass.__module__ == "torch.nn.modules.batchnorm":
                    continue  # judged above by their state
                if klass not in self.reads:
                    self.reads[klass] = _Reads(klass)
                for read, decider in self.reads[klass].sites:
                    try:
                        settled = _settled(read, decider, module)
                    except Unknown as exc:
                        where = ast.unparse(decider) if decider is not None else "?"
                        raise Unknown(f"{klass.__qualname__}: {exc} ({where[:80]})") from None
                    if not settled:
                        found.add(cls.__name__)
        return sorted(found)


def _quiet():
    logging.disable(logging.WARNING)
    warnings.simplefilter("ignore")


def _load_torchvision():
    """torchvision's models, also from a wheel whose compiled ops do not load here."""
    try:
        import torchvision
    except RuntimeError:
        for name in [m for m in sys.modules if m.startswith("torchvision")]:
            del sys.modules[name]
        sys.modules["torchvision._meta_registrations"] = types.ModuleType("torchvision._meta_registrations")
        import torchvision
    return torchvision


def _built(judge: Judge, build) -> list[str] | None:
    """The parts of what `build()` returns, or None (unknown) with the reason counted."""
    torch = judge.torch
    start = time.process_time()
    try:
        with torch.device("meta"):
            model = build()
        if time.process_time() - start > _SECONDS:
            raise Unknown("too slow to build")
        return judge.parts(model)
    except Unknown as exc:
        why = str(exc)
    except TypeError as exc:
        if "unexpected keyword" in str(exc) or "got an unexpected" in str(exc):
            raise
        why = f"build failed: {type(exc).__name__}"
    except Exception as exc:  # a model that does not build here is unknown
        why = f"build failed: {type(exc).__name__}"
    judge.unknown[why] = judge.unknown.get(why, 0) + 1
    return None


def _probe(judge: Judge, build, default: list[str] | None, keywords: list[str]) -> dict:
    """`with`: parts for each covered keyword; `zero`: the drop keywords a 0 leaves at default."""
    out: dict = {}
    if default is None:
        return out
    covered: dict[str, list[str]] = {}
    try:
        parts = _built(judge, lambda: build(num_classes=NUM_CLASSES))
        if parts is not None:
            covered["num_classes"] = parts
    except TypeError:
        pass
    accepted = []
    if not default:
        for keyword in keywords:
            try:
                parts = _built(judge, lambda k=keyword: build(**{k: DROP_PROBE}))
            except TypeError:
                continue
            accepted.append(keyword)
            if parts is not None:
                covered[keyword] = parts
        if accepted:
            try:
                zero = _built(judge, lambda: build(**dict.fromkeys(accepted, 0.0)))
            except TypeError:
                zero = None
            if zero == default:
                out["zero"] = [k for k in accepted if k in covered]
    if covered:
        out["with"] = covered
    return out


def _tag_settings(timm) -> object:
    """What a pretrained tag can change in a build: timm's `build_model_with_cfg` sets
    `num_classes`, `global_pool`, `in_chans` (and `img_size` for a fixed input size) from the
    tag's pretrained config, nothing else (`_update_default_model_kwargs`, checked here).
    None when that function is not the one read (then no tag is covered)."""
    from timm.models import _builder, get_pretrained_cfg

    source = inspect.getsource(_builder._update_default_model_kwargs)
    if "default_kwarg_names = ('num_classes', 'global_pool', 'in_chans')" not in source:
        return None

    def settings(name: str) -> tuple:
        cfg = get_pretrained_cfg(name).to_dict()
        size = cfg.get("input_size")
        img_size = tuple(size[-2:]) if size is not None and cfg.get("fixed_input_size") else None
        return (size[0] if size is not None else None, img_size, cfg.get("global_pool"))

    return settings


def _timm(judge: Judge, keep, reverse: bool = False) -> Iterator[tuple[str, str, dict, None]]:
    import timm

    tags: dict[str, list[str]] = {}
    for tagged in timm.list_pretrained():
        tags.setdefault(tagged.partition(".")[0], []).append(tagged)
    settings = _tag_settings(timm)
    names = timm.list_models()
    for name in reversed(names) if reverse else names:
        if not keep("timm", name):
            continue

        def build(n=name, **kwargs):
            return timm.create_model(n, pretrained=False, **kwargs)

        default = _built(judge, build)
        entry = {"parts": default, **_probe(judge, build, default, DROP_KEYWORDS["timm"])}
        # A tag is covered when it changes nothing but the head size, which was probed.
        if (
            default is not None
            and settings is not None
            and entry.get("with", {}).get("num_classes") == default
            and all(settings(t) == settings(name) for t in tags.get(name, []))
        ):
            entry["tags"] = True
        yield "timm", name, entry, None


def _torchvision(judge: Judge, keep) -> Iterator[tuple[str, str, dict, list[str]]]:
    """Entries by registered name, with the dotted paths each builder is reachable by."""
    import importlib

    tv = _load_torchvision()
    packages = ["torchvision.models"] + [
        f"torchvision.models.{p}" for p in ("detection", "optical_flow", "quantization", "segmentation", "video")
    ]
    for name in tv.models.list_models():
        if not keep("torchvision", name):
            continue
        builder = tv.models.get_model_builder(name)

        def build(b=builder, **kwargs):
            return b(weights=None, **kwargs)

        default = _built(judge, build)
        entry = {"parts": default, **_probe(judge, build, default, DROP_KEYWORDS["torchvision"])}
        found = set()
        for package in [*packages, builder.__module__]:
            module = importlib.import_module(package)
            if getattr(module, builder.__name__, None) is builder:
                found.add(f"{package}.{builder.__name__}")
        yield "torchvision", name, entry, sorted(found)


def _lines(path: Path) -> list[str]:
    return path.read_text().splitlines()


def judged(keep, reverse: bool = False) -> Iterator[tuple[str, str, dict, list[str] | None]]:
    """(library, model name, entry, torchvision paths) for each model `keep(library, name)` selects."""
    _quiet()
    import torch

    torch.set_num_threads(1)
    _load_torchvision()  # before timm, which imports it
    judge = Judge()
    if not reverse:
        yield from _torchvision(judge, keep)
    yield from _timm(judge, keep, reverse)
    if judge.unknown:
        print("unknown:", json.dumps(dict(sorted(judge.unknown.items(), key=lambda kv: -kv[1]))), file=sys.stderr)


def assemble(rows) -> dict:
    """The table: models grouped by identical verdict."""
    import timm

    tv = sys.modules["torchvision"]
    groups: dict[str, dict] = {}
    for library, name, entry, paths in sorted(rows, key=lambda r: (r[0], r[1])):
        group = groups.setdefault(json.dumps(entry, sort_keys=True), {**entry, "timm": [], "torchvision": {}})
        if library == "timm":
            group["timm"].append(name)
        else:
            group["torchvision"][name] = paths
    ordered = sorted(groups.values(), key=lambda g: (g["parts"] is None, json.dumps(g, sort_keys=True)))
    for group in ordered:
        for library in ("timm", "torchvision"):
            if not group[library]:
                del group[library]
    return {
        "format": FORMAT,
        "versions": {"timm": timm.__version__, "torchvision": tv.__version__.split("+")[0]},
        "neutral": NEUTRAL,
        "probes": {"num_classes": NUM_CLASSES, "drop": DROP_PROBE},
        # A merge of shards that did not all finish holds fewer: the others are unknown.
        "registered": {"timm": len(timm.list_models()), "torchvision": len(tv.models.list_models())},
        "groups": ordered,
    }


def generate(only: set[str] | None = None) -> dict:
    return assemble(list(judged(lambda library, name: only is None or name in only)))


def dump(table: dict) -> str:
    """One group a line: diffs stay readable, the file small."""
    head = {k: v for k, v in table.items() if k != "groups"}
    lines = [json.dumps(g, sort_keys=True, separators=(",", ":")) for g in table["groups"]]
    body = json.dumps(head, sort_keys=True, indent=1)[:-2]
    return body + ',\n "groups": [\n' + ",\n".join(lines) + "\n ]\n}\n"


def _entries(table: dict) -> dict[str, str]:
    """Each model's verdict (and torchvision paths), by library and name."""
    out = {}
    for group in table["groups"]:
        verdict = {k: v for k, v in group.items() if k not in ("timm", "torchvision")}
        for name in group.get("timm", ()):
            out[f"timm:{name}"] = json.dumps(verdict, sort_keys=True)
        for name, paths in group.get("torchvision", {}).items():
            out[f"torchvision:{name}"] = json.dumps({**verdict, "paths": paths}, sort_keys=True)
    return out


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=TABLE)
    parser.add_argument("--check", action="store_true", help="exit 1 if the bundled table differs")
    parser.add_argument("--only", nargs="*", help="only these model names (for a quick look)")
    parser.add_argument("--shard", help="I/N: judge every N-th model from the I-th, one JSON line each, to --out")
    parser.add_argument("--reverse", action="store_true", help="with --shard: timm's models from the last")
    parser.add_argument("--merge", nargs="*", type=Path, help="write the table from the shards' files")
    args = parser.parse_args(argv)
    if args.shard:
        index, count = map(int, args.shard.split("/"))
        seen = iter(range(10**9))
        with args.out.open("w") as out:
            for row in judged(lambda library, name: next(seen) % count == index, args.reverse):
                out.write(json.dumps(row) + "\n")
                out.flush()
        return 0
    if args.merge:
        _load_torchvision()
        # Shards may overlap (a `--reverse` one meeting a forward one): one row per model.
        rows = {tuple(row[:2]): tuple(row) for path in args.merge for row in map(json.loads, _lines(path))}
        rows = list(rows.values())
        args.out.write_text(dump(assemble(rows)))
        return 0
    table = generate(set(args.only) if args.only else None)
    if args.check and args.only:
        stale = sorted(set(_entries(table).items()) - set(_entries(json.loads(TABLE.read_text())).items()))
        for name, entry in stale:
            print(f"{name}: {entry} is not in the bundled table", file=sys.stderr)
        return 1 if stale else 0
    text = dump(table)
    if args.check:
        if TABLE.read_text() != text:
            print(f"{TABLE} is stale: run python scripts/generate_factory_models.py", file=sys.stderr)
            return 1
        return 0
    args.out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
