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
import builtins
import os
import sys

from qlint.analysis.flow.called_locals import binding
from qlint.analysis.flow.class_method_calls import calls_own_class, class_method, own_class_calls, own_method
from qlint.analysis.flow.constant_values import holds_constant
from qlint.analysis.flow.content_syntax import ContentSyntax, calls_under, content_syntax
from qlint.analysis.flow.evaled_parts import calls_super_init
from qlint.analysis.flow.factory_models import factory_content
from qlint.analysis.flow.function_arguments import closed_function
from qlint.analysis.flow.function_partials import partial_callee
from qlint.analysis.flow.held_slots import built_default, returned_so, slot_content, slot_of
from qlint.analysis.flow.installed_classes import installed_class, installed_package
from qlint.analysis.flow.lambda_tables import calls_own_lambda
from qlint.analysis.flow.listed_parts import runs_listed_part
from qlint.analysis.flow.model_torch_nn import CONTAINERS, torch_nn_kind
from qlint.analysis.flow.registry_contents import UNKNOWN, holds_functions_only, looked_up
from qlint.analysis.flow.stored_values import Slot, handed_names, stored_names
from qlint.analysis.names.import_paths import module_bases
from qlint.analysis.names.resolver import Resolver, dotted_parts
from qlint.analysis.names.scope import ModuleScope
from qlint.value_classes import field, value_class

# Model builders that return a freshly initialised module, i.e. one in train mode.
FACTORIES = ("torchvision.models.", "timm.create_model")
_TORCH_PREFIXES = ("torch.", "torchao.", "executorch.exir", "copy.")
_MAX_DEPTH = 4


class ModelClass:
    """A resolved class. One of another module is known by name until its body is asked for
    (`node` parses that one statement); the facts every construction asks (whether its
    `__init__` switches to eval mode) come from that module's summary (`class_facts`)."""

    __slots__ = ("_node", "around", "name", "project", "scope")

    def __init__(
        self,
        node: ast.ClassDef | None,
        scope: ModuleScope,  # the module it is written in
        around: dict | None = None,  # for a class written in a function: its other classes
        name: str | None = None,
        project=None,  # for a class of another module: the index holding its summary
    ):
        self._node = node
        self.scope = scope
        self.around = around
        self.name = node.name if node is not None else name
        self.project = project

    @property
    def node(self) -> ast.ClassDef:
        if self._node is None:
            self._node = self.scope.classes[self.name].node
        return self._node

    def class_statements(self) -> list[ast.stmt]:
        """The statements of the class's body, read for the classes written there (by name):
        an edit of one method's body leaves those as they were, so this reads no method's body
        (`carried_flows`, `caller_modules`), as `node` does."""
        node = self._node if self._node is not None else self.scope.classes[self.name].key_node()
        return node.body

    @property
    def summarised(self) -> bool:
        """A top-level class of another module whose body has not been read."""
        return self._node is None and self.project is not None


@value_class(frozen=True)
class Content:
    """What a model holds that behaves differently in train and eval mode."""

    name: str  # the class (or callable) as written at the construction
    dependent: tuple[str, ...]  # e.g. ("BatchNorm2d", "Dropout", "`self.training`")
    complete: bool  # every part of the model was resolved: an empty `dependent` means none


