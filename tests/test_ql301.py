"""QL301 decomposition-in-pre-prepare-pass: passes followed to their definitions, quiet idioms, the codemod."""

from __future__ import annotations

import os
import textwrap

import pytest

from qlint.analysis.names.project import ProjectIndex
from qlint.diagnostic import Applicability
from qlint.engine import check_source
from tests.conftest import ROOT, fix, lint, settings_for

SEL = ("QL301",)
HAS = {"QL301": {"executorch-has-preserve-ops": True}}
HAS_NOT = {"QL301": {"executorch-has-preserve-ops": False}}


def ql301(src: str, **kw):
    return [d for d in lint(src, select=SEL, **kw) if d.code == "QL301"]


def spots(diagnostics) -> list[tuple[int, int]]:
    """Where the findings start (row, column): a count alone would not say which lines."""
    return [(d.range.start.row, d.range.start.col) for d in diagnostics]


def write_package(root, files: dict[str, str]) -> dict[str, str]:
    """Write a package tree (with __init__.py files) and return absolute paths by name."""
    paths = {}
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        for parent in path.relative_to(root).parents:
            if str(parent) != ".":
                init = root / parent / "__init__.py"
                if not init.exists():
                    init.write_text("")
        path.write_text(textwrap.dedent(text))
        paths[rel] = str(path)
    return paths


def check_file(path: str, **options):
    with open(path) as fh:
        text = fh.read()
    result = check_source(text, os.path.abspath(path), settings_for(SEL, **options), ProjectIndex())
    assert not result.errors, result.errors
    return [d for d in result.diagnostics if d.code == "QL301"]


RECIPE_HEAD = """\
import torch
from executorch.export import QuantizationRecipe
"""


# -- what is flagged ------------------------------------------------------------------------
def test_same_module_pass_with_default_table_is_flagged_on_the_element():
    src = RECIPE_HEAD + textwrap.dedent(
        """\

        def decompose(gm):
            ep = torch.export.export(gm, EXAMPLE_INPUTS)
            return ep.run_decompositions().module()

        recipe = QuantizationRecipe(quantizers=[quantizer], pre_prepare_passes=[decompose])
        """
    )
    (d,) = ql301(src, **HAS_NOT)
    assert (d.range.start.row, d.range.start.col) == (8, 72)
    assert src.splitlines()[7][72:81] == "decompose"
    (rel,) = d.related
    assert rel.range.start.row == 6 and "run_decompositions" in rel.message
    assert "transform_for_annotation" in d.help and "before `.module()`" in d.help
    assert "has no `QuantizationRecipe.preserve_ops`" in d.help
    assert d.fix.applicability is Applicability.DISPLAY_ONLY


def test_message_points_to_preserve_ops_when_executorch_has_it():
    src = RECIPE_HEAD + textwrap.dedent(
        """\
        from torch._decomp import core_aten_decompositions

        def decompose(gm):
            ep = torch.export.export(gm, EXAMPLE_INPUTS)
            ep = ep.run_decompositions(core_aten_decompositions())
            graph = ep.module()
            graph.graph.eliminate_dead_code()
            return graph

        recipe = QuantizationRecipe(quantizers=[q], pre_prepare_passes=[decompose])
        """
    )
    (d,) = ql301(src, **HAS)
    assert "QuantizationRecipe.preserve_ops" in d.help and "transform_for_annotation" not in d.help
    # Not exactly "decompose all but these ops": no codemod.
    assert d.fix.applicability is Applicability.DISPLAY_ONLY


def test_auto_reads_the_op_table_and_says_what_the_installed_executorch_lacks():
    src = (
        RECIPE_HEAD
        + "recipe = QuantizationRecipe(pre_prepare_passes=[lambda gm: export(gm, X).run_decompositions().module()])\n"
    )
    (d,) = ql301(src)
    assert "lambda gm" in d.message
    assert "executorch 1.5.1 has no `QuantizationRecipe.preserve_ops`" in d.help


