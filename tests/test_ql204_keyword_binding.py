"""QL204: a helper's keywords bound as Python binds them (`keyword_binding`).

`helper(model=prepared)` against `def helper(model=None, /, **options)` leaves `model` None
and puts the prepared model in `options`; `make_quantizer(is_qat=True)` against
`def make_quantizer(is_qat=False, /, **options)` builds the PTQ quantizer. The calibration
walk bound both by name, so the helper ran the model (quiet) or the quantizer was taken for a
QAT one, whose model a training loop runs (quiet), while the model reached `convert_pt2e`
without calibration. A keyword landing in a `**` the body never names is read by nothing
there; one the body forwards (`**options`) may run or configure anything, as before.

A positional-only parameter named by keyword where no `**` takes it, or which nothing else
fills, makes Python raise `TypeError` at the call: nothing of the helper runs and nothing
after the call on that path, so a convert after it is no finding there (the `TypeError` is
what the user meets first); caught by a `try`, the path goes on without the calibration.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint

HEAD = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
from executorch.backends.xnnpack.quantizer.xnnpack_quantizer import (
    XNNPACKQuantizer,
    get_symmetric_quantization_config,
)

PTQ = get_symmetric_quantization_config()
QAT = get_symmetric_quantization_config(is_qat=True)

"""


def rows(src: str) -> list[int]:
    found = lint(HEAD + textwrap.dedent(src), select=("QL204",))
    return [d.range.start.row - HEAD.count("\n") for d in found]


# `calibrate`'s signature and what its body does with its `**`, then the caller's call.
CALIBRATE = """
def calibrate(model{params}):
    if model is not None:
        for batch in batches():
            model(batch)
    {rest}


def run(m, q, x):
    prepared = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
    {call}
    return convert_pt2e(prepared)
"""
CONVERT_ROW = 12


def calibrate(params: str, call: str, rest: str = "pass") -> str:
    return CALIBRATE.format(params=params, call=call, rest=rest)


@pytest.mark.parametrize(
    ("params", "call", "rest", "loud"),
    [
        # The model lands in `options`, which nothing reads: `model` is None, nothing runs.
        pytest.param("=None, /, **options", "calibrate(model=prepared)", "pass", True, id="into-unread-kwargs"),
        pytest.param("=None, /, **kw", "calibrate(data=prepared)", "pass", True, id="no-such-parameter-unread"),
        # Look-alikes: a keyword fills it, the body forwards the dict, or it goes by position.
        pytest.param("=None, **options", "calibrate(model=prepared)", "pass", False, id="plain-keyword"),
        pytest.param("=None, /, *, data=None", "calibrate(None, data=prepared)", "data(1)", False, id="kw-only"),
        pytest.param("=None, /, **options", "calibrate(model=prepared)", "run_all(**options)", False, id="forwarded"),
        pytest.param("=None, /, **options", "calibrate(model=prepared)", "print(options)", False, id="read-whole"),
        pytest.param("=None, /, **options", "calibrate(prepared)", "pass", False, id="by-position"),
        pytest.param("=None, /, **options", "calibrate(prepared, model=1)", "pass", False, id="both"),
    ],
)
def test_a_model_passed_by_keyword_runs_where_python_binds_it(params, call, rest, loud):
    assert rows(calibrate(params, call, rest)) == ([CONVERT_ROW] if loud else [])


@pytest.mark.parametrize(
    ("params", "call"),
    [
        pytest.param(", /", "calibrate(model=prepared)", id="no-kwargs"),
        pytest.param(", /, **options", "calibrate(model=prepared)", id="required-into-kwargs"),
        pytest.param(", /, **options", "out = calibrate(model=prepared)", id="assigned"),
        pytest.param("=None, /", "calibrate(model=prepared)", id="default-no-kwargs"),
    ],
)
def test_a_call_that_raises_ends_the_path(params, call):
    """Python raises `TypeError` at the call, every time: the convert after it never runs."""
    assert rows(calibrate(params, call)) == []


def test_a_caught_type_error_goes_on_without_the_calibration():
    src = calibrate(", /", "try:\n        calibrate(model=prepared)\n    except TypeError:\n        pass")
    assert rows(src) == [CONVERT_ROW + 3]


def test_a_raising_call_in_one_arm_ends_that_arm_only():
    src = calibrate(", /", "if x:\n        calibrate(model=prepared)")
    assert rows(src) == [CONVERT_ROW + 1]


def test_a_raising_call_inside_an_expression_runs_nothing():
    """Only the statement's own call ends the path; inside a conditional expression it may not
    be evaluated, and when it is, it runs nothing."""
    src = calibrate(", /", "out = calibrate(model=prepared) if x else None")
    assert rows(src) == [CONVERT_ROW]


