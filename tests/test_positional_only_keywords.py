"""A helper's positional-only flag named by keyword at the call (`keyword_binding`).

`helper(m, is_qat=True)` against `def helper(m, is_qat=False, /, **options)` leaves `is_qat`
False and puts the key in `options`; against `def helper(m, is_qat=False, /)` it raises
`TypeError` before the body runs (both checked on Python 3.11; the PTQ arm's capture of a
train-mode `Dropout` model on torch 2.13 keeps `dropout(..., True)` in the prepared graph).
The call bound the keyword to the parameter by name (`helper_calls.apply`), so the arm the flag
rules out was taken for the one that runs: QL201 and QL202 missed the capture of the arm that
does run, QL203 missed a switch of a graph the call hands back uncopied, and a call that raises
was judged as if it ran (reported at base).

Quiet look-alikes: a flag after `/` (a keyword fills it), a flag passed by position, and each
verdict the default gives (the copy the default makes, the arm the default takes)."""

from __future__ import annotations

import textwrap

import pytest

from qlint.analysis.flow.keyword_binding import bound_keywords, raises
from tests.conftest import lint

HEAD = """\
import copy
import torch
import torch.nn as nn
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, prepare_qat_pt2e


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.lin = nn.Linear(4, 4)
        self.drop = nn.Dropout(0.5)

    def forward(self, x):
        return self.drop(self.lin(x))

"""

# The flag picks the arm: PTQ captures under `not is_qat`, QAT under `is_qat`.
ARMS = """
def quantize(model, x, q, is_qat={default}{params}):
    if is_qat:
        return prepare_qat_pt2e(torch.export.export(model, (x,)).module(), q)
    return prepare_pt2e(torch.export.export(model, (x,)).module(), q)


def main(x, q):
    model = Net(){mode}
    return quantize(model, x, q{call})
"""


def arms(default="False", params=", /, **options", mode="", call=""):
    return ARMS.format(default=default, params=params, mode=mode, call=call)


def codes(src: str, select: str) -> list[tuple[str, int]]:
    return [(d.code, d.range.start.row) for d in lint(HEAD + textwrap.dedent(src), select=(select,))]


def findings(src: str) -> list[tuple[str, int, str]]:
    return [(d.code, d.range.start.row, d.message) for d in lint(HEAD + textwrap.dedent(src), select=("QL2",))]


CAPTURES = [
    # (snippet, rule, loud): the PTQ arm captures at row 21, the QAT arm at row 20.
    pytest.param(arms(call=", is_qat=True"), "QL201", True, id="ptq-arm-runs-the-key-in-options"),
    pytest.param(arms(default="True", mode=".eval()", call=", is_qat=False"), "QL202", True, id="qat-arm-runs"),
    # Look-alikes: the flag after `/` takes the keyword; by position it fills the flag.
    pytest.param(
        arms(params=", /", call=", True").replace("q, is_qat=False, /", "q, /, is_qat=False"),
        "QL201",
        False,
        id="after-slash",
    ),
    pytest.param(arms(params="", call=", is_qat=True"), "QL201", False, id="plain-keyword-qat"),
    pytest.param(arms(call=", True"), "QL201", False, id="positional-true"),
    pytest.param(arms(call=", False"), "QL201", True, id="positional-false"),
    pytest.param(arms(), "QL201", True, id="default-ptq"),
    pytest.param(arms(mode=".eval()", call=", is_qat=True"), "QL201", False, id="evaled-model-ptq-arm"),
    pytest.param(arms(default="True", call=", is_qat=False"), "QL202", False, id="train-model-qat-arm"),
    pytest.param(arms(params=", /, **options", call=", is_qat=False", mode=""), "QL201", True, id="key-false"),
]


@pytest.mark.parametrize(("src", "rule", "loud"), CAPTURES)
def test_the_arm_python_runs_decides(src, rule, loud):
    found = codes(src, rule)
    assert bool(found) is loud, found
    assert all(code == rule for code, _ in found)


