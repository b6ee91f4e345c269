"""QL101's prefilter: a file is parsed for it only when it writes a node target, names a sink,
or imports a helper that forwards to one (the import trigger). Each skip has its look-alike
that must still be checked and flagged."""

from __future__ import annotations

import textwrap

import pytest

from qlint.analysis.graphs import sinks, wrapper_index
from qlint.engine import check_source
from tests.conftest import settings_for, write_package

IMPL = """
import torch

def check_nodes(case, m, occurrence):
    case.checkGraphModuleNodes(m, None, None, occurrence)

class QuantTestCase:
    def _test_quantizer(self, model, inputs, quantizer, occurrence):
        self.checkGraphModuleNodes(model, expected_node_occurrence=occurrence)
"""
# Names a target attribute (the rule's trigger text) but writes no node target on any row.
USER = """
import torch
from pkg.{module} import {name}

class TestConv{base}:
    def test_conv(self):
        self.target_dtype = torch.int8
        {call}
"""


def _check(tmp_path, user: str, select=("QL",), **options):
    pkg = write_package(tmp_path, "pkg", impl=IMPL, reexport="from pkg.impl import check_nodes, QuantTestCase\n")
    path = pkg / "user.py"
    path.write_text(textwrap.dedent(user))
    result = check_source(path.read_bytes(), str(path), settings_for(select, **options))
    assert not result.errors, result.errors
    return result


def _rows(result, code="QL101"):
    return [d.range.start.row for d in result.diagnostics if d.code == code]


def test_target_mentioned_without_a_node_target_or_sink_is_not_parsed(tmp_path):
    result = _check(tmp_path, "import torch\n\ndef f(cfg):\n    return cfg.target_dtype == torch.ops.aten.relu\n")
    assert not result.parsed and result.diagnostics == []


def test_helper_imported_from_the_module_defining_it_is_still_checked(tmp_path):
    user = USER.format(
        module="impl", name="check_nodes", base="", call="check_nodes(self, m, {torch.ops.aten.hardtanh: 1})"
    )
    result = _check(tmp_path, user)
    assert result.parsed and _rows(result) == [8]


def test_helper_reexported_two_modules_away_is_still_checked(tmp_path):
    user = USER.format(
        module="reexport", name="check_nodes", base="", call="check_nodes(self, m, {torch.ops.aten.hardtanh: 1})"
    )
    assert _rows(_check(tmp_path, user)) == [8]
    # The one rule selected: the rule's own answer (not the engine's default-options shortcut).
    assert _rows(_check(tmp_path, user, select=("QL101",))) == [8]


def test_helper_method_inherited_from_a_class_of_another_module_is_still_checked(tmp_path):
    user = USER.format(
        module="reexport",
        name="QuantTestCase",
        base="(QuantTestCase)",
        call="self._test_quantizer(M(), (x,), q, {torch.ops.aten.hardtanh: 1})",
    )
    assert _rows(_check(tmp_path, user)) == [8]


def test_imported_function_that_forwards_to_no_sink_lets_the_file_go_unparsed(tmp_path):
    pkg = write_package(tmp_path, "pkg", quiet="def check_nodes(case, m, occurrence):\n    print(occurrence)\n")
    path = pkg / "user.py"
    path.write_text(
        textwrap.dedent(USER.format(module="quiet", name="check_nodes", base="", call="check_nodes(self, m, {})"))
    )
    result = check_source(path.read_bytes(), str(path), settings_for(("QL",)))
    assert not result.parsed and result.diagnostics == []
    # What it read to decide is a dependency: a change there must recheck the file.
    assert str(pkg / "quiet.py") in result.dependencies


def test_extra_sink_helper_is_found_with_the_rules_options(tmp_path):
    pkg = write_package(tmp_path, "pkg", extra="def wrapped(m, ops):\n    my_check(m, ops)\n")
    path = pkg / "user.py"
    path.write_text(
        textwrap.dedent(USER.format(module="extra", name="wrapped", base="", call="wrapped(m, torch.ops.aten.relu)"))
    )
    plain = check_source(path.read_bytes(), str(path), settings_for(("QL",)))
    assert not plain.parsed
    extra = check_source(path.read_bytes(), str(path), settings_for(("QL",), QL101={"extra-sinks": ["my_check:1"]}))
    assert _rows(extra) == [8]


