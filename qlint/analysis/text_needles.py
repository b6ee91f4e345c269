"""Whether a text holds a needle, each needle searched once per text.

The engine asks every rule's trigger substrings of every file (`Rule.triggers`, through the
registry), then the import triggers of the rules those turned away, and those start over with
the very same substrings: QL101's `mentions` with its triggers, QL203's with `.eval()` and
`.train(`, QL102's insertion spellings with its triggers `call_function`, `create_node` and
`target`; QL201, QL202 and QL203 share `prepare_pt2e` and `prepare_qat_pt2e`. A needle a text
lacks is a scan of the whole text each time (most files lack most needles). Here each answer
is kept for the last text asked about (by identity: the engine checks one text at a time, and
the text held cannot be freed, so no other text can take its identity), and a needle asked
again is looked up instead of searched.

A needle with a capital letter or a digit (`QuantizationRecipe`, `checkGraphModuleNodes`, the
`2` of `prepare_pt2e`) is first looked for by that character (`_gate`), which many files lack
(ExecuTorch: `Q` 2,496 of 3,841, `G` 1,601, `2` 737): one character is found by `memchr`,
a tenth of the cost of searching a needle whole, and a text without it cannot hold the needle.
A needle can instead be given a shorter needle it holds as its gate (`gate_by`), one searched
of every text anyway: QL203's triggers search `.eval(` of every file (`graph_returns`), and its
exact `.eval()` asked next is then searched of the few files holding `.eval(` alone (the
turned-away files' import trigger asked `.eval()` of ~590 of ao's 633 files, each a search of
the whole text: ~0.06% of a cold run).
"""

from __future__ import annotations

from collections.abc import Iterable


def holds(text: str, needle: str) -> bool:
    """`needle in text`, searched once per text."""
    return _held(text, needle, _answers(text))


def holds_any(text: str, needles: Iterable[str]) -> bool:
    """`any(n in text for n in needles)`, each needle searched once per text (in order, up to
    the first one found, as `any` does)."""
    answers = _answers(text)
    return any(_held(text, needle, answers) for needle in needles)


def _held(text: str, needle: str, answers: dict[str, bool]) -> bool:
    """`needle in text`, kept in `answers`; False without the search when the text lacks the
    needle's gate, itself asked (and kept) the same way."""
    known = answers.get(needle)
    if known is None:
        gate = _GATES.get(needle)
        if gate is None:
            gate = _GATES[needle] = _gate(needle)
        known = answers[needle] = (not gate or _held(text, gate, answers)) and needle in text
    return known


def gate_by(needle: str, part: str) -> None:
    """Ask a text for `part`, a shorter needle `needle` holds, before `needle` (in place of its
    capital or digit): a text without `part` is not searched for `needle`."""
    if part not in needle or part == needle:
        raise ValueError(f"{needle!r} does not hold {part!r}")
    _GATES[needle] = part


def _gate(needle: str) -> str:
    """The needle's first capital ASCII letter or digit ("" when none, or the needle is that
    one character): a character much of a project's source lacks, unlike lower-case letters."""
    if len(needle) < 2:
        return ""
    return next((c for c in needle if "A" <= c <= "Z" or "0" <= c <= "9"), "")


def _answers(text: str) -> dict[str, bool]:
    global _LAST
    last = _LAST
    if last is not None and last[0] is text:
        return last[1]
    answers: dict[str, bool] = {}
    # Replaced whole: a reader on another thread sees the old pair or the new one.
    _LAST = (text, answers)
    return answers


# (the text last asked about, needle -> whether it holds it)
_LAST: tuple[str, dict[str, bool]] | None = None
# needle -> its gate (`_gate`), worked out once per process (the rules' needles are few)
_GATES: dict[str, str] = {}
