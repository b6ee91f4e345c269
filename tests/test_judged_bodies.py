"""QL201: what `changed_after_build` answers for one body, kept while the facts of one call
of a helper in another module are judged (`judged_bodies`).

ExecuTorch's Qualcomm tests hand `get_qdq_module` a loop item over a list of constructions:
one fact per construction, each asking the same question of the same test method. The answer
is computed once per question; a question that differs (other names, another line) is still
computed, so a model given parts keeps the helper's finding beside one that was not.
"""

from __future__ import annotations

import contextlib

from qlint.rules import caller_verdicts, capture_content, judged_bodies
from tests.test_ql201_project_callers import IMPORT, _check, _repo

NET = """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)
"""
LISTED = (
    IMPORT
    + NET
    + """
def main(quantizer, x):
    modules = [Net(), Net()]
    for m in modules:
        quantize_module(m, quantizer, x)
"""
)
# Two models built on one line (one `start`), told apart by their names only; one is given
# a part before the call passes either.
ONE_LINE = (
    IMPORT
    + NET
    + """
def main(quantizer, x, flag):
    first = Net(); second = Net()
    second.head = make_head()
    quantize_module(first if flag else second, quantizer, x)
"""
)


def _counting(monkeypatch) -> tuple[list, list]:
    """The bodies' questions computed, and the calls judged (`_passes_harmless`)."""
    asked, judged = [], []
    real, passes = capture_content._changed_here, caller_verdicts._passes_harmless

    def counting(node, body, names, *rest):
        asked.append(frozenset(names))
        return real(node, body, names, *rest)

    def judging(ctx, found, *rest):
        judged.append(found.call.lineno)
        return passes(ctx, found, *rest)

    monkeypatch.setattr(capture_content, "_changed_here", counting)
    monkeypatch.setattr(caller_verdicts, "_passes_harmless", judging)
    return asked, judged


def test_the_facts_of_one_call_ask_a_body_once(tmp_path, monkeypatch):
    asked, judged = _counting(monkeypatch)
    assert _check(_repo(tmp_path, a=LISTED)).diagnostics == []
    # Two constructions, one question: asked once each time the call is judged.
    assert judged and asked == [frozenset({"modules"})] * len(judged)


def test_without_the_scope_each_fact_asks_again_with_the_same_verdict(tmp_path, monkeypatch):
    asked, judged = _counting(monkeypatch)
    monkeypatch.setattr(caller_verdicts, "one_call", contextlib.nullcontext)
    assert _check(_repo(tmp_path, a=LISTED)).diagnostics == []
    assert judged and asked == [frozenset({"modules"})] * 2 * len(judged)


def test_a_model_given_parts_beside_an_unchanged_one_keeps_the_finding(tmp_path, monkeypatch):
    asked, _ = _counting(monkeypatch)
    (d,) = _check(_repo(tmp_path, a=ONE_LINE)).diagnostics
    assert "as parameter `module`" in d.message
    # The changed model's question was asked, whichever fact came first.
    assert frozenset({"second"}) in asked


def test_outside_a_call_every_asking_computes():
    computed = []
    flows: list = []

    def compute(value):
        computed.append(value)
        return value

    assert judged_bodies.judged(("k",), flows, compute, True) is True
    assert judged_bodies.judged(("k",), flows, compute, False) is False
    with judged_bodies.one_call():
        assert judged_bodies.judged(("k",), flows, compute, True) is True
        assert judged_bodies.judged(("k",), flows, compute, False) is True  # kept
        assert judged_bodies.judged(("k",), [None], compute, False) is False  # other flows
        assert judged_bodies.judged(("j",), flows, compute, False) is False  # other key
    assert judged_bodies.judged(("k",), flows, compute, False) is False  # the scope's entries went
    assert computed == [True, False, True, False, False, False]


# A loop's body is walked twice (`loop_walk.loop`), and each pass records its call of the
# helper: found twice, with the same modes when the first pass changed nothing.
BN_NET = NET.replace("nn.Conv2d(3, 3, 3)", "nn.BatchNorm2d(3)")
LOOPED = (
    IMPORT
    + BN_NET
    + """
def main(quantizer, x):
    model = Net().eval()
    for _ in range(3):
        quantize_module(model, quantizer, x)
"""
)
# The first pass leaves the model in train mode: the second pass passes it so.
TRAINED_IN_LOOP = LOOPED.replace(
    "        quantize_module(model, quantizer, x)\n",
    "        quantize_module(model, quantizer, x)\n        model.train()\n",
)


def _judged_calls(monkeypatch) -> list:
    judged = []
    real = caller_verdicts._passes_harmless

    def judging(ctx, found, *rest):
        judged.append(found)
        return real(ctx, found, *rest)

    monkeypatch.setattr(caller_verdicts, "_passes_harmless", judging)
    return judged


def test_a_call_found_again_as_before_is_judged_once(tmp_path, monkeypatch):
    found = []
    real = caller_verdicts.each_project_call

    def finding(*args):
        for call in real(*args):
            found.append(call)
            yield call

    monkeypatch.setattr(caller_verdicts, "each_project_call", finding)
    judged = _judged_calls(monkeypatch)
    assert _check(_repo(tmp_path, a=LOOPED)).diagnostics == []
    # Found once per pass of the loop, judged the first time only.
    assert len(found) == 2 and found[0].call is found[1].call and found[0].facts == found[1].facts
    assert judged == [found[0]]


def test_a_call_found_again_in_another_mode_is_judged_again(tmp_path, monkeypatch):
    judged = _judged_calls(monkeypatch)
    (d,) = _check(_repo(tmp_path, a=TRAINED_IN_LOOP)).diagnostics
    assert "as parameter `module`" in d.message
    # The second pass passes the model trained by the first: judged, and it keeps the finding.
    assert len(judged) == 2 and judged[0].call is judged[1].call and judged[0].facts != judged[1].facts


def test_a_call_found_again_with_other_bodies_analysed_is_judged_again(tmp_path, monkeypatch):
    from qlint.analysis.flow.project_callers import ProjectCall
    from qlint.rules.judged_bodies import judged_before

    call, body, module = object(), object(), object()
    first = ProjectCall(call, frozenset({"eval"}), "a.py", (body,), body, None, module)
    judged = {(id(call), id(body)): [first]}
    same = ProjectCall(call, frozenset({"eval"}), "a.py", (body,), body, None, module)
    assert judged_before(judged, same)
    other = object()
    for changed in (
        ProjectCall(call, frozenset({"eval"}), "a.py", (body, other), body, None, module),  # more bodies
        ProjectCall(call, frozenset({"eval"}), "a.py", (other,), body, None, module),  # other bodies
        ProjectCall(call, frozenset({"train"}), "a.py", (body,), body, None, module),  # other modes
        ProjectCall(call, frozenset({"eval"}), "a.py", (body,), body, None, object()),  # another analysis
        ProjectCall(call, frozenset({"eval"}), "a.py", (body,), body, "site", module),  # other arguments
        ProjectCall(object(), frozenset({"eval"}), "a.py", (body,), body, None, module),  # another call
    ):
        assert not judged_before(judged, changed)
