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
"""

from __future__ import annotations

from collections.abc import Iterable


def holds(text: str, needle: str) -> bool:
    """`needle in text`, searched once per text."""
    answers = _answers(text)
    known = answers.get(needle)
    if known is None:
        known = answers[needle] = needle in text
    return known


def holds_any(text: str, needles: Iterable[str]) -> bool:
    """`any(n in text for n in needles)`, each needle searched once per text (in order, up to
    the first one found, as `any` does)."""
    answers = _answers(text)
    for needle in needles:
        known = answers.get(needle)
        if known is None:
            known = answers[needle] = needle in text
        if known:
            return True
    return False


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
