"""QL101/QL102 on constructs found on real code (issue 14, items 9-15): each with the
look-alikes that are right and must stay quiet."""

from __future__ import annotations

import textwrap

import pytest

from qlint.diagnostic import Applicability
from tests.conftest import codes, fix, lint


def ql101(src, **kw):
    return lint(src, select=("QL101",), **kw)


def rows(diagnostics) -> list[int]:
    return sorted(d.range.start.row for d in diagnostics)


# -- 9: a sibling overload graphs never carry does not excuse the packet ----------------


def test_sibling_overload_graphs_never_carry_does_not_excuse_the_packet():
    src = """
        import torch
        aten = torch.ops.aten

        def is_sym_size(n):
            return n.target == aten.sym_size.default or n.target == aten.sym_size

        SIZES = {aten.sym_size, aten.sym_size.default}

        def in_set(n):
            return n.target in SIZES
        """
    diags = ql101(src)
    assert [(d.range.start.row, d.range.start.col) for d in diags] == [(6, 60), (8, 9)]
    assert "graphs carry `.int`" in diags[0].help


def test_sibling_overload_graphs_carry_excuses_the_packet():
    src = """
        import torch
        aten = torch.ops.aten

        def is_sym_size(n):
            return n.target == aten.sym_size.int or n.target == aten.sym_size

        SIZES = {aten.sym_size, aten.sym_size.int}
        qd = torch.ops.quantized_decomposed
        DQ = (qd.dequantize_per_tensor, qd.dequantize_per_tensor.tensor)

        def in_set(n):
            return n.target in SIZES or n.target in DQ
        """
    assert ql101(src) == []


# -- 10: op collections held in instance attributes --------------------------------------


def test_instance_attribute_collections():
    src = """
        import torch
        aten = torch.ops.aten

        class FoldPass:
            def __init__(self):
                self.q_ops = {aten.relu, aten.linear.default}
                self.op: object = aten.hardtanh

            def call(self, gm):
                for n in gm.graph.nodes:
                    if n.target in self.q_ops or n.target == self.op:
                        pass
        """
    assert [(d.range.start.row, d.range.start.col) for d in ql101(src)] == [(7, 22), (12, 53)]


def test_instance_attributes_that_are_not_readable_stay_quiet():
    src = """
        import torch
        aten = torch.ops.aten

        class FoldPass:
            def __init__(self, ops, extra=None):
                self.given = ops
                self.built = {aten.relu, *ops}
                self.grown = {aten.relu}
                self.grown.add(aten.relu.default)
                self.two = {aten.relu}
                self.mixed = {aten.relu.default}

            def reset(self):
                self.two = {aten.hardtanh}

            def call(self, gm):
                for n in gm.graph.nodes:
                    if n.target in self.given or n.target in self.built or n.target in self.grown:
                        pass
                    if n.target in self.two or n.target in self.mixed:
                        pass

        class Other:
            def call(self, n):
                return n.target in self.q_ops
        """
    assert ql101(src) == []


def test_instance_attributes_set_or_changed_deep_in_a_method():
    # Every assignment and change is found wherever the method nests it: in branches and
    # `with` blocks (read), inside a comprehension's call, a subscript store or a `del` (changed).
    src = """
        import torch
        aten = torch.ops.aten

        class FoldPass:
            def __init__(self, extra, lock):
                with lock:
                    if extra:
                        self.deep = {aten.relu, aten.linear.default}
                self.late = {aten.relu}
                [self.late.add(op) for op in extra]
                self.keyed = {aten.relu: 1}
                self.keyed[aten.relu.default] = 2
                self.gone = {aten.relu: 1, aten.hardtanh: 2}
                del self.gone[aten.hardtanh]

            def call(self, gm):
                for n in gm.graph.nodes:
                    if n.target in self.deep or n.target in self.late:
                        pass
                    if n.target in self.keyed or n.target in self.gone:
                        pass
        """
    assert [(d.range.start.row, d.range.start.col) for d in ql101(src)] == [(9, 29)]


# -- 13: fixes for ops the installed torchao inserts as packets ------------------------


def test_fix_for_ops_torchao_inserts_as_packets_is_never_a_safe_overload_only_rewrite():
    src = """
        import torch
        from torch.testing._internal.common_quantization import NodeSpec as ns
        QA = torch.ops.torchao.quantize_affine
        HANDLERS = {torch.ops.torchao.dequantize_affine: 1}

        def f(self, n, m, ep):
            a = n.target == QA == n.target or ep.graph_module  # an exported program's graph
            b = HANDLERS[n.target]
            self.checkGraphModuleNodes(m, expected_node=ns.call_function(torch.ops.torchao.choose_qparams_affine))
        """
    diags = {d.range.start.row: d for d in ql101(src)}
    assert sorted(diags) == [5, 8, 10]
    for d in diags.values():
        # Only `.default` would be left: graphs torchao 0.18 builds would no longer match.
        assert d.fix.applicability is Applicability.UNSAFE, d
        assert "flows insert" in d.fix.message
    # The safe run leaves them alone; the unsafe one names the overload.
    assert fix(src, select=("QL101",)) == fix(src, select=("QL101",)).replace(".default", "")
    assert "torch.ops.torchao.choose_qparams_affine.default" in fix(src, select=("QL101",), unsafe=True)


def test_fix_keeping_both_forms_stays_safe_and_style_overload_is_unsafe():
    src = (
        "import torch\nOPS = {torch.ops.torchao.quantize_affine}\n"
        "def f(n, ep):\n    return n.target in OPS or ep.graph_module\n"
    )
    (d,) = ql101(src)
    assert d.fix.applicability is Applicability.SAFE
    assert "OPS = {torch.ops.torchao.quantize_affine, torch.ops.torchao.quantize_affine.default}" in fix(
        src, select=("QL101",)
    )
    (d,) = ql101(src, QL101={"fix-style": "overload"})
    assert d.fix.applicability is Applicability.UNSAFE
    # An op nothing inserts as a packet keeps its safe single-overload fix.
    (d,) = ql101(src.replace("torchao.quantize_affine", "aten.relu"), QL101={"fix-style": "overload"})
    assert d.fix.applicability is Applicability.SAFE


