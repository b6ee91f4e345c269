"""QL402 removed-capture-api: what is flagged, what stays quiet, and what the fixes write."""

from __future__ import annotations

import ast
import textwrap

import pytest

from qlint.diagnostic import Applicability
from tests.conftest import fix, lint

SEL = ("QL402",)


def ql402(src: str, **kw):
    return [d for d in lint(src, select=SEL, **kw) if d.code == "QL402"]


def fixed(src: str, unsafe: bool = False) -> str:
    out = fix(src, select=SEL, unsafe=unsafe)
    ast.parse(out)
    return out


def dedent(src: str) -> str:
    return textwrap.dedent(src)


# -- spellings that are flagged --------------------------------------------------------------
@pytest.mark.parametrize(
    "src",
    [
        "from torch._export import capture_pre_autograd_graph\n",
        "from torch._export import capture_pre_autograd_graph as cap\n",
        "from torch.export import export, export_for_training\n",
        "import torch\ntorch.export.export_for_training(m, (x,))\n",
        "import torch\ngm = torch._export.capture_pre_autograd_graph(m, (x,))\n",
        "import torch as t\nt._export.capture_pre_autograd_graph(m, (x,))\n",
        "import torch._export as te\nte.capture_pre_autograd_graph(m, (x,))\n",
        "import torch.export as tex\ntex.export_for_training(m, (x,))\n",
        "from torch import _export\n_export.capture_pre_autograd_graph(m, (x,))\n",
        "def f(m, x):\n    from torch.export import export_for_training\n    return export_for_training(m, (x,))\n",
        # the private namespace some scripts import it from: torch 2.13 has it there neither
        "from torch._export import export_for_training\n",
        "import torch\ntorch._export.export_for_training(m, (x,))\n",
    ],
)
def test_every_spelling_is_flagged(src):
    (d,) = ql402(src)
    assert "gone from torch 2.13" in d.message


def test_message_says_what_the_old_api_returned():
    (cap,) = ql402("from torch._export import capture_pre_autograd_graph\n")
    (eft,) = ql402("from torch.export import export_for_training\n")
    assert ".module()" in cap.message and "GraphModule" in cap.message
    assert "same ExportedProgram" in eft.message and ".module()" not in eft.message
    assert cap.evidence["replacement"] == "torch.export.export.module()"
    assert eft.evidence["returns"] == "ExportedProgram"


# -- look-alikes that stay quiet -------------------------------------------------------------
@pytest.mark.parametrize(
    "src",
    [
        # guarded imports for older torch
        """\
        try:
            from torch._export import capture_pre_autograd_graph
        except ImportError:
            from torch.export import export as capture_pre_autograd_graph
        """,
        """\
        import torch
        from packaging import version
        if version.parse(torch.__version__) < version.parse("2.5"):
            from torch._export import capture_pre_autograd_graph
        """,
        """\
        import torch
        if is_fbcode_version_ok():
            gm = torch._export.capture_pre_autograd_graph(m, args)
        """,
        """\
        from torchao.utils import TORCH_VERSION_AT_LEAST_2_5
        if not TORCH_VERSION_AT_LEAST_2_5:
            from torch._export import capture_pre_autograd_graph as capture
        else:
            from torch.export import export as capture
        """,
        """\
        try:
            from torch._export import export_for_training
        except ImportError:
            from torch.export import export as export_for_training
        """,
        """\
        import torch
        try:
            gm = torch.export.export_for_training(m, args).module()
        except AttributeError:
            gm = torch.export.export(m, args).module()
        """,
        # strings, probes, comments, other objects sharing the name
        """\
        import torch
        HAS_OLD = hasattr(torch.export, "export_for_training")
        fn = getattr(torch._export, "capture_pre_autograd_graph", None)
        # capture_pre_autograd_graph returned a GraphModule
        """,
        """\
        class Manager:
            def capture_pre_autograd_graph(self):
                return self

        Manager().capture_pre_autograd_graph()
        """,
        """\
        def run(manager):
            return manager.export_for_training(model)
        """,
        # the API torch still has
        "import torch\nep = torch.export.export(m, (x,))\n",
        # a local module of the same name is not torch's
        "from mypkg import export\nexport.export_for_training(m)\n",
    ],
)
def test_look_alikes_stay_quiet(src):
    assert ql402(dedent(src)) == []


def test_shim_whose_every_branch_is_removed_is_flagged_and_unsafe():
    src = dedent(
        """\
        try:
            from torch.export import export_for_training as capture
        except ImportError:
            from torch._export import capture_pre_autograd_graph as capture

        gm = capture(model, args)
        """
    )
    found = ql402(src)
    assert len(found) == 2
    assert all(d.fix.applicability is Applicability.UNSAFE for d in found)
    assert all("bound to both removed APIs" in d.fix.message for d in found)


