"""QL402: a `try` whose broad handler only reports the failure is no attribute probe.

executorch-utils' benchmark_logic.py wraps its whole benchmark in one `try`: load the model,
capture with `torch.export.export_for_training(...)`, prepare, calibrate, convert, lower, run.
Its `except Exception:` logs a fatal error and returns None. On torch 2.13 every INT8 run fails
there; qlint took the `try` for a probe of the attribute and said nothing. A probe tests whether
the API is there and does something else when it is not: the shapes below that fall back, name
`AttributeError`, sit under `hasattr`, or hold only the capture stay quiet.
"""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint

PROBE = "gm = torch.export.export_for_training(model, args).module()"


def ql402(src: str) -> list[int]:
    """Rows of the QL402 findings."""
    return [d.range.start.row for d in lint(textwrap.dedent(src), select=("QL402",)) if d.code == "QL402"]


def test_executorch_utils_benchmark_shape_is_reported():
    src = """\
        import torch
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e


        def run_benchmark(model_name, precision, log_callback):
            log_callback(f"Loading {model_name}")
            try:
                model = load(model_name).eval()
                args = (torch.randn(1, 3, 224, 224),)
                if precision == "int8":
                    log_callback("Exporting with export_for_training...")
                    with torch.no_grad():
                        gm = torch.export.export_for_training(model, args).module()
                    prepared = prepare_pt2e(gm, make_quantizer())
                    prepared(*args)
                    model = convert_pt2e(prepared)
                program = lower(torch.export.export(model, args))
                return measure(program)
            except Exception as e:
                log_callback("[FATAL ERROR]")
                log_callback(f"Exception occurred: {e}")
                log_callback(traceback.format_exc())
                return None
            finally:
                cleanup()
        """
    assert ql402(src) == [13]


# The handler's other ways of reporting and leaving: each is reported.
REPORTING_HANDLERS = [
    "raise",
    'raise RuntimeError("quantization failed") from e',
    'logger.exception("quantization failed")\nraise',
    "traceback.print_exc()\nreturn None",
    'print(f"failed: {e}")\nreturn {"error": str(e), "ok": False}',
    'if strict:\n    raise\nlogging.warning("skipped: %s", e)\nreturn -1',
    "print_error(e)\nsys.exit(1)",
]


@pytest.mark.parametrize("handler", REPORTING_HANDLERS)
def test_pipeline_try_whose_broad_handler_reports_and_leaves_is_reported(handler):
    body = textwrap.indent(handler, "        ")
    src = f"""\
import torch


def quantize(model, args, quantizer, strict=False):
    try:
        {PROBE}
        prepared = prepare_pt2e(gm, quantizer)
        prepared(*args)
        return convert_pt2e(prepared)
    except Exception as e:
{body}
"""
    assert ql402(src) == [6]


def test_handler_printing_the_traceback_at_the_end_of_the_function_is_reported():
    # It falls off the end: the function returns None on every torch without the API.
    src = f"""\
        import torch


        def main(model, args):
            try:
                {PROBE}
                save(convert_pt2e(prepare_pt2e(gm, make_quantizer())))
            except BaseException:
                traceback.print_exc()
        """
    assert ql402(src) == [6]


def test_script_wide_try_at_module_level_is_reported():
    src = f"""\
        import torch

        model, args = build()
        try:
            {PROBE}
            save(convert_pt2e(prepare_pt2e(gm, make_quantizer())))
        except:
            print("quantization failed")
        """
    assert ql402(src) == [5]