@value_class(eq=False)
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
    # The ids of the call's arguments `parts` came from (`model_builds.construct`): another
    # argument naming something (`nn.Sequential(BN, nn.Linear(3, 3))` with a module-level `BN`,
    # or a helper's parameter `m`) is none of them and is read as any argument is. None: not
    # known which (built elsewhere), every name is taken as one of `parts`.
    wrapped: frozenset[int] | None = None
    # Parts given to it after its build (`self.model.bn = nn.BatchNorm2d(3)` in a method of the
    # class that keeps it, `model_attrs.given_parts`): held as its own are.
    given: tuple[Built, ...] = ()
    # The arguments that pass a parameter of the function building it (`nn.Sequential(m,
    # nn.Linear(3, 3))` in `def make_block(m)`), as `held_slots.Slot`s: what a call of that
    # function passes for it is read in its place once the call binds it (`held_slots.bind`).
    slots: tuple = ()
    # The modes it had where a call of its building function handed it back (`held_slots.bind`):
    # while the capture sees only those, no switch reached a slot's module since.
    returned: frozenset | None = None
    # The positions in `parts` of modules an `nn.Sequential` was handed in eval mode that its
    # building function never switches back by name (`model_builds._fixed_parts`): while the
    # capture sees the container only as it was built (`returned`), their mode cannot matter.
    fixed_parts: frozenset[int] = frozenset()
    # The ids of the arguments those parts were passed by: one built inline (`Net().eval()`) is
    # read with the call's own content, which leaves it out then too.
    fixed_args: frozenset[int] = frozenset()
    # The ids of the arguments passed for a parameter whose one attribute the class stores
    # (`HeadOnly(Full())` storing `self.head = full.head`, `given_modes.attribute_arguments`):
    # that part is one of `parts`, the rest of the argument is not read.
    taken_args: frozenset[int] = frozenset()
    # The function whose walk met the construction: what a name it passes may hold is read
    # there (`constant_values`). None: a construction read outside a walk.
    func: ast.AST | None = None

    def content(self, evaled: frozenset[str] = frozenset(), fixed: bool = False) -> Content:
        """`evaled`: names the class stores as parts (`stored_values`) known to hold a model in
        eval mode that nothing switches back (`evaled_wrappers`): its mode is fixed, so
        they are no unknown part of the class's own content. `fixed`: nothing switched it since
        its building function handed it back (`returned`), so a slot's module passed in eval
        mode stays so (`held_slots.slot_content`)."""
        # A construction met in a helper analysed for another file's check (`shared_flows`)
        # is read with this check's index: its lookups are this check's dependencies.
        index = in_check(self.index)
        if evaled and self.cls is not None:
            dependent, complete = index.content_beside(self.cls, evaled)
            own = Content(self.name, dependent, complete)
        elif fixed and self.fixed_args:
            own = index.content_skipping(self.call, self.fixed_args, self.resolver, self.name)
        else:
            own = index.content(self.call, self.cls, self.resolver, self.name)
        if self.parts is None:
            return Content(own.name, own.dependent, False)
        parts = [p for i, p in enumerate(self.parts) if not (fixed and i in self.fixed_parts)]
        inner = [p.content() for p in (*parts, *self.given)]
        found = {*own.dependent, *(d for c in inner for d in c.dependent)}
        complete = own.complete and all(c.complete for c in inner) and self._arguments(found, fixed)
        return Content(own.name, tuple(sorted(found)), complete)

    def content_as_returned(self, facts, content: Content | None = None) -> Content:
        """`content` (else the construction's own), or, where it may hold what depends on the
        mode, what a capture seeing it in `facts` holds: a helper's container around what its
        call passed (`held_slots`) or an `nn.Sequential` built around evaled modules
        (`model_builds._fixed_parts`), seen only in the modes it was handed back in
        (`returned`), holds those modules in eval mode, so they are left out."""
        content = self.content() if content is None else content
        if not (content.dependent or not content.complete) or not (self.slots or self.fixed_parts):
            return content
        return self.content(fixed=True) if returned_so(self, facts) else content

    def _arguments(self, found: set[str], fixed: bool = False) -> bool:
        """What the call passes may be modules too: read modules built inline, and give up on a
        name whose value is not one of `parts` (`nn.DataParallel(model)`, `Wrapper(backbone)`)."""
        if not isinstance(self.call, ast.Call):
            return True
        last = self.name.rpartition(".")[2]
        hyperparameters = self.cls is None and last not in CONTAINERS  # `nn.Linear(n, m)`
        complete = True
        slots = [*((i, None) for i in range(len(self.call.args))), *((None, kw.arg) for kw in self.call.keywords)]
        values = [*self.call.args, *(kw.value for kw in self.call.keywords)]
        for (position, keyword), arg in zip(slots, values, strict=True):
            if _constant(arg) or _arithmetic(arg) or hyperparameters or self._bound_to_constant(arg):
                continue
            if id(arg) in self.taken_args:
                continue  # the part the class takes from it is one of `parts`
            if holds_constant(self.func, arg, self.resolver):
                continue  # `IndexPut(mode=i)` in `for i, x in enumerate(...)`: a number, never a module
            if (self.resolver.qualname(arg) or "") in _DTYPES:
                continue  # `dtype=torch.float32`: a dtype, never a module
            if isinstance(arg, ast.Call):
                if fixed and id(arg) in self.fixed_args:
                    continue  # `Holder(Net().eval(), head)`: a module fixed in eval mode
                if self.cls is not None:  # a torch.nn call's own walk read these already
                    complete &= in_check(self.index)._calls_content([arg], self.resolver, found, 0)
            elif (slot := slot_of(self.slots, arg)) is not None:
                # A parameter of the building function: what its call passed, once bound.
                if self._flag_of_class(arg, position, keyword):
                    continue
                if (default := built_default(slot)) is not None:
                    complete &= in_check(self.index)._calls_content([default], self.resolver, found, 0)
                else:
                    complete &= slot_content(slot, found, fixed and self.cls is None)
            elif not self._wrapped(arg) and not self._flag_of_class(arg, position, keyword):
                # A closed function (`M(lambda x, y: x + y)`, `M(torch.add)`) is no module.
                complete &= closed_function(arg, self.resolver, self.func)
        return complete

    def hyperparameter(self, arg: ast.expr, position: int | None, keyword: str | None) -> bool:
        """An argument of the call that is no module: a number (or arithmetic with one), a name
        bound once to a constant, or a value the class only passes to torch.nn layers or tests."""
        if _constant(arg) or _arithmetic(arg) or self._bound_to_constant(arg):
            return True
        return self._flag_of_class(arg, position, keyword)

    def _wrapped(self, arg: ast.expr) -> bool:
        """`arg` passes one of the modules in `parts`, whose content is read as theirs."""
        if not self.parts:
            return False
        return self.wrapped is None or id(arg) in self.wrapped

    def _flag_of_class(self, arg: ast.expr, position: int | None, keyword: str | None) -> bool:
        """A value the class only passes to torch.nn layers or tests (`M(use_bias=flag)`): not a module."""
        if self.cls is None or (position is None and keyword is None):
            return False
        if any(isinstance(a, ast.Starred) for a in self.call.args):
            return False  # which parameter a position binds is not known
        resolver = Resolver(self.cls.scope, _NO_PROJECT, None)
        from qlint.analysis.flow.init_parameters import only_hyperparameter

        return only_hyperparameter(self.cls.node, resolver, position, keyword)

    def _bound_to_constant(self, arg: ast.expr) -> bool:
        """A name bound once to a constant (`o_ch, i_ch = 32, 512`, then `Conv2dSingle(in_channel=i_ch)`)."""
        if not isinstance(arg, ast.Name):
            return False
        located = self.resolver.value_of(arg)
        return located is not None and _constant(located.node)