def test_insertion_fix_of_a_packet_torchao_inserts_is_unsafe():
    src = """
        import torch

        def rewrite(gm, node):
            gm.graph.call_function(torch.ops.torchao.quantize_affine, node.args)
            gm.graph.call_function(torch.ops.aten.relu, node.args)
        """
    diags = lint(src, select=("QL102",))
    assert codes(diags) == ["QL102", "QL102"]
    assert [d.fix.applicability for d in diags] == [Applicability.UNSAFE, Applicability.SAFE]


# -- 12: sinks reached through a helper or by position -----------------------------------


HELPER = """
    import torch
    from torch.testing._internal.common_quantization import NodeSpec as ns

    class QuantTestCase:
        def _test_quantizer(self, model, example_inputs, quantizer, expected_node_occurrence, node_list=None):
            m = convert(prepare(model, quantizer))
            self.checkGraphModuleNodes(
                m, expected_node_occurrence=expected_node_occurrence, expected_node_list=node_list
            )
            return m

    def check_nodes(case, m, occurrence):
        case.checkGraphModuleNodes(m, None, None, occurrence)

    def via_helper(case, m, occurrence):
        return check_nodes(case, m, occurrence)
"""


def test_occurrence_dict_passed_positionally_to_a_helper():
    src = (
        HELPER
        + """
    class TestConv(QuantTestCase):
        def test_conv(self):
            node_occurrence = {
                torch.ops.quantized_decomposed.quantize_per_channel: 1,
                torch.ops.aten.conv2d.default: 1,
            }
            node_list = [ns.call_function(torch.ops.aten.relu)]
            self._test_quantizer(M(), (x,), q, node_occurrence, node_list)

    def test_free(case, m):
        check_nodes(case, m, {torch.ops.aten.hardtanh: 1})
        via_helper(case, m, {torch.ops.aten.linear: 1})
    """
    )
    assert rows(ql101(src)) == [22, 25, 29, 30]


def test_helper_in_another_module_and_in_a_base_class_there(tmp_path):
    # The file prefilter passes on its own trigger text (`expected_node_occurrence=`); a file
    # without any is not read (knowing other modules' helper names needs their summaries).
    from tests.conftest import write_package

    pkg = write_package(
        tmp_path,
        "pkg",
        testing=textwrap.dedent(HELPER),
        test_conv=(
            "import torch\nfrom pkg.testing import QuantTestCase, check_nodes\n\n"
            "class TestConv(QuantTestCase):\n"
            "    def test_conv(self):\n"
            "        occ = {torch.ops.quantized_decomposed.quantize_per_channel: 1}\n"
            "        self._test_quantizer(M(), (x,), q, occ)\n"
            "        check_nodes(self, m, {torch.ops.aten.hardtanh: 1})\n"
            "        self._test_quantizer(M(), (x,), q, expected_node_occurrence={})\n"
        ),
    )
    from qlint.engine import check_source
    from tests.conftest import settings_for

    user = pkg / "test_conv.py"
    result = check_source(user.read_bytes(), str(user), settings_for(("QL101",)))
    assert rows(result.diagnostics) == [6, 8]


def test_helper_arguments_that_reach_no_sink_stay_quiet():
    src = (
        HELPER
        + """
    class TestConv(QuantTestCase):
        def test_conv(self):
            ops = {torch.ops.aten.relu: 1}
            self._test_quantizer(M(), ops, q, {torch.ops.aten.relu.default: 1})
            self.run_eager(torch.ops.aten.relu, {torch.ops.aten.relu: 1})
            self._test_quantizer(M(), (x,), q, *rest, {torch.ops.aten.hardtanh: 1})

    def rebinding(case, m, occurrence):
        occurrence = dict(occurrence)
        occurrence = {k: v for k, v in occurrence.items()}
        case.checkGraphModuleNodes(m, expected_node_occurrence=occurrence)

    def use(case, m):
        rebinding(case, m, {torch.ops.aten.relu: 1})
        unknown_helper(case, m, {torch.ops.aten.relu: 1})
    """
    )
    assert ql101(src) == []


def test_keyword_sink_of_any_callee_is_not_skipped_by_the_line_prefilter():
    src = """
        import torch

        def check(self, m):
            self.assert_nodes(
                m,
                expected_node=torch.ops.aten.relu,
            )
            verify(m, expected_node_list=[torch.ops.aten.hardtanh])
        """
    assert rows(ql101(src)) == [7, 9]


# -- 11: compiler modules stay exempt, except for overloads they insert themselves -------


def test_compiler_module_matching_the_packet_of_an_overload_it_inserts(tmp_path):
    from qlint.engine import check_source
    from tests.conftest import settings_for, write_package

    src = textwrap.dedent(
        """
        import torch
        aten = torch.ops.aten

        def decompose(gm):
            for node in gm.graph.nodes:
                if node.target == aten.hardtanh:
                    with gm.graph.inserting_before(node):
                        new = gm.graph.call_function(aten.clamp.default, node.args)
                    node.replace_all_uses_with(new)

        def fuse(gm):
            for node in gm.graph.nodes:
                if node.target == aten.clamp and node.args[0].target == aten.relu:
                    pass
        """
    )
    pkg = write_package(tmp_path, "torch._inductor.fx_passes", mypass=src)
    path = pkg / "mypass.py"
    result = check_source(path.read_bytes(), str(path), settings_for(("QL1",)))
    # `aten.clamp` never meets the `aten.clamp.default` nodes this module inserts; the
    # packets it only compares (hardtanh, relu) stay exempt, and so does its insertion.
    assert [(d.code, d.range.start.row) for d in result.diagnostics] == [("QL101", 14)]
    assert "aten.clamp" in result.diagnostics[0].message


