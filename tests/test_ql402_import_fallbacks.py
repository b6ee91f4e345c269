"""QL402: an old import in a `try` whose `except ImportError:` captures with `torch.export.export`.

On torch 2.13 the import raises, the handler captures, and the shim works, as one whose handler
re-imports the name from `torch.export` does. It stays reported where 2.13 still breaks: the
name read after the `try` (unbound there), a handler that does not catch the ImportError, one
that gives up, and an import outside the `try` body.
"""

from __future__ import annotations

import textwrap

from tests.conftest import lint


def ql402(src: str) -> list[int]:
    return [d.range.start.row for d in lint(textwrap.dedent(src), select=("QL402",)) if d.code == "QL402"]


def test_handler_that_exports_keeps_the_import_quiet():
    src = """\
        import torch


        def capture(model, args):
            try:
                from torch._export import capture_pre_autograd_graph

                return capture_pre_autograd_graph(model, args)
            except ImportError:
                return torch.export.export(model, args).module()
        """
    assert ql402(src) == []


def test_module_level_shim_used_only_in_its_body_is_quiet():
    src = """\
        import torch

        try:
            from torch._export import capture_pre_autograd_graph as cap

            GM = cap(MODEL, ARGS)
        except Exception:
            GM = torch.export.export(MODEL, ARGS).module()
        """
    assert ql402(src) == []


def test_name_read_after_the_try_is_reported():
    src = """\
        import torch


        def capture(model, args):
            try:
                from torch._export import capture_pre_autograd_graph
            except ImportError:
                torch.export.export(model, args)
            return capture_pre_autograd_graph(model, args)
        """
    assert ql402(src) == [6]


def test_module_level_name_read_in_a_function_is_reported():
    src = """\
        import torch

        try:
            from torch._export import capture_pre_autograd_graph
        except ImportError:
            GM = torch.export.export(MODEL, ARGS).module()


        def again(model, args):
            return capture_pre_autograd_graph(model, args)
        """
    assert ql402(src) == [4]


def test_handler_not_catching_the_import_error_is_reported():
    src = """\
        import torch


        def capture(model, args):
            try:
                from torch._export import capture_pre_autograd_graph

                return capture_pre_autograd_graph(model, args)
            except AttributeError:
                return torch.export.export(model, args).module()
        """
    assert ql402(src) == [6]


def test_handler_that_gives_up_is_reported():
    src = """\
        import torch


        def capture(model, args):
            try:
                from torch._export import capture_pre_autograd_graph

                return capture_pre_autograd_graph(model, args)
            except ImportError:
                return None
        """
    assert ql402(src) == [6]


def test_import_in_the_else_branch_is_reported():
    src = """\
        import torch


        def capture(model, args):
            try:
                import torch._export
            except ImportError:
                return torch.export.export(model, args).module()
            else:
                from torch._export import capture_pre_autograd_graph

                return capture_pre_autograd_graph(model, args)
        """
    assert ql402(src) == [10]
