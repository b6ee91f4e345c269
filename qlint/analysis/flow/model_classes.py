"""Which class a call builds, and the index that finds classes and functions for one file's check.

A call builds a model when its callee resolves to a class: one defined in the function
itself, in the module (`_ConvSingle()`, `Outer._Net()`), or in another module of the
project. Only names that resolve nowhere (`torch.nn.Linear`, a third-party model) are
judged by the shape of their name. What a resolved class holds is read by the index's
`contents` (`class_contents`), memoised for the check's functions.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.flow.class_contents import ClassContents
from qlint.analysis.flow.class_method_calls import class_method
from qlint.analysis.flow.installed_classes import installed_class, installed_package
from qlint.analysis.flow.resolved_classes import NO_PROJECT, ModelClass, nested_class
from qlint.analysis.names.import_paths import module_bases
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import ModuleScope
from qlint.value_classes import field, value_class

_TORCH_PREFIXES = ("torch.", "torchao.", "executorch.exir", "copy.")


@value_class
class ClassIndex:
    """Resolves classes of one file's check and memoises what they hold (shared by its functions)."""

    project: object  # the ProjectIndex
    requester: str  # the file checked: project modules are found from its import root
    born: object = None  # the project index's check count when it was made
    _modules: dict[str, ModuleScope | None] = field(default_factory=dict)
    _packages: dict[str, bool] = field(default_factory=dict)
    # The class of each classmethod read for content (`class_method_calls`), by the method's id.
    method_classes: dict[int, ModelClass] = field(default_factory=dict)
    # While a list: every answer that depends on the file checked (where project modules are
    # looked up from) is appended as (kind, question, answer), so that an analysis made for
    # one file is reused for another only where it gets the same answers (`replay`).
    log: list | None = None
    # `module_analysis._Memo.follow`: the module whose callers this analysis reads (`project_callers`).
    follow: str | None = None
    # What the classes found hold (`class_contents`), read with this index's look-ups.
    contents: ClassContents = field(default=None, compare=False, repr=False)

    def __post_init__(self) -> None:
        self.contents = ClassContents(self)

    def followed(self, path: str) -> bool:
        """`path` is the module whose callers are read: its classes' methods and its helpers
        under a library's name are then read where they are used. Logged, so that a flow kept
        from a caller search is reused by a check that reads no callers (or another helper's)
        only where it got the same answers, and the other way round (`shared_flows`)."""
        path = os.path.abspath(path)
        found = path == self.follow
        if self.log is not None:
            self.log.append(("followed", path, found))
        return found

    def followed_path(self) -> str | None:
        """The path of the module whose callers are read, if any (logged as `followed` is): a
        registry dispatch targets that module's registered classes (`decorator_registries`)."""
        if self.log is not None:
            self.log.append(("follow", None, self.follow))
        return self.follow

    def followed_module(self, module: str, base: str) -> bool:
        """`followed` for the module named `module` from `base`'s path: without a module
        followed, no look-up (a call under a library's name is not followed from any module)."""
        if self.follow is None:
            found = False
        else:
            other = self.project.module_scope(module, base)
            found = other is not None and os.path.abspath(other.path) == self.follow
        if self.log is not None:
            self.log.append(("followed module", (module, base), found))
        return found

    def module_scope(self, module: str) -> ModuleScope | None:
        if module not in self._modules:  # one file-system lookup per module name
            self._modules[module] = self.project.module_scope(module, self.requester)
        found = self._modules[module]
        if self.log is not None:
            self.log.append(("module", module, found))
        return found

    def _project_package(self, top: str) -> bool:
        """`top` is a package of the project: one with `__init__.py`, or a directory without one
        where the project imports from (ExecuTorch's `executorch` is the checkout itself)."""
        if top not in self._packages:
            found = self.module_scope(top) is not None
            self._packages[top] = found or any(os.path.isdir(b) for b in module_bases(top, self.requester))
        if self.log is not None:
            self.log.append(("package", top, self._packages[top]))
        return self._packages[top]

    def installed_source(self, name: str | None) -> tuple[ast.ClassDef, ModuleScope] | None:
        """`installed_class` for this check (the file read is its dependency)."""
        found = installed_class(name, self.project, self.requester)
        if self.log is not None:
            self.log.append(("installed", name, found))
        return found

    def installed_package(self) -> str | None:
        """The installed package the file checked belongs to (None: it is no installed file)."""
        found = installed_package(self.requester)
        if self.log is not None:
            self.log.append(("installed package", None, found))
        return found

    def replay(self, log) -> bool:
        """Ask this check's questions of `log` again (which makes their modules its
        dependencies): True when every answer is the one logged."""
        for kind, question, answer in log:
            if kind == "module":
                same = self.module_scope(question) is answer
            elif kind == "package":
                same = self._project_package(question) == answer
            elif kind == "followed":
                same = self.followed(question) == answer
            elif kind == "follow":
                same = self.followed_path() == answer
            elif kind == "followed module":
                same = self.followed_module(*question) == answer
            elif kind == "installed":
                now = self.installed_source(question)
                same = now is answer or (
                    now is not None and answer is not None and now[0] is answer[0] and now[1] is answer[1]
                )
            else:
                same = self.installed_package() == answer
            if not same:
                return False
        return True

    def renew(self) -> None:
        """The index serves a later check (a caller module kept across checks,
        `caller_modules`): what it found and read is found again, and constructions are read
        with it, as with an index made for that check (`in_check`)."""
        self._modules.clear()
        self._packages.clear()
        self.method_classes.clear()
        self.contents = ClassContents(self)
        self.born = getattr(self.project, "checks", None)

    def claim_check(self) -> None:
        """This index serves the check that runs now: constructions read by its rules are
        read with it (`in_check`)."""
        global _CURRENT
        _CURRENT = (self.project, getattr(self.project, "checks", None), self)

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
            return nested_class(ModelClass(local, resolver.scope, local_classes), rest) if local is not None else None
        scope = resolver.scope
        if head in scope.classes and head not in scope.imports and head not in scope.assigns:
            return nested_class(ModelClass(scope.classes[head].node, scope), rest)
        return self.project_class(resolver.qualname(func) if name is False else name)

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

    def project_class(self, name: str | None) -> ModelClass | None:
        if not name or "." not in name or name.startswith(_TORCH_PREFIXES):
            return None
        parts = name.split(".")
        if not self._project_package(parts[0]):
            return None  # not a package of this project: one lookup per package, not per prefix
        for cut in range(len(parts) - 1, max(0, len(parts) - 3), -1):  # `mod.Cls` or `mod.Outer.Inner`
            scope = self.module_scope(".".join(parts[:cut]))
            if scope is None:
                continue
            if parts[cut] not in scope.classes:  # the summary's names: nothing is parsed
                return None
            return nested_class(ModelClass(None, scope, name=parts[cut], project=self.project), parts[cut + 1 :])
        return None

    def project_function(self, name: str) -> tuple[ast.AST, ModuleScope] | None:
        """The function `name` (`pkg.mod.func`) defines in a module of the project, with that
        module, when the module defines it and binds the name no other way."""
        if not name or "." not in name or name.startswith(_TORCH_PREFIXES):
            return None
        module, _, attr = name.rpartition(".")
        if not self._project_package(name.split(".")[0]):
            return None  # not a package of this project: no lookup of its modules
        scope = self.module_scope(module)
        if scope is None or attr not in scope.functions or attr in scope.imports or attr in scope.assigns:
            return None
        return scope.functions[attr], scope

    def bases_above(self, cls: ast.ClassDef, resolver: Resolver, around: dict) -> list | None:
        """Every class above `cls` in its hierarchy, each with a resolver of its module (its
        own parts stored there: `listed_parts`), each once; None when a base is no class that
        resolves (nor `nn.Module` or `object`)."""
        out: list[tuple[ast.ClassDef, Resolver]] = []
        seen = {id(cls)}
        todo = [(cls, resolver, around)]
        while todo:
            node, node_resolver, node_around = todo.pop()
            for base in node.bases:
                if (node_resolver.qualname(base) or "") in _ROOTS:
                    continue
                found = self.resolve(base, node_resolver, node_around)
                if found is None:
                    return None
                if id(found.node) in seen:
                    continue  # a diamond's top, or a cycle only broken code writes: read once
                seen.add(id(found.node))
                base_resolver = Resolver(found.scope, NO_PROJECT, None)
                out.append((found.node, base_resolver))
                todo.append((found.node, base_resolver, found.around or {}))
        return out

    def class_method_of(self, call: ast.Call, resolver: Resolver, locals_: dict) -> tuple | None:
        """The classmethod or staticmethod `call` runs (`Cls.method(...)` of a class that
        resolves), with a resolver of the class's module; None otherwise."""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return None
        cls = self.resolve(func.value, resolver, locals_)
        method = class_method(cls.node, func.attr) if cls is not None else None
        if method is None:
            return None
        self.method_classes[id(method)] = cls
        return method, Resolver(cls.scope, NO_PROJECT, None)

    def function_of(self, func: ast.expr, resolver: Resolver, locals_: dict, nested) -> tuple | None:
        """The function of the module or of the project `func` names, with a resolver of its
        module; None for anything else (a local, a class, a function written inside)."""
        parts = dotted_parts(func)
        if not parts or parts[0] in resolver.local or parts[0] in locals_ or parts[0] in nested:
            return None
        if len(parts) == 1 and parts[0] in resolver.scope.functions:
            if parts[0] in resolver.scope.imports or parts[0] in resolver.scope.assigns:
                return None
            return resolver.scope.functions[parts[0]], resolver
        other = self.project_function(resolver.qualname(func) or "")
        return (other[0], Resolver(other[1], NO_PROJECT, None)) if other is not None else None

    def installed(self, name: str | None) -> ModelClass | None:
        """A class of an installed package (`torch.testing._internal...TestHelperModules.X`),
        read from its source; only for content, never to decide what a call builds."""
        found = self.installed_source(name)
        return ModelClass(found[0], found[1]) if found is not None else None


_CURRENT: tuple | None = None  # (project, its check count, the index of that check)


def in_check(index: ClassIndex) -> ClassIndex:
    """`index` if it was made for the check running now, else that check's own index (a
    construction kept from an earlier check with a helper's flow, `shared_flows`)."""
    checks = getattr(index.project, "checks", None)
    if index.born == checks:
        return index
    current = _CURRENT
    if current is not None and current[0] is index.project and current[1] == checks:
        return current[2]
    return index


# Bases that store no attribute a subclass's loop could walk (`bases_above`).
_ROOTS = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "object"})