def test_version_gate_flags_only_the_branch_torch_2_13_takes():
    # torchao 0.7's tests: the newer branch calls the API that torch 2.13 removed too.
    src = dedent(
        """\
        import torch
        from torchao.utils import TORCH_VERSION_AT_LEAST_2_5

        if TORCH_VERSION_AT_LEAST_2_5:
            model = torch.export.export_for_training(model, example_inputs).module()
        else:
            model = torch._export.capture_pre_autograd_graph(model, example_inputs)
        """
    )
    (d,) = ql402(src)
    assert d.range.start.row == 5 and "export_for_training" in d.message
    assert fixed(src).splitlines()[4] == "    model = torch.export.export(model, example_inputs).module()"


def test_version_string_comparison_is_read_as_python_reads_it():
    # torch.__version__ is a TorchVersion, which compares with a string as a version: the
    # "old torch only" branch does not run on 2.13, the "2.5 and later" one does.
    src = 'import torch\nif torch.__version__ < "2.5":\n    from torch._export import capture_pre_autograd_graph\n'
    assert ql402(src) == []
    src = 'import torch\nif torch.__version__ >= "2.5":\n    gm = torch.export.export_for_training(m, a).module()\n'
    assert len(ql402(src)) == 1
    # A plain string made from it compares as text: "2.13.0" < "2.5", so this branch runs.
    src = src.replace("torch.__version__ >=", 'torch.__version__.split("+")[0] <')
    assert len(ql402(src)) == 1


def test_code_after_an_early_return_on_newer_torch_stays_quiet():
    # ROCm/torch_migraphx's shim: each newer torch returns before the older API is reached.
    src = dedent(
        """\
        import torch
        from packaging import version

        TORCH_VERSION = version.parse(torch.__version__)
        TORCH_2_6 = version.parse("2.6.dev")
        TORCH_2_9 = version.parse("2.9.dev")


        def export_for_quantization(model, inputs, *args, **kwargs):
            if TORCH_VERSION >= TORCH_2_9:
                return torch.export.export(model, inputs, *args, **kwargs).module()
            if TORCH_VERSION >= TORCH_2_6:
                return torch.export.export_for_training(model, inputs, *args, **kwargs).module()
            from torch._export import capture_pre_autograd_graph
            return capture_pre_autograd_graph(model, inputs, *args, **kwargs)
        """
    )
    assert ql402(src) == []
    # Without the 2.9 branch, torch 2.13 reaches export_for_training.
    (d,) = ql402(src.replace("TORCH_VERSION >= TORCH_2_9", "TORCH_VERSION >= version.parse('2.99')"))
    assert d.range.start.row == 13


def test_module_skip_by_a_version_check_is_read_as_torch_compares():
    # coremltools' test module: `_TORCH_VERSION` is torch.__version__ (a TorchVersion), so
    # 2.13.0 < 2.5.0 is False as versions and the module runs on 2.13: the import is reached.
    src = dedent(
        """\
        import pytest
        import torch

        _TORCH_VERSION = torch.__version__
        if _TORCH_VERSION < "2.5.0":
            pytest.skip(allow_module_level=True)

        from torch.export import export_for_training
        """
    )
    assert len(ql402(src)) == 1
    assert ql402(src.replace('"2.5.0"', '"10.0"')) == []  # 2.13 < 10.0: skipped on 2.13
    assert ql402(src.replace('"2.5.0"', '"3.0"')) == []
    # As a plain string it compares as text: "2.13.0" < "2.5.0", skipped.
    assert ql402(src.replace("= torch.__version__", '= torch.__version__.split("+")[0]')) == []


def test_version_gated_try_probe_in_the_taken_branch_stays_quiet():
    src = dedent(
        """\
        if TORCH_VERSION_AT_LEAST_2_5:
            try:
                from torch.export import export_for_training as capture
            except ImportError:
                from torch.export import export as capture
        """
    )
    assert ql402(src) == []


# -- fixes -----------------------------------------------------------------------------------
def test_capture_call_gets_module_and_dynamic_shapes_keyword():
    src = dedent(
        """\
        from torch._export import capture_pre_autograd_graph


        def f(m, x, ds):
            return capture_pre_autograd_graph(m, (x,), None, ds)
        """
    )
    (d,) = ql402(src)
    assert d.fix.applicability is Applicability.SAFE
    assert fixed(src) == dedent(
        """\
        from torch.export import export


        def f(m, x, ds):
            return export(m, (x,), None, dynamic_shapes=ds).module()
        """
    )


def test_capture_keyword_f_becomes_mod():
    src = "import torch\ngm = torch._export.capture_pre_autograd_graph(f=m, args=(x,))\n"
    assert fixed(src) == "import torch\ngm = torch.export.export(mod=m, args=(x,)).module()\n"


