"""The collector is paused for the length of a check and comes back after, whatever happens."""

from __future__ import annotations

import gc
import threading

import pytest

from qlint.engine import check_source
from qlint.gc_pause import gc_paused
from qlint.settings import Settings


def test_paused_inside_and_restored_after_nested_pauses():
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    assert gc.isenabled()


def test_restored_after_an_exception():
    with pytest.raises(RuntimeError), gc_paused():
        raise RuntimeError("boom")
    assert gc.isenabled()


def test_a_collector_disabled_before_stays_disabled():
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_overlapping_threads_leave_the_collector_on():
    entered, release = threading.Barrier(2), threading.Event()

    def check():
        with gc_paused():
            entered.wait()
            release.wait()

    first = threading.Thread(target=check)
    first.start()
    with gc_paused():
        entered.wait()
        release.set()
    first.join()
    assert gc.isenabled()


def test_check_source_runs_rules_with_the_collector_paused(monkeypatch):
    seen = []
    import qlint.engine as engine

    real = engine.parse_module

    def parse(text, path):
        seen.append(gc.isenabled())
        return real(text, path)

    monkeypatch.setattr(engine, "parse_module", parse)
    text = "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\nprepare_pt2e(m, q)\n"
    check_source(text, "snippet.py", Settings())
    assert seen == [False]
    assert gc.isenabled()


def test_the_checked_tree_dies_with_its_check(monkeypatch):
    # Kept by the project index until the next check, the tree (and what rules keep on its
    # nodes) was the bulk of what the collector traversed when it resumed after each check.
    # A command-line run's index keeps nothing of a check.
    from qlint.analysis.names.project import ProjectIndex

    trees = _parsed_trees(monkeypatch)
    project = ProjectIndex(track_dependents=False)
    text = "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\nprepare_pt2e(m, q)\n"
    gc.disable()  # freed by reference counts alone, not by a collection
    try:
        check_source(text, "snippet.py", Settings(), project)
        assert len(trees) == 1 and trees[0]() is None
    finally:
        gc.enable()


def test_an_editor_s_index_keeps_a_file_s_last_tree_for_its_next_check_only(monkeypatch):
    # The language server's index keeps the last tree of a file, whose unchanged statements the
    # next check of the edited buffer reuses (`statement_reuse`): the old tree itself goes then,
    # and all of it when the file will not be checked again. Nodes the next check took over were
    # allocated before it: a collection after it traverses only what the edit made new.
    from qlint.analysis.names.project import ProjectIndex

    trees = _parsed_trees(monkeypatch)
    project = ProjectIndex()
    text = "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\nprepare_pt2e(m, q)\n"
    gc.disable()
    try:
        check_source(text, "snippet.py", Settings(), project)
        assert trees[0]() is not None
        check_source(text + "x = 1\n", "snippet.py", Settings(), project)
        assert trees[0]() is None and trees[1]() is not None
        project.checked_once("snippet.py")
        assert trees[1]() is None
    finally:
        gc.enable()


def test_no_analysis_keeps_the_checked_tree_in_a_cycle(monkeypatch):
    # Analyses kept on the context's cache hold the context back (call sites, model flows):
    # a cycle through the whole tree that only the collector frees, a fifth of the next
    # check on a 4,300-line module. Every rule page's example runs every analysis there is.
    import re
    from pathlib import Path

    from qlint.analysis.names.project import ProjectIndex

    pages = sorted((Path(__file__).parent.parent / "rules").glob("QL*.md"))
    pages = [p for p in pages if p.stem != "QL001"]  # its example does not parse
    examples = [re.search(r"## Example.*?```python\n(.*?)```", p.read_text(), re.S) for p in pages]
    # A capture whose mode its callers decide: their call sites are read.
    helper = (
        "def calibrated(model, quantizer, example):\n"
        "    prepared = prepare_pt2e(torch.export.export(model, example).module(), quantizer)\n"
        "    prepared(*example)\n    return convert_pt2e(prepared)\n\n\n"
        "def main(model, quantizer, example):\n    model.eval()\n    return calibrated(model, quantizer, example)\n"
    )
    text = "\n\n".join([*(m.group(1) for m in examples if m), helper])
    trees = _parsed_trees(monkeypatch)
    gc.disable()
    try:
        result = check_source(text, "snippet.py", Settings(preview=True), ProjectIndex())
        assert len({d.code for d in result.diagnostics}) >= 8  # the analyses did run
        assert len(trees) == 1 and trees[0]() is None
    finally:
        gc.enable()


def test_a_check_whose_process_ends_after_it_leaves_what_it_built_to_the_exit(monkeypatch):
    # `qlint check -`: the exit skips the teardown, so freeing the tree before the output is
    # waste; any other check frees it as it returns (above).
    import qlint.engine as engine

    trees = _parsed_trees(monkeypatch)
    monkeypatch.setattr(engine, "_LEFT_FOR_EXIT", None)
    engine.leave_for_exit()
    text = "from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\nprepare_pt2e(m, q)\n"
    check_source(text, "snippet.py", Settings())
    assert trees[0]() is not None and [c.tree for c in engine._LEFT_FOR_EXIT] == [trees[0]()]


def _parsed_trees(monkeypatch):
    """Weak references to the trees the engine parses from now on."""
    import weakref

    import qlint.engine as engine

    trees = []
    real = engine.parse_module

    def parse(text, path):
        tree = real(text, path)
        trees.append(weakref.ref(tree))
        return tree

    monkeypatch.setattr(engine, "parse_module", parse)
    return trees
