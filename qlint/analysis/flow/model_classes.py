"""Which class a call builds, and which of its submodules make train/eval mode matter.

A call builds a model when its callee resolves to a class: one defined in the function
itself, in the module (`_ConvSingle()`, `Outer._Net()`), or in another module of the
project. Only names that resolve nowhere (`torch.nn.Linear`, a third-party model) are
judged by the shape of their name. A resolved class is also read for its content: batch
norm, dropout and `self.training` are what a capture in the wrong mode changes; a model
without any of them is captured the same in both modes.
"""

from __future__ import annotations

import ast
import sys
from dataclasses import dataclass, field

from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import ModuleScope

# Model builders that return a freshly initialised module, i.e. one in train mode.
FACTORIES = ("torchvision.models.", "timm.create_model")
# torch.nn modules whose forward depends on `self.training` (running statistics or dropping).
_ALWAYS = frozenset(
    {
        "BatchNorm1d",
        "BatchNorm2d",
        "BatchNorm3d",
        "SyncBatchNorm",
        "LazyBatchNorm1d",
        "LazyBatchNorm2d",
        "LazyBatchNorm3d",
        "Dropout",
        "Dropout1d",
        "Dropout2d",
        "Dropout3d",
        "AlphaDropout",
        "FeatureAlphaDropout",
    }
)
# Dropout by default (p=0.1), unless built with `dropout=0`.
_DROPOUT_DEFAULT = frozenset(
    {"Transformer", "TransformerEncoderLayer", "TransformerDecoderLayer", "TransformerEncoder", "TransformerDecoder"}
)
# Dropout only when built with a non-zero `dropout`.
_DROPOUT_ARG = frozenset({"MultiheadAttention", "RNN", "LSTM", "GRU"})
# Instance norm uses running statistics in eval mode only with `track_running_stats=True`.
_TRACKING = frozenset({"InstanceNorm1d", "InstanceNorm2d", "InstanceNorm3d"})
# torch.nn classes whose arguments are modules rather than hyperparameters.
_CONTAINERS = frozenset({"Sequential", "ModuleList", "ModuleDict", "DataParallel", "DistributedDataParallel"})
_TORCH_PREFIXES = ("torch.", "torchao.", "executorch.exir", "copy.")
_MAX_DEPTH = 4


@dataclass(frozen=True)
class ModelClass:
    node: ast.ClassDef
    scope: ModuleScope  # the module it is written in


@dataclass(frozen=True)
class Content:
    """What a model holds that behaves differently in train and eval mode."""

    name: str  # the class (or callable) as written at the construction
    dependent: tuple[str, ...]  # e.g. ("BatchNorm2d", "Dropout", "`self.training`")
    complete: bool  # every part of the model was resolved: an empty `dependent` means none


@dataclass(eq=False)
class Built:
    """A construction: what it holds is worked out only when a message asks."""

    call: ast.Call
    cls: ModelClass | None
    resolver: Resolver
    index: ClassIndex
    name: str
    # A wrapper of modules built before (`nn.Sequential(conv, bn)`): what they are, None when
    # one of them was not built where we could see it.
    parts: tuple[Built, ...] | None = ()

    def content(self) -> Content:
        own = self.index.content(self.call, self.cls, self.resolver, self.name)
        if self.parts is None:
            return Content(own.name, own.dependent, False)
        inner = [p.content() for p in self.parts]
        found = {*own.dependent, *(d for c in inner for d in c.dependent)}
        complete = own.complete and all(c.complete for c in inner) and self._arguments(found)
        return Content(own.name, tuple(sorted(found)), complete)

    def _arguments(self, found: set[str]) -> bool:
        """What the call passes may be modules too: read modules built inline, and give up on a
        name whose value is not one of `parts` (`nn.DataParallel(model)`, `Wrapper(backbone)`)."""
        if not isinstance(self.call, ast.Call):
            return True
        last = self.name.rpartition(".")[2]
        hyperparameters = self.cls is None and last not in _CONTAINERS  # `nn.Linear(n, m)`
        complete = True
        for arg in [*self.call.args, *(kw.value for kw in self.call.keywords)]:
            if _constant(arg) or hyperparameters:
                continue
            if isinstance(arg, ast.Call):
                if self.cls is not None:  # a torch.nn call's own walk read these already
                    complete &= self.index._calls_content([arg], self.resolver, found, 0)
            elif not self.parts:
                complete = False
        return complete


