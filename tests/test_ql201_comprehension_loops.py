"""QL201: a helper called inside a comprehension, read as the loop the comprehension stands
for (issue 14, item 7; `comprehension_loops`).

ExecuTorch's Qualcomm multi-graph test calls `get_qdq_module` as
`[capture_program(self.get_qdq_module(module, inp), inp) for module, inp in zip(modules, inputs)]`.
The walk skipped comprehensions, so the call was a use of the helper that cannot be read and
the helper was judged as if its callers were unknown. A comprehension now runs what its loop
would: the targets are bound to the items of a container written here (or to a value not
followed), each condition guards the element, and the calls are calls the walk reads. The
targets are the comprehension's own: the function's names keep their values after it.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import check_file, lint, package_repository, rows_of
from tests.snippets import PTQ_HELPER_HEAD, PTQ_HELPER_HEAD_CAPTURE_ROW, QDQ_HELPERS, QDQ_HELPERS_CAPTURE_ROW

HEAD = PTQ_HELPER_HEAD
CAPTURE_ROW = PTQ_HELPER_HEAD_CAPTURE_ROW


def ql201(caller: str):
    return rows_of(lint(HEAD + "\n\n" + textwrap.dedent(caller), select=("QL201",)))


QUIET = {
    "list comprehension over a list written here": """
        def main(x, q):
            models = [Shuffle(), Net().eval()]
            return [quantize(m, (x,), q) for m in models]
        """,
    "zip of two lists, as ExecuTorch's test": """
        def main(x, q):
            modules = [Shuffle(), Shuffle()]
            inputs = [(x,), (x + 1,)]
            return [quantize(m, inp, q) for m, inp in zip(modules, inputs)]
        """,
    "generator handed to a call, with a condition": """
        def main(x, q, keep):
            return list(quantize(m, (x,), q) for m in [Shuffle(), Net().eval()] if keep(m))
        """,
    "dict comprehension over enumerate": """
        def main(x, q):
            models = [Shuffle(), Net().eval()]
            return {i: quantize(m, (x,), q) for i, m in enumerate(models)}
        """,
    "nested generators": """
        def main(x, q):
            return [quantize(m, (x,), q) for m in [Shuffle(), Net().eval()] for _ in range(2)]
        """,
}


@pytest.mark.parametrize("caller", QUIET.values(), ids=QUIET.keys())
def test_callers_in_a_comprehension_passing_harmless_models_keep_the_helper_quiet(caller):
    assert ql201(caller) == []


LOUD = {
    "train-mode batch norm among the items": """
        def main(x, q):
            models = [Shuffle(), Net()]
            return [quantize(m, (x,), q) for m in models]
        """,
    "an iterable not written here": """
        def main(x, q, models):
            return [quantize(m, (x,), q) for m in models]
        """,
    "a condition does not make the item harmless": """
        def main(x, q, keep):
            return [quantize(m, (x,), q) for m in [Net(), Shuffle()] if keep(m)]
        """,
    "the second generator walks what is unknown": """
        def main(x, q, groups):
            return [quantize(m, (x,), q) for group in groups for m in group]
        """,
}


@pytest.mark.parametrize("caller", LOUD.values(), ids=LOUD.keys())
def test_callers_in_a_comprehension_passing_other_models_keep_the_finding(caller):
    assert ql201(caller) == [CAPTURE_ROW]


def test_the_targets_are_the_comprehensions_own():
    # `m` after the comprehension is the evaled model, not the comprehension's item.
    caller = """
        def main(x, q, models):
            m = Net().eval()
            names = [str(m) for m in models]
            quantize(m, (x,), q)
            return names
        """
    assert ql201(caller) == []


def test_a_switch_in_a_comprehension_is_read_as_the_loops():
    # `[m.train() for _ in range(n)]` switches the model back to train mode, as its loop does.
    caller = """
        def main(x, q, n):
            m = Net().eval()
            [m.train() for _ in range(n)]
            quantize(m, (x,), q)
        """
    assert ql201(caller) == [CAPTURE_ROW]


HELPERS = QDQ_HELPERS
HELPER_ROW = QDQ_HELPERS_CAPTURE_ROW
TESTS = """
import torch
from torch import nn

from pkg.helpers import get_qdq_module


class Conv(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(1, 3, 3)

    def forward(self, x):
        return self.conv(x)


class Noisy(nn.Module):
    def __init__(self):
        super().__init__()
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(x)


def capture(m, inputs):
    return m


def test_graphs(q):
    modules = [Conv(), {second}]
    inputs = [(torch.randn(1, 1, 3, 3),), (torch.randn(1, 1, 3, 3),)]
    return [capture(get_qdq_module(module, inp, q), inp) for module, inp in zip(modules, inputs)]
"""


@pytest.mark.parametrize(("second", "rows"), [("Conv()", []), ("Noisy()", [HELPER_ROW])])
def test_a_caller_in_another_module_calling_in_a_comprehension_is_judged(tmp_path, second, rows):
    root = package_repository(tmp_path / "repo", helpers=HELPERS, test_it=TESTS.replace("{second}", second))
    assert rows_of(check_file(root / "pkg" / "helpers.py", ("QL201",)).diagnostics) == rows
