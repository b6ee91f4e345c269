"""QL101 on ops a subclass gives an attribute that a base class's method (here, in another
module) hands to an exact sink: ExecuTorch's cadence `RemoveOrReplacePassInterface.call`
loops `for target in self.targets:` into `graph.find_nodes(op=..., target=target)`, and a
pass listing the `transposed_convolution` packet among its `targets` skipped every
transposed convolution until 9116df7ea715. The finding sits on the subclass's packet."""

from __future__ import annotations

import os
import textwrap

import pytest

from qlint.engine import check_source
from tests.conftest import check_file, settings_for, write_package

# The cadence interface as it stood before the fix (abridged).
BASE = """
    from abc import abstractmethod
    import torch

    class RemoveOrReplacePassInterface:
        @property
        @abstractmethod
        def targets(self):
            raise NotImplementedError("`targets` must be implemented")

        @abstractmethod
        def maybe_remove_or_replace(self, node) -> bool:
            raise NotImplementedError

        def call(self, graph_module):
            changed = False
            for target in self.targets:
                for module in filter(lambda m: isinstance(m, torch.fx.GraphModule), graph_module.modules()):
                    for node in module.graph.find_nodes(op="call_function", target=target):
                        changed |= self.maybe_remove_or_replace(node)
            return changed
    """

# A pass of another module; `{targets}` is its `targets` declaration.
PASS = """
    from executorch.exir.dialects._ops import ops as exir_ops
    from pkg.pass_utils import RemoveOrReplacePassInterface

    class ReplaceConvolutionOptionalArgsPass(RemoveOrReplacePassInterface):
    {targets}

        def maybe_remove_or_replace(self, node) -> bool:
            return node.target == exir_ops.edge.cadence.conv1d.default
    """

PROPERTY = """
    @property
    def targets(self):
        return [
            exir_ops.edge.cadence.conv1d.default,
            exir_ops.edge.cadence.transposed_convolution,
        ]
"""


def _check(tmp_path, base: str, subclass: str, module: str = "replace_ops"):
    pkg = write_package(
        tmp_path, "pkg", pass_utils=textwrap.dedent(base), **{module: textwrap.dedent(subclass).lstrip()}
    )
    user = pkg / f"{module}.py"
    result = check_source(user.read_bytes(), str(user), settings_for(("QL101",)))
    assert not result.errors, result.errors
    return result.diagnostics


def _pass(targets: str) -> str:
    return textwrap.dedent(PASS).replace("{targets}", textwrap.indent(textwrap.dedent(targets).strip(), "    "))


def test_packet_a_property_returns_into_the_base_class_loop_is_flagged(tmp_path):
    (d,) = _check(tmp_path, BASE, _pass(PROPERTY))
    assert d.range.start.row == 9  # the packet, where the fix goes
    assert d.message.startswith("`exir_ops.edge.cadence.transposed_convolution` is an OpOverloadPacket")
    (related,) = d.related
    assert os.path.basename(related.path) == "pass_utils.py" and related.range.start.row == 19
    assert related.message == (
        "each element of `self.targets` meets node targets here, in `RemoveOrReplacePassInterface.call`"
    )
    assert "`exir_ops.edge.cadence.transposed_convolution.default`" in d.fix.message


def test_a_class_attribute_instead_of_a_property_is_flagged(tmp_path):
    targets = "targets = [exir_ops.edge.cadence.conv1d.default, exir_ops.edge.cadence.transposed_convolution]"
    (d,) = _check(tmp_path, BASE, _pass(targets))
    assert d.range.start.row == 5


def test_a_method_returning_ops_the_base_calls_is_flagged(tmp_path):
    base = BASE.replace("self.targets:", "self.targets():")
    base = base.replace("@property\n        @abstractmethod", "@abstractmethod")
    targets = """
        def targets(self):
            ops = (exir_ops.edge.aten.relu, exir_ops.edge.aten.add.Tensor)
            return ops
    """
    (d,) = _check(tmp_path, base, _pass(targets))
    assert d.range.start.row == 6


def test_one_op_compared_with_node_targets_is_flagged(tmp_path):
    base = """
        class FoldPass:
            def call(self, gm):
                return [n for n in gm.graph.nodes if n.target == self.op]
        """
    subclass = """
        import torch
        from pkg.pass_utils import FoldPass

        class FoldRelu(FoldPass):
            op = torch.ops.aten.relu

            def replace(self, node):
                node.target = torch.ops.aten.hardtanh.default
        """
    (d,) = _check(tmp_path, base, subclass)
    assert d.range.start.row == 5


def test_through_a_class_between_them_in_the_same_module(tmp_path):
    subclass = """
        import torch
        from pkg.pass_utils import RemoveOrReplacePassInterface

        class Middle(RemoveOrReplacePassInterface):
            def maybe_remove_or_replace(self, node):
                return node.target is not None

        class FoldRelu(Middle):
            targets = {torch.ops.aten.relu, torch.ops.aten.hardtanh.default}
        """
    (d,) = _check(tmp_path, BASE, subclass)
    assert d.range.start.row == 9 and d.range.start.col == 15