@value_class
class ClassIndex:
    """Resolves classes of one file's check and memoises what they hold (shared by its functions)."""

    project: object  # the ProjectIndex
    requester: str  # the file checked: project modules are found from its import root
    born: object = None  # the project index's check count when it was made
    _modules: dict[str, ModuleScope | None] = field(default_factory=dict)
    _contents: dict[int, tuple[tuple[str, ...], bool]] = field(default_factory=dict)
    _packages: dict[str, bool] = field(default_factory=dict)
    # The class of each classmethod read for content (`class_method_calls`), by the method's id.
    _methods: dict[int, ModelClass] = field(default_factory=dict)
    # While a list: every answer that depends on the file checked (where project modules are
    # looked up from) is appended as (kind, question, answer), so that an analysis made for
    # one file is reused for another only where it gets the same answers (`replay`).
    log: list | None = None
    # While True, classes of installed packages are not read (`content_without_installed`).
    _no_installed: bool = False
    # `model_flow._Memo.follow`: the module whose callers this analysis reads (`project_callers`).
    follow: str | None = None

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
        self._contents.clear()
        self._packages.clear()
        self._methods.clear()
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
            return _nested(ModelClass(local, resolver.scope, local_classes), rest) if local is not None else None
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
        if not self._project_package(parts[0]):
            return None  # not a package of this project: one lookup per package, not per prefix
        for cut in range(len(parts) - 1, max(0, len(parts) - 3), -1):  # `mod.Cls` or `mod.Outer.Inner`
            scope = self.module_scope(".".join(parts[:cut]))
            if scope is None:
                continue
            if parts[cut] not in scope.classes:  # the summary's names: nothing is parsed
                return None
            return _nested(ModelClass(None, scope, name=parts[cut], project=self.project), parts[cut + 1 :])
        return None

    def _project_function(self, name: str) -> tuple[ast.AST, ModuleScope] | None:
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

    # -- content ----------------------------------------------------------------------------
    def content(self, call: ast.Call, cls: ModelClass | None, resolver: Resolver, name: str) -> Content:
        """What the model `call` builds holds; `cls` is its resolved class (None: a torch.nn
        class or a library factory)."""
        if cls is None and isinstance(call, ast.Call):
            qualname = resolver.qualname(call.func)
            if qualname and qualname.startswith(FACTORIES):
                model, parts = factory_content(call, qualname, resolver)
                if parts is not None:
                    return Content(model, parts, True)
            cls = self.installed(qualname)
        if cls is not None:
            dependent, complete = self._class_content(cls, 0)
            return Content(name, dependent, complete)
        if not isinstance(call, ast.Call):  # `nn.BatchNorm2d` named in a dict of factories
            return Content(name, (), False)
        found: set[str] = set()
        complete = self._calls_content([call], resolver, found, 0)
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

    def _class_content_without(
        self, cls: ModelClass, depth: int, skipped: frozenset[int], evaled: frozenset[str] = frozenset()
    ):
        resolver = Resolver(cls.scope, _NO_PROJECT, None)
        found: set[str] = set()
        syntax = content_syntax(cls.node)
        complete = depth < _MAX_DEPTH and not syntax.dynamic
        for base in cls.node.bases:
            complete &= self._base(base, resolver, found, depth, cls.around or {})
        if syntax.reads_training:
            found.add("`self.training`")
        calls = [c for c in syntax.calls if id(c) not in skipped] if skipped else syntax.calls
        complete &= self._read_calls(calls, resolver, found, depth, cls.node, syntax, cls.around)
        complete &= _references(syntax, resolver, found)
        if complete:
            around = cls.around or {}
            complete = all(
                name.id in evaled or self._holds_no_model(name, resolver, around) for name in stored_names(cls.node)
            ) and self._builds_hold_no_model(cls, resolver, around, skipped, syntax)
            complete = complete and self._overrides_hold_no_model(cls.node, resolver, around)
        return tuple(sorted(found)), complete

    def _overrides_hold_no_model(self, cls: ast.ClassDef, resolver: Resolver, around: dict) -> bool:
        """What a base's methods hand one of its own methods (`self.b = self._make(BN)` in its
        `__init__`) goes to `cls`'s version where `cls` overrides it: the base's content was read
        with its own (`_builds_hold_no_model`), which may drop what `cls`'s keeps. The override's
        parameter is read as an own method's is; one `own_method` does not read (decorated,
        bound twice) leaves the content unknown."""
        written = {name for s in cls.body for name in _bound_names(s)}
        if not written:
            return True
        for base_node, base_resolver in self._bases_above(cls, resolver, around) or ():
            for call, slots in handed_names(base_node):
                func = call.func
                if not (
                    isinstance(func, ast.Attribute)
                    and func.attr in written
                    and isinstance(func.value, ast.Name)
                    and func.value.id == "self"
                ):
                    continue
                unknown = self._unknown_slots(slots, base_resolver, {})
                if not unknown:
                    continue
                own = own_method(cls, func.attr)
                if own is None or not _read_without_model(own[0], own[1], resolver, unknown):
                    return False
        return True

    def _unknown_slots(self, slots: tuple[Slot, ...], resolver: Resolver, around: dict) -> list[Slot]:
        """The arguments of a handed call naming something that may hold a model (`_holds_no_model`)."""
        return [s for s in slots if not all(self._holds_no_model(n, resolver, around) for n in s[2])]

    def _builds_hold_no_model(
        self, cls: ModelClass, resolver: Resolver, around: dict, skipped: frozenset[int], syntax: ContentSyntax
    ) -> bool:
        """What the class's methods hand a class or a function of the project they call
        (`self.b = Block(BN)`, `self.b = make_block(BN)`, `stored_values.handed_names`) holds no
        model: the part built keeps it, and the content of `Block` or of `make_block`'s body is
        read without it. A name read as a stored one is (`_holds_no_model`), or the class built
        only passes it to torch.nn layers (`Block(DIM)`, as `Built._flag_of_class`), or the
        function never reads it or reads it only so (`linear(CFG.dim)`). The class's own methods
        (`self._make(BN)`) are such functions; `super().__init__(BN)` builds the first base as a
        class of the project, or keeps it in a torch.nn container base. Not taken as evaled
        (`evaled_wrappers` reads the class's own stores, not what `Block` does with its
        argument); a build in `skipped` was replaced by a caller, its part gone."""
        handed = handed_names(cls.node)
        if not handed:
            return True
        locals_ = {**around, **syntax.classes}
        for call, slots in handed:
            if id(call) in skipped:
                continue
            unknown = self._unknown_slots(slots, resolver, around)
            if not unknown:
                continue  # `nn.Linear(DIM, DIM)`: constants, whatever the callee
            built = self.resolve(call.func, resolver, locals_)
            if built is None and calls_super_init(call):
                base = cls.node.bases[0] if cls.node.bases else None
                if base is not None and (resolver.qualname(base) or "").rpartition(".")[2] in CONTAINERS:
                    return False  # `super().__init__(BN, nn.ReLU())` of a torch.nn container: kept
                built = self.resolve(base, resolver, around) if base is not None else None
            if built is not None:
                node, skip, callee = built.node, None, Resolver(built.scope, _NO_PROJECT, None)
            elif (function := self._called_function(call, resolver, locals_, syntax.functions, cls.node)) is not None:
                node, skip, callee = function
            elif (inner := _written_inside(cls.node, call.func)) is not None:
                if not inner:
                    return False  # `mk` written twice inside, or decorated: which body runs is not read
                node, skip, callee = inner[0], 0, resolver  # `def mk(m): ...` in `__init__`, `self.b = mk(BN)`
            elif resolver.qualname(call.func) in _HANDS_BACK:
                return False  # `copy.deepcopy(BN)`: the module it was given, or one wrapping it
            else:
                continue  # no class or function of the project: the call is read as one (`_read_calls`)
            if not _read_without_model(node, skip, callee, unknown):
                return False
        return True

    def _called_function(
        self, call: ast.Call, resolver: Resolver, locals_: dict, nested, cls_node: ast.ClassDef
    ) -> tuple | None:
        """The function of the module or of the project `call` runs (`make_block(BN)`), or the
        classmethod or staticmethod of a class that resolves (`Factory.make(BN)`): with how many
        of its first parameters no argument binds (a classmethod's `cls`) and a resolver of its
        module. None for anything else (a function written inside, a callable held in a name)."""
        func = call.func
        if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id == "self":
            own = own_method(cls_node, func.attr)  # `self._make(BN)`: a method of the class's body
            return (own[0], own[1], resolver) if own is not None else None
        function = self._function_of(func, resolver, locals_, nested)
        if function is not None:
            return function[0], 0, function[1]
        method = self._class_method(call, resolver, locals_)
        if method is None:
            return None
        return method[0], 1 if method[0].decorator_list[0].id == "classmethod" else 0, method[1]

    def _holds_no_model(self, name: ast.Name, resolver: Resolver, around: dict) -> bool:
        """A name whose object the class stores as a part (`stored_values`) holds no model:
        a constant of the module or a tensor a torch function made there, a function or class,
        a registry of functions (`registry_contents.holds_functions_only`), a builtin, an import
        of torch or the standard library. A variable of the function the
        class is written in, a module-level object built by another call, an import from
        elsewhere: it may hold any module."""
        scope = resolver.scope
        key = name.id
        if key in around:
            return True  # a class written beside it, in the same function
        if key in scope.imports:
            qualname = scope.imports[key]
            root = qualname.split(".")[0]
            if root in sys.stdlib_module_names or root in _SAFE_ROOTS or root == "torch":
                return True
            if self._project_class(qualname) is not None or self._project_function(qualname) is not None:
                return True
            return holds_functions_only(key, scope, self)  # `REG["default"]` of a registry of functions
        if key in scope.assigns:
            # A constant, or a tensor from a torch function (`WEIGHT = torch.ones(3)`).
            located = resolver.value_of(name)
            value = located.node if located is not None else None
            if isinstance(value, ast.Call):
                return _torch_function(resolver.qualname(value.func) or "")
            return (value is not None and _constant(value)) or holds_functions_only(key, scope, self)
        return key in scope.functions or key in scope.classes or key in _BUILTINS

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

    def _base(self, base: ast.expr, resolver: Resolver, found: set[str], depth: int, around: dict) -> bool:
        name = resolver.qualname(base) or ""
        if name in ("object", "typing.Generic", "abc.ABC") or name in _ENUMS:
            return True  # (an enum's members are values its body builds, read with it)
        if name.startswith("torch.nn.") and name.count(".") == 2:
            kind, known = torch_nn_kind(name.rpartition(".")[2], None)
            if kind:
                found.add(kind)
            return known
        cls = self.resolve(base, resolver, around) or self.installed(name)
        if cls is None:
            return False
        dependent, complete = self._class_content(cls, depth + 1)
        found.update(dependent)
        return complete

    def _calls_content(self, calls, resolver: Resolver, found: set[str], depth: int) -> bool:
        """Add the mode-dependent modules these calls (and those inside them) build; False if
        one of them may build a module we cannot see (an unlisted torch.nn class, a class or
        function from elsewhere, a callable held in a variable)."""
        return self._read_calls(calls_under(calls), resolver, found, depth)

    def _read_calls(
        self, calls: list[ast.Call], resolver: Resolver, found: set[str], depth: int, own=None, syntax=None, around=None
    ) -> bool:
        """`_calls_content` for calls already listed, each once: those of the class or function
        `own` (whose `syntax` tells the classes and functions written in it)."""
        complete = True
        locals_ = {**(around or {}), **syntax.classes} if syntax is not None else dict(around or {})
        # Functions written inside: their calls are among those walked here.
        nested = syntax.functions if syntax is not None else frozenset()
        tensors = syntax.tensors if syntax is not None else frozenset()
        above = (lambda: self._bases_above(own, resolver, around or {})) if isinstance(own, ast.ClassDef) else None
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
            if isinstance(own, ast.FunctionDef) and id(own) in self._methods and calls_own_class(own, call):
                # `cls(value)` in a classmethod called on its class: an instance of that class.
                dependent, sub_complete = self._class_content(self._methods[id(own)], depth + 1)
                found.update(dependent)
                complete &= sub_complete
                continue
            func_type = type(call.func)
            if func_type is ast.Subscript or func_type is ast.Call or name.endswith(".get"):
                # `NORM_REGISTRY[k](dim)`: one of the classes a decorator registers there
                # (`registry_contents`); the lookup `REG.get(k, D)` itself builds nothing.
                lookup = call.func if func_type is not ast.Attribute else call
                classes = looked_up(lookup, resolver, self, locals_, ModelClass)
                if classes == UNKNOWN:
                    complete = False
                    continue
                if classes is not None:
                    for registered in classes if func_type is not ast.Attribute else ():
                        dependent, sub_complete = self._class_content(registered, depth + 1)
                        found.update(dependent)
                        complete &= sub_complete
                    continue
            cls = self.resolve(call.func, resolver, locals_)
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
            elif (other := self._project_function(name)) is not None:
                # `H = _hadamard_matrix(dim, ...)` imported from another module of the project:
                # what it builds is read in its own module, as a function of the class's is.
                complete &= self._function_content(other[0], Resolver(other[1], _NO_PROJECT, None), found, depth)
            elif (method := self._class_method(call, resolver, locals_)) is not None:
                # `ActFn.from_string(x)`: the body of that classmethod of a class that resolves.
                complete &= self._function_content(method[0], method[1], found, depth)
            elif (handed := partial_callee(call, name)) is not None and (
                function := self._function_of(handed, resolver, locals_, nested)
            ) is not None:
                # `partial(precompute_freqs_cis, ...)`: runs that function of the project later.
                complete &= self._function_content(function[0], function[1], found, depth)
            elif handed is not None and _torch_function(resolver.qualname(handed) or ""):
                continue  # `partial(F.gelu, approximate="tanh")`: runs a torch function later
            elif not (parts and len(parts) == 1 and parts[0] in nested) and not _harmless(call, name, parts):
                installed = self.installed(name)
                if installed is None:
                    complete = False
                    continue
                dependent, sub_complete = self._class_content(installed, depth + 1)
                found.update(dependent)
                complete &= sub_complete
        return complete

    def _bases_above(self, cls: ast.ClassDef, resolver: Resolver, around: dict) -> list | None:
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
                base_resolver = Resolver(found.scope, _NO_PROJECT, None)
                out.append((found.node, base_resolver))
                todo.append((found.node, base_resolver, found.around or {}))
        return out

    def _class_method(self, call: ast.Call, resolver: Resolver, locals_: dict) -> tuple | None:
        """The classmethod or staticmethod `call` runs (`Cls.method(...)` of a class that
        resolves), with a resolver of the class's module; None otherwise."""
        func = call.func
        if not isinstance(func, ast.Attribute):
            return None
        cls = self.resolve(func.value, resolver, locals_)
        method = class_method(cls.node, func.attr) if cls is not None else None
        if method is None:
            return None
        self._methods[id(method)] = cls
        return method, Resolver(cls.scope, _NO_PROJECT, None)

    def _function_of(self, func: ast.expr, resolver: Resolver, locals_: dict, nested) -> tuple | None:
        """The function of the module or of the project `func` names, with a resolver of its
        module; None for anything else (a local, a class, a function written inside)."""
        parts = dotted_parts(func)
        if not parts or parts[0] in resolver.local or parts[0] in locals_ or parts[0] in nested:
            return None
        if len(parts) == 1 and parts[0] in resolver.scope.functions:
            if parts[0] in resolver.scope.imports or parts[0] in resolver.scope.assigns:
                return None
            return resolver.scope.functions[parts[0]], resolver
        other = self._project_function(resolver.qualname(func) or "")
        return (other[0], Resolver(other[1], _NO_PROJECT, None)) if other is not None else None

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
        return self.resolve(built.func, resolver, locals_) is not None

    def installed(self, name: str | None) -> ModelClass | None:
        """A class of an installed package (`torch.testing._internal...TestHelperModules.X`),
        read from its source; only for content, never to decide what a call builds."""
        if self._no_installed:
            return None
        found = self.installed_source(name)
        return ModelClass(found[0], found[1]) if found is not None else None