@pytest.mark.parametrize(
    "body",
    [
        "    return make_fx(gm, decomposition_table=core_aten_decompositions())(*EXAMPLE)",
        "    tbl = get_decompositions([torch.ops.aten.linear])\n    return make_fx(gm, decomposition_table=tbl)(*x)",
        "    return make_fx(gm, decomposition_table=torch._decomp.decomposition_table)(*X)",
        "    table = torch.export.default_decompositions()\n    return rewrite(gm, table)",
    ],
)
def test_every_way_of_decomposing_is_recognised(body):
    src = (
        RECIPE_HEAD
        + "from torch._decomp import core_aten_decompositions, get_decompositions\n"
        + "from torch.fx.experimental.proxy_tensor import make_fx\n\n"
        + f"def p(gm):\n{body}\n\n"
        + "recipe = QuantizationRecipe(pre_prepare_passes=[p])\n"
    )
    assert spots(ql301(src)) == [(src.count("\n"), len("recipe = QuantizationRecipe(pre_prepare_passes=["))]


def test_pass_defined_in_another_module(tmp_path):
    paths = write_package(
        tmp_path,
        {
            "backend/passes.py": """\
                import torch

                def decompose_for_quantizer(gm):
                    ep = torch.export.export(gm, (torch.randn(1, 3),))
                    return ep.run_decompositions().module()
                """,
            "backend/recipes.py": """\
                from executorch.export import QuantizationRecipe
                from backend.passes import decompose_for_quantizer
                from . import passes

                RECIPE = QuantizationRecipe(
                    pre_prepare_passes=[decompose_for_quantizer, passes.decompose_for_quantizer],
                )
                """,
        },
    )
    found = check_file(paths["backend/recipes.py"])
    assert spots(found) == [(6, 24), (6, 49)]
    rel = found[0].related[0]
    assert rel.path == paths["backend/passes.py"]
    assert (rel.range.start.row, rel.range.start.col) == (5, 11)


def test_list_held_in_a_variable_and_a_helper_that_decomposes(tmp_path):
    paths = write_package(
        tmp_path,
        {
            "backend/helpers.py": """\
                import torch

                def lower_to_core_aten(gm, inputs):
                    return torch.export.export(gm, inputs).run_decompositions().module()
                """,
            "backend/recipes.py": """\
                import torch
                from executorch.export import QuantizationRecipe
                from backend.helpers import lower_to_core_aten

                def _normalize(gm):
                    gm.graph.eliminate_dead_code()
                    return lower_to_core_aten(gm, (torch.randn(2),))

                def _fold(gm):
                    gm.recompile()
                    return gm

                PASSES = [_fold, _normalize]

                def build():
                    return QuantizationRecipe(pre_prepare_passes=PASSES)
                """,
        },
    )
    (d,) = check_file(paths["backend/recipes.py"])
    assert d.range.start.row == 13 and "_normalize" in d.message
    assert "`run_decompositions` in `lower_to_core_aten`, which it calls" in d.message
    assert d.related[0].path == paths["backend/helpers.py"]


def test_class_based_passes(tmp_path):
    paths = write_package(
        tmp_path,
        {
            "backend/passes.py": """\
                import torch
                from executorch.exir.pass_base import ExportPass, PassResult

                class CoreAtenPass(ExportPass):
                    def call(self, graph_module):
                        ep = torch.export.export(graph_module, self.inputs)
                        return PassResult(ep.run_decompositions().module(), True)

                class Base:
                    def helper(self, gm):
                        return torch.export.export(gm, ()).run_decompositions().module()

                class Callable(Base):
                    def __call__(self, gm):
                        return self.helper(gm)

                class Harmless(ExportPass):
                    def call(self, graph_module):
                        graph_module.recompile()
                        return PassResult(graph_module, True)
                """,
            "backend/recipes.py": """\
                from executorch.export import QuantizationRecipe
                from backend.passes import Callable, CoreAtenPass, Harmless

                recipe = QuantizationRecipe(pre_prepare_passes=[CoreAtenPass(), Callable(), Harmless()])
                """,
        },
    )
    found = check_file(paths["backend/recipes.py"])
    assert [d.range.start.col for d in found] == [48, 64]
    assert "in `helper`, which it calls" in found[1].message


