"""QL402: a store to a removed capture API (a monkey-patch) creates it; only reads break."""

from __future__ import annotations

import textwrap

from tests.conftest import lint


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in lint(textwrap.dedent(src), select=("QL402",)) if d.code == "QL402"]


def test_store_of_a_wrapper_is_quiet_and_the_reads_are_reported():
    src = """
        import torch

        def overwrite():
            Native.original = torch._export.capture_pre_autograd_graph

            def wrapper(f, args=None):
                return Native.original(f, args)

            torch._export.capture_pre_autograd_graph = wrapper
        """
    assert rows(src) == [5]


def test_store_alone_is_quiet():
    assert rows("import torch\ntorch.export.export_for_training = my_export\n") == []


def test_delete_is_quiet():
    assert rows("import torch\ndel torch._export.capture_pre_autograd_graph\n") == []


def test_a_call_after_a_store_elsewhere_is_still_reported():
    # The patch is in another function; a plain call of the API still reads it.
    src = """
        import torch

        def patch():
            torch._export.capture_pre_autograd_graph = lambda m, a: m

        def capture(m, x):
            return torch._export.capture_pre_autograd_graph(m, (x,))
        """
    assert rows(src) == [8]


def test_a_read_on_the_right_of_an_assignment_is_reported():
    assert rows("import torch\nalias = torch.export.export_for_training\n") == [2]
