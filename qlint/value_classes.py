"""The classes every run builds (diagnostics, settings, results, reports), made without
`dataclasses`.

`dataclasses` imports `inspect` (and with it `ast`, `dis`, `tokenize`) and makes each class
by compiling half a dozen methods: about 25 ms of CPU at every start of `qlint check` for the
20 classes a run answered from the cache needs, a tenth of such a run on pytorch/ao, where a
Python process's start-up is the floor. Here a class costs one compiled `__init__`; equality,
hashing, ordering and `repr` are shared functions over the class's field names.

The part of `dataclasses` qlint uses, with its meaning: `@value_class(frozen=, order=)`,
`field(default=, default_factory=, compare=, hash=, repr=)`, `replace(obj, **changes)`,
`__post_init__`. A method the class defines itself is kept. Fields are the class's own
annotations, in order (these classes inherit none).
"""

from __future__ import annotations

from typing import Any

_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen instance (as `dataclasses` raises)."""


class Field:
    __slots__ = ("compare", "default", "default_factory", "hash", "name", "repr")

    def __init__(self, default=_MISSING, default_factory=_MISSING, compare=True, hash=None, repr=True):
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.hash = compare if hash is None else hash
        self.repr = repr


def field(*, default=_MISSING, default_factory=_MISSING, compare=True, hash=None, repr=True) -> Any:
    return Field(default, default_factory, compare, hash, repr)


def value_class(cls: type | None = None, /, *, frozen: bool = False, order: bool = False):
    """`@dataclass` for the options above: `eq` always, `__hash__` over the compared fields
    when frozen (None otherwise, as an unfrozen dataclass has)."""

    def wrap(cls: type) -> type:
        return _make(cls, frozen, order)

    return wrap if cls is None else wrap(cls)


def replace(obj: Any, /, **changes: Any) -> Any:
    """A copy of `obj` with `changes` (as `dataclasses.replace`: through `__init__`)."""
    fields = type(obj).__value_fields__
    unknown = changes.keys() - {f.name for f in fields}
    if unknown:
        raise TypeError(f"{type(obj).__name__} has no field {sorted(unknown)[0]!r}")
    for f in fields:
        if f.name not in changes:
            changes[f.name] = getattr(obj, f.name)
    return type(obj)(**changes)


def _make(cls: type, frozen: bool, order: bool) -> type:
    fields: list[Field] = []
    # The class's own, as written (strings); `inspect.get_annotations` would import `inspect`.
    for name, annotation in cls.__dict__.get("__annotations__", {}).items():  # noqa: RUF063
        if isinstance(annotation, str) and annotation.startswith(("ClassVar", "typing.ClassVar")):
            continue
        declared = cls.__dict__.get(name, _MISSING)
        f = declared if isinstance(declared, Field) else Field(declared)
        f.name = name
        fields.append(f)
        if f.default is not _MISSING:
            setattr(cls, name, f.default)  # the class attribute is the default, as in dataclasses
        elif isinstance(declared, Field):
            delattr(cls, name)
    cls.__value_fields__ = tuple(fields)
    cls.__value_compared__ = tuple(f.name for f in fields if f.compare)
    cls.__value_hashed__ = tuple(f.name for f in fields if f.hash)
    own = cls.__dict__
    if "__init__" not in own:
        cls.__init__ = _init(cls, fields, frozen)
    if "__repr__" not in own:
        cls.__repr__ = _repr
    if "__eq__" not in own:
        cls.__eq__ = _eq
    if own.get("__hash__") is None:
        cls.__hash__ = _hash if frozen else None
    if order:
        for name, method in (("__lt__", _lt), ("__le__", _le), ("__gt__", _gt), ("__ge__", _ge)):
            if name not in own:
                setattr(cls, name, method)
    if frozen:
        cls.__setattr__ = _frozen_setattr
        cls.__delattr__ = _frozen_delattr
    return cls


def _init(cls: type, fields: list[Field], frozen: bool):
    """`__init__` compiled for the fields: positional or keyword, defaults bound once."""
    env: dict[str, Any] = {"_MISSING": _MISSING, "_set": object.__setattr__}
    params, body = [], []
    for f in fields:
        if f.default is not _MISSING:
            env[f"_d_{f.name}"] = f.default
            params.append(f"{f.name}=_d_{f.name}")
            value = f.name
        elif f.default_factory is not _MISSING:
            env[f"_f_{f.name}"] = f.default_factory
            params.append(f"{f.name}=_MISSING")
            value = f"_f_{f.name}() if {f.name} is _MISSING else {f.name}"
        else:
            params.append(f.name)
            value = f.name
        body.append(f"_set(self, {f.name!r}, {value})" if frozen else f"self.{f.name} = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")
    source = f"def __init__(self, {', '.join(params)}):\n    " + "\n    ".join(body or ["pass"]) + "\n"
    exec(source, env)  # the source is made above from the class's own field names
    init = env["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    return init


def _key(obj: Any) -> tuple:
    return tuple([getattr(obj, name) for name in obj.__value_compared__])


def _repr(self) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self.__value_fields__ if f.repr)
    return f"{type(self).__qualname__}({shown})"


def _eq(self, other):
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _key(self) == _key(other)


def _hash(self) -> int:
    return hash(tuple([getattr(self, name) for name in self.__value_hashed__]))


def _lt(self, other):
    return _key(self) < _key(other) if other.__class__ is self.__class__ else NotImplemented


def _le(self, other):
    return _key(self) <= _key(other) if other.__class__ is self.__class__ else NotImplemented


def _gt(self, other):
    return _key(self) > _key(other) if other.__class__ is self.__class__ else NotImplemented


def _ge(self, other):
    return _key(self) >= _key(other) if other.__class__ is self.__class__ else NotImplemented


def _frozen_setattr(self, name: str, value: Any) -> None:
    if any(f.name == name for f in type(self).__value_fields__):
        raise FrozenInstanceError(f"cannot assign to field {name!r}")
    object.__setattr__(self, name, value)


def _frozen_delattr(self, name: str) -> None:
    if any(f.name == name for f in type(self).__value_fields__):
        raise FrozenInstanceError(f"cannot delete field {name!r}")
    object.__delattr__(self, name)
