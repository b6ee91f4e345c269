"""Which calls capture, prepare, convert or switch the mode of a model, by qualified name.

Names come from `Resolver.qualname`, so `from torch.export import export`,
`import torch.export as te` and `from torchao.quantization.pt2e.quantize_pt2e import
prepare_pt2e` (or the old `torch.ao.quantization.quantize_pt2e`) all count.
"""

from __future__ import annotations

import ast
from collections.abc import Callable

from qlint.analysis.flow.factory_models import FACTORIES
from qlint.analysis.flow.model_torch_nn import torch_nn_kind
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.names.scope import own_init
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk_kinds
from qlint.value_classes import value_class


@value_class(frozen=True)
class Api:
    kind: str  # capture | executorch | prepare | prepare_qat | convert | allow_train_eval | move | load_program | copy
    name: str  # the qualified name it was recognised by
    model_keywords: tuple[str, ...] = ()
    returns_module: bool = False  # the capture returns a GraphModule, not an ExportedProgram


_CAPTURES = {
    "torch.export.export": ("mod",),
    "torch.export.export_for_training": ("mod",),
    "torch.export.draft_export": ("mod",),
    "torch.export._trace._export": ("mod",),
}
_GRAPH_CAPTURES = {"torch._export.capture_pre_autograd_graph": ("f",)}
_EXECUTORCH = frozenset(
    {
        "executorch.export.export",
        "executorch.export.export.export",
        "executorch.export.ExportSession",
        "executorch.export.export.ExportSession",
    }
)
_PT2E = {
    "prepare_pt2e": "prepare",
    "prepare_qat_pt2e": "prepare_qat",
    "convert_pt2e": "convert",
    "allow_exported_model_train_eval": "allow_train_eval",
    "_allow_exported_model_train_eval": "allow_train_eval",
    "move_exported_model_to_eval": "move",
    "move_exported_model_to_train": "move",
    "_move_exported_model_to_eval": "move",
    "_move_exported_model_to_train": "move",
}
_PT2E_PACKAGES = ("torchao.", "torch.ao.", "torch.quantization.", "executorch.")
_EXPORT_RECIPE = frozenset({"executorch.export.ExportRecipe", "executorch.export.recipe.ExportRecipe"})
# Not `torchao.prototype.quantization.module_swap.QuantizationRecipe`: an unrelated class.
_QUANT_RECIPE = frozenset({"executorch.export.QuantizationRecipe", "executorch.export.recipe.QuantizationRecipe"})


def classify_call(name: str | None, func: ast.expr) -> Api | None:
    if name is None:
        # `prepare_pt2e` brought in by a star import: the name alone is unambiguous.
        if isinstance(func, ast.Name) and func.id in ("prepare_pt2e", "prepare_qat_pt2e", "convert_pt2e"):
            return Api(_PT2E[func.id], func.id, ("model",))
        return None
    if name in _CAPTURES:
        return Api("capture", name, _CAPTURES[name])
    if name in _GRAPH_CAPTURES:
        return Api("capture", name, _GRAPH_CAPTURES[name], returns_module=True)
    if name in _EXECUTORCH:
        return Api("executorch", name, ("model",))
    last = name.rpartition(".")[2]
    if last in _PT2E and name.startswith(_PT2E_PACKAGES):
        return Api(_PT2E[last], name, ("model",))
    if name == "torch.export.load":
        return Api("load_program", name)
    if name in ("copy.deepcopy", "copy.copy"):
        return Api("copy", name, ("x",))
    return None


def api_kind(node: ast.AST, qualname: Callable[[ast.expr], str | None]) -> str | None:
    """The kind of API the call `node` calls (`classify_call`); None for any other call, or
    for a node that is no call."""
    if not isinstance(node, ast.Call):
        return None
    api = classify_call(qualname(node.func), node.func)
    return api.kind if api is not None else None


def is_class_call(name: str | None, func: ast.expr) -> bool:
    """By its name only, for a callee no class of the project resolves to (`torch.nn.Linear`, a
    builder of a new model): the result starts in train mode."""
    if name is None:
        return False
    if name.startswith(FACTORIES):
        return True
    last = name.rpartition(".")[2]
    # An all-capitals name is a constant (`MODELS`), unless torch.nn lists it as a class
    # (`nn.GLU()`, `nn.GELU()`, `nn.LSTM(...)`: what those hold is read from the table).
    return last[:1].isupper() and (not last.isupper() or _listed_torch_nn(name, last))


def _listed_torch_nn(name: str, last: str) -> bool:
    return name.startswith("torch.nn.") and name.count(".") == 2 and torch_nn_kind(last, None)[1]


def recipe_flow(
    expr: ast.expr | None, resolver: Resolver, qualname: Callable[[ast.AST], str | None]
) -> tuple[ast.Call, str] | None:
    """The `QuantizationRecipe(...)` call of a PTQ `export_recipe`, with its file; None otherwise.

    ExecuTorch's `QuantizeStage` captures with `torch.export.export` before `prepare_pt2e`
    when the recipe has quantizers and `is_qat` is false; a QAT recipe calls `train()` itself.
    """
    export_recipe = _call_of(expr, resolver, qualname, _EXPORT_RECIPE)
    if export_recipe is None:
        return None
    call, sub, path = export_recipe
    quant = _call_of(_arg(call, 1, "quantization_recipe"), sub, sub.qualname, _QUANT_RECIPE)
    if quant is None:
        return None
    call, _, path = quant
    quantizers = _arg(call, 0, "quantizers")
    if quantizers is None or (isinstance(quantizers, ast.Constant) and quantizers.value is None):
        return None
    is_qat = _arg(call, 2, "is_qat")
    if is_qat is not None and not (isinstance(is_qat, ast.Constant) and is_qat.value is False):
        return None
    return call, path