def _read_without_model(node: ast.AST, skip: int | None, callee: Resolver, unknown: list[Slot]) -> bool:
    """The callee `node` binds each of `unknown`'s arguments to a parameter it only passes to
    torch.nn layers or tests: a class's `__init__` (`skip` None) as `Built._flag_of_class`
    reads it, a function (its first `skip` parameters bound by no argument) or never reads it.
    An argument after a `*args`, or a `**kwargs` one, binds no parameter we can name."""
    from qlint.analysis.flow.init_parameters import only_hyperparameter, unread_or_hyperparameter

    for position, keyword, _ in unknown:
        if position is None and keyword is None:
            return False
        if skip is None and not only_hyperparameter(node, callee, position, keyword):
            return False
        if skip is not None and not unread_or_hyperparameter(node, skip, callee, position, keyword):
            return False
    return True


def _bound_names(stmt: ast.stmt) -> tuple[str, ...]:
    """The names a statement of a class's body binds as methods or attributes of the class."""
    if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        return (stmt.name,)
    if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return tuple(n.id for t in targets for n in ast.walk(t) if isinstance(n, ast.Name))
    return ()


def _written_inside(cls_node: ast.ClassDef, func: ast.expr) -> list[ast.FunctionDef] | None:
    """The function `func` names when it is written inside a method of the class (`def mk(m):`
    in `__init__`): [that function] when written once and undecorated, [] when written more
    than once or decorated, None when no function inside a method has that name."""
    if not isinstance(func, ast.Name):
        return None
    nodes = list(ast.walk(cls_node))
    methods = {id(s) for c in nodes if isinstance(c, ast.ClassDef) for s in c.body}  # a bare name calls none
    found = [
        n
        for n in nodes
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.name == func.id and id(n) not in methods
    ]
    if not found:
        return None
    if len(found) != 1 or found[0].decorator_list:
        return []
    return found


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
        inner = next((s for s in cls.class_statements() if isinstance(s, ast.ClassDef) and s.name == name), None)
        cls = ModelClass(inner, cls.scope, cls.around) if inner is not None else None
    return cls


