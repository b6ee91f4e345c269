"""A re-check after an edit of one function's body summarises that body and the ones that read
it again, and takes QL204's other summaries from the last check (`calibration_carry`, issue 13).

What is checked: the findings are exactly a fresh check's at every step, whatever the edit
changed (a calibration loop, a helper a caller reads, how deep a helper chain goes, which
function meets a helper first, recursion, an import, another module, a module created ahead
of the one found), and the work follows the edit (bodies summarised are counted, not timed).
"""

from __future__ import annotations

import textwrap

import pytest

from qlint.analysis import calibration_walk
from qlint.analysis.names.project import ProjectIndex
from tests.keystroke_support import counted_runs, example_edits, findings, package, same_as_fresh, steps

HEAD = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
"""

LOOP = HEAD + textwrap.dedent(
    """

    def calibrate(model, data):
        for batch in data:
            model(batch)


    def quantize(model, quantizer, x, data):
        prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
        calibrate(prepared, data)
        return convert_pt2e(prepared)


    def unrelated(model, quantizer, x):
        prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
        return convert_pt2e(prepared)
    """
)

# `early` meets `h2` first, three calls above the limit `quantize` would meet it at: what
# `quantize` sees of `h2` depends on whether `early` asked for it before.
CHAIN = HEAD + textwrap.dedent(
    """

    def early(model, quantizer, x):
        h2(model)
        return convert_pt2e(model)


    def quantize(model, quantizer, x):
        prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
        h0(prepared)
        return convert_pt2e(prepared)


    def h0(m):
        h1(m)


    def h1(m):
        h2(m)


    def h1b(m):
        h2(m)


    def h2(m):
        h3(m)


    def h3(m):
        h4(m)


    def h4(m):
        h5(m)


    def h5(m):
        print(m)
    """
)

RECURSIVE = HEAD + textwrap.dedent(
    """

    def first(m, n):
        if n:
            second(m, n - 1)


    def second(m, n):
        if n:
            first(m, n - 1)


    def a(model, quantizer, x):
        prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
        first(prepared, 3)
        return convert_pt2e(prepared)


    def b(model, quantizer, x):
        prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
        second(prepared, 3)
        return convert_pt2e(prepared)
    """
)

# `f` and `g` call each other: the one summarised second sees the other opaque (in progress),
# and only `g` seeing `f` summarised finds that `f` converts the model `g` prepared.
CYCLE = HEAD + textwrap.dedent(
    """

    def starter(model, quantizer, x):
        f(model, 1)
        return convert_pt2e(model)


    def f(m, n):
        if n:
            g(torch.nn.Linear(1, 1), None, None)
        return convert_pt2e(m)


    def g(model, quantizer, x):
        prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
        f(prepared, 0)
        return prepared
    """
)


@pytest.fixture
def summarised(monkeypatch):
    """The function names whose bodies QL204's analysis walks, in order."""
    return counted_runs(monkeypatch, calibration_walk.Walker)


def _findings(project, path, text):
    return findings(project, path, text, ("QL204",))


def _steps(tmp_path, texts, others=None, files=None):
    return steps(tmp_path, texts, ("QL204",), others, files)


def test_a_calibration_loop_edited_and_restored(tmp_path):
    gone = LOOP.replace("        model(batch)", "        print(batch)")
    spaced = LOOP.replace("x,)).module(), quantizer)\n    return", "x, )).module(), quantizer)\n    return")
    seen = _steps(tmp_path, [LOOP, gone, LOOP, spaced])
    assert len(seen[0]) == 1 and len(seen[1]) == 2 and seen[0] == seen[2] == seen[3]


def test_the_caller_of_an_edited_helper_is_summarised_again_the_rest_is_carried(tmp_path, summarised):
    path = str(package(tmp_path) / "checked.py")
    project = ProjectIndex()
    _findings(project, path, LOOP)
    assert {"calibrate", "quantize", "unrelated"} <= set(summarised)
    summarised.clear()
    edited = LOOP.replace("module(), quantizer)\n    return convert", "module(), quantizer )\n    return convert")
    fresh = _findings(ProjectIndex(), path, edited)
    summarised.clear()
    assert _findings(project, path, edited) == fresh
    assert "unrelated" in summarised and "quantize" not in summarised and "calibrate" not in summarised
    summarised.clear()
    edited = edited.replace("        model(batch)", "        model(batch)  # run")
    _findings(project, path, edited)
    assert "calibrate" in summarised and "quantize" in summarised and "unrelated" not in summarised


