"""QL204 on a helper that calibrates only when its caller passes the data (`if data: for b in
data: prepared(*b)` with `data=None`), called in its module without it: that call converts a
model no path ran. The calibration walk joins the branch's paths as "may have run", so these
were quiet before; a call that passes data, a guard on anything but such a parameter, or a
run outside the guard keeps them quiet."""

from __future__ import annotations

import textwrap

from tests.conftest import lint

HEAD = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e
"""
ROWS = HEAD.count("\n")

HELPER = """
def quantize(model, x, quantizer, calibration_data=None):
    model.eval()
    prepared = prepare_pt2e(torch.export.export(model, (x,)).module(), quantizer)
    if calibration_data:
        for batch in calibration_data:
            prepared(*batch)
    return convert_pt2e(prepared)
"""
CONVERT_ROW = ROWS + 8  # the `return convert_pt2e(prepared)` of HELPER


def ql204(src: str):
    return lint(HEAD + textwrap.dedent(src), select=("QL204",))


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in ql204(src)]


def test_a_caller_leaving_the_data_out_is_reported_at_the_convert():
    (d,) = ql204(HELPER + "\n\ndef main(m, x, q):\n    return quantize(m, x, q)\n")
    assert d.range.start.row == CONVERT_ROW
    assert d.message == (
        f"`prepared` is converted without calibration after `prepare_pt2e` (line {ROWS + 4}): it runs only"
        f" when `calibration_data` is given, and the call at line {ROWS + 12} leaves it empty"
    )


def test_a_caller_passing_none_or_an_empty_list_is_reported():
    assert rows(HELPER + "\nquantize(m, x, q, None)\n") == [CONVERT_ROW]
    assert rows(HELPER + "\nquantize(m, x, q, calibration_data=[])\n") == [CONVERT_ROW]


def test_the_guard_forms_and_a_with_block_are_read():
    for guard in ("calibration_data is not None", "len(calibration_data)", "len(calibration_data) > 0"):
        src = f"""
        def quantize(model, x, quantizer, calibration_data=None):
            with torch.no_grad():
                prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), quantizer)
                if {guard}:
                    for batch in calibration_data:
                        prepared(*batch)
                quantized = convert_pt2e(prepared)
            return quantized

        quantize(m, x, q)
        """
        assert rows(src) == [ROWS + 8], guard


def test_callers_that_pass_data_stay_quiet():
    assert rows(HELPER + "\nquantize(m, x, q, data)\nquantize(m, x, q, calibration_data=data)\n") == []
    assert rows(HELPER + "\nquantize(m, x, q, *rest)\nquantize(m, x, q, **options)\n") == []


def test_no_caller_in_the_module_stays_quiet():
    # Who calls it, and with what, is unknown: as before, the branch may run it.
    assert rows(HELPER) == []


def test_a_guard_on_something_else_stays_quiet():
    src = """
    CALIBRATE = True

    def quantize(model, x, quantizer, calibration_data=None):
        prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), quantizer)
        if CALIBRATE:
            prepared(x)
        return convert_pt2e(prepared)

    quantize(m, x, q)
    """
    assert rows(src) == []


def test_an_else_that_runs_the_model_stays_quiet():
    src = """
    def quantize(model, x, quantizer, calibration_data=None):
        prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), quantizer)
        if calibration_data:
            for batch in calibration_data:
                prepared(*batch)
        else:
            prepared(x)
        return convert_pt2e(prepared)

    quantize(m, x, q)
    """
    assert rows(src) == []


def test_a_run_outside_the_guard_stays_quiet():
    src = """
    def quantize(model, x, quantizer, calibration_data=None):
        prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), quantizer)
        prepared(x)
        if calibration_data:
            for batch in calibration_data:
                prepared(*batch)
        return convert_pt2e(prepared)

    quantize(m, x, q)
    """
    assert rows(src) == []


def test_a_default_that_holds_data_or_a_parameter_bound_again_stays_quiet():
    src = """
    DEFAULT = load()

    def quantize(model, x, quantizer, calibration_data=DEFAULT):
        prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), quantizer)
        if calibration_data:
            prepared(x)
        return convert_pt2e(prepared)

    quantize(m, x, q)
    """
    assert rows(src) == []
    rebound = HELPER.replace("    model.eval()\n", "    calibration_data = calibration_data or [(x,)]\n")
    assert rows(rebound + "\nquantize(m, x, q)\n") == []


def test_two_guards_on_different_parameters_stay_quiet():
    src = """
    def quantize(model, x, quantizer, data=None, extra=None):
        prepared = prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), quantizer)
        if data:
            prepared(*data)
        if extra:
            prepared(*extra)
        return convert_pt2e(prepared)

    quantize(m, x, q, extra=more)
    """
    assert rows(src) == []


# The helpers asked about are read from the module's text first: a function whose rows do not
# spell `convert_pt2e` is not walked (most functions with a falsy default convert nothing).
OTHER = """
def log(model, verbose=False):
    for name, child in model.named_children():
        print(name, child, verbose)
"""


def test_a_helper_whose_rows_spell_no_convert_is_not_walked(monkeypatch):
    import ast

    from qlint.analysis import guarded_calibration
    from qlint.source import LineIndex

    text = HEAD + OTHER + HELPER + "\nquantize(m, x, q)\n"
    tree = ast.parse(text)
    walked = []
    real = ast.walk

    def walk(node):
        walked.append(node)
        return real(node)

    monkeypatch.setattr(ast, "walk", walk)
    # Names resolved to nothing (no API call found): only which functions were walked is asked.
    list(guarded_calibration.guarded_converts(tree, lambda f: lambda name: None, text, LineIndex(text).starts))
    monkeypatch.undo()
    log, quantize = (s for s in tree.body if isinstance(s, ast.FunctionDef))
    assert log not in walked and quantize in walked
    assert rows(OTHER + HELPER + "\nquantize(m, x, q)\n") == [CONVERT_ROW + OTHER.count("\n")]


def test_a_name_spelled_in_other_characters_is_still_read():
    # `convert_pt2e` spelled with a fullwidth c (U+FF43) is the name `convert_pt2e` once Python normalises it
    # (NFKC): rows holding other than ASCII are walked, as every helper was.
    spelled = HELPER.replace("return convert_pt2e(", "return \uff43onvert_pt2e(")
    assert rows(spelled + "\nquantize(m, x, q)\n") == [CONVERT_ROW]


def test_a_word_only_a_decorator_spells_is_found_on_its_rows():
    import ast

    from qlint.analysis.guarded_calibration import _spells
    from qlint.source import LineIndex

    text = "import functools\n\n\n@functools.wraps(convert_pt2e)\ndef helper(model, data=None):\n    return model\n"
    func = ast.parse(text).body[1]
    assert _spells(func, "convert_pt2e", text, LineIndex(text).starts)
    assert not _spells(func, "prepare_pt2e", text, LineIndex(text).starts)
