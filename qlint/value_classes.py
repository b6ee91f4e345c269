"""The classes every run builds (diagnostics, settings, results, reports), made without
`dataclasses`.

`dataclasses` imports `inspect` (and with it `ast`, `dis`, `tokenize`) and makes each class
by compiling half a dozen methods: about 25 ms of CPU at every start of `qlint check` for the
20 classes a run answered from the cache needs, a tenth of such a run on pytorch/ao, where a
Python process's start-up is the floor. Here a class costs one compiled source: `__init__`,
and `__eq__`/`__hash__`, which the analyses call millions of times on big modules (a shared
function over the field names was 7-13 times slower than the dataclass's); ordering and
`repr` are shared functions over the class's field names.

The part of `dataclasses` qlint uses, with its meaning: `@value_class(frozen=, order=, eq=)`,
`field(default=, default_factory=, compare=, hash=, repr=, metadata=)`, `replace(obj, **changes)`,
`fields(cls_or_obj)`, `is_value_class(x)`, `__post_init__`. A method the class defines itself
is kept. Fields are the class's own annotations, in order (these classes inherit none; the
evidence types' plain base `Evidence` declares no field).
"""

from __future__ import annotations

from typing import Any

_MISSING: Any = object()


class FrozenInstanceError(AttributeError):
    """An assignment to a field of a frozen instance (as `dataclasses` raises)."""


MISSING: Any = _MISSING  # a field's `default`/`default_factory` when it has none

_NO_METADATA: dict[str, Any] = {}


class Field:
    __slots__ = ("compare", "default", "default_factory", "hash", "metadata", "name", "repr")

    def __init__(self, default=_MISSING, default_factory=_MISSING, compare=True, hash=None, repr=True, metadata=None):
        self.name = ""
        self.default = default
        self.default_factory = default_factory
        self.compare = compare
        self.hash = compare if hash is None else hash
        self.repr = repr
        self.metadata = _NO_METADATA if metadata is None else metadata


def field(*, default=_MISSING, default_factory=_MISSING, compare=True, hash=None, repr=True, metadata=None) -> Any:
    return Field(default, default_factory, compare, hash, repr, metadata)


def fields(class_or_instance: Any) -> tuple[Field, ...]:
    """The fields of a value class (or of an instance of one), in order."""
    return class_or_instance.__value_fields__


def is_value_class(obj: Any) -> bool:
    """A class made by `value_class`, or an instance of one."""
    return "__value_fields__" in (obj if isinstance(obj, type) else type(obj)).__dict__


def value_class(cls: type | None = None, /, *, frozen: bool = False, order: bool = False, eq: bool = True):
    """`@dataclass` for the options above: with `eq`, `__eq__` over the compared fields and
    `__hash__` over the hashed ones when frozen (None otherwise, as an unfrozen dataclass
    has); without, identity for both (the object's own)."""

    def wrap(cls: type) -> type:
        return _make(cls, frozen, order, eq)

    return wrap if cls is None else wrap(cls)


def replace(obj: Any, /, **changes: Any) -> Any:
    """A copy of `obj` with `changes` (as `dataclasses.replace`: through `__init__`)."""
    cls = type(obj)
    if not changes.keys() <= cls.__value_name_set__:
        unknown = changes.keys() - cls.__value_name_set__
        raise TypeError(f"{cls.__name__} has no field {sorted(unknown)[0]!r}")
    # The analyses copy their frozen values with one field changed hundreds of thousands of
    # times on big modules: the names come precomputed, the unchanged values in one pass.
    values = {name: getattr(obj, name) for name in cls.__value_names__}
    values.update(changes)
    return cls(**values)


def _make(cls: type, frozen: bool, order: bool, eq: bool = True) -> type:
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
    cls.__value_names__ = tuple(f.name for f in fields)
    cls.__value_name_set__ = frozenset(cls.__value_names__)
    cls.__value_compared__ = tuple(f.name for f in fields if f.compare)
    cls.__value_hashed__ = tuple(f.name for f in fields if f.hash)
    own = cls.__dict__
    eq_wanted = eq and "__eq__" not in own
    hash_wanted = eq and own.get("__hash__") is None
    _defer_methods(cls, fields, frozen, "__init__" not in own, eq_wanted, hash_wanted and frozen)
    if "__repr__" not in own:
        cls.__repr__ = _repr
    if hash_wanted and not frozen:
        cls.__hash__ = None
    if order:
        for name, method in (("__lt__", _lt), ("__le__", _le), ("__gt__", _gt), ("__ge__", _ge)):
            if name not in own:
                setattr(cls, name, method)
    if frozen:
        cls.__setattr__ = _frozen_setattr
        cls.__delattr__ = _frozen_delattr
    return cls


# Calls a class's stand-ins answer before its methods are compiled (`_defer_methods`).
_FIRST_CALLS = 16


