"""QL102 and a pass whose every caller hands the graph to `torch.compile` next (the Gaudi
bridge's fp8 replacer: `replace_quantize_with_cast` inserts the cast packet, a replacer object
built by the quantization wrapper in another module runs it on the converted graph, which the
wrapper records for a later export and then compiles). Dynamo traces the generated code and
records the packet as a user's call, so the packet is the form the compiled graph holds. Each
quiet case has loud look-alikes: no compile, a conditional one, a reader in between that may
key on the overload, a replacer or a record the analysis cannot follow."""

from __future__ import annotations

from tests.test_dynamo_graph_passes import _package, _rows

PASSES = """
    import logging

    import torch

    logger = logging.getLogger(__name__)


    def insert_cast(module):
        graph = module.graph
        for node in graph.nodes:
            if node.op == "call_function" and node.target.__name__ == "quantize_per_tensor.default":
                with graph.inserting_before(node):
                    cast = graph.call_function(torch.ops.mine.cast_fp8, (node.args[0],))
                node.replace_all_uses_with(cast)
                graph.erase_node(node)
        module.recompile()


    def fold_views(module):
        for node in module.graph.nodes:
            if node.target.__name__ == "view.default":
                node.replace_all_uses_with(node.args[0])


    class Replacer:
        def __init__(self, graph_module):
            self._graph_module = graph_module

        def run(self):
            insert_cast(self._graph_module)
            fold_views(self._graph_module)
            logger.debug(self._graph_module.graph)
"""

WRAPPER = """
    import os

    import torch

    from pkg.passes import Replacer


    class Context:
        def __init__(self):
            self._graphs = []
            self._text = ""

        def append_graph(self, graph_module):
            self._text = self._text + f"{graph_module.graph}"

        def record(self, graph_module, args):
            self._graphs.append([graph_module, args])


    class Wrapper(torch.nn.Module):
        def __init__(self, converted, context):
            super().__init__()
            self._converted = converted
            self._context = context

        def forward(self, *args):
            if os.getenv("FP8"):
                replacer = Replacer(self._converted)
                replacer.run()
            if self._context is not None:
                self._context.append_graph(self._converted)
                self._context.record(self._converted, args)
            if os.getenv("FREEZE"):
                with torch.no_grad():
                    self._converted = torch.compile(self._converted, backend="mine", options={"freeze": True})
            else:
                self._converted = torch.compile(self._converted, backend="mine")
            return self._converted(*args)


    def wrap(converted, example_inputs, context: Context):
        return Wrapper(converted, context)


    def save(context):
        graphs = context._graphs
        assert len(graphs) > 0
        for value in graphs:
            torch.export.export(value[0], value[1])
"""

ROW = 14  # the packet in PASSES


def _check(tmp_path, passes=PASSES, wrapper=WRAPPER, **others) -> list[int]:
    root = _package(tmp_path, passes=passes, wrapper=wrapper, **others)
    return _rows(root, "pkg/passes.py", select=("QL102",))


# -- quiet: compiled next ---------------------------------------------------------------------


def test_a_replacer_run_by_a_wrapper_that_records_then_compiles_is_quiet(tmp_path):
    assert _check(tmp_path) == []


def test_a_direct_caller_that_compiles_next_is_quiet(tmp_path):
    lower = """

    def lower(gm):
        insert_cast(gm)
        logger.info(f"after the cast: {gm.graph}")
        return torch.compile(gm, backend="mine")
"""
    passes = PASSES[: PASSES.index("    class Replacer")] + lower
    assert _check(tmp_path, passes=passes, wrapper="") == []


# -- loud: not compiled next, or read by something that may key on the overload ---------------


def test_no_compile_after_the_pass_is_reported(tmp_path):
    wrapper = WRAPPER.replace('torch.compile(self._converted, backend="mine")', "self._converted")
    assert _check(tmp_path, wrapper=wrapper) == [ROW]


def test_a_compile_in_one_branch_only_is_reported(tmp_path):
    wrapper = WRAPPER.replace(
        """            else:
                self._converted = torch.compile(self._converted, backend="mine")
""",
        "",
    )
    assert _check(tmp_path, wrapper=wrapper) == [ROW]


def test_a_pass_in_between_that_names_the_op_is_reported(tmp_path):
    passes = PASSES.replace('"view.default"', "torch.ops.mine.cast_fp8.default")
    assert ROW in _check(tmp_path, passes=passes)


def test_the_graph_handed_to_another_function_in_between_is_reported(tmp_path):
    wrapper = WRAPPER.replace(
        "self._context.append_graph(self._converted)", "torch.export.export(self._converted, args)"
    )
    assert _check(tmp_path, wrapper=wrapper) == [ROW]