def test_which_function_meets_a_deep_helper_first(tmp_path):
    # `early` stops calling `h2`: `quantize` meets it first, too deep to summarise it.
    shallower = CHAIN.replace("def h4(m):\n    h5(m)", "def h4(m):\n    pass")
    texts = [
        CHAIN,
        CHAIN.replace("    h2(model)\n    return", "    print(model)\n    return"),
        CHAIN,
        # `h1` goes through one more call (the chain gets deeper under `quantize`)
        CHAIN.replace("def h1(m):\n    h2(m)", "def h1(m):\n    h1b(m)"),
        CHAIN,
        # `h4` stops at once: the chain gets shallower
        shallower,
        shallower.replace("    h2(model)\n    return", "    print(model)\n    return"),
        CHAIN.replace("def h5(m):\n    print(m)", "def h5(m):\n    m(1)"),
        CHAIN,
    ]
    seen = _steps(tmp_path, texts)
    # the finding of step 0 exists only because `early` summarised `h2` first
    assert seen[0] and not seen[1] and seen[0] == seen[2]


def test_every_order_of_a_deep_chain(tmp_path):
    # The same edits in another order: each step against a fresh check.
    early_off = CHAIN.replace("    h2(model)\n    return", "    print(model)\n    return")
    deeper = CHAIN.replace("def h1(m):\n    h2(m)", "def h1(m):\n    h1b(m)")
    shallower = early_off.replace("def h4(m):\n    h5(m)", "def h4(m):\n    pass")
    _steps(tmp_path, [early_off, CHAIN, deeper, CHAIN, early_off, shallower])


def test_recursion_is_summarised_in_the_order_of_each_check(tmp_path):
    texts = [
        RECURSIVE,
        RECURSIVE.replace("        second(m, n - 1)", "        m(n)"),
        RECURSIVE,
        RECURSIVE.replace("    first(prepared, 3)\n", "    second(prepared, 3)\n"),
        RECURSIVE.replace("    second(prepared, 3)\n", "    first(prepared, 3)\n"),
        RECURSIVE,
    ]
    _steps(tmp_path, texts)


def test_which_function_of_a_cycle_is_met_first(tmp_path):
    via_g = CYCLE.replace("    f(model, 1)\n    return", "    g(model, 1, 2)\n    return")
    seen = _steps(tmp_path, [CYCLE, via_g, CYCLE, via_g, via_g.replace("f(prepared, 0)", "f(prepared, 1)")])
    assert not seen[0] and seen[1] and seen[0] == seen[2] and seen[1] == seen[3]


def test_an_import_and_a_module_level_change(tmp_path):
    texts = [
        LOOP,
        LOOP.replace("from torchao.quantization.pt2e.quantize_pt2e import", "from elsewhere import"),
        LOOP,
        LOOP.replace("def calibrate(", "def calibrated("),
        LOOP,
    ]
    seen = _steps(tmp_path, texts)
    assert seen[0] != seen[1] and seen[0] == seen[2] == seen[4]


IMPORTED = HEAD + textwrap.dedent(
    """
    from pkg.helpers import calibrate


    def quantize(model, quantizer, x, data):
        prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
        calibrate(prepared, data)
        return convert_pt2e(prepared)


    def other(x):
        return x
    """
)
RUNS = "def calibrate(model, data):\n    for batch in data:\n        model(batch)\n"
PRINTS = RUNS.replace("model(batch)", "print(batch)")


def test_another_module_edited(tmp_path):
    edited = IMPORTED.replace("    return x\n", "    return x + 1\n")
    seen = _steps(tmp_path, [IMPORTED, edited, IMPORTED, edited], {"helpers.py": [RUNS, PRINTS, PRINTS, RUNS]})
    assert seen[0] != seen[1] and seen[1] == seen[2] and seen[0] == seen[3]


def test_a_module_created_ahead_of_the_one_found_and_removed(tmp_path):
    # `pkg/helpers.py` is found before `pkg/helpers/__init__.py`.
    edited = IMPORTED.replace("    return x\n", "    return x + 1\n")
    seen = _steps(
        tmp_path,
        [IMPORTED, edited, IMPORTED, edited],
        files={"helpers/__init__.py": [RUNS, RUNS, RUNS, RUNS], "helpers.py": [None, PRINTS, PRINTS, None]},
    )
    assert seen[0] != seen[1] and seen[1] == seen[2] and seen[0] == seen[3]


def test_keystrokes_in_real_modules_give_a_fresh_check_s_findings():
    checked = 0
    for path, text, edits in example_edits(6):
        if "convert_pt2e" in text:
            checked += 1
            same_as_fresh([text, *edits], path, ("QL204",))
    assert checked
