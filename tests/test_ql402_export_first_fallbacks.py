"""QL402: a `try` that captures with `torch.export.export` and falls back to a removed API only
in an `except AttributeError:` (or `ImportError`) handler, for a torch without `torch.export`.

Torch 2.13 takes the body, so the fallback never runs there: quiet, as the reverse shim (old
import in the body, `export` in the handler) already is. It stays reported where 2.13 still
reaches the removed API: a body that captures with another removed API, a handler that also
catches the errors `export` raises on a model it cannot trace (`Exception`, a bare `except:`),
an imported name read after the `try`, and a `try` whose body does not capture at all.
Seen in arcTanMyAngle/Bird_Acoustics `scripts/export_v2.py` (the corpus row `Bird_Acoustics`).
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint


def ql402(src: str) -> list[int]:
    return [d.range.start.row for d in lint(textwrap.dedent(src), select=("QL402",)) if d.code == "QL402"]


def test_import_in_an_attribute_error_handler_after_export_is_quiet():
    src = """\
        import torch


        def capture(model, args):
            try:
                m = torch.export.export(model, args).module()
            except AttributeError:
                from torch._export import capture_pre_autograd_graph

                m = capture_pre_autograd_graph(model, args)
            return m
        """
    assert ql402(src) == []


def test_attribute_call_in_the_handler_is_quiet():
    src = """\
        import torch


        def capture(model, args):
            try:
                return torch.export.export(model, args).module()
            except (AttributeError, ImportError):
                return torch._export.capture_pre_autograd_graph(model, args)
        """
    assert ql402(src) == []


def test_module_level_shim_with_export_from_torch_export_is_quiet():
    src = """\
        from torch.export import export

        try:
            GM = export(MODEL, ARGS).module()
        except ModuleNotFoundError:
            from torch._export import capture_pre_autograd_graph as cap

            GM = cap(MODEL, ARGS)
        """
    assert ql402(src) == []


def test_handler_that_catches_any_exception_is_reported():
    src = """\
        import torch


        def capture(model, args):
            try:
                return torch.export.export(model, args).module()
            except Exception:
                from torch._export import capture_pre_autograd_graph

                return capture_pre_autograd_graph(model, args)
        """
    assert ql402(src) == [8]


def test_bare_except_and_mixed_tuple_are_reported():
    src = """\
        import torch


        def capture(model, args):
            try:
                return torch.export.export(model, args).module()
            except:
                return torch._export.capture_pre_autograd_graph(model, args)


        def capture_mixed(model, args):
            try:
                return torch.export.export(model, args).module()
            except (AttributeError, RuntimeError):
                return torch._export.capture_pre_autograd_graph(model, args)
        """
    assert ql402(src) == [8, 15]


def test_body_that_captures_with_a_removed_api_is_reported():
    src = """\
        import torch


        def capture(model, args):
            try:
                return torch.export.export_for_training(model, args).module()
            except AttributeError:
                from torch._export import capture_pre_autograd_graph

                return capture_pre_autograd_graph(model, args)
        """
    assert ql402(src) == [6, 8]


def test_imported_name_read_after_the_try_is_reported():
    src = """\
        import torch


        def capture(model, args):
            try:
                m = torch.export.export(model, args).module()
            except AttributeError:
                from torch._export import capture_pre_autograd_graph
            return capture_pre_autograd_graph(model, args)
        """
    assert ql402(src) == [8]


def test_body_without_a_capture_is_reported():
    src = """\
        import torch


        def capture(model, args):
            try:
                model = model.eval()
            except AttributeError:
                pass
            try:
                m = model.to("cpu")
            except AttributeError:
                m = torch._export.capture_pre_autograd_graph(model, args)
            return m
        """
    assert ql402(src) == [12]