def _defer_methods(cls: type, fields: list[Field], frozen: bool, init: bool, eq: bool, hash_: bool) -> None:
    """Stand-ins for the compiled methods: the first `_FIRST_CALLS` calls are answered over
    the field names (as the compiled methods would), the next one compiles them all
    (`_methods`) and puts them in their place. A warm `qlint check FILE` makes a few
    instances of some 15 classes, and compiling each one's methods (~0.3 ms: the source is
    parsed) was about a tenth of what it did past Python's start-up; an analysis makes
    millions of some, which get the compiled ones after a few calls."""
    calls: list[int] = [0]  # answered by the stand-ins so far
    made: list[bool] = []

    def real(name: str) -> Any:
        if not made:
            made.append(True)
            for each, method in _methods(cls, fields, frozen, init, eq, hash_).items():
                setattr(cls, each, method)
        return cls.__dict__[name]

    def __init__(self, *args, **kwargs):
        if calls[0] < _FIRST_CALLS:
            calls[0] += 1
            return _init(cls, frozen, self, args, kwargs)
        real("__init__")(self, *args, **kwargs)

    def __eq__(self, other):
        if calls[0] < _FIRST_CALLS:
            calls[0] += 1
            return _eq(self, other)
        return real("__eq__")(self, other)

    def __hash__(self):
        if calls[0] < _FIRST_CALLS:
            calls[0] += 1
            return hash(tuple([getattr(self, name) for name in cls.__value_hashed__]))
        return real("__hash__")(self)

    for name, stand_in, wanted in (("__init__", __init__, init), ("__eq__", __eq__, eq), ("__hash__", __hash__, hash_)):
        if wanted:
            stand_in.__qualname__ = f"{cls.__qualname__}.{name}"
            setattr(cls, name, stand_in)


def _init(cls: type, frozen: bool, self: Any, args: tuple, kwargs: dict) -> None:
    """The compiled `__init__` of `cls` (`_methods`), over its fields: positional or keyword
    arguments, defaults, default factories, then `__post_init__`."""
    names = cls.__value_names__
    if len(args) > len(names):
        raise TypeError(f"__init__() takes {len(names) + 1} positional arguments but {len(args) + 1} were given")
    values = dict(zip(names, args))  # noqa: B905 (fewer arguments than fields: the rest by keyword)
    for name, value in kwargs.items():
        if name not in cls.__value_name_set__:
            raise TypeError(f"__init__() got an unexpected keyword argument {name!r}")
        if name in values:
            raise TypeError(f"__init__() got multiple values for argument {name!r}")
        values[name] = value
    put = object.__setattr__ if frozen else setattr
    for f in cls.__value_fields__:
        if f.name in values:
            value = values[f.name]
        elif f.default is not _MISSING:
            value = f.default
        elif f.default_factory is not _MISSING:
            value = f.default_factory()
        else:
            raise TypeError(f"__init__() missing 1 required positional argument: {f.name!r}")
        put(self, f.name, value)
    if hasattr(cls, "__post_init__"):
        self.__post_init__()


def _eq(self: Any, other: Any) -> Any:
    if other.__class__ is not self.__class__:
        return NotImplemented
    return _key(self) == _key(other)


def _methods(cls: type, fields: list[Field], frozen: bool, init: bool, eq: bool, hash_: bool) -> dict[str, Any]:
    """`__init__` (positional or keyword, defaults bound once), `__eq__` and `__hash__`
    compiled together for the fields, as many as asked for."""
    env: dict[str, Any] = {"_MISSING": _MISSING, "_set": object.__setattr__}
    sources = []
    if init:
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
        sources.append(f"def __init__(self, {', '.join(params)}):\n    " + "\n    ".join(body or ["pass"]))
    if eq:
        mine = "".join(f"self.{name}," for name in cls.__value_compared__)
        theirs = "".join(f"other.{name}," for name in cls.__value_compared__)
        sources.append(
            "def __eq__(self, other):\n    if other.__class__ is not self.__class__:\n        return NotImplemented\n"
            f"    return ({mine}) == ({theirs})"
        )
    if hash_:
        sources.append(f"def __hash__(self):\n    return hash(({''.join(f'self.{n},' for n in cls.__value_hashed__)}))")
    if not sources:
        return {}
    # The source is made above from the class's own field names.
    exec("\n".join(sources) + "\n", env)
    names = [n for n, wanted in (("__init__", init), ("__eq__", eq), ("__hash__", hash_)) if wanted]
    for name in names:
        env[name].__qualname__ = f"{cls.__qualname__}.{name}"
    return {name: env[name] for name in names}


def _key(obj: Any) -> tuple:
    return tuple([getattr(obj, name) for name in obj.__value_compared__])


def _repr(self) -> str:
    shown = ", ".join(f"{f.name}={getattr(self, f.name)!r}" for f in self.__value_fields__ if f.repr)
    return f"{type(self).__qualname__}({shown})"


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
