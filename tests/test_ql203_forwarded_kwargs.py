"""QL203 where the flag that picks the copy reaches the copying helper through `**kwargs`
(`forwarded_kwargs`), and where a forwarding helper hands the copying helper's tuple back
whole (`forwarded_items`).

Stop 69 followed a flag forwarded by name or position (`tests/test_ql203_forwarded_flags.py`)
and left two shapes: `def g(m, x, **kwargs): return f(m, x, **kwargs)` was reported whatever
the call named (a false alarm for `g(m, x)` and `g(m, x, is_qat=False)`), and `return f(m, x,
is_qat)` with `f` returning `export_model, m` was not read as handing a graph back at all (a
miss for `e, _ = g(m, x, True)`). A keyword is now read against the default of the helper the
dict reaches; a dict the forwarding changes, a `**opts` the caller passes, `*args` that may
fill the flag first, and a parameter of the forwarding helper that takes the keyword itself
stay reported. Every case below was run on torch 2.13 / torchao 0.18 with a real model and
`XNNPACKQuantizer`: each quiet switch raised nothing, each loud one `NotImplementedError`.

A positional-only flag (stop 71) takes no keyword, from the dict or not: its default decides,
whatever key the caller names, unless `*args` may fill it (Python 3.11 puts the key in `f`'s own
`**`, or raises `TypeError` at the call, which then hands nothing back). Those cases were run
on torch 2.13 with a Linear model: the quiet ones raised no `NotImplementedError` (three raised
that `TypeError`), the loud ones did.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import alone_and_in_run, package_repository
from tests.test_ql203_forwarded_flags import HEAD, forwarded, rows
from tests.test_ql203_forwarded_flags import HELPERS_MODULE as FLAG_HELPERS
from tests.test_ql203_returned_copies import _run  # QL203's findings in main.py, a whole run


# `f` makes the graph and copies it unless `is_qat` (its default given here); `g` hands `f`
# its `**kwargs` (`forwarded`'s snippet).
def kwargs(default="False", params="**kwargs", forward="**kwargs", before="", call="", flag="", switch="e.eval()"):
    src = forwarded(params=params, forward=forward, call=call, flag=flag, switch=switch, before=before)
    return src.replace("def f(model, x, is_qat=False):", f"def f(model, x, is_qat={default}):")


# Two helpers hand the dict on; or the second names the key itself. (The caller makes the
# graph: a body is read when its text names a capture or calls, at most two helpers away, a
# function that does, `relevant_bodies`.)
TWICE = """
def f(model, is_qat=False):
    if not is_qat:
        model = copy.deepcopy(model)
    return model

def g(model, **kwargs):
    return f(model, **kwargs)

def h(model, {params}):
    return g(model, {forward})

def run(model, x, q{flag}):
    e = h(torch.export.export(model, (x,)).module(){call})
    e.eval()
"""

# The helper copies the graph it is given; `g` hands it the caller's keywords.
PARAM = """
def maybe_copy(model, is_qat=False):
    return model if is_qat else copy.deepcopy(model)

def g(model, **kwargs):
    return maybe_copy(model, **kwargs)

def run(model, x, q):
    gm = torch.export.export(model, (x,)).module()
    e = g(gm{call})
    e.train()
"""

# `f` hands back a tuple; `g` returns `f`'s call whole, the caller unpacks it.
TUPLE = """
def f(model, x, is_qat=False):
    m = torch.export.export(model, (x,)).module()
    export_model = m if is_qat else copy.deepcopy(m)
    return export_model, m

def g(model, x, {params}):
    return f(model, x, {forward})

def run(model, x, q{flag}):
    {read}
    {switch}
"""


def tuple_(params="is_qat", forward="is_qat", call="", flag="", read="e, _ = g(model, x{call})", switch="e.eval()"):
    return TUPLE.format(params=params, forward=forward, flag=flag, read=read.format(call=call), switch=switch)


# The same two levels down, the copy made by a statement under the flag.
TUPLE_TWICE = """
def f(model, is_qat=False):
    if not is_qat:
        model = copy.deepcopy(model)
    return model, 1

def g(model, is_qat):
    return f(model, is_qat)

def h(model, qat=False):
    return g(model, is_qat=qat)

def run(model, x, q):
    e, _ = h(torch.export.export(model, (x,)).module(){call})
    e.eval()
"""

# A return of `f` hands its parameter back on a path no flag decides: no call rules it out.
TUPLE_MIXED = """
def f(model, x, is_qat=False):
    e = model if is_qat else copy.deepcopy(model)
    try:
        x.no_such_attribute
    except AttributeError:
        return model, x
    return e, x

def g(model, x, is_qat):
    return f(model, x, is_qat)

def run(model, x, q):
    e, _ = g(torch.export.export(model, (x,)).module(), x, False)
    e.eval()
