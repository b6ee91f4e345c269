"""Calls that hand back the module they were given, in the mode it was in.

A caller that evals a model and then passes it through such a call still holds an eval-mode
model, and a helper that stores the result back over the part it took (`model.model =
torch.compile(model.model)`) leaves that part's mode as it was. Library calls are known by
qualified name, each from its source:

- `torch.compile(model)` (torch 2.13, `torch/_dynamo/eval_frame.py`): an `OptimizedModule`
  registers the module as `_orig_mod` and its `training` is a property reading and writing
  `_orig_mod.training`; nothing in its construction switches a module. Inside an export it
  returns the module itself.
- `habana_frameworks.torch.hpu.wrap_in_hpu_graph(module)` (Habana's PyTorch bridge,
  HabanaAI/gaudi-pytorch-bridge `python_packages/habana_frameworks/torch/hpu/graphs.py`, read at
  1.19.0 and at a later stored version): replaces `module.forward` by a graph-replaying wrapper
  of the original bound method, adds `clear_cache`/`clear_inputs`, and returns `module` itself.
- `neural_compressor.torch.quantization.prepare`/`convert` with an `FP8Config` (intel/
  neural-compressor, `torch/quantization/quantize.py` and `torch/algorithms/fp8_quant`): the
  model itself (or a deep copy with `inplace=False`), whose measured or quantized layers are
  swapped for patched modules that take the replaced module's `__dict__` (its `training` flag
  included); nothing under `neural_compressor/torch` calls `.train()` or sets `.training`. Other
  configuration classes dispatch to other algorithms (some export the model), so the call keeps
  the mode only when its configuration is a construction of `FP8Config`.

Project functions and classes are judged from their bodies by the walk (`kept_calls`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.evaled_parts import super_init
from qlint.analysis.names.scope import parameter_args
from qlint.value_classes import value_class


@value_class(frozen=True)
class Keeper:
    """Where the call takes the module (`position`, or `keyword`), and for a library that
    dispatches on its configuration, where that is and the classes it must be built from."""

    position: int
    keyword: str
    config: tuple[int, str] | None = None
    configs: frozenset[str] = frozenset()
    # Where a flag asking for a copy rather than the object itself is passed.
    inplace: tuple[int, str] | None = None


_FP8 = frozenset(
    {"neural_compressor.torch.quantization.FP8Config", "neural_compressor.torch.quantization.config.FP8Config"}
)
_INC = Keeper(0, "model", (1, "quant_config"), _FP8, (2, "inplace"))

LIBRARY = {
    "torch.compile": Keeper(0, "model"),
    "habana_frameworks.torch.hpu.wrap_in_hpu_graph": Keeper(0, "module"),
    "habana_frameworks.torch.hpu.graphs.wrap_in_hpu_graph": Keeper(0, "module"),
    "neural_compressor.torch.quantization.prepare": _INC,
    "neural_compressor.torch.quantization.convert": _INC,
    "neural_compressor.torch.quantization.quantize.prepare": _INC,
    "neural_compressor.torch.quantization.quantize.convert": _INC,
}

# Class methods of a configuration class that build an instance of it.
_BUILDERS = frozenset({"from_json_file", "from_dict"})


def argument(node: ast.Call, position: int, keyword: str) -> ast.expr | None:
    """The argument the call passes at `position` or as `keyword`; None when a starred
    argument may stand for it."""
    args = node.args
    if any(isinstance(a, ast.Starred) for a in args[: position + 1]):
        return None
    if len(args) > position:
        return args[position]
    found = next((kw.value for kw in node.keywords if kw.arg == keyword), None)
    if found is None and any(kw.arg is None for kw in node.keywords):
        return None
    return found


def configured(keeper: Keeper, node: ast.Call, func: ast.AST, qualname) -> bool:
    """The call's configuration is one `keeper` asks for: a construction of one of its classes
    (`FP8Config(...)`, `FP8Config.from_json_file(path)`), written there or bound to a local
    name by every assignment to it (`qualname`: how the body's names resolve)."""
    if keeper.config is None:
        return True
    expr = argument(node, *keeper.config)
    values = [expr] if not isinstance(expr, ast.Name) else bindings(func, expr.id)
    return bool(values) and all(_builds(v, keeper.configs, qualname) for v in values)


def _builds(expr: ast.expr | None, classes: frozenset[str], qualname) -> bool:
    if not isinstance(expr, ast.Call):
        return False
    func = expr.func
    if qualname(func) in classes:
        return True
    return isinstance(func, ast.Attribute) and func.attr in _BUILDERS and qualname(func.value) in classes


def bindings(func: ast.AST, name: str) -> list[ast.expr] | None:
    """The values every binding of `name` in `func`'s own scope assigns (`name = value`), or
    None when it is a parameter, declared global or nonlocal, or bound any other way (a loop,
    `with`, an import, unpacking anything but a tuple display of the target's length, `+=`,
    a nested `def`)."""
    # A module's names may be rebound from anywhere; a function's from a nested `nonlocal` only.
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or rebound(func, name):
        return None
    if any(a.arg == name for a in parameter_args(func)):
        return None
    values: list[ast.expr] = []
    for node in own_scope(func):
        if isinstance(node, (ast.Global, ast.Nonlocal)) and name in node.names:
            return None
        if isinstance(node, ast.Assign):
            for target in node.targets:
                found = _assigned(target, node.value, name)
                if found is None:
                    return None
                values.extend(found)
        elif _binds_otherwise(node, name):
            return None
    # Any other store of the name (a loop target, `with ... as`, `+=`, `:=`, `del`) is no value of ours.
    stores = sum(
        1 for n in own_scope(func) if isinstance(n, ast.Name) and n.id == name and not isinstance(n.ctx, ast.Load)
    )
    return values if stores == len(values) else None


def _assigned(target: ast.expr, value: ast.expr, name: str) -> list[ast.expr] | None:
    """The values `target = value` gives `name`. A tuple target unpacking a tuple display of
    its length, with no starred element on either side, binds each element to its own value
    (`im, model = im.half(), model.half()`: every value is evaluated before any name is bound,
    so each is read as it stood before the statement). None when `name` is bound any other way
    (from a call's result, through an attribute or subscript it names)."""
    if isinstance(target, ast.Name):
        return [value] if target.id == name else []
    if (
        isinstance(target, ast.Tuple | ast.List)
        and isinstance(value, ast.Tuple | ast.List)
        and len(target.elts) == len(value.elts)
        and not any(isinstance(e, ast.Starred) for e in (*target.elts, *value.elts))
    ):
        found: list[ast.expr] = []
        for element, part in zip(target.elts, value.elts, strict=True):
            inner = _assigned(element, part, name)
            if inner is None:
                return None
            found.extend(inner)
        return found
    return None if any(isinstance(n, ast.Name) and n.id == name for n in ast.walk(target)) else []


def rebound(func: ast.AST, name: str) -> bool:
    """`name` is declared `global` or `nonlocal` in `func` or in a function nested in it."""
    return any(isinstance(n, (ast.Global, ast.Nonlocal)) and name in n.names for n in ast.walk(func))


def hands_back_same(keeper: Keeper, node: ast.Call) -> bool:
    """The call returns the very object it was given (not a copy in the same mode), as far as
    the call says: neural-compressor's `inplace=False` deep-copies the model."""
    if keeper.inplace is None:
        return True
    flag = argument(node, *keeper.inplace)
    return flag is None or (isinstance(flag, ast.Constant) and flag.value is True)


def _binds_otherwise(node: ast.AST, name: str) -> bool:
    """A binding no `Name` store shows: an import, a `def`/`class`, an `except ... as`, a match capture."""
    if isinstance(node, (ast.Import, ast.ImportFrom)):
        return any((a.asname or a.name.split(".")[0]) == name for a in node.names)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return node.name == name
    if isinstance(node, ast.ExceptHandler):
        return node.name == name
    return isinstance(node, (ast.MatchAs, ast.MatchStar, ast.MatchMapping)) and name in {
        getattr(node, "name", None),
        getattr(node, "rest", None),
    }


def own_scope(func: ast.AST):
    """The nodes of `func`'s body outside nested functions, lambdas and classes (whose
    definitions themselves are yielded: they bind their names here)."""
    stack = [*ast.iter_child_nodes(func)]
    while stack:
        node = stack.pop()
        yield node
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        stack.extend(ast.iter_child_nodes(node))


def copied_parameter(cls: ast.ClassDef) -> str | None:
    """The parameter of the class's `__init__` whose module each instance copies whole:
    the body (a docstring and `super().__init__()` aside) is `self.__dict__.update(p.__dict__)`
    alone, so the instance holds that module's `training` flag and its very `_modules`
    (optimum-habana's `ScopedLinearAllReduce(mod)`). None for any other class, and for one that
    defines its own `train`, `eval` or `__setattr__`, which could read or set them otherwise."""
    methods = {n.name: n for n in cls.body if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef))}
    if any(name in methods for name in ("train", "eval", "__setattr__")) or "__init__" not in methods:
        return None
    init = methods["__init__"]
    if init.decorator_list:
        return None
    params = [a.arg for a in parameter_args(init, star=False)]
    body = [s for s in init.body if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))]
    if body and super_init(body[0]):
        body = body[1:]
    if len(params) < 2 or len(body) != 1 or not isinstance(body[0], ast.Expr):
        return None
    call = body[0].value
    self_name = params[0]
    if not (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "update"
        and _attr_of(call.func.value, self_name, "__dict__")
        and len(call.args) == 1
        and not call.keywords
    ):
        return None
    source = call.args[0]
    if isinstance(source, ast.Attribute) and source.attr == "__dict__" and isinstance(source.value, ast.Name):
        name = source.value.id
        return name if name in params[1:] else None
    return None


def init_of(cls: ast.ClassDef) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
    """The class's own `__init__`."""
    return next(
        (n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and n.name == "__init__"), None
    )


def _attr_of(expr: ast.expr, name: str, attr: str) -> bool:
    if not isinstance(expr, ast.Attribute) or expr.attr != attr:
        return False
    return isinstance(expr.value, ast.Name) and expr.value.id == name


__all__ = [
    "LIBRARY",
    "Keeper",
    "argument",
    "bindings",
    "configured",
    "copied_parameter",
    "hands_back_same",
    "init_of",
    "own_scope",
    "rebound",
]
