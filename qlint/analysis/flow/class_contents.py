"""What a resolved class holds that behaves differently in train and eval mode.

Batch norm, dropout and `self.training` are what a capture in the wrong mode changes; a model
without any of them is captured the same in both modes. A class is read for the calls of its
body (and of the functions and classes of the project they run, to a depth), its bases and
the torch.nn classes it names; whether the names it stores may hold a model is
`stored_models`'. Classes and functions are found by one check's index
(`model_classes.ClassIndex`), which keeps this reading and its answers (`contents`).
"""

from __future__ import annotations

import ast
import weakref

from qlint.analysis.flow.called_locals import binding
from qlint.analysis.flow.class_method_calls import calls_own_class, own_class_calls
from qlint.analysis.flow.content_syntax import ContentSyntax, calls_under, content_syntax
from qlint.analysis.flow.factory_models import FACTORIES, factory_content
from qlint.analysis.flow.function_partials import partial_callee
from qlint.analysis.flow.harmless_calls import ENUMS, harmless_call, torch_function
from qlint.analysis.flow.lambda_tables import calls_own_lambda
from qlint.analysis.flow.listed_parts import runs_listed_part
from qlint.analysis.flow.model_torch_nn import torch_nn_kind
from qlint.analysis.flow.registry_contents import UNKNOWN, looked_up
from qlint.analysis.flow.resolved_classes import NO_PROJECT, ModelClass
from qlint.analysis.flow.stored_models import builds_hold_no_model, holds_no_model, overrides_hold_no_model
from qlint.analysis.flow.stored_values import stored_names
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.value_classes import value_class

_MAX_DEPTH = 4


@value_class(frozen=True)
class Content:
    """What a model holds that behaves differently in train and eval mode."""

    name: str  # the class (or callable) as written at the construction
    dependent: tuple[str, ...]  # e.g. ("BatchNorm2d", "Dropout", "`self.training`")
    complete: bool  # every part of the model was resolved: an empty `dependent` means none


