"""A rule's `skipped_modules` are read before its import trigger is asked.

QL102 never checks torch's compiler modules (their graphs accept packets). Its import trigger
searched each of them for imported wrappers all the same, and the engine then dropped the
answer (`skips_module`): on the installed torch, ~460 files and ~0.6 s of a cold run. The
engine now reads the rule's declared prefixes (manifest data: the rule is not imported) and
asks the trigger only elsewhere; the findings are the same.
"""

from __future__ import annotations

import pytest

from qlint.analysis.graphs import wrapper_index
from qlint.engine import check_source
from qlint.registry import DeferredRule, facts
from tests.conftest import settings_for, write_package

OPS = "import torch\n\nRELU = torch.ops.aten.relu\n"
# Inserts a packet it imports: the text trigger turns it away, the import trigger keeps it.
INSERTER = "from pkg.ops import RELU\n\n\ndef rewrite(gm, node):\n    return gm.graph.call_function(RELU, (node,))\n"


def _checked(tmp_path, monkeypatch, package: str) -> tuple[list[str], int]:
    """(codes found, how often QL102's import trigger read the file's text) for INSERTER as a
    module of `package`, beside the package `pkg` it imports the packet from."""
    write_package(tmp_path, "pkg", ops=OPS)
    path = write_package(tmp_path, package) / "inserter.py"
    path.write_text(INSERTER)
    asked: list[str] = []
    writes = wrapper_index.writes_insertion

    def counted(text: str) -> bool:
        if text == INSERTER:
            asked.append(text)
        return writes(text)

    monkeypatch.setattr(wrapper_index, "writes_insertion", counted)
    result = check_source(path.read_bytes(), str(path), settings_for(("QL102",)))
    assert not result.errors, result.errors
    return [d.code for d in result.diagnostics], len(asked)


@pytest.mark.parametrize("package", ["torch._inductor", "torch._dynamo.variables", "torch._functorch"])
def test_no_import_trigger_in_a_module_the_rule_never_checks(tmp_path, monkeypatch, package):
    codes, asked = _checked(tmp_path, monkeypatch, package)
    assert codes == []
    assert asked == 0


@pytest.mark.parametrize("package", ["torch.ao.quantization", "torch._inductor_extras", "torch.fx"])
def test_the_import_trigger_is_asked_and_flags_elsewhere(tmp_path, monkeypatch, package):
    # `torch._inductor_extras` shares a prefix of the name, not the package.
    codes, asked = _checked(tmp_path, monkeypatch, package)
    assert codes == ["QL102"]
    assert asked == 1


class _Unloadable:
    """A registry whose rules cannot be imported: whatever asks for the class fails loudly."""

    def rule_class(self, code):
        raise AssertionError(f"{code}'s module was imported")


def test_a_deferred_rule_answers_its_skipped_modules_without_importing_the_rule():
    rule = DeferredRule(facts()["QL102"], {}, registry=_Unloadable())
    assert rule.skipped_modules == ("torch._inductor.", "torch._dynamo.", "torch._functorch.")
    assert rule.skips_module("torch._inductor.codegen.triton") is True
    with pytest.raises(AssertionError):
        rule.skips_module("torch.ao.quantization.fx.prepare")  # elsewhere the rule itself answers


def test_the_rule_itself_skips_the_modules_it_declares():
    cls = DeferredRule(facts()["QL102"], {}).rule
    assert cls.skips_module("torch._dynamo.utils") is True
    assert cls.skips_module("torch._dynamo") is False  # the package's own `__init__`, as before
    assert cls.skips_module("torch.fx.graph") is False
    assert cls.skips_module(None) is False


# A compiler module that inserts an overload and compares node targets with a table of its
# packet that another module of torch holds: QL101 flags it (graphs there accept packets, but
# not the overload nodes the module itself inserts), and only its import trigger lets it in:
# the text spells no packet. So QL101 declares no `skipped_modules`: its trigger's answer can
# matter in those modules (`Resolver.value_of` follows `torch.*` imports into the project).
TABLE = "import torch\n\nPACKETS = (torch.ops.aten.relu,)\n"
MATCHER = (
    "import torch\nfrom .consts import PACKETS\n\n\ndef rewrite(gm):\n    for node in gm.graph.nodes:\n"
    "        if node.target in PACKETS:\n"
    "            gm.graph.call_function(torch.ops.aten.relu.default, (node,))\n"
)


@pytest.mark.parametrize("inserts", [True, False])
def test_ql101_import_trigger_is_still_asked_in_compiler_modules(tmp_path, inserts):
    from qlint.analysis.graphs.sinks import may_hold_matcher

    text = MATCHER if inserts else MATCHER.replace("torch.ops.aten.relu.default", "torch.ops.aten.sigmoid.default")
    path = write_package(tmp_path, "torch._inductor", consts=TABLE) / "matcher.py"
    path.write_text(text)
    assert not may_hold_matcher(text)  # the text trigger turns it away
    assert facts()["QL101"].skipped_modules == ()
    result = check_source(path.read_bytes(), str(path), settings_for(("QL101",)))
    assert not result.errors, result.errors
    # Inserting another op's overload: the exemption of compiler graphs holds.
    assert [(d.code, d.range.start.row) for d in result.diagnostics] == ([("QL101", 7)] if inserts else [])