@pytest.mark.parametrize(
    "src",
    [
        pytest.param(arms(params=", /", call=", is_qat=False"), id="ptq-default-train-model"),
        pytest.param(arms(default="True", params=", /", mode=".eval()", call=", is_qat=True"), id="qat-default-evaled"),
        pytest.param(arms(params=", /", mode=".eval()", call=", is_qat=True"), id="ptq-default-evaled"),
    ],
)
def test_a_call_that_raises_gives_no_verdict(src):
    """Nothing of the helper runs there: it is judged as one no call reaches (its parameter
    in whatever mode a caller leaves it), not with the model this call would pass."""
    uncalled = src.replace("return quantize(model, x, q, is_qat=", "return model, (")
    assert findings(src) == findings(uncalled) != []


# A call handing the function no value the walk follows is recorded as a site only
# (`helper_calls.site_only`): its callers' flags rule the function's arms out.
MAIN = """
def main(x, q, is_qat={default}{params}):
    model = Net()
    if is_qat:
        return prepare_qat_pt2e(torch.export.export(model, (x,)).module(), q)
    return prepare_pt2e(torch.export.export(model, (x,)).module(), q)


if __name__ == "__main__":
    main(1, 2{call})
"""


@pytest.mark.parametrize(
    ("default", "params", "call", "loud"),
    [
        pytest.param("False", ", /, **kw", ", is_qat=True", True, id="the-key-in-kw-ptq-arm-runs"),
        pytest.param("False", "", ", is_qat=True", False, id="plain-keyword-qat-arm"),
        pytest.param("False", ", /", ", True", False, id="positional-qat-arm"),
        pytest.param("False", ", /", "", True, id="default-ptq-arm"),
        pytest.param("True", ", /, **kw", ", is_qat=False", False, id="the-key-in-kw-default-qat"),
        # Its default would rule the PTQ arm out; a call that raises rules out nothing.
        pytest.param("True", ", /", ", is_qat=False", True, id="raises-no-call-rules-an-arm-out"),
    ],
)
def test_a_site_only_call_binds_as_python_does(default, params, call, loud):
    found = findings(MAIN.format(default=default, params=params, call=call))
    assert [(code, row) for code, row, _ in found] == ([("QL201", 21)] if loud else [])


# `f` copies the graph unless `is_qat`: a copy's switch raises nothing on torch 2.13.
COPIES = """
def f(model, x, is_qat={default}{params}):
    m = torch.export.export(model, (x,)).module()
    return m if is_qat else copy.deepcopy(m)


def run(model, x):
    e = f(model, x{call})
    e.eval()
"""


@pytest.mark.parametrize(
    ("default", "params", "call", "loud"),
    [
        pytest.param("True", ", /, **options", ", is_qat=False", True, id="uncopied-the-key-in-options"),
        pytest.param("False", ", /, **options", ", is_qat=True", False, id="copied-the-key-in-options"),
        pytest.param("False", ", /", ", is_qat=True", False, id="raises-typeerror"),
        pytest.param("False", "", ", is_qat=True", True, id="plain-keyword-uncopied"),
        pytest.param("False", ", /", ", True", True, id="positional-uncopied"),
        pytest.param("True", ", /", ", False", False, id="positional-copied"),
    ],
)
def test_the_copy_python_makes_decides(default, params, call, loud):
    src = COPIES.format(default=default, params=params, call=call)
    found = codes(src, "QL203")
    assert [r for _, r in found] == ([24] if loud else []), found


def _call_and_def(src: str):
    import ast

    tree = ast.parse(textwrap.dedent(src))
    func = tree.body[0]
    call = tree.body[1].value
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)]
    return func, params, call


@pytest.mark.parametrize(
    ("src", "bound", "raising"),
    [
        ("def h(m, flag=False, /, **kw): ...\nh(m, flag=True)", [], False),
        ("def h(m, flag=False, /): ...\nh(m, flag=True)", [], True),
        ("def h(m, /, flag=False): ...\nh(m, flag=True)", [1], False),
        ("def h(m, flag=False): ...\nh(m, flag=True)", [1], False),
        ("def h(m, /, *, flag=False): ...\nh(m, flag=True)", [1], False),
        ("def h(m, flag=False, /): ...\nh(m, True)", [], False),
        ("def h(m, flag=False, /): ...\nh(m=m)", [], True),
    ],
)
def test_keywords_bound_as_python_binds_them(src, bound, raising):
    func, params, call = _call_and_def(src)
    assert [i for i, _ in bound_keywords(func, params, call)] == bound
    assert raises(func, call) is raising
