"""The gate in front of QL101's import trigger in a run over many files (`helper_gate`, without
`instances`): since the trigger asks every file that imports anything, trigger text or not
(issue 14 item 6), it reads each way the sink-helper search has to a helper as that search
asks it first. The search builds no class: a class it imports leads to a helper only as a base
of a class statement, a function only where the text calls it; a dotted name read back to an
import, also in a text holding characters outside ASCII; and only the project's own imports
(`helper_imports`: not torch's, nor a package no import root holds). A file holding no
trigger text is asked about the names it imports alone (`sinks._untriggered`). What the search then finds
through each way: tests/test_ql101_untriggered_and_mixins.py, tests/test_sink_helper_chains.py."""

from __future__ import annotations

import pytest

from qlint.analysis.graphs.helper_gate import may_lead_to_helper
from qlint.analysis.graphs.imported_helpers import helper_imports
from qlint.analysis.graphs.wrapper_names import WrapperIndex
from qlint.analysis.names.project import ProjectIndex
from tests.conftest import write_package

INDEX = WrapperIndex("/p", frozenset({"assert_nodes", "run"}), frozenset({"NodeChecks", "Module"}), "digest")


@pytest.mark.parametrize(
    "text, imports",
    [
        (
            "from pkg.checks import assert_nodes\nassert_nodes(c, gm, occ)",
            [("assert_nodes", "pkg.checks.assert_nodes")],
        ),
        (
            "from pkg.checks import NodeChecks\nclass T(NodeChecks):\n    pass",
            [("NodeChecks", "pkg.checks.NodeChecks")],
        ),
        ("from pkg import checks\nclass T(checks . NodeChecks):\n    pass", [("checks", "pkg.checks")]),
        ("import pkg.checks as ch\nch.assert_nodes(c, gm, occ)", [("ch", "pkg.checks")]),
        # Outside ASCII: read in NFKC, the other characters as word characters.
        ("import pkg.checks as ch\n# nœud\nch.assert_nodes(c, gm, occ)", [("ch", "pkg.checks")]),
        ("import pkg.checks as ch\n# nœud\nｃｈ.assert_nodes(c, gm, occ)", [("ch", "pkg.checks")]),  # noqa: RUF001
        # A name's start read as the search reads it: `ch` after a character outside ASCII.
        ("import pkg.checks as ch\néch.assert_nodes(c, gm, occ)", [("ch", "pkg.checks")]),
        # An import of a name outside ASCII: any dotted name ending in a name of the index.
        ("import pkg.checks as çh\nx.assert_nodes(c, gm, occ)", [("çh", "pkg.checks")]),
    ],
)
def test_the_sink_gate_opens_for_every_way_to_a_helper(text, imports):
    assert may_lead_to_helper(text, imports, INDEX, instances=False)


@pytest.mark.parametrize(
    "text, imports",
    [
        # Imported, never called; a class of the index built or named, not subclassed.
        (
            "from pkg.checks import assert_nodes\n__all__ = [assert_nodes]",
            [("assert_nodes", "pkg.checks.assert_nodes")],
        ),
        ("from pkg.checks import NodeChecks\nNodeChecks().x(gm)", [("NodeChecks", "pkg.checks.NodeChecks")]),
        ("from pkg import checks\nm = checks.NodeChecks()", [("checks", "pkg.checks")]),
        # A name of the index after a dot that no import starts, ASCII or not.
        ("from pkg import checks\nx.run(1)", [("checks", "pkg.checks")]),
        ("from pkg import checks\n# nœud\nsuper().run(1)", [("checks", "pkg.checks")]),
    ],
)
def test_the_sink_gate_stays_shut_where_the_search_looks_nothing_up(text, imports):
    assert not may_lead_to_helper(text, imports, INDEX, instances=False)


def test_the_wrapper_gate_still_opens_on_what_it_builds():
    # QL102's search builds classes (`Forwarding.instances`): the same texts open its gate.
    assert may_lead_to_helper(
        "from pkg.checks import NodeChecks\nNodeChecks()", [("NodeChecks", "pkg.checks.NodeChecks")], INDEX
    )
    assert may_lead_to_helper("from pkg import checks\nchecks.NodeChecks()", [("checks", "pkg.checks")], INDEX)
    # Not on a name of the index after a dot that no import starts, outside ASCII too (QL102's
    # gate read such texts as any dotted name).
    assert not may_lead_to_helper("from pkg import checks\n# nœud\nsuper().run(1)", [("checks", "pkg.checks")], INDEX)


def test_imports_of_torch_and_of_absent_packages_open_no_gate(tmp_path):
    write_package(tmp_path, "pkg", checks="def assert_nodes(case, gm, occ):\n    pass\n")
    path = str(tmp_path / "pkg" / "t.py")
    project = ProjectIndex.for_path(path)
    mine = "from pkg import checks\n\nchecks.other()\n"
    # `nn.Module` ends in a class of the index: QL101's search does not look it up (QL102's
    # gate reads every import, as before: its search is asked of the project's).
    torch_text = "from torch import nn\n" + mine + "\n\nclass M(nn.Module):\n    pass\n"
    # `subprocess.run` ends in a function of the index: not a package of the project.
    absent_text = "import subprocess\n" + mine + "\nsubprocess.run([])\n"
    ProjectIndex.fixed_layout, before = True, ProjectIndex.fixed_layout
    try:
        assert helper_imports(project, path, torch_text, INDEX, instances=False) == []
        assert helper_imports(project, path, torch_text, INDEX) == [("checks", "pkg.checks")]
        assert helper_imports(project, path, absent_text, INDEX, instances=False) == []
        # The gate asked again of the project's imports, whichever search comes next (QL102's
        # was not: it was asked of all the file's).
        assert helper_imports(project, path, absent_text, INDEX) == []
        for instances in (False, True):
            assert helper_imports(project, path, absent_text + "checks.run(1)\n", INDEX, instances) == [
                ("checks", "pkg.checks")
            ]
    finally:
        ProjectIndex.fixed_layout = before
