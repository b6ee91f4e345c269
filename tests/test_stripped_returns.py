"""QL101 and QL102 on a graph a function of the project returns right after stripping it to
packets (SHARK's `import_with_fx(..., mlir_type="fx")`, whose graph its eager runner matches
on packets). Loud look-alikes: a return before the strip or of another graph, a strip of
another graph, a strip under a flag the caller sets false, a copy made before the strip, a
pass between the strip and the return that sets an overload, the value bound anew before
the matcher, a runner also called with another graph or named in another module."""

from __future__ import annotations

import textwrap
from pathlib import Path

IMPORTER = """
    import copy

    import torch
    from torch.fx.experimental.proxy_tensor import make_fx


    def upcast(fx_g):
        for node in fx_g.graph.nodes:
            if node.target in [torch.ops.aten.mul]:
                node.kwargs = {"dtype": torch.float32}
        fx_g.graph.lint()


    def import_fx(model, inputs, mlir_type="linalg", is_f16=False):
        fx_g = make_fx(model)(*inputs)
{before}
        def strip_overloads(gm):
            for node in gm.graph.nodes:
                if isinstance(node.target, torch._ops.OpOverload):
                    node.target = node.target.overloadpacket
            gm.recompile()

        strip_overloads({stripped})
{after}
        if mlir_type == "fx":
            return {returned}
        ts_graph = torch.jit.script(fx_g)
        if mlir_type == "torchscript":
            return ts_graph
        return compile_mlir(ts_graph), "forward"
"""

RUNNER = """
    import torch

    from pkg.importer import import_fx


    def compiled_graph(gm, info):
        compiled_graph = {}
        g = gm.graph
        for node in g.nodes:
            if node.target in [torch.ops.aten.empty]:
                compiled_graph[node.name] = info
        return compiled_graph


    fx_graph = import_fx(model, inputs, mlir_type="fx")
{between}
    shark_graph = compiled_graph(fx_graph, info)
"""

# The matcher's row (1-based) in RUNNER.
MATCH = 11


def _importer(before: str = "", after: str = "", stripped: str = "fx_g", returned: str = "fx_g") -> str:
    return textwrap.dedent(
        IMPORTER.replace("{before}", textwrap.indent(textwrap.dedent(before), " " * 8))
        .replace("{after}", textwrap.indent(textwrap.dedent(after), " " * 8))
        .replace("{stripped}", stripped)
        .replace("{returned}", returned)
    )


def _rows(tmp_path: Path, module: str, text: str, **others: str) -> list[tuple[int, str]]:
    from tests.conftest import check_file, package_repository

    root = package_repository(tmp_path, **{module: text}, **others)
    result = check_file(root / "pkg" / f"{module}.py", ("QL101", "QL102"))
    return sorted((d.range.start.row, d.code) for d in result.diagnostics)


def _runner(tmp_path: Path, importer: str, between: str = "", runner: str = RUNNER, **others: str):
    text = textwrap.dedent(runner.replace("{between}", textwrap.indent(textwrap.dedent(between), " " * 4)))
    return _rows(tmp_path, "runner", text, importer=importer, **others)


LOUD = [(MATCH, "QL101")]


# -- quiet: what is matched is the graph the importer returned stripped ------------------------


def test_runner_across_modules_is_quiet(tmp_path):
    assert _runner(tmp_path, _importer()) == []


def test_runner_in_the_importers_module_is_quiet(tmp_path):
    runner = RUNNER.replace("from pkg.importer import import_fx\n", "").replace("{between}", "")
    text = _importer() + textwrap.dedent(runner)
    # `upcast` (row 10), which nothing calls, matches a graph of any form: the control.
    assert _rows(tmp_path, "importer", text) == [(10, "QL101")]


def test_half_and_a_packet_pass_between_strip_and_return_are_quiet(tmp_path):
    after = "if is_f16:\n    fx_g = fx_g.half()\n    upcast(fx_g)\n    fx_g.recompile()\n"
    assert _runner(tmp_path, _importer(after=after)) == []


def test_match_in_the_same_body_is_quiet(tmp_path):
    runner = """
        import torch

        from pkg.importer import import_fx


        def run(model, inputs):
            gm = import_fx(model, inputs, mlir_type="fx")
            for node in list(gm.graph.nodes):
                if node.target == torch.ops.aten.empty:
                    print(node)
    """
    assert _runner(tmp_path, _importer(), runner=runner) == []


# A caller inserting into the graph `import_fx` returns.
INSERTING_RUNNER = """
    import torch

    from pkg.importer import import_fx


    def run(model, inputs):
        gm = import_fx(model, inputs, mlir_type="fx")
        for node in gm.graph.nodes:
            with gm.graph.inserting_after(node):
                gm.graph.call_function(torch.ops.aten.relu, (node,))
"""


def test_insertion_into_the_returned_graph_is_quiet(tmp_path):
    assert _runner(tmp_path, _importer(), runner=INSERTING_RUNNER) == []


# -- loud: what is matched may carry overloads ---------------------------------------------------


def test_no_strip_is_loud(tmp_path):
    importer = _importer().replace("    strip_overloads(fx_g)\n", "")
    assert _runner(tmp_path, importer) == LOUD