def test_compiler_module_inserting_both_forms_or_only_packets_is_quiet():
    src = """
        import torch
        from torch._inductor.pattern_matcher import CallFunction
        aten = torch.ops.aten

        def rewrite(gm, node):
            gm.graph.call_function(aten.clamp.default, node.args)
            gm.graph.call_function(aten.clamp, node.args)
            gm.graph.call_function(aten.unsqueeze, (node, 0))
            if node.target == aten.clamp or node.target == aten.unsqueeze:
                pass
        """
    assert lint(src, select=("QL1",)) == []
    # The same module without the second insertion: the packet cannot meet the overload.
    flagged = lint(src.replace("gm.graph.call_function(aten.clamp, node.args)", "pass"), select=("QL1",))
    assert [(d.code, d.range.start.row) for d in flagged] == [("QL101", 10)]


# -- 15: the project's own insertion wrappers --------------------------------------------

GRAPH_UTILS = """
import torch

def insert_op(graph, op, args, kwargs=None):
    return graph.call_function(op, args, kwargs or {})

def replace_with(node, target):
    with node.graph.inserting_before(node):
        new = node.graph.create_node("call_function", target, node.args)
    node.replace_all_uses_with(new)
    return new

def expect(op):
    from torch.testing._internal.common_quantization import NodeSpec as ns
    return ns.call_function(op)
"""


def test_packet_inserted_through_a_wrapper_is_a_ql102_finding(tmp_path):
    from qlint.engine import check_source
    from tests.conftest import settings_for, write_package

    pkg = write_package(
        tmp_path,
        "pkg",
        graph_utils=GRAPH_UTILS,
        passes=(
            "import torch\nfrom torch.export import export\n"
            "from pkg.graph_utils import insert_op, replace_with, expect\n"
            "\ndef rewrite(gm, node):\n"
            "    insert_op(gm.graph, torch.ops.aten.relu, (node,))\n"
            "    replace_with(node, target=torch.ops.quantized_decomposed.dequantize_per_channel)\n"
            "    insert_op(gm.graph, torch.ops.aten.relu.default, (node,))\n"
            "    spec = expect(torch.ops.aten.hardtanh)\n"
            "    node.target = torch.ops.aten.hardtanh.default\n"
        ),
    )
    path = pkg / "passes.py"
    result = check_source(path.read_bytes(), str(path), settings_for(("QL102",)))
    assert [(d.range.start.row, d.range.start.col) for d in result.diagnostics] == [(6, 24), (7, 30)]
    # The fix appends the overload where the packet is passed.
    assert result.diagnostics[0].fix.edits[0].content == ".default"


def test_wrapper_in_the_same_module():
    src = (
        GRAPH_UTILS
        + """
def rewrite(gm, node):
    insert_op(gm.graph, torch.ops.aten.relu, (node,))
    return insert_op(gm.graph, torch.ops.aten.relu.default, (node,))
"""
    )
    assert [d.range.start.row for d in lint(src, select=("QL102",))] == [18]


def _check_in_package(tmp_path, select, target, **modules):
    from qlint.engine import check_source
    from tests.conftest import settings_for, write_package

    pkg = write_package(tmp_path, "pkg", **{k: textwrap.dedent(v) for k, v in modules.items()})
    path = pkg / f"{target}.py"
    return check_source(path.read_bytes(), str(path), settings_for(select))


MATCHER = """
    import torch

    def count_relus(gm):
        return sum(n.target == torch.ops.aten.relu for n in gm.graph.nodes)
"""


def test_packet_the_project_inserts_elsewhere_is_quiet_in_the_matcher(tmp_path):
    # The project builds its own graphs in legacy FX mode and inserts the packet there.
    inserter = """
        import torch
        from torch.fx import symbolic_trace

        def add_relu(model, node):
            gm = symbolic_trace(model)
            gm.graph.call_function(torch.ops.aten.relu, (node,))
            return gm
    """
    result = _check_in_package(tmp_path, ("QL1",), "matcher", inserter=inserter, matcher=MATCHER)
    assert result.diagnostics == []
    # The matcher's result depends on the module that inserts the packet.
    assert any(p.endswith("inserter.py") for p in result.dependencies)


def test_packet_inserted_elsewhere_into_export_graphs_leaves_the_matcher_flagged(tmp_path):
    # QL102 reports that insertion; once it is fixed the matcher misses the node, so the
    # matcher is reported too (and `qlint fix` stays idempotent across modules).
    inserter = """
        import torch
        from torch.export import export

        def add_relu(gm, node):
            gm.graph.call_function(torch.ops.aten.relu, (node,))
    """
    result = _check_in_package(tmp_path, ("QL1",), "matcher", inserter=inserter, matcher=MATCHER)
    assert [(d.code, d.range.start.row) for d in result.diagnostics] == [("QL101", 5)]


def test_project_inserting_only_the_overload_or_another_packet_leaves_the_matcher_flagged(tmp_path):
    inserter = """
        import torch

        def add_relu(gm, node):
            gm.graph.call_function(torch.ops.aten.relu.default, (node,))
            gm.graph.call_function(torch.ops.aten.hardtanh, (node,))
            return "torch.ops.aten.relu"
    """
    result = _check_in_package(tmp_path, ("QL101",), "matcher", inserter=inserter, matcher=MATCHER)
    assert [d.range.start.row for d in result.diagnostics] == [5]


# A legacy FX pass that inserts through the project's own wrapper, imported from another
# module: its text spells no insertion of its own.
LEGACY_WRAPPER_USER = """
    import torch
    from torch.fx import symbolic_trace
    from pkg.graph_utils import insert_op

    def add_relu(model, node):
        gm = symbolic_trace(model)
        insert_op(gm.graph, OP, (node,))
        return gm
"""


def _through_wrapper(tmp_path, op, user=LEGACY_WRAPPER_USER, target="matcher", select=("QL1",)):
    modules = {"graph_utils": GRAPH_UTILS, "legacy": user.replace("OP", op), "matcher": MATCHER}
    result = _check_in_package(tmp_path, select, target, **modules)
    return result, [(d.code, d.range.start.row) for d in result.diagnostics]