@dataclass
class ClassIndex:
    """Resolves classes of one file's check and memoises what they hold (shared by its functions)."""

    project: object  # the ProjectIndex
    requester: str  # the file checked: project modules are found from its import root
    _modules: dict[str, ModuleScope | None] = field(default_factory=dict)
    _contents: dict[int, tuple[tuple[str, ...], bool]] = field(default_factory=dict)

    def module_scope(self, module: str) -> ModuleScope | None:
        if module not in self._modules:  # one file-system lookup per module name
            self._modules[module] = self.project.module_scope(module, self.requester)
        return self._modules[module]

    def resolve(self, func: ast.expr, resolver: Resolver, local_classes: dict, name=False) -> ModelClass | None:
        """The class `func` names, or None when it names no class we can find (`name`: its
        qualified name if the caller has it already)."""
        parts = dotted_parts(func)
        if not parts:
            return None
        head, rest = parts[0], parts[1:]
        if head in resolver.local or head in ("self", "cls"):
            return None  # a variable (a parameter, or a class rebound by assignment)
        if head in local_classes:
            local = local_classes[head]  # None: defined twice
            return _nested(ModelClass(local, resolver.scope), rest) if local is not None else None
        scope = resolver.scope
        if head in scope.classes and head not in scope.imports and head not in scope.assigns:
            return _nested(ModelClass(scope.classes[head].node, scope), rest)
        return self._project_class(resolver.qualname(func) if name is False else name)

    def names_function(self, func: ast.expr, resolver: Resolver, name=False) -> bool:
        """`func` resolves to a function of the project: a call of it builds no class here."""
        parts = dotted_parts(func)
        if not parts or parts[0] in resolver.local:
            return False
        if len(parts) == 1 and parts[0] in resolver.scope.functions:
            return True
        name = resolver.qualname(func) if name is False else name
        if not name or "." not in name or name.startswith(_TORCH_PREFIXES):
            return False
        module, _, attr = name.rpartition(".")
        scope = self.module_scope(module) if self.module_scope(name.split(".")[0]) is not None else None
        return scope is not None and attr in scope.functions

    def _project_class(self, name: str | None) -> ModelClass | None:
        if not name or "." not in name or name.startswith(_TORCH_PREFIXES):
            return None
        parts = name.split(".")
        if self.module_scope(parts[0]) is None:
            return None  # not a package of this project: one lookup per package, not per prefix
        for cut in range(len(parts) - 1, max(0, len(parts) - 3), -1):  # `mod.Cls` or `mod.Outer.Inner`
            scope = self.module_scope(".".join(parts[:cut]))
            if scope is None:
                continue
            cls = scope.classes.get(parts[cut])
            return _nested(ModelClass(cls.node, scope), parts[cut + 1 :]) if cls is not None else None
        return None

    # -- content ----------------------------------------------------------------------------
    def content(self, call: ast.Call, cls: ModelClass | None, resolver: Resolver, name: str) -> Content:
        """What the model `call` builds holds; `cls` is its resolved class (None: a torch.nn class)."""
        if cls is not None:
            dependent, complete = self._class_content(cls, 0)
            return Content(name, dependent, complete)
        if not isinstance(call, ast.Call):  # `nn.BatchNorm2d` named in a dict of factories
            return Content(name, (), False)
        found: set[str] = set()
        complete = self._calls_content([call], resolver, found, 0)
        return Content(name, tuple(sorted(found)), complete)

    def _class_content(self, cls: ModelClass, depth: int) -> tuple[tuple[str, ...], bool]:
        key = id(cls.node)
        if key in self._contents:
            return self._contents[key]
        self._contents[key] = ((), False)  # a class that holds itself: unknown
        resolver = Resolver(cls.scope, _NO_PROJECT, None)
        found: set[str] = set()
        complete = depth < _MAX_DEPTH
        for base in cls.node.bases:
            complete &= self._base(base, resolver, found, depth)
        calls = [n for n in ast.walk(cls.node) if isinstance(n, ast.Call)]
        if any(_reads_training(n) for n in ast.walk(cls.node)):
            found.add("`self.training`")
        complete &= self._calls_content(calls, resolver, found, depth, own=cls.node)
        out = (tuple(sorted(found)), complete)
        self._contents[key] = out
        return out

    def _base(self, base: ast.expr, resolver: Resolver, found: set[str], depth: int) -> bool:
        name = resolver.qualname(base) or ""
        if name.startswith("torch.nn.") or name in ("object", "typing.Generic"):
            return True
        cls = self.resolve(base, resolver, {})
        if cls is None:
            return False
        dependent, complete = self._class_content(cls, depth + 1)
        found.update(dependent)
        return complete

    def _calls_content(self, calls, resolver: Resolver, found: set[str], depth: int, own=None) -> bool:
        """Add the mode-dependent modules these calls build; False if one of them is unknown."""
        complete = True
        locals_ = {n.name: n for n in ast.walk(own) if isinstance(n, ast.ClassDef) and n is not own} if own else {}
        for call in (n for c in calls for n in ast.walk(c) if isinstance(n, ast.Call)):
            name = resolver.qualname(call.func) or ""
            last = name.rpartition(".")[2] or (dotted_parts(call.func) or [""])[-1]
            if name.startswith("torch.nn."):
                kind = _torch_kind(last, call)
                if kind:
                    found.add(kind)
                continue
            cls = self.resolve(call.func, resolver, locals_)
            if cls is not None:
                if own is not None and cls.node is own:
                    continue
                dependent, sub_complete = self._class_content(cls, depth + 1)
                found.update(dependent)
                complete &= sub_complete
            elif name.startswith(FACTORIES) or (_foreign(name) and last[:1].isupper() and not last.isupper()):
                complete = False  # a module from elsewhere: it may hold anything
        return complete