"""


def positional_only(default="False", params="**kwargs", forward="**kwargs", call="", flag="", own=""):
    """`kwargs`, with `f`'s flag positional-only (`own`: `f`'s own `**`, which takes the key)."""
    src = kwargs(default=default, params=params, forward=forward, call=call, flag=flag)
    return src.replace(f"is_qat={default}):", f"is_qat={default}, /{own}):")


# `f`'s flag positional-only, two helpers down.
TWICE_POSITIONAL = TWICE.replace("def f(model, is_qat=False):", "def f(model, is_qat=False, /):")

QUIET = {
    "kwargs-default": kwargs(),
    "kwargs-false": kwargs(call=", is_qat=False"),
    "kwargs-after-a-named-keyword": kwargs(params="verbose=False, **kwargs", call=", verbose=True"),
    "kwargs-read-first": kwargs(before="kwargs.get('is_qat')\n    ", call=", is_qat=False"),
    "kwargs-beside-other-keywords": kwargs(forward="**kwargs", call=", is_qat=False, verbose=True").replace(
        "is_qat=False):", "is_qat=False, verbose=False):"
    ),
    "kwargs-handed-to-a-switching-helper": kwargs(switch="to_eval(e)"),
    "kwargs-twice-default": TWICE.format(params="**kw", forward="**kw", call="", flag=""),
    "kwargs-twice-false": TWICE.format(params="**kw", forward="**kw", call=", is_qat=False", flag=""),
    "kwargs-named-by-the-next-helper": TWICE.format(params="qat", forward="is_qat=qat", call=", False", flag=""),
    "kwargs-param-default": PARAM.format(call=""),
    "kwargs-param-false": PARAM.format(call=", is_qat=False"),
    "tuple-positional-false": tuple_(call=", False"),
    "tuple-keyword-default": tuple_(params="is_qat=False", forward="is_qat=is_qat"),
    "tuple-kwargs-default": tuple_(params="**kwargs", forward="**kwargs"),
    "tuple-kwargs-false": tuple_(params="**kwargs", forward="**kwargs", call=", is_qat=False"),
    "tuple-indexed": tuple_(call=", False", read="out = g(model, x{call})", switch="out[0].eval()"),
    "tuple-indexed-call": tuple_(read="pass", switch="g(model, x, False)[0].eval()"),
    "tuple-starred": tuple_(call=", False", read="e, *rest = g(model, x{call})"),
    "tuple-handed": tuple_(call=", False", switch="to_eval(e)"),
    "tuple-twice-default": TUPLE_TWICE.format(call=""),
    "tuple-twice-false": TUPLE_TWICE.format(call=", qat=False"),
    # No keyword fills a positional-only flag: its default runs. A key the caller names lands
    # in `f`'s own `**options`, or makes the call raise `TypeError` (it then hands nothing back).
    "kwargs-positional-only-default": positional_only(),
    "kwargs-positional-only-key-swallowed": positional_only(call=", is_qat=True", own=", **options"),
    "kwargs-positional-only-key-raises": positional_only(call=", is_qat=True"),
    "kwargs-positional-only-opts-of-the-caller": positional_only(call=", **opts", flag=", **opts"),
    "kwargs-positional-only-twice": TWICE_POSITIONAL.format(
        params="**kw", forward="**kw", call=", is_qat=True", flag=""
    ),
}

LOUD = {
    "kwargs-true": kwargs(call=", is_qat=True"),
    "kwargs-default-true": kwargs(default="True"),
    "kwargs-flag-unknown": kwargs(call=", is_qat=flag", flag=", flag"),
    "kwargs-opts-of-the-caller": kwargs(call=", **opts", flag=", **opts"),
    "kwargs-set-first": kwargs(before="kwargs['is_qat'] = True\n    "),
    "kwargs-updated-first": kwargs(before="kwargs.update(is_qat=True)\n    "),
    "kwargs-set-by-default-first": kwargs(before="kwargs.setdefault('is_qat', True)\n    "),
    "kwargs-popped-first": kwargs(default="True", before="kwargs.pop('is_qat', None)\n    ", call=", is_qat=False"),
    "kwargs-handed-whole-first": kwargs(before="mark(kwargs)\n    ").replace(
        "def g(", "def mark(options):\n    options['is_qat'] = True\n\ndef g("
    ),
    "kwargs-merged-into-a-new-dict": kwargs(forward="**{**kwargs, 'is_qat': True}"),
    "kwargs-rebound-first": kwargs(before="kwargs = {'is_qat': True}\n    "),
    "kwargs-star-args-fill-the-flag": kwargs(params="*args, **kwargs", forward="*args, **kwargs", call=", True"),
    "kwargs-own-parameter-takes-the-keyword": kwargs(
        default="True", params="is_qat=False, **kwargs", call=", is_qat=False"
    ),
    # `is_qat=False` cannot fill a positional-only flag: it lands in `f`'s own `**options`.
    "kwargs-positional-only-flag": kwargs(default="True", call=", is_qat=False").replace(
        "is_qat=True):", "is_qat=True, /, **options):"
    ),
    "kwargs-positional-only-default-true": positional_only(default="True", call=", is_qat=False", own=", **options"),
    "kwargs-positional-only-passed-by-position": positional_only(forward="True, **kwargs"),
    # `*args` fills it by position: `g(m, x, True)` passes `is_qat=True`.
    "kwargs-positional-only-star-args": positional_only(
        params="*args, **kwargs", forward="*args, **kwargs", call=", True"
    ),
    "kwargs-handed-true": kwargs(call=", is_qat=True", switch="to_eval(e)"),
    "kwargs-twice-true": TWICE.format(params="**kw", forward="**kw", call=", is_qat=True", flag=""),
    "kwargs-named-by-the-next-helper-true": TWICE.format(params="qat", forward="is_qat=qat", call=", True", flag=""),
    "kwargs-next-helper-flag-unknown": TWICE.format(params="**kw", forward="**kw", call=", is_qat=flag", flag=", flag"),
    "kwargs-param-true": PARAM.format(call=", is_qat=True"),
    "tuple-positional-true": tuple_(call=", True"),
    "tuple-keyword-default-true": tuple_(params="is_qat=True", forward="is_qat=is_qat"),
    "tuple-flag-unknown": tuple_(call=", flag", flag=", flag"),
    "tuple-kwargs-true": tuple_(params="**kwargs", forward="**kwargs", call=", is_qat=True"),
    "tuple-the-other-element": tuple_(call=", False", read="_, e = g(model, x{call})"),
    "tuple-indexed-true": tuple_(call=", True", read="out = g(model, x{call})", switch="out[0].eval()"),
    "tuple-starred-true": tuple_(call=", True", read="e, *rest = g(model, x{call})"),
    "tuple-handed-true": tuple_(call=", True", switch="to_eval(e)"),
    "tuple-twice-true": TUPLE_TWICE.format(call=", True"),
    "tuple-another-return-hands-it-back": TUPLE_MIXED,
}


VERDICTS = [pytest.param(src, False, id=name) for name, src in QUIET.items()] + [
    pytest.param(src, True, id=name) for name, src in LOUD.items()
]


@pytest.mark.parametrize(("src", "loud"), VERDICTS)
def test_each_switch_is_reported_where_the_call_gets_the_graph_back(src, loud):
    last = (HEAD + textwrap.dedent(src)).rstrip("\n").count("\n") + 1  # the switch, on the last line
    assert rows(src) == ([last] if loud else [])


# `capture` copies unless `is_qat`; `capture_pair` hands back the copy or the graph, and `x`.
HELPERS_MODULE = f"""{FLAG_HELPERS}

