"""What the project scan works out about other modules (the packets a module inserts into
graphs that carry packets, what the project's normalisers call) is kept between runs
(`kept_module_facts`): a new process takes a fact only while the module and every module the
fact was read from have the content they had, and every module absent then is absent still;
else it parses the module and works the fact out again, and the findings are those of a run
without the store."""

from __future__ import annotations

import shutil
import textwrap

import pytest

from qlint.analysis import scan_memo
from qlint.analysis.graphs import (
    forwarding_memos,
    kept_answers,
    kept_module_facts,
    kept_shards,
    kept_state,
    project_scan,
    scanned_facts,
)
from qlint.analysis.names import content_keys
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from qlint.rules import packet_scan
from tests.conftest import kept_store, old_file, old_package, settings_for
from tests.test_ql102_consumers import ADD, PIPELINE, REMOVE
from tests.test_ql102_distinguishers import FLOW, REWRITE
from tests.test_ql102_distinguishers import INSERTER as QUANTIZE

MATCHER = """
import torch

def count_relus(gm):
    return sum(n.target == torch.ops.aten.relu for n in gm.graph.nodes)
"""
# Inserts the packet into a legacy FX graph, which carries packets: the matcher is right. The
# namespace comes from another module (`ops`), so the fact rests on that module too.
INSERTER = """
from torch.fx import symbolic_trace
from pkg.ops import aten

def add_op(model, node):
    gm = symbolic_trace(model)
    gm.graph.call_function(aten.relu, (node,))
    return gm
"""
ATEN = "import torch\naten = torch.ops.aten\n"
# The same name bound to another namespace: the inserter no longer inserts `aten.relu`.
OTHER = "import torch\naten = torch.ops.my_project\n"
# A backend that strips the graph to packets and then runs the matcher: the matcher is right.
BACKEND = """
from torch.fx.experimental.proxy_tensor import strip_overloads
from pkg.matcher import count_relus

def backend(gm):
    strip_overloads(gm)
    return count_relus(gm)
"""
NO_STRIP = BACKEND.replace("    strip_overloads(gm)\n", "")
REPORTED = [("QL101", 5)]


def _new_process() -> None:
    """Forget what this process learned, as a new `qlint` run starts without it."""
    for memo in (forwarding_memos.IMPORTED, forwarding_memos.SHARED, forwarding_memos.LINKS_OF):
        memo.clear()
    forwarding_memos.PASSING.clear()
    project_scan._PROJECTS.clear()
    scanned_facts._UNKEPT_MISSES.clear()
    project_scan.NO_PACKET_INSERTS.clear()
    packet_scan._PARSED.clear()
    packet_scan._LAST_SCAN.clear()
    content_keys._DIGESTS.clear()
    scan_memo.forget()
    kept_answers.forget()
    kept_module_facts.forget()


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from kept_store(tmp_path, monkeypatch, _new_process)


@pytest.fixture
def parses(monkeypatch):
    """The paths of the other modules the scan parses for a fact."""
    parsed: list[str] = []
    module_context = scanned_facts.module_context

    def counting(path, text, ctx):
        parsed.append(path)
        return module_context(path, text, ctx)

    monkeypatch.setattr(scanned_facts, "module_context", counting)
    return parsed


def _run(pkg, checked: str = "matcher", select: str = "QL101") -> list[tuple[str, int]]:
    """A new process's check of the matcher (as an editor hands it over), and what it keeps."""
    _new_process()
    path = pkg / f"{checked}.py"
    result = check_source(path.read_text(), str(path), settings_for((select,)), ProjectIndex())
    assert not result.errors, result.errors
    kept_shards.flush()
    return [(d.code, d.range.start.row) for d in result.diagnostics]


def _without_store(pkg, checked: str = "matcher", select: str = "QL101") -> list[tuple[str, int]]:
    kept_answers.use(None)
    try:
        return _run(pkg, checked, select)
    finally:
        _new_process()
        kept_answers.use(ProjectIndex.store)


def _kept_names() -> set[str]:
    saved = kept_answers.saved("module_facts", ("", "")) is None and kept_state.STATE.saved
    return {name for name, _ in (saved or {}).get("module_facts", {})}


def _package(tmp_path, **modules):
    return old_package(tmp_path, matcher=textwrap.dedent(MATCHER), **modules)


def test_a_new_process_takes_what_the_module_inserts_from_the_store(tmp_path, store, parses):
    pkg = _package(tmp_path, inserter=textwrap.dedent(INSERTER), ops=ATEN)
    assert _run(pkg) == []
    assert str(pkg / "inserter.py") in parses  # worked out here
    assert _kept_names() == {"packets-into-packet-graphs-2"}
    parses.clear()
    assert _run(pkg) == []
    assert parses == []  # taken: not parsed again