QUIET_TARGETS = [
    # overloads: the keys nodes carry
    "targets = [exir_ops.edge.cadence.conv1d.default, exir_ops.edge.cadence.transposed_convolution.default]",
    # both forms of the op
    "targets = [exir_ops.edge.cadence.transposed_convolution, exir_ops.edge.cadence.transposed_convolution.default]",
    # read as a method, but the base reads an attribute
    "def targets(self):\n    return [exir_ops.edge.cadence.transposed_convolution]",
]


@pytest.mark.parametrize("targets", QUIET_TARGETS)
def test_declarations_that_match_stay_quiet(tmp_path, targets):
    assert _check(tmp_path, BASE, _pass(targets)) == []


QUIET_BASE_LOOPS = [
    # compared by name
    "if str(node.target) == str(target): pass",
    "if node.target.__name__ == target.__name__: pass",
    # normalised to the packet
    "if node.target.overloadpacket == target: pass",
    # packet-aware
    "if node.target in (target, target.default): pass",
    "if isinstance(target, OpOverloadPacket) and node.target in target.overloads(): pass",
]


@pytest.mark.parametrize("check", QUIET_BASE_LOOPS)
def test_base_classes_that_handle_packets_stay_quiet(tmp_path, check):
    base = f"""
        from torch._ops import OpOverloadPacket

        class RemoveOrReplacePassInterface:
            def call(self, gm):
                for target in self.targets:
                    for node in gm.graph.nodes:
                        {check}
        """
    assert _check(tmp_path, base, _pass(PROPERTY)) == []


def test_a_loop_name_rebound_in_the_method_stays_quiet(tmp_path):
    base = BASE.replace(
        "for target in self.targets:\n", "for target in self.targets:\n            target = normalise(target)\n"
    )
    assert _check(tmp_path, base, _pass(PROPERTY)) == []


def test_a_subclass_that_overrides_the_loop_stays_quiet(tmp_path):
    override = "def call(self, graph_module):\n    return [t.default for t in self.targets]\n"
    targets = textwrap.dedent(PROPERTY) + "\n" + override
    assert _check(tmp_path, BASE, _pass(targets)) == []


def test_the_same_property_on_an_unrelated_class_stays_quiet(tmp_path):
    subclass = _pass(PROPERTY).replace("(RemoveOrReplacePassInterface)", "")
    assert _check(tmp_path, BASE, subclass) == []


def test_the_base_class_module_reports_nothing(tmp_path):
    pkg = write_package(tmp_path, "pkg", pass_utils=textwrap.dedent(BASE), replace_ops=_pass(PROPERTY))
    base = pkg / "pass_utils.py"
    result = check_source(base.read_bytes(), str(base), settings_for(("QL101",)))
    assert result.diagnostics == []


@pytest.mark.parametrize(("op", "rows"), [("torch.ops.aten.relu", [5]), ("torch.ops.aten.relu.default", [])])
def test_one_op_handed_to_a_sink(tmp_path, op, rows):
    base = """
        class FoldPass:
            def call(self, gm):
                return list(gm.graph.find_nodes(op="call_function", target=self.op))
        """
    subclass = f"""
        import torch
        from pkg.pass_utils import FoldPass

        class FoldRelu(FoldPass):
            op = {op}

            def replace(self, node):
                node.target = torch.ops.aten.hardtanh.default
        """
    assert [d.range.start.row for d in _check(tmp_path, base, subclass)] == rows


def test_a_mixin_beside_the_base_that_defines_the_loop_stays_quiet(tmp_path):
    # `class P(Mixin, Interface)`: the mixin's `call` comes first in the resolution order.
    subclass = _pass(PROPERTY).replace(
        "class ReplaceConvolutionOptionalArgsPass(RemoveOrReplacePassInterface):",
        "class Mixin:\n    def call(self, graph_module):\n        return graph_module\n\n"
        "class ReplaceConvolutionOptionalArgsPass(Mixin, RemoveOrReplacePassInterface):",
    )
    assert _check(tmp_path, BASE, subclass) == []


def test_a_base_class_module_read_for_the_fact_is_a_dependency_of_the_check(tmp_path):
    # The base reached through a class of a third module handles packets, so the subclass's
    # check reports nothing: an edit of the base that compares with `==` alone must refresh
    # that result, though the subclass's module never imports the base's.
    base = """
        class FoldPass:
            def call(self, gm):
                return [n for n in gm.graph.nodes if n.target in (self.op, self.op.default)]
        """
    middle = "from pkg.pass_utils import FoldPass\n\n\nclass Middle(FoldPass):\n    pass\n"
    subclass = """
        import torch
        from pkg.middle import Middle

        class FoldRelu(Middle):
            op = torch.ops.aten.relu

            def replace(self, node):
                node.target = torch.ops.aten.hardtanh.default
        """
    pkg = write_package(
        tmp_path, "pkg", pass_utils=textwrap.dedent(base), middle=middle, replace_ops=textwrap.dedent(subclass)
    )
    result = check_file(pkg / "replace_ops.py", select=("QL101",))
    assert result.diagnostics == []
    assert os.path.abspath(pkg / "pass_utils.py") in result.dependencies