def _call_of(expr, resolver: Resolver, qualname, names: frozenset[str]):
    if expr is None:
        return None
    located = resolver.value_of(expr)
    if located is None or not isinstance(located.node, ast.Call):
        return None
    sub = resolver.for_scope(located.scope)
    name = (qualname if sub is resolver else sub.qualname)(located.node.func)
    return (located.node, sub, located.scope.path) if name in names else None


def _arg(call: ast.Call, index: int, keyword: str) -> ast.expr | None:
    return argument(call, index, (keyword,))


# -- syntax shared by the interpreter and the rules -----------------------------------------
def argument(call: ast.Call, index: int, keywords: tuple[str, ...]) -> ast.expr | None:
    """Positional argument `index` or the first of `keywords` (None behind a `*args`)."""
    if len(call.args) > index and not any(isinstance(a, ast.Starred) for a in call.args[: index + 1]):
        return call.args[index]
    return next((kw.value for kw in call.keywords if kw.arg in keywords), None)


def argument_for(call: ast.Call, index: int, name: str | None) -> ast.expr | None:
    """The argument `call` passes for parameter `index` (named `name`, keyword-passed), as
    written; None when none, or when a `*args` at or before that position hides which."""
    if index < 0:
        return None
    for position, arg in enumerate(call.args):
        if isinstance(arg, ast.Starred):
            return None
        if position == index:
            return arg
    return next((kw.value for kw in call.keywords if kw.arg is not None and kw.arg == name), None)


def key(node: ast.AST) -> str | None:
    """The variable a flow tracks: a local name or `self.<attr>`."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "self":
        return f"self.{node.attr}"
    return None


def switch_mode(node: ast.Call, attr: str) -> str | None:
    """ "eval" for `.eval()`/`.train(False)`, "train" for `.train()`/`.train(True)`, None for `.train(flag)`."""
    if attr == "eval":
        return "eval"
    flag = node.args[0] if node.args else next((k.value for k in node.keywords if k.arg == "mode"), None)
    if flag is None:
        return "train"
    if isinstance(flag, ast.Constant) and isinstance(flag.value, bool):
        return "train" if flag.value else "eval"
    return None


def last_name(func: ast.expr) -> str:
    """The name a call's callee ends with (`prepare_pt2e` of `q.prepare_pt2e`); "" for others."""
    return func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""


def mode_call(node: ast.AST) -> tuple[ast.expr, str | None] | None:
    """(receiver, mode) of `<receiver>.eval()` / `<receiver>.train(...)`."""
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("eval", "train")
        and len(node.args) + len(node.keywords) <= 1
    ):
        return node.func.value, switch_mode(node, node.func.attr)
    return None


def init_sets_eval(cls: ast.ClassDef) -> bool:
    """`self.eval()` in `__init__`: instances start in eval mode.

    Asked at every construction of the class; the answer is kept on the class node (a
    class of another module is asked again by every file that builds it)."""
    return kept_on_node(cls, _INIT_SETS_EVAL, _init_sets_eval)


def _init_sets_eval(cls: ast.ClassDef) -> bool:
    init = own_init(cls)
    return init is not None and any(
        (m := mode_call(n)) is not None and m[1] == "eval" and key(m[0]) == "self"
        for n in walk_kinds(init, _CALLS)  # computed for every class of every module summarised
    )


_CALLS = frozenset({ast.Call})


_INIT_SETS_EVAL = "_qlint_init_sets_eval"


def init_mirrored_param(cls: ast.ClassDef) -> str | None:
    """The `__init__` parameter whose mode instances take: the last switch of `self` in the
    body of `__init__` (not under a branch) is `self.train(<param>.training)`, and nothing
    rebinds the parameter. A wrapper written so (`self.train(model.training)`) is in the mode
    of the module it was given, whichever that is, and `.train(flag)` moves its children too."""
    return kept_on_node(cls, _INIT_MIRRORS, _init_mirrored_param) or None


def _init_mirrored_param(cls: ast.ClassDef) -> str:
    init = own_init(cls)
    if init is None:
        return ""
    last = None
    for stmt in init.body:
        m = mode_call(stmt.value) if isinstance(stmt, ast.Expr) else None
        if m is not None and key(m[0]) == "self":
            last = stmt.value
    flag = last.args[0] if last is not None and last.args and not last.keywords else None
    if not (
        last is not None
        and last.func.attr == "train"
        and isinstance(flag, ast.Attribute)
        and flag.attr == "training"
        and isinstance(flag.value, ast.Name)
    ):
        return ""
    name = flag.value.id
    params = {a.arg for a in (*init.args.posonlyargs, *init.args.args[1:], *init.args.kwonlyargs)}
    rebound = any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(init))
    return name if name in params and not rebound else ""


_INIT_MIRRORS = "_qlint_init_mirrored_param"