def test_partials_and_factories():
    src = RECIPE_HEAD + textwrap.dedent(
        """\
        import functools
        from functools import partial

        def decompose(gm, inputs, keep=()):
            return torch.export.export(gm, inputs).run_decompositions().module()

        def make_pass(inputs):
            def _pass(gm):
                return torch.export.export(gm, inputs).run_decompositions().module()
            return _pass

        recipe = QuantizationRecipe(
            pre_prepare_passes=[
                partial(decompose, inputs=EXAMPLE),
                functools.partial(decompose, inputs=EXAMPLE),
                make_pass(EXAMPLE),
            ]
        )
        """
    )
    assert [d.range.start.row for d in ql301(src)] == [16, 17, 18]


def test_dataclasses_replace_of_a_recipe():
    src = RECIPE_HEAD + textwrap.dedent(
        """\
        import dataclasses

        def decompose(gm):
            return torch.export.export(gm, X).run_decompositions().module()

        base = QuantizationRecipe(quantizers=[q])
        recipe = dataclasses.replace(base, pre_prepare_passes=[decompose])
        """
    )
    assert spots(ql301(src)) == [(9, 55)]


# -- quiet ----------------------------------------------------------------------------------
def test_run_decompositions_with_an_empty_table_only_functionalizes():
    src = RECIPE_HEAD + textwrap.dedent(
        """\
        EMPTY = {}

        def functionalize(gm):
            return torch.export.export(gm, X).run_decompositions({}).module()

        def functionalize_too(gm):
            return torch.export.export(gm, X).run_decompositions(decomp_table=EMPTY).module()

        def functionalize_three(gm):
            return torch.export.export(gm, X).run_decompositions(dict()).module()

        recipe = QuantizationRecipe(pre_prepare_passes=[functionalize, functionalize_too, functionalize_three])
        """
    )
    assert ql301(src) == []


def test_unrelated_quantization_recipe_class_is_quiet():
    src = textwrap.dedent(
        """\
        import torch
        from torchao.prototype.quantization.module_swap import QuantizationRecipe

        def decompose(gm):
            return torch.export.export(gm, X).run_decompositions().module()

        recipe = QuantizationRecipe(pre_prepare_passes=[decompose])
        """
    )
    assert ql301(src) == []


@pytest.mark.parametrize(
    "src",
    [
        # decomposition outside the pass, on the ExportedProgram: the right place
        RECIPE_HEAD
        + "ep = torch.export.export(model, X).run_decompositions()\n"
        + "def fold(gm):\n    gm.recompile()\n    return gm\n"
        + "recipe = QuantizationRecipe(pre_prepare_passes=[fold])\n",
        # other recipe fields are not pre-prepare passes
        RECIPE_HEAD
        + "def d(gm):\n    return torch.export.export(gm, X).run_decompositions().module()\n"
        + "recipe = QuantizationRecipe(post_convert_passes=[d])\n",
        # a pass we cannot resolve stays quiet
        RECIPE_HEAD + "from vendor import magic\nrecipe = QuantizationRecipe(pre_prepare_passes=[magic])\n",
        # dataclasses.replace of something that is not a recipe
        RECIPE_HEAD
        + "import dataclasses\nfrom other import Config\n"
        + "def d(gm):\n    return torch.export.export(gm, X).run_decompositions().module()\n"
        + "cfg = dataclasses.replace(Config(), pre_prepare_passes=[d])\n",
    ],
)
def test_quiet(src):
    assert ql301(src) == []


def test_recursive_helpers_terminate_and_depth_is_bounded():
    chain = "".join(f"def h{i}(gm):\n    return h{i + 1}(gm)\n\n" for i in range(6))
    src = (
        RECIPE_HEAD
        + "def a(gm):\n    return b(gm)\n\ndef b(gm):\n    return a(gm)\n\n"
        + chain
        + "def h6(gm):\n    return torch.export.export(gm, X).run_decompositions().module()\n\n"
        + "recipe = QuantizationRecipe(pre_prepare_passes=[a, h2, h1])\n"
    )
    # `a`/`b` call each other forever without decomposing; h2 reaches h6 in four calls
    # (the walk's depth), h1 would need five.
    (d,) = ql301(src)
    assert "pre-prepare pass `h2`" in d.message and "in `h6`, reached through `h3` -> `h4` -> `h5`" in d.message


