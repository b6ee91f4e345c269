"""A construction of a model (`Built`): the call, the class it resolved to and what it was
handed, read for what the model holds (`class_contents.Content`) only when a message asks.
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.class_contents import Content
from qlint.analysis.flow.constant_values import holds_constant
from qlint.analysis.flow.function_arguments import closed_function
from qlint.analysis.flow.harmless_calls import DTYPES, constant_literal, number_arithmetic
from qlint.analysis.flow.held_slots import built_default, returned_so, slot_content, slot_of
from qlint.analysis.flow.model_classes import ClassIndex, in_check
from qlint.analysis.flow.model_torch_nn import CONTAINERS
from qlint.analysis.flow.resolved_classes import NO_PROJECT, ModelClass
from qlint.analysis.names.resolver import Resolver
from qlint.value_classes import value_class


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
    # The ids of the call's arguments `parts` came from (`constructed_values.construct`): another
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
    # building function never switches back by name (`constructed_values._fixed_parts`): while the
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
            dependent, complete = index.contents.content_beside(self.cls, evaled)
            own = Content(self.name, dependent, complete)
        elif fixed and self.fixed_args:
            own = index.contents.content_skipping(self.call, self.fixed_args, self.resolver, self.name)
        else:
            own = index.contents.content(self.call, self.cls, self.resolver, self.name)
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
        (`constructed_values._fixed_parts`), seen only in the modes it was handed back in
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
            if constant_literal(arg) or number_arithmetic(arg) or hyperparameters or self._bound_to_constant(arg):
                continue
            if id(arg) in self.taken_args:
                continue  # the part the class takes from it is one of `parts`
            if holds_constant(self.func, arg, self.resolver):
                continue  # `IndexPut(mode=i)` in `for i, x in enumerate(...)`: a number, never a module
            if (self.resolver.qualname(arg) or "") in DTYPES:
                continue  # `dtype=torch.float32`: a dtype, never a module
            if isinstance(arg, ast.Call):
                if fixed and id(arg) in self.fixed_args:
                    continue  # `Holder(Net().eval(), head)`: a module fixed in eval mode
                if self.cls is not None:  # a torch.nn call's own walk read these already
                    complete &= in_check(self.index).contents.calls_content([arg], self.resolver, found, 0)
            elif (slot := slot_of(self.slots, arg)) is not None:
                # A parameter of the building function: what its call passed, once bound.
                if self._flag_of_class(arg, position, keyword):
                    continue
                if (default := built_default(slot)) is not None:
                    complete &= in_check(self.index).contents.calls_content([default], self.resolver, found, 0)
                else:
                    complete &= slot_content(slot, found, fixed and self.cls is None)
            elif not self._wrapped(arg) and not self._flag_of_class(arg, position, keyword):
                # A closed function (`M(lambda x, y: x + y)`, `M(torch.add)`) is no module.
                complete &= closed_function(arg, self.resolver, self.func)
        return complete

    def hyperparameter(self, arg: ast.expr, position: int | None, keyword: str | None) -> bool:
        """An argument of the call that is no module: a number (or arithmetic with one), a name
        bound once to a constant, or a value the class only passes to torch.nn layers or tests."""
        if constant_literal(arg) or number_arithmetic(arg) or self._bound_to_constant(arg):
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
        resolver = Resolver(self.cls.scope, NO_PROJECT, None)
        from qlint.analysis.flow.init_parameters import only_hyperparameter

        return only_hyperparameter(self.cls.node, resolver, position, keyword)

    def _bound_to_constant(self, arg: ast.expr) -> bool:
        """A name bound once to a constant (`o_ch, i_ch = 32, 512`, then `Conv2dSingle(in_channel=i_ch)`)."""
        if not isinstance(arg, ast.Name):
            return False
        located = self.resolver.value_of(arg)
        return located is not None and constant_literal(located.node)