def test_alias_keeps_calls_and_only_the_module_changes():
    src = "from torch._export import capture_pre_autograd_graph as cap\ngm = cap(m, args)\n"
    assert fixed(src) == "from torch.export import export as cap\ngm = cap(m, args).module()\n"


def test_export_for_training_dropped_from_an_import_that_has_export():
    src = dedent(
        """\
        from torch.export import export, export_for_training, ExportedProgram

        ep = export_for_training(m, args, strict=True, dynamic_shapes=ds)
        gm = export_for_training(m, args).module()
        """
    )
    assert fixed(src) == dedent(
        """\
        from torch.export import export, ExportedProgram

        ep = export(m, args, strict=True, dynamic_shapes=ds)
        gm = export(m, args).module()
        """
    )


def test_private_namespace_import_becomes_torch_export():
    src = dedent(
        """\
        def capture(m, x):
            from torch._export import export_for_training
            return export_for_training(m, (x,), kwargs={}).module()
        """
    )
    assert fixed(src) == dedent(
        """\
        def capture(m, x):
            from torch.export import export
            return export(m, (x,), kwargs={}).module()
        """
    )


def test_export_name_taken_keeps_the_local_name():
    src = dedent(
        """\
        from torch.export import export_for_training


        def export(path):
            return export_for_training(m, args)
        """
    )
    assert fixed(src).splitlines()[0] == "from torch.export import export as export_for_training"


def test_module_alias_use_is_rewritten_through_torch():
    src = "import torch._export as te\ngm = te.capture_pre_autograd_graph(m, args)\n"
    # `import torch._export as te` binds no `torch`: the fix adds the import.
    assert fixed(src) == "import torch._export as te\nimport torch\ngm = torch.export.export(m, args).module()\n"
    src = "import torch\nimport torch._export as te\ngm = te.capture_pre_autograd_graph(m, args)\n"
    assert fixed(src) == "import torch\nimport torch._export as te\ngm = torch.export.export(m, args).module()\n"


def test_module_alias_without_torch_import_adds_one():
    src = "from torch import _export\ngm = _export.capture_pre_autograd_graph(m, args)\n"
    assert fixed(src) == "from torch import _export\nimport torch\ngm = torch.export.export(m, args).module()\n"


def test_function_level_import_rewrites_only_that_function():
    src = dedent(
        """\
        def f(m, x):
            from torch.export import export_for_training
            return export_for_training(m, (x,)).module()


        def g(export_for_training):
            return export_for_training(1)
        """
    )
    out = fixed(src)
    assert "return export(m, (x,)).module()" in out
    assert "return export_for_training(1)" in out


@pytest.mark.parametrize(
    ("src", "level"),
    [
        # passed as a value: capture's callers expect a GraphModule
        (
            "from torch._export import capture_pre_autograd_graph\nrun(capture=capture_pre_autograd_graph)\n",
            "display-only",
        ),
        # passed as a value: export_for_training's result type is kept, but callers are unseen
        ("from torch.export import export_for_training\nrun(capture=export_for_training)\n", "unsafe"),
        # a keyword torch.export.export does not have
        ("import torch\ntorch.export.export_for_training(m, args, pre_dispatch=True)\n", "display-only"),
        # splats that may hide arguments that must move
        ("import torch\ntorch._export.capture_pre_autograd_graph(*a)\n", "unsafe"),
        ("import torch\ntorch._export.capture_pre_autograd_graph(m, args, **kw)\n", "unsafe"),
        # the same splats map one to one for export_for_training
        ("import torch\ntorch.export.export_for_training(*a, **kw)\n", "safe"),
    ],
)
def test_fix_applicability(src, level):
    (d,) = ql402(src)
    assert d.fix.applicability.value == level


def test_unsafe_value_rename_applies_with_unsafe_fixes():
    src = "from torch.export import export_for_training\nrun(capture=export_for_training)\n"
    assert fixed(src) == src
    assert fixed(src, unsafe=True) == "from torch.export import export\nrun(capture=export)\n"


def test_second_run_changes_nothing():
    src = dedent(
        """\
        import torch
        from torch._export import capture_pre_autograd_graph
        from torch.export import export_for_training

        a = capture_pre_autograd_graph(m, args)
        b = export_for_training(m, args)
        c = torch.export.export_for_training(m, args).module()
        """
    )
    once = fixed(src, unsafe=True)
    assert ql402(once) == []
    assert fixed(once, unsafe=True) == once


@pytest.mark.parametrize(("test", "found"), [("False", 0), ("0", 0), ("True", 1), ("flag", 1)])
def test_an_import_in_a_literal_false_block_is_quiet(test, found):
    src = f"""\
        def run(model, x, flag=False):
            if {test}:
                from torch._export import capture_pre_autograd_graph
                return capture_pre_autograd_graph(model, (x,))
        """
    assert len([d for d in ql402(src) if d.range.start.row == 3]) == found