def _constant(node: ast.expr) -> bool:
    if isinstance(node, (ast.Tuple, ast.List)):
        return all(_constant(e) for e in node.elts)
    return isinstance(node, ast.Constant) or (isinstance(node, ast.UnaryOp) and isinstance(node.operand, ast.Constant))


def _arithmetic(node: ast.expr) -> bool:
    """`x - 0.2`: arithmetic with a number is a number or a tensor, never a module (a module
    has no arithmetic with numbers; `Sequential + Sequential` has no number in it)."""
    return isinstance(node, ast.BinOp) and (
        _constant(node.left) or _constant(node.right) or _arithmetic(node.left) or _arithmetic(node.right)
    )


def _foreign(name: str) -> bool:
    """Imported from outside the standard library (builtins such as `ValueError` resolve to nothing)."""
    return bool(name) and name.split(".")[0] not in sys.stdlib_module_names


# Calls that return the module they are handed, a copy of it or a wrapper running it: what it
# holds is what the argument holds, though the call itself builds nothing (`_harmless`).
_HANDS_BACK = frozenset({"copy.copy", "copy.deepcopy", "torch.compile"})
# Calls that build no module: numbers, tensors, containers of the standard library.
_SAFE_ROOTS = frozenset({"math", "copy", "functools", "itertools", "operator", "collections", "warnings", "logging"})
_SAFE_ROOTS |= {"typing", "numpy", "random", "os", "re", "dataclasses", "enum", "abc"}
# SciPy imports no torch: its functions return arrays and numbers, never a torch module
# (ExecuTorch's llama attention builds its R3 rotation from `scipy.linalg.hadamard`).
_SAFE_ROOTS |= {"scipy"}
_TORCH_CLASSES = frozenset({"torch.Size", "torch.Tensor", "torch.Generator", "torch.dtype"})
# torch's dtypes, handed to a model's constructor (`TriuConstant(1, constant_dtype=torch.bool)`).
# fmt: off
_DTYPES = frozenset(f"torch.{t}" for t in (
    "bool", "uint8", "uint16", "uint32", "uint64", "int8", "int16", "short", "int32", "int", "int64", "long",
    "float16", "half", "bfloat16", "float32", "float", "float64", "double", "complex64", "cfloat", "complex128",
    "cdouble", "qint8", "quint8", "qint32", "float8_e4m3fn", "float8_e5m2",
))
# fmt: on


