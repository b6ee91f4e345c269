"""QL203 where the flag that picks the copy reaches the copying helper through another helper,
or where the helper copies the graph it is given on one arm (`arm_graphs.forwarded`,
`arm_graphs.param_paths`).

Stop 68 read `export_model = m if is_qat else copy.deepcopy(m)` by the constant the call
passes (`tests/test_ql203_ruled_out_arms.py`). Two shapes were left: a helper forwarding its
flag (`def g(m, is_qat): return f(m, is_qat)`, called as `g(m, False)`), and a helper copying
its parameter under the flag (`if not is_qat: model = copy.deepcopy(model)`, `return model`).
Both were reported whatever the call passed. A forwarding that changes the flag is read as
such (`not is_qat`) or left unknown (`is_qat or ...`, a flag rebound first); `**kwargs` is
read in `tests/test_ql203_forwarded_kwargs.py`.
Every case below was run on torch 2.13 / torchao 0.18 with a real model and
`XNNPACKQuantizer`: each quiet switch raised nothing, each loud one `NotImplementedError`.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import alone_and_in_run, lint, package_repository
from tests.test_ql203_returned_copies import _run  # QL203's findings in main.py, a whole run

HEAD = """\
import copy
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


def to_eval(model):
    model.eval()

"""  # the snippets call `run(model, x, q)` (and `run(model, x, q, True)` where they take a flag)

# The copying helper makes the graph; `g` forwards the flag to it.
FORWARDED = """
def f(model, x, is_qat=False):
    m = torch.export.export(model, (x,)).module()
    export_model = m if is_qat else copy.deepcopy(m)
    return export_model

def g(model, x, {params}):
    {before}return f(model, x, {forward})

def run(model, x, q{flag}):
    e = g(model, x{call})
    {switch}
"""


def forwarded(params="is_qat", forward="is_qat", call="", flag="", switch="e.eval()", before=""):
    return FORWARDED.format(params=params, forward=forward, call=call, flag=flag, switch=switch, before=before)


# Two forwarding helpers in a row, the last one's default deciding. (The caller makes the
# graph: a body is read when its text names a capture or calls, at most two helpers away, a
# function that does, `relevant_bodies`; the flag is followed no further than that.)
TWICE = """
def f(model, is_qat=False):
    if not is_qat:
        model = copy.deepcopy(model)
    return model

def g(model, is_qat):
    return f(model, is_qat)

def h(model, qat=False):
    return g(model, is_qat=qat)

def run(model, x, q):
    e = h(torch.export.export(model, (x,)).module(){call})
    e.eval()
"""

# The helper copies the graph it is given on one arm; the caller switches what it returns.
COPIES_PARAM = {
    "statement": "    if not is_qat:\n        model = copy.deepcopy(model)\n    return model",
    "else": "    if is_qat:\n        out = model\n    else:\n        out = copy.deepcopy(model)\n    return out",
    "returns": "    if is_qat:\n        return model\n    return copy.deepcopy(model)",
    "conditional": "    return model if is_qat else copy.deepcopy(model)",
}
PARAM = """
def maybe_copy(model, is_qat=False):
{body}

def run(model, x, q{flag}):
    gm = torch.export.export(model, (x,)).module()
    e = maybe_copy(gm{call})
    {switch}
"""


def param(shape: str, call="", flag="", switch="e.eval()"):
    return PARAM.format(body=COPIES_PARAM[shape], call=call, flag=flag, switch=switch)


# The same helper, reached through one that forwards its flag.
PARAM_FORWARDED = """
def maybe_copy(model, is_qat=False):
    if not is_qat:
        model = copy.deepcopy(model)
    return model

def g(model, is_qat):
    return maybe_copy(model, is_qat)

def run(model, x, q):
    gm = torch.export.export(model, (x,)).module()
    e = g(gm{call})
    e.train()
"""

# The same, the copy handed back as an element of a tuple.
PARAM_TUPLE = """
def maybe_copy(model, is_qat=False):
    if not is_qat:
        model = copy.deepcopy(model)
    return model, 1

def run(model, x, q):
    gm = torch.export.export(model, (x,)).module()
    e, _ = maybe_copy(gm{call})
    e.eval()