@pytest.mark.parametrize("imported", ["from pkg.graph_utils import insert_op", "from .graph_utils import insert_op"])
def test_packet_the_project_inserts_through_its_own_wrapper_elsewhere_is_quiet(tmp_path, imported):
    user = LEGACY_WRAPPER_USER.replace("from pkg.graph_utils import insert_op", imported)
    result, found = _through_wrapper(tmp_path, "torch.ops.aten.relu", user)
    assert found == []
    assert any(p.endswith("legacy.py") for p in result.dependencies)
    # The pass itself inserts into legacy graphs, which carry packets: QL102 is quiet there.
    assert _through_wrapper(tmp_path, "torch.ops.aten.relu", target="legacy")[1] == []


@pytest.mark.parametrize("op", ["torch.ops.aten.relu.default", "torch.ops.aten.hardtanh"])
def test_wrapper_inserting_the_overload_or_another_packet_leaves_the_matcher_flagged(tmp_path, op):
    assert _through_wrapper(tmp_path, op)[1] == [("QL101", 5)]


def test_wrapper_inserting_the_packet_into_export_graphs_leaves_the_matcher_flagged(tmp_path):
    # QL102 reports the insertion through the wrapper: once fixed, the matcher would miss it.
    exported = LEGACY_WRAPPER_USER.replace("from torch.fx import symbolic_trace", "from torch.export import export")
    exported = exported.replace("symbolic_trace(model)", "export(model, ()).module()")
    assert _through_wrapper(tmp_path, "torch.ops.aten.relu", exported)[1] == [("QL101", 5)]
    assert _through_wrapper(tmp_path, "torch.ops.aten.relu", exported, "legacy")[1] == [("QL102", 8)]


def test_packet_handed_to_a_project_helper_that_inserts_nothing_leaves_the_matcher_flagged(tmp_path):
    # The same call shape, but `log_op` only records the op: no graph gets the packet.
    user = LEGACY_WRAPPER_USER.replace("import insert_op", "import log_op").replace("insert_op(", "log_op(")
    modules = {"graph_utils": GRAPH_UTILS + "\ndef log_op(graph, op, args):\n    print(op)\n"}
    modules |= {"legacy": user.replace("OP", "torch.ops.aten.relu"), "matcher": MATCHER}
    result = _check_in_package(tmp_path, ("QL101",), "matcher", **modules)
    assert [d.range.start.row for d in result.diagnostics] == [5]


def test_wrapper_inherited_from_a_base_class_of_another_module(tmp_path):
    base = "class GraphPass:\n    def insert(self, graph, op, args):\n        return graph.call_function(op, args)\n"
    user = """
        import torch
        from torch.fx import symbolic_trace
        from pkg.base import GraphPass

        class AddRelu(GraphPass):
            def run(self, model, node):
                gm = symbolic_trace(model)
                self.insert(gm.graph, torch.ops.aten.relu, (node,))
    """
    kw = {"base": base, "legacy": user, "matcher": MATCHER}
    assert _check_in_package(tmp_path, ("QL101",), "matcher", **kw).diagnostics == []


def test_wrapper_user_edited_to_insert_the_overload_flags_the_matcher_again(tmp_path):
    from qlint.engine import check_source
    from tests.conftest import old_file, settings_for

    assert _through_wrapper(tmp_path, "torch.ops.aten.relu")[1] == []
    legacy = tmp_path / "pkg" / "legacy.py"
    old_file(legacy, textwrap.dedent(LEGACY_WRAPPER_USER.replace("OP", "torch.ops.aten.relu.default")))
    path = tmp_path / "pkg" / "matcher.py"
    result = check_source(path.read_bytes(), str(path), settings_for(("QL101",)))
    assert [d.range.start.row for d in result.diagnostics] == [5]


# -- 14: graphs normalised to packets elsewhere in the project ---------------------------


def test_matcher_called_after_strip_overloads_elsewhere_is_quiet(tmp_path):
    backend = """
        from torch._functorch.compile_utils import strip_overloads
        from pkg import matcher
        from pkg.passes import FoldPass

        def my_backend(gm, example_inputs):
            strip_overloads(gm)
            matcher.count_relus(gm)
            FoldPass()(gm)
            return gm.forward
    """
    passes = """
        import torch

        class FoldPass:
            def __call__(self, gm):
                for n in gm.graph.nodes:
                    if n.target == torch.ops.aten.hardtanh:
                        pass
    """
    kw = {"backend": backend, "matcher": MATCHER, "passes": passes}
    assert _check_in_package(tmp_path, ("QL101",), "matcher", **kw).diagnostics == []
    assert _check_in_package(tmp_path, ("QL101",), "passes", **kw).diagnostics == []


# How a normaliser may spell its call of `strip_overloads`: the name resolved, not the callee's
# last part read (`project_normalisers._may_name_strip` passes over only what cannot resolve
# to it): a module-level alias, a class attribute called through `self`, the module's own
# attribute.
_SPELLED_STRIPS = {
    "alias": """
        from torch._functorch.compile_utils import strip_overloads
        from pkg import matcher

        so = strip_overloads

        def my_backend(gm, example_inputs):
            so(gm)
            matcher.count_relus(gm)
            return gm.forward
    """,
    "self": """
        from torch._functorch.compile_utils import strip_overloads
        from pkg import matcher

        class Backend:
            strip = strip_overloads

            def __call__(self, gm, example_inputs):
                self.strip(gm)
                matcher.count_relus(gm)
                return gm.forward
    """,
    "module": """
        import torch._functorch.compile_utils as cu
        from pkg import matcher

        def my_backend(gm, example_inputs):
            cu.strip_overloads(gm)
            matcher.count_relus(gm)
            return gm.forward
    """,
}


@pytest.mark.parametrize("spelling", sorted(_SPELLED_STRIPS))
def test_matcher_called_after_a_strip_however_spelled_is_quiet(tmp_path, spelling):
    backend = _SPELLED_STRIPS[spelling]
    result = _check_in_package(tmp_path, ("QL101",), "matcher", backend=backend, matcher=MATCHER)
    assert result.diagnostics == []
    unstripped = backend.replace("so(gm)", "print(gm)").replace("self.strip(gm)", "print(gm)")
    unstripped = unstripped.replace("cu.strip_overloads(gm)", "print(gm)")
    result = _check_in_package(tmp_path, ("QL101",), "matcher", backend=unstripped, matcher=MATCHER)
    assert [d.range.start.row for d in result.diagnostics] == [5]


