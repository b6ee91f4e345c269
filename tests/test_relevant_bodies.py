"""The bodies the model flow reads, carried across an editor's confined edit
(`relevant_bodies`, issue 13): at every step the carried choice is a fresh one's (the same
bodies, class scopes and rounds, in the same order) and the findings are a fresh check's; an
edit that changes what a round looks for is chosen again; an edit elsewhere is carried (the
count test: it fails when the carry stops working).
"""

from __future__ import annotations

import ast

import pytest

from qlint.analysis.flow import relevant_bodies
from qlint.analysis.names.project import ProjectIndex
from tests.keystroke_support import findings, package, steps

BASE = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def helper(model):
    return model


def main(model, quantizer, data):
    model = helper(model)
    return model


def quantize(model, quantizer, data):
    exported = torch.export.export(model, (data,))
    return prepare_pt2e(exported.module(), quantizer)


class Runner:
    def run(self, model, data):
        class Net(torch.nn.Module):
            def forward(self, x):
                return x
        return Net()
"""


# Each edit types on one line of one function body: the line count stays (a confined edit).
def _typed(line: str, typed: str):
    """`typed` at the end of the row that starts with `line` (after what was typed there)."""

    def edit(text: str) -> str:
        at = text.index(line + "\n") if line + "\n" in text else text.index(line + ";")
        end = text.index("\n", at)
        return text[:end] + typed + text[end:]

    return edit


def _replaced(line: str, new: str):
    return lambda text: text.replace(line, new, 1)


EDITS = {
    "unrelated": _typed("    return prepare_pt2e(exported.module(), quantizer)", "; edited = 1"),
    "helper exports": _replaced(
        "    return model\n\n\ndef main", "    return torch.export.export(model, (1,))\n\n\ndef main"
    ),
    "runner": _typed("        return Net()", "; edited = 2"),
    "nested exports": _replaced("                return x\n", "                return torch.export.export(x, (1,))\n"),
}


def _key(entries) -> list[tuple]:
    return [
        (id(f), type(cls).__name__, id(cls.node) if cls is not None else None, round_) for f, cls, round_ in entries
    ]


@pytest.fixture
def choices(monkeypatch):
    """For each check: whether the choice was carried, after asserting it is a fresh one's."""
    seen: list[bool] = []
    carried = relevant_bodies._carried

    def checked(ctx, carry):
        found = carried(ctx, carry)
        if found is not None:
            fresh = relevant_bodies._choose(ctx)
            assert _key(found.entries) == _key(fresh.entries)
            assert [set(w) for w in found.words] == [set(w) for w in fresh.words]
            assert [id(f) for f in found.order] == [id(f) for f in fresh.order]
        seen.append(found is not None)
        return found

    monkeypatch.setattr(relevant_bodies, "_carried", checked)
    return seen


def _texts(*names: str) -> list[str]:
    texts = [BASE]
    for name in names:
        edited = EDITS[name](texts[-1])
        assert edited != texts[-1], name
        texts.append(edited)
    for text in texts:
        ast.parse(text)
        assert text.count("\n") == BASE.count("\n")
    return texts


def test_an_edit_that_changes_no_round_is_carried(tmp_path, choices):
    texts = _texts("unrelated", "runner")
    steps(tmp_path, texts, ("QL201", "QL202"))
    # Each step is checked carrying, then fresh (which carries nothing): both edits carried.
    assert choices.count(True) == 2


def test_an_edit_that_brings_in_a_body_and_its_callers_is_chosen_again(tmp_path, choices):
    texts = _texts("unrelated", "helper exports", "unrelated")
    steps(tmp_path, texts, ("QL201", "QL202"))
    # `helper` now mentions `export` (round 0) and `main` calls it (round 1): the words of
    # round 1 change, so that step is chosen again; the edits before and after it are carried.
    assert choices.count(True) == 2


def test_bodies_written_in_the_edited_function_are_looked_at_again(tmp_path, choices):
    # `forward` (in `run`'s class) comes to mention `export`, which brings `run` in too (its
    # text holds the class): chosen again. Then `run` is edited with the chosen nested class in
    # it, before and after: carried, and asserted equal to a fresh choice like every other.
    texts = _texts("runner", "nested exports", "runner")
    steps(tmp_path, texts, ("QL201", "QL202"))
    assert choices.count(True) == 2


WALKED = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def to_eval(gm):
    gm.eval()


class Holder:
    def capture(self, model, data, quantizer):
        self.gm = torch.export.export(model, (data,)).module()
        return prepare_pt2e(self.gm, quantizer)

    def check(self):
        self.gm.eval()
        to_eval(self.gm)


def run(model, data, quantizer):
    class Net(torch.nn.Module):
        def forward(self, x):
            return x

    return Holder().capture(Net(), data, quantizer)
"""


def test_the_bodies_are_listed_once_per_check(tmp_path, monkeypatch):
    # The choice of bodies, the mode switchers, the graph fields and the graph returns all read
    # the module's list of bodies: one walk of its statement lists per check, not one each
    # (the walk starts at the module's body; nested bodies are on its own stack).
    path = str(package(tmp_path) / "checked.py")
    select = ("QL201", "QL202", "QL203")
    expected = findings(ProjectIndex(), path, WALKED, select)
    assert [code for code, *_ in expected] == ["QL201", "QL203", "QL203"]
    walks = []
    walk = relevant_bodies._functions_in

    def counting(body, scope=None):
        walks.append(body)
        return walk(body, scope)

    monkeypatch.setattr(relevant_bodies, "_functions_in", counting)
    assert findings(ProjectIndex(), path, WALKED, select) == expected
    assert len(walks) == 1
