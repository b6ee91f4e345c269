"""`qlint.value_classes` makes the classes every run builds without `dataclasses`: each one
must behave as the dataclass it replaced (equality, hashing, ordering, repr, defaults,
`replace`, frozen fields), checked here side by side with `dataclasses` itself."""

from __future__ import annotations

import dataclasses
import pickle

import pytest

from qlint import value_classes
from qlint.diagnostic import Diagnostic, Edit, Fix, Position, Range
from qlint.results import FileResult
from qlint.value_classes import FrozenInstanceError, field, replace, value_class


@pytest.fixture(params=["answered", "compiled"], autouse=True)
def phase(request, monkeypatch):
    """Every behaviour holds of a class's first calls, answered over its field names, and of
    its compiled methods (a class new to the test compiles them at once)."""
    if request.param == "compiled":
        monkeypatch.setattr(value_classes, "_FIRST_CALLS", 0)
    return request.param


def _body(make_field):
    class Item:
        """An item."""

        name: str
        size: int = 0
        tags: list = make_field(default_factory=list)
        note: str = make_field(default="", compare=False)
        secret: str = make_field(default="", repr=False)

    return Item


def _pair(frozen: bool, order: bool):
    """The same class made by `value_class` and by `dataclasses`."""
    mine = value_class(frozen=frozen, order=order)(_body(field))
    theirs = dataclasses.dataclass(frozen=frozen, order=order)(_body(dataclasses.field))
    return mine, theirs


@pytest.mark.parametrize("frozen", [False, True])
@pytest.mark.parametrize("order", [False, True])
def test_behaves_as_the_dataclass_it_replaced(frozen, order):
    mine, theirs = _pair(frozen, order)
    for args, kwargs in [(("a",), {}), (("a", 2), {"note": "n"}), ((), {"name": "b", "tags": [1], "secret": "s"})]:
        m, t = mine(*args, **kwargs), theirs(*args, **kwargs)
        assert repr(m).split("(", 1)[1] == repr(t).split("(", 1)[1]
        names = [f.name for f in dataclasses.fields(t)]
        assert [getattr(m, n) for n in names] == [getattr(t, n) for n in names]
    assert mine("a") == mine("a", note="other") and mine("a") != mine("a", 1)
    assert mine("a").tags is not mine("a").tags  # a fresh default each time
    assert (mine("a") == theirs("a")) is False  # another class: never equal
    if frozen:
        assert hash(mine("a", 1, tags=())) == hash(mine("a", 1, tags=(), note="x"))
        with pytest.raises(FrozenInstanceError):
            mine("a").size = 3
        with pytest.raises(AttributeError):
            theirs("a").size = 3
    else:
        with pytest.raises(TypeError):
            hash(mine("a"))
        with pytest.raises(TypeError):
            hash(theirs("a"))
    if order:
        items = [mine("b"), mine("a", 2), mine("a", 1)]
        assert [(i.name, i.size) for i in sorted(items)] == [("a", 1), ("a", 2), ("b", 0)]
        assert [(t.name, t.size) for t in sorted([theirs("b"), theirs("a", 2), theirs("a", 1)])] == [
            (i.name, i.size) for i in sorted(items)
        ]
    else:
        with pytest.raises(TypeError):
            _ = mine("a") < mine("b")


def test_replace_goes_through_init_and_refuses_unknown_fields():
    seen = []

    @value_class
    class Counted:
        n: int
        twice: int = 0

        def __post_init__(self):
            seen.append(self.n)
            self.twice = 2 * self.n

    c = replace(Counted(1), n=5)
    assert (c.n, c.twice, seen) == (5, 10, [1, 5])
    with pytest.raises(TypeError):
        replace(c, missing=1)