def test_early_return_before_the_strip_is_loud(tmp_path):
    assert _runner(tmp_path, _importer(before='if mlir_type == "raw":\n    return fx_g\n')) == LOUD


def test_else_branch_returning_another_graph_is_loud(tmp_path):
    importer = _importer().replace(
        "    ts_graph = torch.jit.script(fx_g)\n",
        "    else:\n        other = make_fx(model)(*inputs)\n        return other\n"
        "    ts_graph = torch.jit.script(fx_g)\n",
    )
    assert _runner(tmp_path, importer) == LOUD


def test_strip_of_another_graph_is_loud(tmp_path):
    before = "other = make_fx(model)(*inputs)\n"
    assert _runner(tmp_path, _importer(before=before, stripped="other")) == LOUD


def test_strip_under_a_flag_the_caller_sets_false_is_loud(tmp_path):
    importer = (
        _importer()
        .replace("    strip_overloads(fx_g)\n", "    if strip:\n        strip_overloads(fx_g)\n")
        .replace("is_f16=False):", "is_f16=False, strip=True):")
    )
    runner = RUNNER.replace('mlir_type="fx")', 'mlir_type="fx", strip=False)')
    assert _runner(tmp_path, importer, runner=runner) == LOUD


def test_return_of_a_copy_made_before_the_strip_is_loud(tmp_path):
    importer = _importer(before="kept = copy.deepcopy(fx_g)\n", returned="kept")
    assert _runner(tmp_path, importer) == LOUD


def test_pass_setting_an_overload_between_strip_and_return_is_loud(tmp_path):
    importer = _importer(after="to_relu(fx_g)\n") + textwrap.dedent(
        """

        def to_relu(fx_g):
            for node in fx_g.graph.nodes:
                node.target = torch.ops.aten.relu.default
        """
    )
    assert _runner(tmp_path, importer) == LOUD


def test_an_item_stored_on_the_value_before_the_matcher_is_quiet(tmp_path):
    # Not a binding of the name: the graph module stays the one the importer returned.
    assert _runner(tmp_path, _importer(), between="fx_graph.meta['source'] = 'fx'\n") == []


def test_a_graph_stored_on_the_value_before_the_matcher_is_loud(tmp_path):
    assert _runner(tmp_path, _importer(), between="fx_graph.graph = make_fx(model)(*inputs).graph\n") == LOUD


def test_graph_handed_to_a_library_between_strip_and_return_is_loud(tmp_path):
    importer = _importer(after="fx_g = torch.export.export(fx_g, inputs).module()\n")
    assert _runner(tmp_path, importer) == LOUD


def test_value_bound_anew_before_the_matcher_is_loud(tmp_path):
    assert _runner(tmp_path, _importer(), between="fx_graph = make_fx(model)(*inputs)\n") == LOUD


def test_value_bound_anew_in_the_same_body_is_loud(tmp_path):
    runner = """
        import torch

        from pkg.importer import import_fx


        def run(model, inputs):
            gm = import_fx(model, inputs, mlir_type="fx")
            gm = torch.export.export(model, inputs).module()
            for node in gm.graph.nodes:
                if node.target == torch.ops.aten.empty:
                    print(node)
    """
    assert _runner(tmp_path, _importer(), runner=runner) == [(11, "QL101")]


def test_runner_also_called_with_another_graph_is_loud(tmp_path):
    between = "other = compiled_graph(make_fx(model)(*inputs), info)\n"
    assert _runner(tmp_path, _importer(), between=between) == LOUD


def test_public_runner_named_in_another_module_is_loud(tmp_path):
    user = "from pkg.runner import compiled_graph\n\ncompiled_graph(gm, info)\n"
    assert _runner(tmp_path, _importer(), user=user) == LOUD


def test_runner_binding_its_parameter_anew_is_loud(tmp_path):
    bound = "        gm = torch.export.export(gm, info).module()\n        g = gm.graph\n"
    runner = RUNNER.replace("        g = gm.graph\n", bound)
    assert _runner(tmp_path, _importer(), runner=runner) == [(MATCH + 1, "QL101")]


def test_insertion_into_an_unstripped_return_is_loud(tmp_path):
    importer = _importer().replace("    strip_overloads(fx_g)\n", "")
    assert _runner(tmp_path, importer, runner=INSERTING_RUNNER) == [(11, "QL102")]


_PASSES = """
    import torch


    def fix_dtypes(fx_g):
        for node in fx_g.graph.nodes:
            {line}
"""


def _importer_with_pass() -> str:
    return _importer(after="fix_dtypes(fx_g)\n").replace(
        "import copy\n", "import copy\n\nfrom pkg.passes import fix_dtypes\n"
    )


def test_a_pass_of_another_module_between_strip_and_return_is_quiet(tmp_path):
    passes = textwrap.dedent(_PASSES.replace("{line}", "node.kwargs = {}"))
    assert _runner(tmp_path, _importer_with_pass(), passes=passes) == []


def test_a_pass_of_another_module_setting_an_overload_is_loud(tmp_path):
    passes = textwrap.dedent(_PASSES.replace("{line}", "node.target = torch.ops.aten.relu.default"))
    assert _runner(tmp_path, _importer_with_pass(), passes=passes) == LOUD
