"""The scopes of the checked module whose bodies count as read when an analysis takes them:
tables of functions, classes or methods where taking a function out reads its body, and
classes whose node is read through a hook (`scope.WatchedClassScope`, made here). An analysis
kept across an editor's checks (`flow.carried_flows`, `body_reads`) learns from them which
bodies of the module it read, so an edit of another body leaves it standing.

Apart from `scope` because the bindings of a module are the same for every reader; these
wrappers are put on a scope by the few readers that watch it.
"""

from __future__ import annotations

from qlint.analysis.names.scope import ClassScope, WatchedClassScope


class WatchedTable(dict):
    """A scope's functions, classes or methods: taking a function out is a read of its body.
    Taking a class out reads no body by itself (its node and methods are watched in turn; its
    bases and class-level assignments are the module's outline, which an edit of one body does
    not change), nor does asking whether a name is there (`in`). Reading them all (`items`,
    iterating) is a read of bodies that cannot be named."""

    __slots__ = ("hook",)

    def __getitem__(self, key):
        value = dict.__getitem__(self, key)
        if not isinstance(value, ClassScope):
            self.hook.read(value)
        return value

    def get(self, key, default=None):
        if dict.__contains__(self, key):
            return self[key]
        return default

    def values(self):
        self.hook.read()
        return dict.values(self)

    def items(self):
        self.hook.read()
        return dict.items(self)

    def keys(self):
        self.hook.read()
        return dict.keys(self)

    def __iter__(self):
        self.hook.read()
        return dict.__iter__(self)

    def copy(self):
        self.hook.read()
        return dict.copy(self)

    def pop(self, *args):
        self.hook.read()
        return dict.pop(self, *args)


def watched_table(values: dict, hook) -> WatchedTable:
    """`values` as a `WatchedTable` telling `hook` (an object with `read(body=None)`)."""
    out = WatchedTable(values)
    out.hook = hook
    return out


def watch_class(cls: ClassScope, hook) -> ClassScope:
    """`cls` as a `WatchedClassScope` telling `hook` of its node and methods taken (in place)."""
    if type(cls) is ClassScope:
        node = cls.__dict__.pop("node")
        cls.__class__ = WatchedClassScope
        cls.__dict__["_node"] = node
        cls.__dict__["_hook"] = hook
        cls.methods = watched_table(cls.methods, hook)
    return cls
