"""What `capture_content.changed_after_build` answers for one body, kept while one call of a
helper is judged.

A caller verdict (`caller_verdicts`) weighs each model a call passes: ExecuTorch's Qualcomm
tests hand `get_qdq_module` a loop item over `modules = [Conv2dSingle(), Conv2dSequential()]`,
one fact per construction, and each fact asked the same question of the same test method
(the names the list is bound to, from the same line, up to the same call): which lines those
names hold the model (`model_bindings`), which loop targets hold its items (`loop_aliases`),
and whether anything gave it parts there. The 927 askings of checking
backends/qualcomm/tests/utils.py were 136 different questions. And a call found again as it
was found before (the two passes of a loop's body) is judged once (`judged_before`).

The answer of one body depends on the body, the names, the name the model is captured under,
the line it was built on, the calls that take it (`points`), the changes ignored, whether the
model is ever switched, and the helpers the flows call: everything but the flows is in the
key, and the flows are held by the entry itself (their `id` in the key cannot then be taken
by another list). Kept only inside `one_call()`, whose entries go when it ends: the bodies
and calls in a key are nodes of trees the judged call's flows hold until then.
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

_SCOPES: list[dict] = []


@contextlib.contextmanager
def one_call() -> Iterator[None]:
    """Keep the bodies' answers while the models one call passes are judged."""
    _SCOPES.append({})
    try:
        yield
    finally:
        _SCOPES.pop()


def judged(key: tuple, flows, compute: Callable[..., bool], *args) -> bool:
    """`compute(*args)`, once per `key` and `flows` inside `one_call()` (every time outside it)."""
    if not _SCOPES:
        return compute(*args)
    memo = _SCOPES[-1]
    key = (id(flows), len(flows), *key)
    found = memo.get(key)
    if found is None:
        found = memo[key] = (compute(*args), flows)
    return found[0]


def judged_before(judged: dict, found) -> bool:
    """`found` (a `project_callers.ProjectCall`) was found before as it is found now and judged
    harmless with no caller of its own read (`caller_verdicts._passes_harmless` keeps those in
    `judged`, by call and body): the walk of a loop reads its body twice (`loop_walk.loop`)
    and each pass records its calls, with the same modes when the first pass changed none
    (ExecuTorch's Qualcomm tests: 276 of the 613 calls judged in a cold run; cold instructions
    of a check of tests/utils.py 0.960x, of the qualcomm backend's directory 0.986x, of the
    whole tree 0.995x). The same call, in the same body of the same analysis of its module,
    passing the same models in the same modes (every argument, as its site records it), with
    the same bodies analysed, gets the same answer: that is all the judging reads, and what it
    keeps meanwhile only spares work."""
    for before in judged.get((id(found.call), id(found.flow)), ()):
        if (
            before.module is found.module
            and before.facts == found.facts
            and before.site == found.site
            and len(before.flows) == len(found.flows)
            and all(a is b for a, b in zip(before.flows, found.flows, strict=True))
        ):
            return True
    return False