"""

QUIET = {
    "forwarded-positional-false": forwarded(call=", False"),
    "forwarded-keyword-default": forwarded(params="is_qat=False", forward="is_qat=is_qat"),
    "forwarded-renamed-keyword": forwarded(params="qat", forward="is_qat=qat", call=", qat=False"),
    "forwarded-negated-true": forwarded(forward="not is_qat", call=", True"),
    "forwarded-handed-to-a-switching-helper": forwarded(call=", False", switch="to_eval(e)"),
    "twice-default": TWICE.format(call=""),
    "twice-false": TWICE.format(call=", qat=False"),
    **{f"param-{shape}-default": param(shape) for shape in COPIES_PARAM},
    **{f"param-{shape}-false": param(shape, call=", is_qat=False") for shape in COPIES_PARAM},
    "param-statement-handed": param("statement", call=", False", switch="to_eval(e)"),
    "param-forwarded-false": PARAM_FORWARDED.format(call=", False"),
    "param-tuple-default": PARAM_TUPLE.format(call=""),
}

LOUD = {
    "forwarded-positional-true": forwarded(call=", True"),
    "forwarded-keyword-true": forwarded(params="is_qat=False", forward="is_qat=is_qat", call=", is_qat=True"),
    "forwarded-default-true": forwarded(params="is_qat=True", forward="is_qat"),
    "forwarded-flag-unknown": forwarded(call=", flag", flag=", flag"),
    "forwarded-negated-false": forwarded(forward="not is_qat", call=", False"),
    "forwarded-changed-by-or": forwarded(forward="is_qat or x.dim() == 4", call=", False"),
    "forwarded-flag-rebound-first": forwarded(call=", False", before="is_qat = not is_qat\n    "),
    "forwarded-star-args": forwarded(call=", *rest", flag=", *rest"),
    "forwarded-handed-true": forwarded(call=", True", switch="to_eval(e)"),
    "twice-true": TWICE.format(call=", True"),
    **{f"param-{shape}-true": param(shape, call=", True") for shape in COPIES_PARAM},
    "param-statement-flag-unknown": param("statement", call=", flag", flag=", flag"),
    "param-the-callers-own-graph": param("statement", call=", False", switch="gm.eval()"),
    "param-forwarded-true": PARAM_FORWARDED.format(call=", True"),
    "param-tuple-true": PARAM_TUPLE.format(call=", is_qat=True"),
}


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in lint(HEAD + textwrap.dedent(src), select=("QL203",))]


@pytest.mark.parametrize("src", QUIET.values(), ids=QUIET.keys())
def test_the_copy_the_forwarded_or_given_flag_picks_is_quiet(src):
    assert rows(src) == []


@pytest.mark.parametrize("src", LOUD.values(), ids=LOUD.keys())
def test_the_graph_the_call_may_get_back_is_reported(src):
    full = HEAD + textwrap.dedent(src)
    assert rows(src) == [full.rstrip("\n").count("\n") + 1]  # the switch, on the last line


def test_a_switch_in_the_copying_helper_is_judged_there():
    # In the helper the flag is its parameter, unknown there: the switch on what may be the
    # graph it was given stays reported at the call handing the graph over; under `if not
    # is_qat:` the value is the copy, and that switch raises nothing (quiet).
    src = """
    def calibrate(model, is_qat=False):
        if not is_qat:
            model = copy.deepcopy(model)
        model.eval()

    def quiet_calibrate(model, is_qat=False):
        e = model if is_qat else copy.deepcopy(model)
        if not is_qat:
            e.eval()

    def run(model, x, q):
        gm = torch.export.export(model, (x,)).module()
        calibrate(gm, True)
        quiet_calibrate(gm)
    """
    assert rows(src) == [22]


def test_the_argument_a_ruled_out_return_would_hand_back_stays_the_graph():
    # The only return hands back the parameter, under a flag the call rules out: what the call
    # gives back is no copy of the caller's graph, and the caller's `gm` is still the graph.
    src = """
    def keep(model, is_qat=False):
        saved = copy.deepcopy(model)
        if is_qat:
            return model

    def run(model, x, q):
        gm = torch.export.export(model, (x,)).module()
        keep(gm)
        gm.eval()
    """
    assert rows(src) == [18]


def test_kwargs_forwarding_is_not_read_as_the_constant():
    # `**kwargs` hands `f` what the caller named: here `is_qat=True`, so the graph (the
    # keyword read against `f`'s default, `tests/test_ql203_forwarded_kwargs.py`).
    src = forwarded(params="**kwargs", forward="**kwargs", call=", is_qat=True")
    assert rows(src) == [HEAD.count("\n") + textwrap.dedent(src).rstrip("\n").count("\n") + 1]


HELPERS_MODULE = """\
import copy

import torch


def capture(model, x, is_qat=False):
    m = torch.export.export(model, (x,)).module()
    if not is_qat:
        m = copy.deepcopy(m)
    return m


def maybe_copy(model, is_qat=False):
    return model if is_qat else copy.deepcopy(model)
"""

WRAPPERS_MODULE = """\
from pkg.helpers import capture, maybe_copy


def capture_for(model, x, qat=False):
    return capture(model, x, is_qat=qat)


def copy_for(model, qat):
    return maybe_copy(model, qat)
"""

MAIN = """\
import torch

from pkg.wrappers import capture_for, copy_for


def ptq(model, x):
    e = capture_for(model, x)
    e.eval()
    c = copy_for(torch.export.export(model, (x,)).module(), False)
    c.eval()


def qat(model, x):
    e = capture_for(model, x, qat=True)
    e.train()
    c = copy_for(torch.export.export(model, (x,)).module(), True)
    c.train()
"""


def test_through_helpers_of_other_modules_alone_in_a_run_and_cached(tmp_path):
    root = package_repository(tmp_path / "repo", helpers=HELPERS_MODULE, wrappers=WRAPPERS_MODULE, main=MAIN)
    script, cache = root / "pkg" / "main.py", tmp_path / "cache"
    loud = [("QL203", 15), ("QL203", 17)]
    assert [(c, r) for c, r, _ in alone_and_in_run(script, root, ("QL203",), cache)] == loud
    assert _run(root, cache, True) == loud
    assert _run(root, cache, True) == loud  # answered from the cache
    # The forwarding helper's default turned to QAT: `ptq`'s capture now gets the graph too.
    (root / "pkg" / "wrappers.py").write_text(WRAPPERS_MODULE.replace("qat=False", "qat=True"))
    assert _run(root, cache, True) == [("QL203", 8), *loud]
    assert [(c, r) for c, r, _ in alone_and_in_run(script, root, ("QL203",), cache)] == [("QL203", 8), *loud]