def test_an_edit_of_the_module_is_seen(tmp_path, store, parses):
    pkg = _package(tmp_path, inserter=textwrap.dedent(INSERTER), ops=ATEN)
    assert _run(pkg) == []
    exported = INSERTER.replace("symbolic_trace(model)", "export(model, ()).module()")
    old_file(pkg / "inserter.py", textwrap.dedent(exported.replace("symbolic_trace", "export")))
    parses.clear()
    assert _run(pkg) == REPORTED == _without_store(pkg)
    assert str(pkg / "inserter.py") in parses


def test_an_edit_of_a_module_the_fact_read_is_seen(tmp_path, store, parses):
    # The inserter itself is unchanged: what its `aten` is comes from `ops`.
    pkg = _package(tmp_path, inserter=textwrap.dedent(INSERTER), ops=ATEN)
    assert _run(pkg) == []
    old_file(pkg / "ops.py", OTHER)
    parses.clear()
    assert _run(pkg) == REPORTED == _without_store(pkg)
    assert str(pkg / "inserter.py") in parses
    old_file(pkg / "ops.py", ATEN)
    assert _run(pkg) == [] == _without_store(pkg)


def test_a_module_the_fact_found_absent_then_made_is_seen(tmp_path, store):
    # `pkg.ops` does not exist: `aten` resolves to nothing, the insertion counts for nothing.
    pkg = _package(tmp_path, inserter=textwrap.dedent(INSERTER))
    assert _run(pkg) == REPORTED
    old_file(pkg / "ops.py", ATEN)
    assert _run(pkg) == [] == _without_store(pkg)


def test_a_module_that_stops_parsing_is_seen(tmp_path, store, parses):
    pkg = _package(tmp_path, inserter=textwrap.dedent(INSERTER), ops=ATEN)
    assert _run(pkg) == []
    old_file(pkg / "inserter.py", textwrap.dedent(INSERTER) + "\ndef broken(:\n")
    assert _run(pkg) == REPORTED == _without_store(pkg)
    parses.clear()
    assert _run(pkg) == REPORTED  # "does not parse" is kept too
    assert parses == []
    old_file(pkg / "inserter.py", textwrap.dedent(INSERTER))
    assert _run(pkg) == []


def test_a_deleted_store_is_worked_out_again(tmp_path, store, parses):
    pkg = _package(tmp_path, inserter=textwrap.dedent(INSERTER), ops=ATEN)
    assert _run(pkg) == []
    shutil.rmtree(store.directory)
    parses.clear()
    assert _run(pkg) == []
    assert str(pkg / "inserter.py") in parses


def test_a_damaged_value_is_worked_out_again(tmp_path, store, parses):
    pkg = _package(tmp_path, inserter=textwrap.dedent(INSERTER), ops=ATEN)
    assert _run(pkg) == []
    matcher = str(pkg / "matcher.py")
    answers = store.get_answers(matcher)
    for key, entry in answers["module_facts"].items():
        answers["module_facts"][key] = (("not", "op", "keys", "at all"), entry[-1])
    store.put_answers(matcher, answers)
    parses.clear()
    assert _run(pkg) == []
    assert str(pkg / "inserter.py") in parses


def test_what_a_normaliser_calls_is_kept_and_its_edit_seen(tmp_path, store, parses):
    pkg = _package(tmp_path, backend=textwrap.dedent(BACKEND))
    assert _run(pkg) == []  # the backend strips the graph to packets before the matcher runs
    assert "normalisers-1" in _kept_names()
    parses.clear()
    assert _run(pkg) == []
    assert str(pkg / "backend.py") not in parses
    old_file(pkg / "backend.py", textwrap.dedent(NO_STRIP) + "# strip_overloads no more\n")
    assert _run(pkg) == REPORTED == _without_store(pkg)


def test_a_fact_read_from_an_editor_buffer_is_not_kept(tmp_path, store):
    # `ops` is open in the editor with unsaved text: what was read from it is not on disk.
    pkg = _package(tmp_path, inserter=textwrap.dedent(INSERTER), ops=ATEN)
    _new_process()
    path = pkg / "matcher.py"
    project = ProjectIndex(overlay={str(pkg / "ops.py"): ATEN + "# unsaved\n"})
    result = check_source(path.read_text(), str(path), settings_for(("QL101",)), project)
    assert [(d.code, d.range.start.row) for d in result.diagnostics] == []
    kept_shards.flush()
    _new_process()
    assert "packets-into-packet-graphs-2" not in _kept_names()


def test_a_buffer_check_keeps_every_read(tmp_path, store):
    # The check of a buffer (`qlint check -`) records no dependencies for itself; what a kept
    # fact read is recorded all the same, and an edit of it is seen.
    pkg = _package(tmp_path, inserter=textwrap.dedent(INSERTER), ops=ATEN)
    with ProjectIndex.dependencies_unwanted():
        assert _run(pkg) == []
        assert ProjectIndex.wants_dependencies is False
        old_file(pkg / "ops.py", OTHER)
        assert _run(pkg) == REPORTED
    assert _without_store(pkg) == REPORTED