def test_the_engine_types_keep_their_equality_hash_order_and_pickle():
    r = Range.of(1, 2, 3, 4)
    assert r == Range(Position(1, 2), Position(3, 4)) and hash(r) == hash(Range.of(1, 2, 3, 4))
    assert sorted([Position(2, 0), Position(1, 5), Position(1, 1)]) == [Position(1, 1), Position(1, 5), Position(2, 0)]
    assert Edit(r, "x") < Edit(r, "y")
    d = Diagnostic("QL101", "packet-matcher", "m", "p.py", r, fix=Fix("safe", "f", (Edit(r, "x"),)))
    # evidence, help and url_template take no part in equality or hashing, as before
    other = replace(d, evidence={"a": 1}, help="why", url_template="https://x/{code}")
    assert other == d and hash(other) == hash(d) and other.evidence == {"a": 1}
    assert "url_template" not in repr(d) and "evidence={}" in repr(d)
    assert replace(d, message="n") != d
    assert pickle.loads(pickle.dumps(d)) == d
    result = FileResult("p.py")
    assert result.diagnostics == [] and result.diagnostics is not FileResult("p.py").diagnostics
    assert pickle.loads(pickle.dumps(result)) == result


@pytest.mark.parametrize("frozen", [False, True])
def test_without_eq_instances_are_compared_and_hashed_by_identity(frozen):
    mine = value_class(frozen=frozen, eq=False)(_body(field))
    theirs = dataclasses.dataclass(frozen=frozen, eq=False)(_body(dataclasses.field))
    for cls in (mine, theirs):
        a, b = cls("a"), cls("a")
        assert a == a and a != b and hash(a) == object.__hash__(a)
        assert len({a, b, a}) == 2


def test_equality_and_hash_are_compiled_over_the_compared_fields():
    # The analyses compare and hash their frozen values millions of times on big modules:
    # the methods are the class's own, not a shared loop over its field names.
    @value_class(frozen=True)
    class Point:
        x: int
        y: int = field(default=0, compare=False)
        z: int = field(default=0, hash=False)

    assert Point.__eq__.__qualname__.endswith("Point.__eq__")
    assert Point(1, 2, 3) == Point(1, 5, 3) and Point(1, 0, 3) != Point(1, 0, 4)
    assert hash(Point(1, 0, 3)) == hash(Point(1, 9, 4)) == hash((1,))
    assert Point(1).__eq__(object()) is NotImplemented

    @value_class(frozen=True)
    class Empty:
        pass

    assert Empty() == Empty() and hash(Empty()) == hash(())


def test_methods_are_compiled_after_the_first_calls_and_then_are_the_class_own(monkeypatch, phase):
    # A run imports many value classes it never makes an instance of, and makes a few of
    # others: those compile nothing.
    compiled = []
    real = value_classes._methods
    monkeypatch.setattr(value_classes, "_methods", lambda cls, *a: compiled.append(cls.__name__) or real(cls, *a))
    first = value_classes._FIRST_CALLS

    @value_class(frozen=True)
    class Unused:
        x: int

    @value_class(frozen=True)
    class Pair:
        a: int
        b: str = "b"

    assert compiled == []
    stand_in = Pair.__hash__
    made = [Pair(1), Pair(1, "b"), Pair(a=2)]
    answered = [hash(made[0]) == hash((1, "b")), made[0] == made[1], made[0] != made[2], Pair.__eq__(made[0], 1)]
    assert answered == [True, True, True, NotImplemented]
    assert compiled == ([] if first >= 7 else ["Pair"])
    for n in range(first):
        Pair(n)
    assert {Pair(1), Pair(1, "b"), Pair(a=2)} == {Pair(2), Pair(1)}
    assert compiled == ["Pair"] and Pair.__hash__ is not stand_in
    assert Pair.__init__.__qualname__.endswith("Pair.__init__") and Pair.__eq__(Pair(1), 1) is NotImplemented
    assert hash(Pair(3, "c")) == hash((3, "c")) and compiled == ["Pair"]

    class Sub(Unused):  # a plain subclass reaches its base's methods through its own instances
        pass

    for n in range(first + 1):
        assert Sub(n).x == n
    assert compiled == ["Pair", "Unused"]


@pytest.mark.parametrize(
    "args, kwargs",
    [((1, "b", "c"), {}), ((), {"b": "x"}), ((1,), {"a": 2}), ((1,), {"c": 3})],
    ids=["too-many", "missing", "twice", "unknown"],
)
def test_bad_arguments_are_refused_as_the_compiled_init_refuses_them(args, kwargs):
    @value_class(frozen=True)
    class Pair:
        a: int
        b: str = "b"

    with pytest.raises(TypeError):
        Pair(*args, **kwargs)