def test_matcher_after_a_call_of_another_name_of_a_module_is_flagged(tmp_path):
    # `cu.strip(gm)` names `pkg.cu.strip`, whatever that module binds it to: no normaliser,
    # as before (the callee's last part decides once the chain has two parts).
    cu = """
        from torch._functorch.compile_utils import strip_overloads
        strip = strip_overloads
    """
    backend = """
        from pkg import cu, matcher

        def my_backend(gm, example_inputs):
            cu.strip(gm)
            matcher.count_relus(gm)
            return gm.forward
    """
    result = _check_in_package(tmp_path, ("QL101",), "matcher", backend=backend, matcher=MATCHER, cu=cu)
    assert [d.range.start.row for d in result.diagnostics] == [5]


def test_matcher_under_a_normalising_decorator_is_quiet(tmp_path):
    deco = """
        import functools

        def packet_graph(fn):
            @functools.wraps(fn)
            def wrapper(gm, *args):
                for n in gm.graph.nodes:
                    if hasattr(n.target, "overloadpacket"):
                        n.target = n.target.overloadpacket
                return fn(gm, *args)
            return wrapper
    """
    matcher = """
        import torch
        from pkg.normalise import packet_graph

        @packet_graph
        def count_relus(gm):
            return sum(n.target == torch.ops.aten.relu for n in gm.graph.nodes)

        def count_hardtanh(gm):
            return sum(n.target == torch.ops.aten.hardtanh for n in gm.graph.nodes)
    """
    result = _check_in_package(tmp_path, ("QL101",), "matcher", normalise=deco, matcher=matcher)
    assert [d.range.start.row for d in result.diagnostics] == [10]


# A test script beside no `__init__.py` (torch-mlir's `python/test/debug/lockstep_basic.py`)
# decorated with a backend maker from a namespace package (`python/torch_mlir/dynamo.py`,
# no `__init__.py` either) whose wrapper runs `strip_overloads` before the backend.
_NAMESPACE_BACKEND = """
    from torch._functorch.compile_utils import strip_overloads

    def make_backend(user_backend):
        def wrapper_backend(gm, example_inputs):
            strip_overloads(gm)
            return user_backend(gm, example_inputs)
        return wrapper_backend

    def make_logged(user_backend):
        def wrapper_backend(gm, example_inputs):
            print(gm.graph)
            return user_backend(gm, example_inputs)
        return wrapper_backend
"""

_NAMESPACE_SCRIPT = """
    import torch
    from torch_mlir.dynamo import make_backend, make_logged

    @make_backend
    def div_as_mul(gm, example_inputs):
        for node in gm.graph.nodes:
            if node.target == torch.ops.aten.div:
                node.target = torch.ops.aten.mul
        return gm

    @make_logged
    def logged(gm, example_inputs):
        for node in gm.graph.nodes:
            if node.target == torch.ops.aten.div:
                node.target = torch.ops.aten.mul
        return gm

    def plain(gm):
        for node in gm.graph.nodes:
            if node.target == torch.ops.aten.div:
                node.target = torch.ops.aten.mul

    PASSES = [plain]  # a module under `test/`: a helper nothing names would be dead code
"""