def test_nothing_is_kept_without_a_store(tmp_path, monkeypatch, parses):
    kept_answers.use(None)
    pkg = _package(tmp_path, inserter=textwrap.dedent(INSERTER), ops=ATEN)
    assert _run(pkg) == []
    assert kept_module_facts._KEPT == {}


# QL102: the paired pass keys on the packet its sibling inserts; `aten` comes from `ops`.
CONSUMER = REMOVE.replace("import torch\n", "from pkg.ops import aten\n").replace("torch.ops.aten.", "aten.")
INSERTED = [("QL102", 6)]


@pytest.fixture
def consumer_parses(monkeypatch):
    """The paths of the modules whose sites QL102's consumer scan works out from their parse."""
    parsed: list[str] = []
    op_sites = packet_scan.op_sites

    def counting(module, op):
        parsed.append(module.path)
        return op_sites(module, op)

    monkeypatch.setattr(packet_scan, "op_sites", counting)
    return parsed


def _pair(tmp_path, **changed):
    modules = {"add": ADD, "remove": CONSUMER, "pipeline": PIPELINE.format(between="pass"), "ops": ATEN}
    return old_package(tmp_path, **{**modules, **changed})


def test_a_consumer_s_sites_are_taken_from_the_store(tmp_path, store, consumer_parses):
    pkg = _pair(tmp_path)
    assert _run(pkg, "add", "QL102") == []
    assert str(pkg / "remove.py") in consumer_parses
    assert "consumer-sites-1:zeros_like" in _kept_names()
    consumer_parses.clear()
    assert _run(pkg, "add", "QL102") == []
    assert consumer_parses == []


def test_an_edit_of_the_consumer_is_seen(tmp_path, store, consumer_parses):
    pkg = _pair(tmp_path)
    assert _run(pkg, "add", "QL102") == []
    # Also keyed on the overload: it misses the packet nodes.
    old_file(pkg / "remove.py", CONSUMER.replace("target_op=aten.zeros_like)", "target_op=aten.zeros_like.default)"))
    assert _run(pkg, "add", "QL102") == INSERTED == _without_store(pkg, "add", "QL102")


def test_an_edit_of_a_module_the_consumer_s_sites_read_is_seen(tmp_path, store):
    pkg = _pair(tmp_path)
    assert _run(pkg, "add", "QL102") == []
    old_file(pkg / "ops.py", OTHER)  # the consumer's `aten.zeros_like` is another op now
    assert _run(pkg, "add", "QL102") == INSERTED == _without_store(pkg, "add", "QL102")
    old_file(pkg / "ops.py", ATEN)
    assert _run(pkg, "add", "QL102") == [] == _without_store(pkg, "add", "QL102")


def test_a_consumer_that_stops_parsing_is_seen(tmp_path, store):
    pkg = _pair(tmp_path)
    assert _run(pkg, "add", "QL102") == []
    old_file(pkg / "remove.py", CONSUMER + "\ndef broken(:\n")
    assert _run(pkg, "add", "QL102") == INSERTED == _without_store(pkg, "add", "QL102")


# QL102's message names a module of the package keyed on the overload alone; its `torchao`
# namespace comes from `ops` too.
TORCHAO = "import torch\ntorchao = torch.ops.torchao\n"
SIBLING = REWRITE.replace("import torch\n", "from pkg.ops import torchao\n").replace("torch.ops.torchao.", "torchao.")


def _messages(pkg, use_store: bool = True) -> list[str]:
    if not use_store:
        kept_answers.use(None)
    try:
        _new_process()
        path = pkg / "inserter.py"
        result = check_source(path.read_text(), str(path), settings_for(("QL102",)), ProjectIndex())
        kept_shards.flush()
        return [d.message for d in result.diagnostics]
    finally:
        if not use_store:
            _new_process()
            kept_answers.use(ProjectIndex.store)


def _siblings(tmp_path, **changed):
    modules = {"inserter": QUANTIZE, "flow": FLOW, "rewrite": SIBLING, "ops": TORCHAO}
    return old_package(tmp_path, **{k: textwrap.dedent(v) for k, v in {**modules, **changed}.items()})


def test_a_sibling_matcher_s_sites_are_taken_from_the_store(tmp_path, store, consumer_parses):
    pkg = _siblings(tmp_path)
    [message] = _messages(pkg)
    assert "`rewrite.py` matches `.default` alone" in message
    assert str(pkg / "rewrite.py") in consumer_parses
    assert "op-sites-1:quantize_affine" in _kept_names()
    consumer_parses.clear()
    assert _messages(pkg) == [message]
    assert str(pkg / "rewrite.py") not in consumer_parses


def test_an_edit_of_a_module_the_sibling_s_sites_read_is_seen(tmp_path, store):
    pkg = _siblings(tmp_path)
    [message] = _messages(pkg)
    assert "`rewrite.py`" in message
    old_file(pkg / "ops.py", OTHER.replace("aten", "torchao"))  # `torchao` is another namespace now
    changed = _messages(pkg)
    assert changed == _messages(pkg, use_store=False)
    assert not any("`rewrite.py`" in m for m in changed)
