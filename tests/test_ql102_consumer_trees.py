"""QL102's consumer scan in a command-line run (each file checked once): the modules it finds
keep what the consumers ask of them, not their trees (`packet_scan._without_tree`), with the
answers an editor's check (which keeps them whole) gives."""

from __future__ import annotations

import ast
import gc
import os
import weakref

import pytest

from qlint.analysis.names import piecewise_parse
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source, checked_once
from qlint.rules import packet_scan
from tests.conftest import settings_for, write_package
from tests.test_ql102_consumers import ADD, PIPELINE, REMOVE, TABLE

# Spells the packet in an eager call only: found by the scan, keys nothing on it.
EAGER = "import torch\n\n\ndef zeros(x):\n    return torch.ops.aten.zeros_like(x)\n"


def _codes(tmp_path, cli: bool, **modules) -> list[str]:
    pkg = write_package(tmp_path, "pkg", **modules)
    add = str(pkg / "add.py")
    project = ProjectIndex(track_dependents=not cli)
    try:
        result = check_source((pkg / "add.py").read_text(), add, settings_for(("QL102",)), project)
    finally:
        checked_once(add)
    assert not result.errors, result.errors
    return [d.code for d in result.diagnostics]


@pytest.mark.parametrize(
    ("modules", "codes"),
    [
        # a paired pass (it imports the inserting module) erases the packet nodes
        ({"remove": REMOVE, "pipeline": PIPELINE.format(between="pass")}, []),
        # ... and beside it a module that only calls the op eagerly
        ({"remove": REMOVE, "eager": EAGER, "pipeline": PIPELINE.format(between="pass")}, []),
        # a lowering table registers the packet beside its overload
        ({"table": TABLE, "eager": EAGER}, []),
        # only eager calls elsewhere: no consumer
        ({"eager": EAGER}, ["QL102"]),
        # the graph is exported again between the insertion and the paired pass
        (
            {"remove": REMOVE, "eager": EAGER, "pipeline": PIPELINE.format(between="m = export(m, (x,)).module()")},
            ["QL102"],
        ),
        # the table registers the overload only
        ({"table": TABLE.replace("@converter(torch.ops.aten.zeros_like)\n", "")}, ["QL102"]),
    ],
)
@pytest.mark.parametrize("cli", [True, False], ids=["command-line", "editor"])
def test_a_command_line_check_judges_consumers_as_an_editor_does(tmp_path, modules, codes, cli):
    assert _codes(tmp_path, cli, add=ADD, **modules) == codes


def test_a_command_line_check_holds_no_consumer_tree_after_the_scan(tmp_path, monkeypatch):
    # Dropped by reference counting as the scan goes (the collector is paused during checks),
    # not when the check ends: one check on ExecuTorch held 44 MiB of such trees at once.
    parsed: dict[str, list[weakref.ref]] = {}

    def parse(text, path, *args):
        tree = live_parse(text, path, *args)
        parsed.setdefault(os.path.basename(path), []).append(weakref.ref(tree))
        return tree

    live_parse = packet_scan.live_parse
    monkeypatch.setattr(packet_scan, "live_parse", parse)
    pkg = write_package(
        tmp_path, "pkg", add=ADD, remove=REMOVE, eager=EAGER, table=TABLE, pipeline=PIPELINE.format(between="pass")
    )
    add = str(pkg / "add.py")
    spelling = {"eager.py", "remove.py", "table.py"}  # the modules spelling the packet
    gc.disable()
    try:
        result = check_source(ADD, add, settings_for(("QL102",)), ProjectIndex(track_dependents=False))
        # The first parse of each is the scan's (the search for the modules naming the pass
        # that follows keeps its own parses whole: remove.py imports the inserting function).
        alive = sorted(name for name, trees in parsed.items() if name in spelling and trees[0]() is not None)
    finally:
        gc.enable()
        checked_once(add)
    assert not result.errors and result.diagnostics == []
    assert spelling <= set(parsed)  # (the pipeline too: it names the pass, and the search for those keeps them)
    assert alive == []


@pytest.mark.parametrize("cli", [True, False], ids=["command-line", "editor"])
def test_the_scan_parses_a_large_consumer_one_definition_at_a_time(tmp_path, monkeypatch, cli):
    # A large module found by the scan is not handed whole to the parser (its whole parse was
    # a check's peak on ExecuTorch), and is judged as before: it erases the packet nodes.
    filler = "".join(f"\n\ndef unrelated_{i}(x):\n    return x + {i}\n" for i in range(3000))
    large = REMOVE + filler
    parsed: list[str] = []
    parse = ast.parse

    def recording(source, *args, **kwargs):
        parsed.append(source.lstrip("\n"))
        return parse(source, *args, **kwargs)

    monkeypatch.setattr(ast, "parse", recording)
    codes = _codes(tmp_path, cli, add=ADD, remove=large, pipeline=PIPELINE.format(between="pass"))
    assert codes == []
    assert any("def is_op_node" in p for p in parsed)  # the consumer was read
    # In pieces of neighbouring definitions, each far smaller than the module.
    assert large not in parsed and max(len(p) for p in parsed) <= piecewise_parse._PIECE < len(large) // 4
