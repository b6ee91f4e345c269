"""What a branch condition that holds says of its flag's truth, for `compatible` guards.

birder's `load_model` loads an exported graph under `elif pt2 is True:` and switches the model
under `if pt2 is False: net.eval()`: the two conditions are different texts, yet no run meets
both, since `pt2 is True` holding makes `pt2` true and `pt2 is False` holding makes it false.
Only a condition that holds implies a truth: `pt2 is True` failing leaves `pt2` free (`1` is
true and not `True`), so the arm after it may still meet a bare `if pt2:`.
"""

from __future__ import annotations

# The comparisons whose holding fixes the compared name's truth (`x == True` holds for `1`,
# which is true; `x == False` for `0`, which is false).
_TRUTH_OF = ((" is True", True), (" == True", True), (" is False", False), (" == False", False))


def with_truths(guard: frozenset) -> frozenset:
    """`guard` (`{(condition, polarity)}`) with the truth each of its holding identity tests
    gives its name (`("pt2 is True", True)` adds `("pt2", True)`)."""
    implied = {
        (condition[: -len(suffix)], truth)
        for condition, polarity in guard
        if polarity
        for suffix, truth in _TRUTH_OF
        if condition.endswith(suffix)
    }
    return guard | implied if implied else guard


__all__ = ["with_truths"]
