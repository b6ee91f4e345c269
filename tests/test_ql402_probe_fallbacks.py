"""QL402: an attribute probe whose fallback reaches for a removed API too.

A book's chapter script (Efficient-AI-in-Practice, ch6) captures with
`torch.export.export_for_training(...)` in a `try` whose `except Exception:` imports
`capture_pre_autograd_graph` and gives up when that fails. torch 2.13 has neither: no branch
of the shim captures. The import in the handler was reported; the probe now is too, as the two
ends of an import shim that both reach for removed APIs are. A probe whose fallback (or an outer
one) calls `export(...)`, one that only gives up, and one under a `hasattr` check stay quiet.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint

PROBE = "exported = torch.export.export_for_training(model, args).module()"


def ql402(src: str) -> list[int]:
    """Rows of the QL402 findings."""
    return [d.range.start.row for d in lint(textwrap.dedent(src), select=("QL402",)) if d.code == "QL402"]


def test_probe_falling_back_to_capture_pre_autograd_graph_is_reported():
    src = f"""\
        import torch


        def capture(model, args):
            try:
                {PROBE}
            except Exception:
                try:
                    from torch._export import capture_pre_autograd_graph
                    exported = capture_pre_autograd_graph(model, args)
                except Exception:
                    return None
            return exported
        """
    assert ql402(src) == [6, 9]


def test_fallback_through_an_attribute_chain_counts_too():
    src = f"""\
        import torch
        import torch._export


        def capture(model, args):
            try:
                {PROBE}
            except AttributeError:
                exported = torch._export.capture_pre_autograd_graph(model, args)
            return exported
        """
    assert ql402(src) == [7, 9]


def test_fallback_to_torch_export_export_is_quiet():
    src = f"""\
        import torch


        def capture(model, args):
            try:
                {PROBE}
            except AttributeError:
                exported = torch.export.export(model, args).module()
            return exported
        """
    assert ql402(src) == []


def test_outer_fallback_that_exports_keeps_the_probe_quiet():
    # The inner handler's ImportError reaches the outer handler, which captures on torch 2.13:
    # the probe (line 7) and the inner import (line 9) stay quiet
    # (tests/test_ql402_import_fallbacks.py).
    src = f"""\
        import torch


        def capture(model, args):
            try:
                try:
                    {PROBE}
                except AttributeError:
                    from torch._export import capture_pre_autograd_graph
                    exported = capture_pre_autograd_graph(model, args)
            except ImportError:
                exported = torch.export.export(model, args).module()
            return exported
        """
    assert ql402(src) == []


def test_probe_that_only_gives_up_is_quiet():
    src = f"""\
        import torch


        def capture(model, args):
            try:
                {PROBE}
            except AttributeError:
                return None
            return exported
        """
    assert ql402(src) == []


def test_shim_under_a_hasattr_check_is_quiet():
    src = f"""\
        import torch


        def capture(model, args):
            if hasattr(torch.export, "export_for_training"):
                try:
                    {PROBE}
                except Exception:
                    from torch._export import capture_pre_autograd_graph
                    exported = capture_pre_autograd_graph(model, args)
                return exported
            return torch.export.export(model, args).module()
        """
    assert ql402(src) == []