def capture_pair(model, x, is_qat=False):
    m = torch.export.export(model, (x,)).module()
    return (m if is_qat else copy.deepcopy(m)), x
"""

WRAPPERS_MODULE = """\
from pkg.helpers import capture, capture_pair


def capture_for(model, x, **kwargs):
    return capture(model, x, **kwargs)


def pair_for(model, x, qat=False):
    return capture_pair(model, x, qat)
"""

MAIN = """\
from pkg.wrappers import capture_for, pair_for


def ptq(model, x):
    e = capture_for(model, x)
    e.eval()
    p, _ = pair_for(model, x)
    p.eval()


def qat(model, x):
    e = capture_for(model, x, is_qat=True)
    e.train()
    p, _ = pair_for(model, x, qat=True)
    p.train()
"""


def test_through_helpers_of_other_modules_alone_in_a_run_and_cached(tmp_path):
    root = package_repository(tmp_path / "repo", helpers=HELPERS_MODULE, wrappers=WRAPPERS_MODULE, main=MAIN)
    script, cache, package = root / "pkg" / "main.py", tmp_path / "cache", root / "pkg"
    loud = [("QL203", 13), ("QL203", 15)]
    # Then the copying helpers' defaults turned to QAT: `ptq`'s captures get the graph too.
    qat_helpers = HELPERS_MODULE.replace("is_qat=False", "is_qat=True")
    qat_wrappers = WRAPPERS_MODULE.replace("qat=False", "qat=True")
    for helpers, wrappers, found in (
        (HELPERS_MODULE, WRAPPERS_MODULE, loud),
        (qat_helpers, qat_wrappers, [("QL203", 6), ("QL203", 8), *loud]),
    ):
        (package / "helpers.py").write_text(helpers)
        (package / "wrappers.py").write_text(wrappers)
        assert _run(root, cache, True) == found
        assert _run(root, cache, True) == found  # answered from the cache
        assert [(c, r) for c, r, _ in alone_and_in_run(script, root, ("QL203",), cache)] == found