class _NoProject:
    """Classes' own names resolve through `ClassIndex.module_scope`, not the resolver's project."""

    def module_scope(self, module: str, requester: str) -> None:
        return None


_NO_PROJECT = _NoProject()


def _nested(cls: ModelClass | None, rest: list[str]) -> ModelClass | None:
    """`Outer._Net`: a class written in the body of another."""
    for name in rest:
        if cls is None:
            return None
        inner = next((s for s in cls.node.body if isinstance(s, ast.ClassDef) and s.name == name), None)
        cls = ModelClass(inner, cls.scope) if inner is not None else None
    return cls


def _constant(node: ast.expr) -> bool:
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_constant(e) for e in node.elts)
    return isinstance(node, ast.Constant) or (isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant))


def _foreign(name: str) -> bool:
    """Imported from outside the standard library (builtins such as `ValueError` resolve to nothing)."""
    return bool(name) and name.split(".")[0] not in sys.stdlib_module_names


def _torch_kind(last: str, call: ast.Call) -> str | None:
    if last in _ALWAYS:
        return last
    dropout = next((kw.value for kw in call.keywords if kw.arg == "dropout"), None)
    zero = isinstance(dropout, ast.Constant) and not dropout.value
    if last in _DROPOUT_DEFAULT and not zero:
        return f"{last} (dropout)"
    if last in _DROPOUT_ARG and dropout is not None and not zero:
        return f"{last} (dropout)"
    if last in _TRACKING and any(
        kw.arg == "track_running_stats" and not (isinstance(kw.value, ast.Constant) and not kw.value.value)
        for kw in call.keywords
    ):
        return last
    return None


def _reads_training(node: ast.AST) -> bool:
    return (
        isinstance(node, ast.Attribute)
        and node.attr == "training"
        and isinstance(node.value, ast.Name)
        and node.value.id == "self"
        and isinstance(node.ctx, ast.Load)
    )