# -- the codemod ----------------------------------------------------------------------------
KEEP_LINEAR = RECIPE_HEAD + textwrap.dedent(
    """\

    example_inputs = (torch.randn(1, 8),)


    def _keep_linear(gm):
        ep = torch.export.export(gm, example_inputs)
        table = torch.export.default_decompositions()
        for op in (torch.ops.aten.linear.default, torch.ops.aten.conv2d.default):
            table.pop(op, None)
        return ep.run_decompositions(table).module()


    recipe = QuantizationRecipe(quantizers=[quantizer], pre_prepare_passes=[_keep_linear])
    """
)


def test_decompose_all_but_becomes_preserve_ops_when_executorch_has_it():
    (d,) = ql301(KEEP_LINEAR, **HAS)
    assert d.fix.applicability is Applicability.UNSAFE
    assert d.evidence["preserve_ops"] == ["torch.ops.aten.linear.default", "torch.ops.aten.conv2d.default"]
    assert fix(KEEP_LINEAR, select=SEL, **HAS) == KEEP_LINEAR  # unsafe: not by default
    preserve = "preserve_ops=(torch.ops.aten.linear.default, torch.ops.aten.conv2d.default)"
    assert fix(KEEP_LINEAR, select=SEL, unsafe=True, **HAS) == RECIPE_HEAD + textwrap.dedent(
        f"""\

        example_inputs = (torch.randn(1, 8),)


        recipe = QuantizationRecipe(quantizers=[quantizer], {preserve})
        """
    )


def test_no_codemod_without_the_field():
    (d,) = ql301(KEEP_LINEAR, **HAS_NOT)
    assert d.fix.applicability is Applicability.DISPLAY_ONLY
    assert fix(KEEP_LINEAR, select=SEL, unsafe=True, **HAS_NOT) == KEEP_LINEAR


def test_codemod_keeps_other_passes_and_public_functions():
    src = KEEP_LINEAR.replace("_keep_linear", "keep_linear").replace(
        "pre_prepare_passes=[keep_linear]", "pre_prepare_passes=[fold, keep_linear]"
    )
    out = fix(src, select=SEL, unsafe=True, **HAS)
    assert "def keep_linear(gm):" in out
    assert (
        "QuantizationRecipe(quantizers=[quantizer], pre_prepare_passes=[fold], "
        "preserve_ops=(torch.ops.aten.linear.default, torch.ops.aten.conv2d.default))"
    ) in out


def test_pass_that_does_more_than_decompose_is_not_rewritten():
    src = KEEP_LINEAR.replace(
        "    return ep.run_decompositions(table).module()",
        "    gm = ep.run_decompositions(table).module()\n    gm.graph.eliminate_dead_code()\n    return gm",
    )
    assert src != KEEP_LINEAR
    (d,) = ql301(src, **HAS)
    assert d.fix.applicability is Applicability.DISPLAY_ONLY


def test_the_example_recipe_is_flagged_across_modules():
    (d,) = check_file(str(ROOT / "examples" / "recipes" / "xnnpack_recipe.py"))
    assert "`decompose_for_quantizer`" in d.message and "functionalize" not in d.message
    (rel,) = d.related
    assert rel.path.endswith("core_aten_passes.py") and rel.range.start.row == 12


def test_a_pass_that_pops_packets_keeps_nothing_and_is_not_rewritten():
    src = KEEP_LINEAR.replace("torch.ops.aten.linear.default, torch.ops.aten.conv2d.default", "torch.ops.aten.linear,")
    assert src != KEEP_LINEAR
    (d,) = ql301(src, **HAS)
    assert d.fix.applicability is Applicability.DISPLAY_ONLY
