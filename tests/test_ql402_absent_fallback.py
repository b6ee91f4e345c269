"""QL402: `from torch.export import capture_pre_autograd_graph`, a fallback that cannot work.

The API was `torch._export`'s; torch 2.13 has it nowhere, and its `torch.export` has no such
name either. DiffuLex Edge's quantizer tries `torch._export`, then `torch.export`, then binds
None: on torch 2.13 both imports raise and the PT2E path is silently skipped. QL402 took the
`torch.export` import for a working alternative and stayed quiet on the whole shim. A shim that
ends in a spelling torch 2.13 has (`torch.export.export`) stays quiet, as before.
"""

from __future__ import annotations

import ast
import textwrap

from tests.conftest import fix, lint

SEL = ("QL402",)


def ql402(src: str):
    return [d for d in lint(textwrap.dedent(src), select=SEL) if d.code == "QL402"]


def rows(src: str) -> list[int]:
    return [d.range.start.row for d in ql402(src)]


def test_nested_shim_ending_in_none_is_reported_on_both_imports():
    src = """\
        try:
            from torch._export import capture_pre_autograd_graph
        except ImportError:
            try:
                from torch.export import capture_pre_autograd_graph
            except ImportError:
                capture_pre_autograd_graph = None


        def capture(model, args):
            if capture_pre_autograd_graph is not None:
                return capture_pre_autograd_graph(model, args)
            return model
        """
    assert rows(src) == [2, 5]


def test_two_branch_shim_through_torch_export_is_reported():
    src = """\
        try:
            from torch._export import capture_pre_autograd_graph
        except ImportError:
            from torch.export import capture_pre_autograd_graph

        gm = capture_pre_autograd_graph(model, args)
        """
    assert rows(src) == [2, 4]


def test_message_does_not_call_the_torch_export_spelling_removed():
    (d,) = ql402("from torch.export import capture_pre_autograd_graph\n")
    assert "`torch.export` has no `capture_pre_autograd_graph` on torch 2.13" in d.message
    assert "gone" not in d.message and ".module()" in d.message


def test_attribute_spelling_is_reported():
    assert rows("import torch\ngm = torch.export.capture_pre_autograd_graph(m, (x,))\n") == [2]


def test_lone_import_is_fixed_to_export_and_module():
    out = fix(
        "from torch.export import capture_pre_autograd_graph\n\ngm = capture_pre_autograd_graph(m, (x,))\n",
        select=SEL,
    )
    ast.parse(out)
    assert out == "from torch.export import export\n\ngm = export(m, (x,)).module()\n"


# -- look-alikes that work on torch 2.13 stay quiet ------------------------------------------
def test_nested_shim_ending_in_export_is_quiet():
    src = """\
        try:
            from torch._export import capture_pre_autograd_graph
        except ImportError:
            try:
                from torch.export import capture_pre_autograd_graph
            except ImportError:
                from torch.export import export as capture_pre_autograd_graph

        gm = capture_pre_autograd_graph(model, args)
        """
    assert rows(src) == []


def test_shim_falling_back_to_export_is_quiet():
    src = """\
        try:
            from torch._export import capture_pre_autograd_graph as capture
        except ImportError:
            from torch.export import export as capture

        gm = capture(model, args)
        """
    assert rows(src) == []


def test_hasattr_guarded_attribute_and_strings_are_quiet():
    src = """\
        import torch

        if hasattr(torch.export, "capture_pre_autograd_graph"):
            gm = torch.export.capture_pre_autograd_graph(m, (x,))
        else:
            gm = torch.export.export(m, (x,)).module()
        NAME = "torch.export.capture_pre_autograd_graph"
        """
    assert rows(src) == []


def test_own_method_of_that_name_is_quiet():
    src = """\
        class Manager:
            def capture_pre_autograd_graph(self):
                return self

        Manager().capture_pre_autograd_graph()
        """
    assert rows(src) == []