def test_node_target_written_across_rows_is_still_checked():
    # `.target` holds the trigger text only as `.target_dtype`; the node target's row starts
    # with `target`, after a line continuation (no `.target` on any row).
    for newline in ("\n", "\r\n", "\r"):
        across = [
            "import torch",
            "def f(n, cfg):",
            "    return cfg.target_dtype and (n.\\",
            "        target == torch.ops.aten.relu)",
            "",
        ]
        result = check_source(newline.join(across), "snippet.py", settings_for(("QL101",)))
        assert _rows(result) == [4], repr(newline)
    src = 'import torch\ndef g(n):\n    return getattr(n, "target") == torch.ops.aten.relu\n'
    assert _rows(check_source(src, "snippet.py", settings_for(("QL101",)))) == [3]


def test_sink_named_without_target_text_is_still_checked():
    src = "import torch\n\ndef t(self, m):\n    self.checkGraphModuleNodes(m, None, None, {torch.ops.aten.relu: 1})\n"
    assert _rows(check_source(src, "snippet.py", settings_for(("QL101",)))) == [4]


# The packet comes from another module too: the text spells none.
USER_IMPORTING_ITS_OP = """
from pkg.{module} import {name}
from pkg.ops import RELU

class TestConv{base}:
    def test_conv(self):
        self.target_dtype = None
        {call}
"""


@pytest.fixture(params=["one file", "run over many files"])
def batch(request):
    # A run over many files answers the helper gate from the project's index of helper names.
    if request.param == "run over many files":
        wrapper_index.enable(None)
    yield request.param
    wrapper_index.disable()


@pytest.mark.parametrize(
    ("module", "name", "base", "call"),
    [
        ("reexport", "check_nodes", "", "check_nodes(self, m, {RELU: 1})"),
        ("reexport", "QuantTestCase", "(QuantTestCase)", "self._test_quantizer(M(), (x,), q, {RELU: 1})"),
    ],
)
def test_helper_and_packet_both_imported_is_still_checked(tmp_path, batch, module, name, base, call):
    write_package(tmp_path, "pkg", ops="import torch\n\nRELU = torch.ops.aten.relu\n")
    user = USER_IMPORTING_ITS_OP.format(module=module, name=name, base=base, call=call)
    assert _rows(_check(tmp_path, user)) == [8]


def test_helper_imported_where_no_packet_can_reach_is_not_searched(tmp_path, batch, monkeypatch):
    # The packet question turns the file away before the helper search resolves its imports.
    write_package(tmp_path, "pkg", ops="RELU = 'relu'\n")

    def searched(*args):
        raise AssertionError("the helper search ran")

    monkeypatch.setattr(sinks, "sink_search", searched)
    user = USER_IMPORTING_ITS_OP.format(
        module="reexport", name="check_nodes", base="", call="check_nodes(self, m, {RELU: 1})"
    )
    result = _check(tmp_path, user)
    assert not result.parsed and result.diagnostics == []


@pytest.mark.parametrize("here", [False, True])
@pytest.mark.parametrize("gate", [False, True])
@pytest.mark.parametrize("found", [False, True])
@pytest.mark.parametrize("packet", [False, True])
def test_the_import_trigger_answers_the_conjunction_cheapest_first(monkeypatch, here, gate, found, packet):
    asked = []

    def answer(name, value):
        return lambda *args: asked.append(name) or value

    monkeypatch.setattr(sinks, "may_match_here", answer("here", here))
    monkeypatch.setattr(sinks, "_helper_imports", answer("gate", [("check_nodes", "pkg.check_nodes")] * gate))
    monkeypatch.setattr(sinks, "_sink_helper_found", answer("search", found))
    monkeypatch.setattr(sinks, "may_hold_packet", answer("packet", packet))
    text = "from pkg import check_nodes\n\ncheck_nodes(self, m, {RELU: 1})  # .target\n"
    assert sinks.matches_through_imports(text, "/nowhere/user.py", None) is ((here or (gate and found)) and packet)
    assert asked.pop(0) == "here"
    if here:
        assert asked == ["packet"]  # it may match here: no helper is looked for
    else:  # the gate, then the packet question, the search last
        assert asked == ["gate", "packet", "search"][: 1 + gate + (gate and packet)]