@pytest.mark.parametrize(
    "handler",
    [
        # A fallback to another way of capturing, in the handler.
        "gm = torch.export.export(model, args).module()",
        "from torch._export import capture_pre_autograd_graph\ngm = capture_pre_autograd_graph(model, args)",
        # A fallback function assigned, or a value the code after the `try` checks.
        "capture = torch.export.export\ngm = capture(model, args).module()",
        "gm = None",
        'logger.warning("no export_for_training")\ngm = None',
        "pass",
        # A report that falls through to the code after the `try`, which may fall back.
        'logger.warning("no export_for_training")',
    ],
)
def test_broad_handler_that_falls_back_or_falls_through_stays_a_probe(handler):
    body = textwrap.indent(handler, "        ")
    src = f"""\
import torch


def quantize(model, args, quantizer):
    try:
        {PROBE}
        prepared = prepare_pt2e(gm, quantizer)
    except Exception:
{body}
    return gm
"""
    found = ql402(src)
    # Falling back to capture_pre_autograd_graph is flagged at the probe and at the import
    # (tests/test_ql402_probe_fallbacks.py); every other shape is quiet.
    assert found == ([6, 9] if "capture_pre_autograd_graph" in handler else [])


@pytest.mark.parametrize("caught", ["AttributeError", "(AttributeError, RuntimeError)", "ImportError"])
def test_handler_naming_the_missing_api_error_stays_a_probe(caught):
    # It names what a missing API raises: it exists for the torch that lacks it.
    src = f"""\
        import torch


        def quantize(model, args, quantizer):
            try:
                {PROBE}
                prepared = prepare_pt2e(gm, quantizer)
                return convert_pt2e(prepared)
            except {caught}:
                return None
        """
    assert ql402(src) == []


def test_try_holding_only_the_capture_stays_a_probe():
    # A helper whose caller may fall back on its None.
    src = f"""\
        import torch


        def try_capture(model, args):
            try:
                {PROBE}
                logger.info("captured")
                return gm
            except Exception:
                logger.warning("export_for_training failed")
                return None
        """
    assert ql402(src) == []


def test_hasattr_guard_inside_the_reporting_try_stays_quiet():
    src = f"""\
        import torch


        def quantize(model, args, quantizer):
            try:
                if hasattr(torch.export, "export_for_training"):
                    {PROBE}
                else:
                    gm = torch.export.export(model, args).module()
                return convert_pt2e(prepare_pt2e(gm, quantizer))
            except Exception:
                logger.exception("quantization failed")
                raise
        """
    assert ql402(src) == []


def test_probe_nested_in_a_reporting_try_stays_quiet():
    src = f"""\
        import torch


        def quantize(model, args, quantizer):
            try:
                try:
                    {PROBE}
                except AttributeError:
                    gm = torch.export.export(model, args).module()
                return convert_pt2e(prepare_pt2e(gm, quantizer))
            except Exception:
                logger.exception("quantization failed")
                return None
        """
    assert ql402(src) == []


def test_reporting_try_nested_in_a_probe_stays_quiet():
    # The re-raise reaches the outer handler, which captures on torch 2.13.
    src = f"""\
        import torch


        def quantize(model, args, quantizer):
            try:
                try:
                    {PROBE}
                    return convert_pt2e(prepare_pt2e(gm, quantizer))
                except Exception:
                    logger.exception("quantization failed")
                    raise
            except AttributeError:
                gm = torch.export.export(model, args).module()
                return convert_pt2e(prepare_pt2e(gm, quantizer))
        """
    assert ql402(src) == []


def test_reporting_try_in_a_branch_torch_2_13_skips_stays_quiet():
    src = f"""\
        import torch
        from packaging import version


        def quantize(model, args, quantizer):
            if version.parse(torch.__version__) < version.parse("2.6"):
                try:
                    {PROBE}
                    return convert_pt2e(prepare_pt2e(gm, quantizer))
                except Exception:
                    return None
            return convert_pt2e(prepare_pt2e(torch.export.export(model, args).module(), quantizer))
        """
    assert ql402(src) == []


def test_reporting_try_in_the_branch_torch_2_13_takes_is_reported():
    src = f"""\
        import torch
        from packaging import version


        def quantize(model, args, quantizer):
            if version.parse(torch.__version__) >= version.parse("2.5"):
                try:
                    {PROBE}
                    return convert_pt2e(prepare_pt2e(gm, quantizer))
                except Exception:
                    return None
            return None
        """
    assert ql402(src) == [8]