class ClassContents:
    """What the classes of one check hold, memoised for its functions: `index` (the check's
    `model_classes.ClassIndex`) finds the classes and functions met."""

    __slots__ = ("_contents", "_no_installed", "index")

    def __init__(self, index):
        # The index owns this reading: a weak reference back, so the index is freed when its
        # check drops it, not by the cyclic collector (paused while files are checked).
        self.index = weakref.proxy(index)
        self._contents: dict[int, tuple[tuple[str, ...], bool]] = {}
        # While True, classes of installed packages are not read (`content_without_installed`).
        self._no_installed = False

    def content(self, call: ast.Call, cls: ModelClass | None, resolver: Resolver, name: str) -> Content:
        """What the model `call` builds holds; `cls` is its resolved class (None: a torch.nn
        class or a library factory)."""
        if cls is None and isinstance(call, ast.Call):
            qualname = resolver.qualname(call.func)
            if qualname and qualname.startswith(FACTORIES):
                model, parts = factory_content(call, qualname, resolver)
                if parts is not None:
                    return Content(model, parts, True)
            cls = self._installed(qualname)
        if cls is not None:
            dependent, complete = self._class_content(cls, 0)
            return Content(name, dependent, complete)
        if not isinstance(call, ast.Call):  # `nn.BatchNorm2d` named in a dict of factories
            return Content(name, (), False)
        found: set[str] = set()
        complete = self.calls_content([call], resolver, found, 0)
        return Content(name, tuple(sorted(found)), complete)

    def content_without_installed(self, call: ast.Call, cls: ModelClass, resolver: Resolver, name: str) -> Content:
        """`content` with the classes of installed packages left unread (incomplete, nothing
        found): for a question asked of every wrapper the walk builds (`given_modes`), where
        reading their sources kept what checks otherwise never parse (ExecuTorch's cold peak
        memory +14%). Not memoised with `content`'s answers, which read them."""
        saved, self._contents, self._no_installed = self._contents, {}, True
        try:
            return self.content(call, cls, resolver, name)
        finally:
            self._contents, self._no_installed = saved, False

    def content_skipping(self, call: ast.Call, skipped: frozenset[int], resolver: Resolver, name: str) -> Content:
        """`content` of a torch.nn container's call with the arguments whose ids are `skipped`
        left unread (`Built.fixed_args`). Not memoised: only a capture that sees the container
        as it was built may leave them out."""
        left = {
            id(c) for a in [*call.args, *(k.value for k in call.keywords)] if id(a) in skipped for c in calls_under([a])
        }
        found: set[str] = set()
        complete = self._read_calls([c for c in calls_under([call]) if id(c) not in left], resolver, found, 0)
        return Content(name, tuple(sorted(found)), complete)

    def _class_content(self, cls: ModelClass, depth: int) -> tuple[tuple[str, ...], bool]:
        key = id(cls.node)
        if key in self._contents:
            return self._contents[key]
        self._contents[key] = ((), False)  # a class that holds itself: unknown
        out = self._class_content_without(cls, depth, frozenset())
        self._contents[key] = out
        return out

    def content_without(self, cls: ModelClass, skipped: frozenset[int]) -> tuple[tuple[str, ...], bool]:
        """The class's content with the calls whose ids are `skipped` left unread: the build of
        a part a caller replaced after the construction (`rules.replaced_parts`). Not memoised:
        another capture may replace other parts."""
        return self._class_content_without(cls, 0, skipped)

    def content_beside(self, cls: ModelClass, evaled: frozenset[str]) -> tuple[tuple[str, ...], bool]:
        """The class's content with the names in `evaled` it stores taken as holding no part whose
        mode can change (`Built.content`). Not memoised: another construction may store others."""
        return self._class_content_without(cls, 0, frozenset(), evaled)

    def content_inheriting(
        self, cls: ModelClass, home: ast.ClassDef, skipped: frozenset[int], evaled: frozenset[str]
    ) -> tuple[tuple[str, ...], bool]:
        """`content_without` and `content_beside` in one, read in `home`, the class (`cls` or one
        above it) whose `__init__` a construction of `cls` runs (`inherited_inits`). Not memoised."""
        return self._class_content_without(cls, 0, frozenset(), frozenset(), (home, skipped, evaled))

    def _class_content_without(
        self, cls: ModelClass, depth: int, skipped: frozenset[int], evaled: frozenset[str] = frozenset(), home=None
    ):
        if home is not None and cls.node is home[0]:
            skipped, evaled, home = home[1], home[2], None
        resolver = Resolver(cls.scope, NO_PROJECT, None)
        found: set[str] = set()
        syntax = content_syntax(cls.node)
        complete = depth < _MAX_DEPTH and not syntax.dynamic
        for base in cls.node.bases:
            complete &= self._base(base, resolver, found, depth, cls.around or {}, home if complete else None)
        if syntax.reads_training:
            found.add("`self.training`")
        calls = [c for c in syntax.calls if id(c) not in skipped] if skipped else syntax.calls
        complete &= self._read_calls(calls, resolver, found, depth, cls.node, syntax, cls.around)
        complete &= _references(syntax, resolver, found)
        if complete:
            around = cls.around or {}
            complete = all(
                name.id in evaled or holds_no_model(self.index, name, resolver, around)
                for name in stored_names(cls.node)
            ) and builds_hold_no_model(self.index, cls, resolver, around, skipped, syntax)
            complete = complete and overrides_hold_no_model(self.index, cls.node, resolver, around)
        return tuple(sorted(found)), complete

    def _function_content(self, func: ast.AST, resolver: Resolver, found: set[str], depth: int) -> bool:
        """A function of the class's module called in it (`self.layers = make_layers(cfg)`): what
        the modules it builds hold."""
        key = id(func)
        if key not in self._contents:
            self._contents[key] = ((), False)
            inner: set[str] = set()
            syntax = content_syntax(func)
            complete = depth < _MAX_DEPTH and not syntax.reads_any_training
            complete &= self._read_calls(syntax.walked_calls, resolver, inner, depth + 1, func, syntax)
            complete &= _references(syntax, resolver, inner)
            self._contents[key] = (tuple(sorted(inner)), complete)
        dependent, complete = self._contents[key]
        found.update(dependent)
        return complete

    def _base(self, base: ast.expr, resolver: Resolver, found: set[str], depth: int, around: dict, home=None) -> bool:
        name = resolver.qualname(base) or ""
        if name in ("object", "typing.Generic", "abc.ABC") or name in ENUMS:
            return True  # (an enum's members are values its body builds, read with it)
        if name.startswith("torch.nn.") and name.count(".") == 2:
            kind, known = torch_nn_kind(name.rpartition(".")[2], None)
            if kind:
                found.add(kind)
            return known
        cls = self.index.resolve(base, resolver, around) or self._installed(name)
        if cls is None:
            return False
        if home is not None:  # (`content_inheriting`: the class whose `__init__` runs is above)
            dependent, complete = self._class_content_without(cls, depth + 1, frozenset(), frozenset(), home)
        else:
            dependent, complete = self._class_content(cls, depth + 1)
        found.update(dependent)
        return complete

    def calls_content(self, calls, resolver: Resolver, found: set[str], depth: int) -> bool:
        """Add the mode-dependent modules these calls (and those inside them) build; False if
        one of them may build a module we cannot see (an unlisted torch.nn class, a class or
        function from elsewhere, a callable held in a variable)."""
        return self._read_calls(calls_under(calls), resolver, found, depth)

    def _read_calls(
        self, calls: list[ast.Call], resolver: Resolver, found: set[str], depth: int, own=None, syntax=None, around=None
    ) -> bool:
        """`calls_content` for calls already listed, each once: those of the class or function
        `own` (whose `syntax` tells the classes and functions written in it)."""
        complete = True
        locals_ = {**(around or {}), **syntax.classes} if syntax is not None else dict(around or {})
        # Functions written inside: their calls are among those walked here.
        nested = syntax.functions if syntax is not None else frozenset()
        tensors = syntax.tensors if syntax is not None else frozenset()
        above = (lambda: self.index.bases_above(own, resolver, around or {})) if isinstance(own, ast.ClassDef) else None
        for call in calls:
            if id(call) in tensors:
                continue
            if own is not None and self._runs_local_build(call, own, resolver, locals_):
                continue  # `pool = nn.AdaptiveMaxPool2d(n)`, then `pool(x)`: read with its build
            if above is not None and runs_listed_part(own, call, resolver, above):
                continue  # `for layer in self.layers: layer(x)` of its own ModuleList: read with its builds
            if isinstance(own, ast.ClassDef) and calls_own_lambda(call, own):
                continue  # `self.dispatcher[k](x)`: one of the class's lambdas, read with it
            name = resolver.qualname(call.func) or ""
            parts = dotted_parts(call.func)
            last = name.rpartition(".")[2] or (parts or [""])[-1]
            if name.startswith("torch.nn.") and last[:1].isupper():
                kind, known = torch_nn_kind(last, call)
                if kind:
                    found.add(kind)
                complete &= known
                continue
            if isinstance(own, ast.ClassDef) and id(call) in own_class_calls(own):
                continue  # `cls(value)` in one of its classmethods: an instance of the class read
            if isinstance(own, ast.FunctionDef) and id(own) in self.index.method_classes and calls_own_class(own, call):
                # `cls(value)` in a classmethod called on its class: an instance of that class.
                dependent, sub_complete = self._class_content(self.index.method_classes[id(own)], depth + 1)
                found.update(dependent)
                complete &= sub_complete
                continue
            func_type = type(call.func)
            if func_type is ast.Subscript or func_type is ast.Call or name.endswith(".get"):
                # `NORM_REGISTRY[k](dim)`: one of the classes a decorator registers there
                # (`registry_contents`); the lookup `REG.get(k, D)` itself builds nothing.
                lookup = call.func if func_type is not ast.Attribute else call
                classes = looked_up(lookup, resolver, self.index, locals_, ModelClass)
                if classes == UNKNOWN:
                    complete = False
                    continue
                if classes is not None:
                    for registered in classes if func_type is not ast.Attribute else ():
                        dependent, sub_complete = self._class_content(registered, depth + 1)
                        found.update(dependent)
                        complete &= sub_complete
                    continue
            cls = self.index.resolve(call.func, resolver, locals_)
            if cls is not None:
                if own is not None and cls.node is own:
                    continue
                dependent, sub_complete = self._class_content(cls, depth + 1)
                found.update(dependent)
                complete &= sub_complete
            elif parts and len(parts) == 1 and parts[0] in resolver.scope.functions and parts[0] not in locals_:
                func = resolver.scope.functions[parts[0]]
                if func is not own:
                    complete &= self._function_content(func, resolver, found, depth)
            elif name.startswith(FACTORIES) and (built := factory_content(call, name, resolver)[1]) is not None:
                found.update(built)
            elif (other := self.index.project_function(name)) is not None:
                # `H = _hadamard_matrix(dim, ...)` imported from another module of the project:
                # what it builds is read in its own module, as a function of the class's is.
                complete &= self._function_content(other[0], Resolver(other[1], NO_PROJECT, None), found, depth)
            elif (method := self.index.class_method_of(call, resolver, locals_)) is not None:
                # `ActFn.from_string(x)`: the body of that classmethod of a class that resolves.
                complete &= self._function_content(method[0], method[1], found, depth)
            elif (handed := partial_callee(call, name)) is not None and (
                function := self.index.function_of(handed, resolver, locals_, nested)
            ) is not None:
                # `partial(precompute_freqs_cis, ...)`: runs that function of the project later.
                complete &= self._function_content(function[0], function[1], found, depth)
            elif handed is not None and torch_function(resolver.qualname(handed) or ""):
                continue  # `partial(F.gelu, approximate="tanh")`: runs a torch function later
            elif not (parts and len(parts) == 1 and parts[0] in nested) and not harmless_call(call, name, parts):
                installed = self._installed(name)
                if installed is None:
                    complete = False
                    continue
                dependent, sub_complete = self._class_content(installed, depth + 1)
                found.update(dependent)
                complete &= sub_complete
        return complete

    def _runs_local_build(self, call: ast.Call, own: ast.AST, resolver: Resolver, locals_: dict) -> bool:
        """`call` calls a local name bound once to a construction of a torch.nn class or of a
        class that resolves (`called_locals`): the module built is run, and what it holds is
        read with the call that built it, itself among the calls read."""
        built = binding(own, call)
        if built is None or built is call:
            return False
        name = resolver.qualname(built.func) or ""
        if name.startswith("torch.nn.") and name.count(".") == 2 and name.rpartition(".")[2][:1].isupper():
            return True
        return self.index.resolve(built.func, resolver, locals_) is not None

    def _installed(self, name: str | None) -> ModelClass | None:
        """`ClassIndex.installed`, unless classes of installed packages are left unread now."""
        return None if self._no_installed else self.index.installed(name)


def _references(syntax: ContentSyntax, resolver: Resolver, found: set[str]) -> bool:
    """torch.nn classes named but not called here (`norm=nn.BatchNorm2d`, `partial(nn.Dropout)`):
    they are built later, with arguments we do not see."""
    complete = True
    for ref in syntax.references:
        name = resolver.qualname(ref) or ""
        last = name.rpartition(".")[2]  # `F` may name `torch.nn.functional`
        if name.startswith("torch.nn.") and name.count(".") == 2 and last[:1].isupper():
            kind, known = torch_nn_kind(last, None)
            if kind:
                found.add(kind)
            complete &= known
    return complete
