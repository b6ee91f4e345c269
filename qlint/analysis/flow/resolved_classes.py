"""A class a callee resolves to (`model_classes.ClassIndex.resolve`): one written in the
function itself, in the module (`_ConvSingle()`, `Outer._Net()`), or in another module of the
project. One of another module is known by name, from that module's summary, until something
asks for its body.
"""

from __future__ import annotations

import ast

from qlint.analysis.names.scope import ModuleScope


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


class _NoProject:
    """Classes' own names resolve through `ClassIndex.module_scope`, not the resolver's project."""

    def module_scope(self, module: str, requester: str) -> None:
        return None


NO_PROJECT = _NoProject()


def nested_class(cls: ModelClass | None, rest: list[str]) -> ModelClass | None:
    """`Outer._Net`: a class written in the body of another."""
    for name in rest:
        if cls is None:
            return None
        inner = next((s for s in cls.class_statements() if isinstance(s, ast.ClassDef) and s.name == name), None)
        cls = ModelClass(inner, cls.scope, cls.around) if inner is not None else None
    return cls