def _harmless(call: ast.Call, name: str, parts: list[str] | None) -> bool:
    """A call that does not put a module of unknown content into the model.

    Method calls (`x.view()`, `super().__init__()`, `self.conv(x)`) are harmless: the module's
    own methods are read with its class. A callable held in a variable (`block(...)`,
    `norm_layer(c)`), a loader, or a function or class from elsewhere may build anything."""
    if parts is None:
        return isinstance(call.func, ast.Attribute)
    if parts[-1] in ("map", "partial") and call.args and not isinstance(call.args[0], ast.Lambda):
        return False  # the callable it is handed is called later, unseen
    if not name:
        return len(parts) > 1 or (parts[0] in _BUILTINS and parts[0] not in ("eval", "exec"))
    if name in _JSON_LOADS:
        # Plain JSON values (dicts, lists, strings, numbers), unless a hook builds objects.
        return not any(kw.arg is None or kw.arg in _JSON_HOOKS for kw in call.keywords)
    if name.startswith("torch.ops."):
        return True  # an operator (`torch.ops.aten.pow.Scalar(...)`): tensors, never a module
    if name.startswith("torch."):
        last = name.rpartition(".")[2]
        return (name in _TORCH_CLASSES or not last[:1].isupper()) and "load" not in last and ".hub." not in name
    root = name.split(".")[0]
    return root in _SAFE_ROOTS or (root in _BUILTINS and "." not in name)


_BUILTINS = frozenset(dir(builtins))
_JSON_LOADS = frozenset({"json.load", "json.loads"})
_JSON_HOOKS = frozenset({"cls", "object_hook", "object_pairs_hook", "parse_float", "parse_int", "parse_constant"})
_ENUMS = frozenset(f"enum.{c}" for c in ("Enum", "IntEnum", "StrEnum", "Flag", "IntFlag"))


def _torch_function(name: str) -> bool:
    """A function of torch (not a class, a loader or a hub entry), as `_harmless` has a direct
    call of one."""
    last = name.rpartition(".")[2]
    return name.startswith("torch.") and last[:1].islower() and "load" not in last and ".hub." not in name


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


# Bases that store no attribute a subclass's loop could walk (`_bases_above`).
_ROOTS = frozenset({"torch.nn.Module", "torch.nn.modules.module.Module", "object"})