def test_a_method_whose_receiver_fills_the_first_parameter():
    """`self.calibrate(prepared, model=1)`: `self` and `prepared` fill both positional-only
    parameters; the keyword lands in `options`, and no `TypeError` is raised."""
    src = """
    class Runner:
        def calibrate(self, model, /, **options):
            model(1)

        def run(self, m, q, x):
            prepared = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
            self.calibrate(prepared, model=1)
            return convert_pt2e(prepared)
    """
    assert rows(src) == []
    assert rows(src.replace("self.calibrate(prepared, model=1)", "self.calibrate(model=prepared)")) == []


UNUSED = "\n\n\ndef unused(**options):\n    pass"

# Which configuration `make_quantizer` builds is what its flag holds.
QUANTIZER = """
def make_quantizer(is_qat=False{params}):
    return XNNPACKQuantizer().set_global(QAT if is_qat else PTQ){rest}


def run(m, x):
    q = {call}
    prepared = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
    return convert_pt2e(prepared)
"""


@pytest.mark.parametrize(
    ("params", "call", "rest", "loud"),
    [
        # `is_qat` stays False: the PTQ quantizer, and its model never ran.
        pytest.param(", /, **options", "make_quantizer(is_qat=True)", "", True, id="qat-key-in-unread-kwargs"),
        # `options` named in another function is not this one's dict.
        pytest.param(", /, **options", "make_quantizer(is_qat=True)", UNUSED, True, id="another-functions-kwargs"),
        # Look-alike: a keyword fills the flag (forwarded: below).
        pytest.param(", **options", "make_quantizer(is_qat=True)", "", False, id="plain-keyword"),
        pytest.param(", /, **options", "make_quantizer(is_qat=False)", "", True, id="key-false"),
        pytest.param(", /", "make_quantizer()", "", True, id="default"),
    ],
)
def test_a_qat_flag_configures_where_python_binds_it(params, call, rest, loud):
    found = rows(QUANTIZER.format(params=params, call=call, rest=rest))
    assert bool(found) is loud, found


def test_a_qat_flag_forwarded_in_kwargs_may_configure():
    src = """
    def make_quantizer(is_qat=False, /, **options):
        return build(QAT if is_qat else PTQ, **options)


    def run(m, x):
        q = make_quantizer(is_qat=True)
        prepared = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
        return convert_pt2e(prepared)
    """
    assert rows(src) == []


def test_a_qat_flag_that_raises_ends_the_path():
    src = QUANTIZER.format(params=", /", call="make_quantizer(is_qat=True)", rest="")
    assert rows(src) == []


@pytest.mark.parametrize(
    ("src", "offset", "raising", "unread"),
    [
        ("def h(m, /, **kw): ...\nh(m=1)", 0, True, ["m"]),
        ("def h(m, /, **kw): ...\nh(1, m=1)", 0, False, ["m"]),
        ("def h(s, m, /, **kw): ...\nh(m=1)", 1, True, ["m"]),
        ("def h(s, m, /, **kw): ...\nh(1, m=1)", 1, False, ["m"]),
        ("def h(m=0, /, **kw): ...\nh(m=1)", 0, False, ["m"]),
        ("def h(m, /, **kw): ...\nh(*a, m=1)", 0, False, ["m"]),
        ("def h(m, /, **kw): ...\nh(m=1)", None, False, ["m"]),  # the receiver unknown
        ("def h(m, /, **kw):\n    g(**kw)\nh(m=1)", 0, True, []),
        ("def h(m, /, **kw):\n    locals()\nh(1, m=1)", 0, False, []),
        ("def h(m, x=0, **kw): ...\nh(1, x=2, y=3, **d)", 0, False, ["y"]),
        ("def h(m, x=0): ...\nh(1, y=3)", 0, False, []),
    ],
)
def test_what_python_does_with_a_keyword(src, offset, raising, unread):
    import ast

    from qlint.analysis.flow.keyword_binding import raises, unread_keywords

    tree = ast.parse(src)
    func, call = tree.body[0], tree.body[-1].value
    params = [a.arg for a in (*func.args.posonlyargs, *func.args.args, *func.args.kwonlyargs)]
    assert raises(func, call, offset) is raising
    ids = unread_keywords(func, params, call)
    assert [kw.arg for kw in call.keywords if id(kw) in ids] == unread


def test_a_classmethod_called_on_its_class():
    """`cls` and `prepared` fill both positional-only parameters: no `TypeError`, and the
    keyword lands in `options`; the method runs the model (at base `prepared` filled `cls`)."""
    src = """
    class Runner:
        @classmethod
        def calibrate(cls, model, /, **options):
            model(1)


    def run(m, q, x):
        prepared = prepare_pt2e(torch.export.export(m, (x,)).module(), q)
        Runner.calibrate(prepared, model=1)
        return convert_pt2e(prepared)
    """
    assert rows(src) == []
    assert rows(src.replace("Runner.calibrate(prepared, model=1)", "Runner.calibrate(prepared)")) == []
