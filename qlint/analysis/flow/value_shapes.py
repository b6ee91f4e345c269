"""What a value may be, as a shape (`constant_values`): a constant (`CONST`: what a literal,
an index, `len` or arithmetic on constants gives), a tuple of shapes by position, a sequence
of elements of one shape (`SEQ`: one that may be a list, whose items can change; `TUPLES`: a
tuple of a length not known), no value at all (`NOTHING`), a constant or a sequence (`MIXED`)
or anything (`ANY`); and how shapes join where a name has several bindings.
"""

from __future__ import annotations

CONST = "const"
ANY = "any"
NOTHING = "nothing"  # no value: an empty list's elements, an index past a tuple's end
MIXED = "mixed"  # a constant or a sequence: not a constant, and its reads are checked as a sequence's
SEQ = "seq"  # a sequence that may be a list: what it holds can change
TUPLES = "tuples"  # a tuple of a length not known: what it holds cannot
TUPLE = "tuple"


def constant_shape(shape) -> bool:
    if shape in (CONST, NOTHING):
        return True
    if isinstance(shape, tuple) and shape[0] in (SEQ, TUPLES):
        return constant_shape(shape[1])
    if isinstance(shape, tuple) and shape[0] == TUPLE:
        return all(constant_shape(s) for s in shape[1])
    return False


def join_shapes(a, b):
    if a == NOTHING:
        return b
    if b == NOTHING or a == b:
        return a
    if ANY in (a, b):
        return ANY
    if isinstance(a, tuple) and isinstance(b, tuple):
        if a[0] == b[0] == TUPLE and len(a[1]) == len(b[1]):
            return (TUPLE, tuple(join_shapes(x, y) for x, y in zip(a[1], b[1], strict=True)))
        kind = SEQ if SEQ in (a[0], b[0]) else TUPLES
        return (kind, join_shapes(element_shape(a), element_shape(b)))
    return MIXED  # a constant or a sequence (or a tuple): what it holds is read by neither


def element_shape(shape):
    """The shape of what iterating a value of `shape` gives."""
    if shape == MIXED:
        return ANY
    if shape in (CONST, NOTHING):
        return shape  # a string's characters; nothing
    if isinstance(shape, tuple) and shape[0] in (SEQ, TUPLES):
        return shape[1]
    if isinstance(shape, tuple) and shape[0] == TUPLE:
        out = NOTHING
        for s in shape[1]:
            out = join_shapes(out, s)
        return out
    return ANY


def unpacked_shapes(shape, size: int) -> list:
    """The shapes of `a, b = value` (a value of `shape`) by position."""
    if isinstance(shape, tuple) and shape[0] == TUPLE:
        return list(shape[1]) if len(shape[1]) == size else [NOTHING] * size  # else it raises
    return [element_shape(shape)] * size


def mutable_shape(shape) -> bool:
    """A value of `shape` may be a sequence the function wrote whose items can change (a
    list). `ANY` is none: a value of the function's own sequences reaches an unknown only
    through a read that is not a walk, which leaves every shape unknown
    (`constant_values._Shapes._only_walked`)."""
    if isinstance(shape, tuple) and shape[0] == TUPLE:
        return any(mutable_shape(s) for s in shape[1])
    if isinstance(shape, tuple):
        return shape[0] == SEQ or mutable_shape(shape[1])
    return shape == MIXED