def _namespace_layout(tmp_path):
    (tmp_path / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    backend = tmp_path / "python" / "torch_mlir"
    backend.mkdir(parents=True)
    (backend / "dynamo.py").write_text(textwrap.dedent(_NAMESPACE_BACKEND))
    tests = tmp_path / "python" / "test" / "debug"
    tests.mkdir(parents=True)
    script = tests / "lockstep.py"
    script.write_text(textwrap.dedent(_NAMESPACE_SCRIPT))
    return script


@pytest.mark.parametrize("code", ["QL101", "QL102"])
def test_script_under_a_normalising_decorator_of_a_namespace_package_is_quiet(tmp_path, code):
    from qlint.engine import check_source
    from tests.conftest import settings_for

    script = _namespace_layout(tmp_path)
    result = check_source(script.read_bytes(), str(script), settings_for((code,)))
    # Quiet under the normalising decorator; loud under one that does not normalise, and
    # in the undecorated function.
    row = 8 if code == "QL101" else 9
    assert [d.range.start.row for d in result.diagnostics] == [row + 7, row + 13]


def test_a_decorator_module_that_starts_to_normalise_is_a_dependency_of_the_script(tmp_path):
    # An editor checks the script while the backend maker does not normalise yet: the module
    # is read all the same, and its edit must bring the script's check up again.
    from qlint.analysis.names.project import ProjectIndex
    from qlint.engine import check_source
    from tests.conftest import settings_for

    script = _namespace_layout(tmp_path)
    backend = tmp_path / "python" / "torch_mlir" / "dynamo.py"
    backend.write_text(backend.read_text().replace("strip_overloads(gm)", "print(gm)"))
    project = ProjectIndex()
    first = check_source(script.read_bytes(), str(script), settings_for(("QL101",)), project)
    assert [d.range.start.row for d in first.diagnostics] == [8, 15, 21]
    assert str(backend) in first.dependencies


def test_decorator_named_like_the_normaliser_elsewhere_does_not_excuse(tmp_path):
    # The import resolves to no file of the project (an installed package of that name):
    # nothing is known of what its wrapper does.
    from qlint.engine import check_source
    from tests.conftest import settings_for

    script = _namespace_layout(tmp_path)
    script.write_text(script.read_text().replace("from torch_mlir.dynamo", "from other_pkg.dynamo"))
    result = check_source(script.read_bytes(), str(script), settings_for(("QL101",)))
    assert [d.range.start.row for d in result.diagnostics] == [8, 15, 21]


def test_normaliser_that_does_not_call_the_matcher_leaves_it_flagged(tmp_path):
    backend = """
        from torch._functorch.compile_utils import strip_overloads
        from pkg import matcher

        def my_backend(gm, example_inputs):
            strip_overloads(gm)
            return gm.forward

        def other(gm):
            return matcher.count_relus(gm)
    """
    result = _check_in_package(tmp_path, ("QL101",), "matcher", backend=backend, matcher=MATCHER)
    assert [d.range.start.row for d in result.diagnostics] == [5]


def test_normaliser_whose_strip_overloads_sits_inside_another_call_is_read(tmp_path):
    # The call that normalises is an argument of another call, spelled through its module,
    # and the call of the matcher follows in a branch: both are found where they are nested.
    backend = """
        import torch._functorch.compile_utils as cu
        from pkg import matcher

        def my_backend(gm, example_inputs, log):
            log(cu.strip_overloads(gm))
            if example_inputs:
                matcher.count_relus(gm)
            return gm.forward
    """
    result = _check_in_package(tmp_path, ("QL101",), "matcher", backend=backend, matcher=MATCHER)
    assert result.diagnostics == []


def test_strip_overloads_named_but_not_called_leaves_the_matcher_flagged(tmp_path):
    # `strip_overloads` only handed on, and `overloadpacket` only read (no node target
    # rewritten): no body normalises, so the function calling the matcher is no normaliser.
    backend = """
        from torch._functorch.compile_utils import strip_overloads
        from pkg import matcher

        PASSES = [strip_overloads]

        def my_backend(gm, example_inputs):
            packets = [n.target.overloadpacket for n in gm.graph.nodes]
            matcher.count_relus(gm)
            return packets
    """
    result = _check_in_package(tmp_path, ("QL101",), "matcher", backend=backend, matcher=MATCHER)
    assert [d.range.start.row for d in result.diagnostics] == [5]


# -- the prefilters are exact: walking every row finds nothing more ----------------------

_PREFILTER_CASES = [
    textwrap.dedent(HELPER)
    + """
class TestConv(QuantTestCase):
    def test_conv(self):
        occ = {torch.ops.quantized_decomposed.quantize_per_channel: 1}
        self._test_quantizer(M(), (x,), q, occ)
        via_helper(self, m, {torch.ops.aten.linear: 1})
""",
    """
import torch
aten = torch.ops.aten

class P:
    def __init__(self):
        self.q_ops = {aten.relu, aten.linear.default}

    def call(self, gm):
        for n in gm.graph.nodes:
            t = n.target
            if t in self.q_ops or (n
                    .target) == aten.hardtanh or getattr(n, 'target') is aten.sym_size:
                pass
            verify(m, expected_node=aten.clamp)
            match t:
                case aten.mul:
                    pass
""",
    GRAPH_UTILS
    + """
def rewrite(gm, node):
    insert_op(gm.graph,
              torch.ops.aten.relu, (node,))
    node.target = torch.ops.aten.relu
""",
]


@pytest.mark.parametrize("src", _PREFILTER_CASES)
def test_prefilters_never_skip_a_finding(src, monkeypatch):
    from qlint.analysis import context
    from qlint.analysis.graphs import fx_targets
    from qlint.rules.ql101_packet_matcher import PacketMatcher
    from qlint.rules.ql102_packet_insertion import PacketInsertion

    text = textwrap.dedent(src)
    found = [(d.code, d.range.start.row, d.range.start.col) for d in lint(text, select=("QL1",))]
    codes_found = {c for c, _, _ in found}
    assert codes_found and codes_found <= {"QL101", "QL102"}, found
    assert all(r.triggered_by(text) for r in (PacketMatcher(), PacketInsertion()) if r.code in codes_found)
    every_row = frozenset(range(1, text.count("\n") + 2))
    monkeypatch.setattr(context.FileContext, "lines_containing", lambda self, *needles: every_row)
    monkeypatch.setattr(fx_targets, "_rows", lambda ctx, pattern: every_row)
    unfiltered = [(d.code, d.range.start.row, d.range.start.col) for d in lint(text, select=("QL1",))]
    assert unfiltered == found


# -- packets of ops torchao inserts as packets: reported only on graphs that carry overloads --

FRESH = """
    import torch
    from torch.export import export
    from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e

    def count(gm):
        return sum(n.target == torch.ops.torchao.quantize_affine for n in gm.graph.nodes)

    def run(m, args):
        {body}
"""


@pytest.mark.parametrize(
    "body, expected",
    [
        # Fresh from convert_pt2e: the graph carries the packet torchao inserted.
        ("m = convert_pt2e(m)\n        return count(m)", []),
        # An export of something else before the call does not reach the matcher.
        ("m = convert_pt2e(m)\n        ep = export(m, args)\n        save(ep)\n        return count(m)", []),
        # Re-exported before the match: nodes carry `.default`.
        ("m = convert_pt2e(m)\n        ep = export(m, args)\n        return count(ep.module())", [7]),
        ("return count(export(convert_pt2e(m), args).module())", [7]),
    ],
)
def test_packet_torchao_inserts_is_reported_only_where_the_graph_is_re_exported(body, expected):
    assert rows(ql101(FRESH.format(body=body))) == expected


def test_packet_torchao_inserts_matched_in_a_function_that_exports_or_reads_a_program():
    src = """
        import torch

        def after_export(m, args):
            gm = torch.export.export(m, args).module()
            return [n for n in gm.graph.nodes if n.target == torch.ops.torchao.dequantize_affine]

        def on_program(ep):
            return [n for n in ep.graph_module.graph.nodes if n.target == torch.ops.torchao.dequantize_affine]

        def converted_after_export(m, args):
            m = convert_pt2e(prepare_pt2e(torch.export.export(m, args).module(), q))
            return [n for n in m.graph.nodes if n.target == torch.ops.torchao.dequantize_affine]
        """
    assert rows(ql101(src)) == [6, 9]


def test_own_packet_insertion_excuses_the_matcher_only_where_the_graph_carries_packets():
    # A known op inserted as a packet into graphs where convert inserted `.default`: both the
    # insertion and the matcher miss those nodes (torchao's qat_utils).
    src = """
        import torch

        def duplicate_dq(m):
            dq_op = torch.ops.quantized_decomposed.dequantize_per_tensor
            for n in m.graph.nodes:
                if n.target != dq_op:
                    continue
                m.graph.create_node("call_function", dq_op, n.args, n.kwargs)
        """
    # The insertion runs only where the packet guard holds, which is never on such graphs
    # (QL101's finding): QL102 stays quiet until the guard is fixed to the overload.
    assert [(d.code, d.range.start.row) for d in lint(src, select=("QL101", "QL102"))] == [("QL101", 7)]
    fixed = src.replace("n.target != dq_op", "n.target != dq_op.default")
    assert [(d.code, d.range.start.row) for d in lint(fixed, select=("QL101", "QL102"))] == [("QL102", 9)]
    # The project's own op, which nothing else inserts: the graph carries what it inserted.
    own = src.replace("quantized_decomposed.dequantize_per_tensor", "my_lib.my_dq")
    assert [d.code for d in lint(own, select=("QL101", "QL102"))] == ["QL102"]
    # Legacy FX graphs carry packets: neither is reported.
    legacy = src.replace("import torch\n", "import torch\n        from torch.fx import symbolic_trace\n")
    assert lint(legacy, select=("QL101", "QL102")) == []


OWN_OP = """
    import torch
    from torch.library import custom_op

    @custom_op("test_int4::quantize_int4", mutates_args=())
    def quantize_int4(x: torch.Tensor) -> torch.Tensor:
        return x

    def convert(model, node):
        model.graph.call_function(torch.ops.test_int4.quantize_int4, (node,))

    def test(self, m):
        self.checkGraphModuleNodes(m, expected_node_occurrence={CHECKED: 1})
"""


def test_op_the_module_defines_inserted_and_checked_as_a_packet_is_quiet():
    checked = OWN_OP.replace("CHECKED", "torch.ops.test_int4.quantize_int4")
    assert lint(checked, select=("QL101", "QL102")) == []
    # Inserted but consumed by nothing here: matchers elsewhere would key on `.default`.
    unchecked = OWN_OP.replace("CHECKED", "torch.ops.aten.relu.default")
    assert [d.code for d in lint(unchecked, select=("QL102",))] == ["QL102"]
    # An op defined elsewhere: the module is not its only consumer.
    elsewhere = checked.replace('"test_int4::quantize_int4"', '"test_int4::other"')
    assert [d.code for d in lint(elsewhere, select=("QL102",))] == ["QL102"]


FUSE_OWN = """
    import torch


    def fuse(gm):
        for n in gm.graph.nodes:
            if n.target == torch.ops.aten.t.default:
                for v in n.users:
                    if v.target == torch.ops.aten.mm.default:
                        new_op = torch.ops.aten.linear
                    else:
                        continue
                    with gm.graph.inserting_after(v):
                        fused = gm.graph.create_node("call_function", new_op, (v.args[0], n.args[0]))
                    v.replace_all_uses_with(fused)


    def fold_views(gm):
        for n in gm.graph.nodes:
            if n.op == "call_function" and n.target == torch.ops.aten.linear:
                n.args = (n.args[0].args[0], *n.args[1:])
    EXTRA"""


def test_matcher_for_the_packet_nodes_its_own_module_inserts_and_consumes_is_quiet():
    # QL102 leaves the insertion alone (the module's packet-keyed code consumes the nodes it
    # inserted), so the matcher that is that code is right too.
    assert lint(FUSE_OWN.replace("EXTRA", ""), select=("QL101", "QL102")) == []


@pytest.mark.parametrize(
    "change",
    [
        # another function of the module matches linear by its overload: the graph may carry
        # both forms, and QL102 reports the insertion
        lambda s: s.replace(
            "EXTRA",
            "\n\n    def count(gm):\n        return [n for n in gm.graph.nodes"
            " if n.target == torch.ops.aten.linear.default]\n",
        ),
        # the module erases or replaces nothing: its matcher is no consumer of what it inserted
        lambda s: s.replace("EXTRA", "").replace("v.replace_all_uses_with(fused)", "print(fused)"),
    ],
)
def test_matcher_of_an_insertion_qlint_reports_stays_loud(change):
    assert "QL101" in [d.code for d in lint(change(FUSE_OWN), select=("QL101", "QL102"))]


def test_packet_torchao_inserts_in_a_helper_called_on_an_exported_programs_nodes():
    src = """
        import torch

        def is_dq(n):
            return n.target == torch.ops.torchao.dequantize_affine

        def count(ep):
            return sum(is_dq(n) for n in ep.graph_module.graph.nodes)
        """
    assert rows(ql101(src)) == [5]
    # The caller walks an exported program elsewhere; the helper sees the converted module.
    elsewhere = src.replace(
        "return sum(is_dq(n) for n in ep.graph_module.graph.nodes)",
        "found = [is_dq(n) for n in converted.graph.nodes]\n            print(ep.graph_module)",
    )
    assert ql101(elsewhere) == []


# The dict of ExecuTorch's llama export (examples/qualcomm/oss_scripts/llama/llama.py), keyed
# on the packet torchao's convert_pt2e inserts and looked up on converted graphs; the function
# reads lowered programs' graphs only later, after the lookups.
FOLD = """
    import torch

    def fold(decode, mgr):
        PREP
        indices = {torch.ops.torchao.dequantize_affine: [0, 2, 3]}
        for node in WALKED.graph.nodes:
            print(indices[node.target])
        AFTER
"""


@pytest.mark.parametrize(
    "prep, walked, after, expected",
    [
        # Read only after the lookups, on the lowered programs: the lookups saw converted graphs.
        ("pass", "decode", "for ep in mgr.programs():\n            print(ep.graph_module)", []),
        ("pass", "decode", "print(mgr.exported_program())", []),
        # Of unknown origin, as the author wrote it: taken as fresh from convert_pt2e.
        ("pass", "decode", "pass", []),
        # Re-exported before the lookup: nodes carry `.default`.
        ("decode = torch.export.export(decode, ()).module()", "decode", "pass", [6]),
        # An edge program's graph walked by the loop itself, or read before it.
        ("pass", "mgr.exported_program()", "pass", [6]),
        ("decode = mgr.exported_program().graph_module", "decode", "pass", [6]),
        ("print(mgr.exported_program().graph_module)", "decode", "pass", [6]),
    ],
)
def test_packet_torchao_inserts_looked_up_before_any_exported_program_is_read(prep, walked, after, expected):
    src = FOLD.replace("PREP", prep).replace("WALKED", walked).replace("AFTER", after)
    assert rows(ql101(src)) == expected


def test_exported_program_read_on_a_later_row_that_still_reaches_the_match():
    src = """
        import torch
        DQ = torch.ops.torchao.dequantize_affine

        def in_a_loop(gm, mgr):
            for _ in range(2):
                found = [n for n in gm.graph.nodes if n.target == DQ]
                gm = mgr.exported_program().graph_module

        def same_statement(ep):
            return [n.target == DQ
                    for n in ep.graph_module.graph.nodes]

        def in_the_test(ep):
            if any(n.target == DQ
                   for n in ep.graph_module.graph.nodes):
                return True

        def outer(ep):
            def is_dq(n):
                return n.target == DQ
            return [is_dq(n) for n in ep.graph_module.graph.nodes]
        """
    assert rows(ql101(src)) == [7, 11, 15, 21]
    # Later in an `if` body or a `try` handler: after the match, not before it.
    later = """
        import torch
        DQ = torch.ops.torchao.dequantize_affine

        def branch(gm, ep):
            if any(n.target == DQ for n in gm.graph.nodes):
                print(ep.graph_module)

        def handler(gm, ep):
            try:
                found = [n for n in gm.graph.nodes if n.target == DQ]
            except KeyError:
                print(ep.graph_module)
        """
    assert ql101(later) == []


def test_exported_program_read_after_the_match_is_the_one_whose_graph_it_walked():
    src = """
        import torch
        DQ = torch.ops.torchao.dequantize_affine

        def same_program(ep):
            found = [n for n in ep.graph.nodes if n.target == DQ]
            return found, ep.graph_module

        class Folder:
            def fold(self):
                for n in self.ep.graph.nodes:
                    if n.target == DQ:
                        print(n)
                print(self.ep.exported_program())
        """
    assert rows(ql101(src)) == [6, 12]
    # Another program read later, or the name bound again before the read: unknown origin.
    other = src.replace("return found, ep.graph_module", "return found, other.graph_module").replace(
        "print(self.ep.exported_program())", "self.ep = mgr\n                print(self.ep.exported_program())"
    )
    assert ql101(other) == []


def test_local_helper_that_never_runs_is_quiet():
    src = """
        import torch

        def test_buffers(self, gm):
            def count_copies(gm):
                return sum(node.target == torch.ops.aten.copy_ for node in gm.graph.nodes)

            return CALL
        """
    # Defined and never named again: the body cannot run.
    assert ql101(src.replace("CALL", "None")) == []
    # Called, or handed on as a callback: it runs.
    assert rows(ql101(src.replace("CALL", "count_copies(gm)"))) == [6]
    assert rows(ql101(src.replace("CALL", "run_on(gm, count_copies)"))) == [6]
    # Decorated: a registry keeps it, and it runs.
    decorated = src.replace("            def count_copies", "            @register\n            def count_copies")
    assert rows(ql101(decorated.replace("CALL", "None"))) == [7]


# SHARK-Studio's Stable Diffusion fine-tuning: a backend under torch-mlir's
# `make_simple_dynamo_backend` (installed, not the project's), whose wrapper strips the graph
# before calling it, hands the graph to a pass of the same module.
_TORCH_MLIR_BACKEND = """
    import torch
    from {origin} import make_simple_dynamo_backend

    def transform_fx(fx_g):
        for node in fx_g.graph.nodes:
            if node.target == torch.ops.aten.empty:
                fx_g.graph.call_function(torch.ops.aten.zero_, args=(node,))

    def not_called_there(fx_g):
        for node in fx_g.graph.nodes:
            if node.target == torch.ops.aten.empty:
                fx_g.graph.call_function(torch.ops.aten.zero_, args=(node,))

    @make_simple_dynamo_backend
    def backend(fx_graph, example_inputs):
        transform_fx(fx_graph)
        for node in fx_graph.graph.nodes:
            if node.target == torch.ops.aten.div:
                fx_graph.graph.call_function(torch.ops.aten.zero_, args=(node,))
        return fx_graph
"""


@pytest.mark.parametrize("code", ["QL101", "QL102"])
def test_under_torch_mlirs_stripping_backend_decorator_is_quiet(tmp_path, code):
    src = _TORCH_MLIR_BACKEND.format(origin="torch_mlir.dynamo")
    rows = [d.range.start.row for d in _check_in_package(tmp_path, (code,), "sd", sd=src).diagnostics]
    # Only the pass the decorated backend does not call still sees overloads.
    assert rows == ([12] if code == "QL101" else [13])


@pytest.mark.parametrize(
    "change",
    [
        ("    return fx_graph", "    return fx_graph\n\ndef plain(g):\n    transform_fx(g)"),  # another caller
        ("    transform_fx(fx_graph)", "    transform_fx(fx_graph.copy())"),  # another graph
        ("    transform_fx(fx_graph)", "    fx_graph = fx_graph.nested\n    transform_fx(fx_graph)"),  # rebound
        ("    transform_fx(fx_graph)", "    passes = [transform_fx]"),  # handed on
    ],
)
def test_an_insertion_its_library_normalised_caller_may_not_strip_first_is_reported(tmp_path, change):
    src = textwrap.dedent(_TORCH_MLIR_BACKEND.format(origin="torch_mlir.dynamo"))
    assert change[0] in src
    src = src.replace(*change)
    rows = [d.range.start.row for d in _check_in_package(tmp_path, ("QL102",), "sd", sd=src).diagnostics]
    assert 8 in rows


def test_a_decorator_of_that_name_from_elsewhere_does_not_excuse(tmp_path):
    src = _TORCH_MLIR_BACKEND.format(origin="other_pkg.dynamo")
    rows = [d.range.start.row for d in _check_in_package(tmp_path, ("QL101",), "sd", sd=src).diagnostics]
    assert rows == [7, 12, 19]
