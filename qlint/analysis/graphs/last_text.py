"""A text question's answer for the last text asked, by identity.

The engine asks a rule's text trigger of every file, then its import trigger of the files the
text trigger turned away, and each import trigger starts over with questions the text trigger
(its own rule's, or another rule's) just answered about the very same text object: QL101's
`mentions` and `writes_target`, QL102's `writes_insertion`, each a few scans of the whole text.
Kept for one text only: the next file's text replaces it (`packet_text.spells_packet` keeps its
answer the same way), and the text it holds is the one the engine is checking.
"""

from __future__ import annotations

import functools
from collections.abc import Callable


def last_text(question: Callable[[str], bool]) -> Callable[[str], bool]:
    """`question(text)`, answered again without asking it for the text it was last asked of
    (the same object: an equal text read again is asked again, which costs only the time)."""
    # One (text, answer) pair, replaced whole (a reader on another thread sees the old pair or
    # the new one); the text held cannot be freed, so no other text can take its identity.
    last: list[tuple[str, bool] | None] = [None]

    @functools.wraps(question)
    def answer(text: str) -> bool:
        known = last[0]
        if known is not None and known[0] is text:
            return known[1]
        found = question(text)
        last[0] = (text, found)
        return found

    return answer