def test_a_replacer_kept_or_its_field_set_elsewhere_is_reported(tmp_path):
    kept = WRAPPER.replace(
        "replacer = Replacer(self._converted)\n                replacer.run()",
        "self.replacer = Replacer(self._converted)\n                self.replacer.run()",
    )
    assert _check(tmp_path, wrapper=kept) == [ROW]
    reset = PASSES + "\n        def reset(self, other):\n            self._graph_module = other\n"
    (tmp_path / "reset").mkdir()
    assert _check(tmp_path / "reset", passes=reset) == [ROW]


def test_a_record_read_by_another_reader_is_reported(tmp_path):
    wrapper = (
        WRAPPER
        + """

    def lower_recorded(context, lower):
        graphs = context._graphs
        for value in graphs:
            lower(value[0])
"""
    )
    assert _check(tmp_path, wrapper=wrapper) == [ROW]


def test_a_context_of_unknown_class_is_reported(tmp_path):
    wrapper = WRAPPER.replace("context: Context)", "context)")
    assert _check(tmp_path, wrapper=wrapper) == [ROW]


def test_a_public_pass_named_in_another_module_is_reported(tmp_path):
    other = """
        from pkg.passes import insert_cast

        def quantize(gm):
            insert_cast(gm)
            return gm
    """
    assert _check(tmp_path, other=other) == [ROW]


def test_another_graph_compiled_is_reported(tmp_path):
    wrapper = WRAPPER.replace("torch.compile(self._converted,", "torch.compile(self._original,")
    assert _check(tmp_path, wrapper=wrapper) == [ROW]


def test_a_direct_caller_that_returns_the_graph_uncompiled_is_reported(tmp_path):
    lower = """

    def lower(gm):
        insert_cast(gm)
        return gm
"""
    passes = PASSES[: PASSES.index("    class Replacer")] + lower
    assert _check(tmp_path, passes=passes, wrapper="") == [ROW]


def test_a_method_of_the_instance_called_in_between_is_reported(tmp_path):
    wrapper = WRAPPER.replace('if os.getenv("FREEZE"):', 'self.inspect()\n            if os.getenv("FREEZE"):')
    assert _check(tmp_path, wrapper=wrapper) == [ROW]


COMPILER = """
    import torch


    class Compiler:
        def compile(self, gm):
            return torch.compile(gm, backend="mine")
"""


def _compiled_through_a_field(init: str) -> str:
    wrapper = WRAPPER.replace(
        "from pkg.passes import Replacer", "from pkg.compiler import Compiler\n    from pkg.passes import Replacer"
    )
    wrapper = wrapper.replace(
        "self._context = context\n", f"self._context = context\n            self._compiler = {init}\n"
    )
    return wrapper.replace(
        'self._converted = torch.compile(self._converted, backend="mine")\n',
        "self._converted = self._compiler.compile(self._converted)\n",
    )


def test_a_graph_compiled_by_a_method_of_a_field_of_another_module_is_quiet(tmp_path):
    wrapper = _compiled_through_a_field("Compiler()")
    assert "self._compiler.compile(self._converted)" in wrapper
    assert _check(tmp_path, wrapper=wrapper, compiler=COMPILER) == []


def test_a_field_method_that_reads_the_graph_first_or_a_field_given_is_reported(tmp_path):
    reads = COMPILER.replace(
        "            return torch.compile", "            lower(gm)\n            return torch.compile"
    )
    assert _check(tmp_path, wrapper=_compiled_through_a_field("Compiler()"), compiler=reads) == [ROW]
    given = _compiled_through_a_field("context")
    (tmp_path / "given").mkdir()
    assert _check(tmp_path / "given", wrapper=given, compiler=COMPILER) == [ROW]


def test_the_modules_read_are_dependencies_of_the_check(tmp_path):
    # The wrapper that constructs the replacer and the compiler's module decide the answer:
    # an edit there must bring the pass module's check up again.
    from qlint.analysis.names.project import ProjectIndex
    from qlint.engine import check_source
    from tests.conftest import settings_for

    root = _package(tmp_path, passes=PASSES, wrapper=_compiled_through_a_field("Compiler()"), compiler=COMPILER)
    path = root / "pkg" / "passes.py"
    result = check_source(path.read_bytes(), str(path), settings_for(("QL102",)), ProjectIndex())
    assert result.diagnostics == []
    assert {str(root / "pkg" / n) for n in ("wrapper.py", "compiler.py")} <= set(result.dependencies)
