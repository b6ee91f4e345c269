"""TestCase mixins of QL101's sink helpers (`mixin_sinks`): which modules naming a sink have
their classes' subclasses in other modules read, by the wrapper-name index
(`wrapper_candidates.candidates`) and the helper search (`wrapper_chains._links_of`) alike.
Processes through every kind of run: tests/test_ql101_untriggered_and_mixins.py."""

from __future__ import annotations

from qlint.analysis.graphs import wrapper_index
from qlint.analysis.graphs.mixin_sinks import calls_sink_on_self
from qlint.analysis.graphs.module_text import ModuleText
from tests.conftest import write_package
from tests.test_ql101_untriggered_and_mixins import CHECKS, FINDERS, MIXINS


def _on_self(text: str, needles: tuple[str, ...] | None = None) -> bool:
    return calls_sink_on_self(ModuleText(text).masked, needles)


def test_a_sink_called_on_self_or_a_sink_keyword_handed_to_a_call_counts():
    assert _on_self(CHECKS)
    assert _on_self(
        "class M:\n    def f(self, m, occ):\n        self._test_quantizer(m, expected_node_occurrence=occ)\n"
    )
    assert _on_self("class M:\n    def f(self, gm):\n        self  .\\\n            find_nodes(gm)\n")


def test_a_sink_on_another_receiver_does_not_count():
    assert not _on_self(FINDERS)
    assert not _on_self("def f(case, gm, occ):\n    case.checkGraphModuleNodes(gm, None, None, occ)\n")
    # Compared, in a string, in a comment, or a longer name: no call of the sink.
    assert not _on_self("class M:\n    def f(self, expected_node):\n        return expected_node == 1\n")
    assert not _on_self('class M:\n    def f(self):\n        print("self.checkGraphModuleNodes(gm)")\n')
    assert not _on_self("class M:\n    def f(self):\n        self.find_nodes_by_name(x=1)  # self.find_nodes(x)\n")
    assert not _on_self("def f(gm):\n    myself.find_nodes(gm)\n\n\nself = None\n")


def test_other_sinks_are_asked_with_their_needles():
    text = "class M:\n    def f(self, gm, ops):\n        self.match_ops(gm, ops)\n"
    assert not _on_self(text)
    assert _on_self(text, ("match_ops",))


def test_the_index_holds_the_mixins_of_other_modules_and_not_the_passes(tmp_path):
    passes = "from pkg.finders import Finder\n\n\nclass MyPass(Finder):\n    def run(self, gm):\n        return gm\n"
    # A class of the mixins' module holding no method of its own: subclassed in another one.
    checks = CHECKS + "\n\nclass AliasChecks(NodeChecks):\n    pass\n"
    via = "from pkg.checks import AliasChecks\n\n\nclass ViaAlias(AliasChecks):\n    pass\n"
    write_package(tmp_path, "pkg", checks=checks, mixins=MIXINS, finders=FINDERS, passes=passes, via=via)
    index = wrapper_index.build(str(tmp_path))
    assert {"NodeChecks", "OpChecks", "MoreChecks", "ViaAlias", "Finder"} <= index.sink_classes
    assert index.sinks.may_lead_to_class("pkg.mixins.MoreChecks")
    # A subclass of a pass base class calling `graph.find_nodes(...)`: its module is not read.
    assert "MyPass" not in index.sink_classes
