"""A root past the wrapper-name index's limit keeps a marker of "no index here" in the results
cache (`wrapper_record.Record.too_many`): the next run that needs the index gives its making
up before it starts, until a file the names came from moves, or a file comes to hold a sink."""

from __future__ import annotations

from pathlib import Path

import pytest

from qlint.analysis.graphs import wrapper_index
from qlint.settings import Settings
from qlint.wrapper_store import WrapperStore
from tests.conftest import old_file
from tests.test_wrapper_index import _findings, _project


def _record(tmp_path: Path):
    """The record the results cache keeps for the project's root."""
    cache = next((tmp_path / "cache").rglob("*.wrappers"))
    return WrapperStore(cache).load(str(tmp_path))


def _makings(monkeypatch) -> list[str]:
    """The roots whose index a run sets out to make (in a child or in process)."""
    made: list[str] = []
    apart, build = wrapper_index._built_apart, wrapper_index.build
    monkeypatch.setattr(wrapper_index, "_built_apart", lambda root, *a: made.append(root) or apart(root, *a))
    monkeypatch.setattr(wrapper_index, "build", lambda root, *a, **k: made.append(root) or build(root, *a, **k))
    return made


def _touch_others(pkg: Path, body: str = "os.sep") -> None:
    """Edit the 30 modules that name no sink nor wrapper: a run then checks more files than
    `runner.MIN_PARALLEL_FILES` again, and asks for the index."""
    for i in range(30):
        old_file(pkg / f"m{i}.py", f"import os\n\n\ndef f{i}(x):\n    return {body}\n")


@pytest.fixture
def past_limit(tmp_path, monkeypatch) -> Path:
    """The project of test_wrapper_index, whose index holds two names, with a limit of one."""
    pkg = _project(tmp_path)
    monkeypatch.setattr(wrapper_index, "_MAX_NAMES", 1)
    assert _findings(tmp_path) == {"passes.py": [7]}
    return pkg


def test_a_root_past_the_limit_keeps_a_marker_which_the_next_run_takes(tmp_path, past_limit, monkeypatch):
    record = _record(tmp_path)
    assert record is not None and not record.indexed and not record.functions
    assert str(past_limit / "graph_utils.py") in record.too_many  # the module that inserts
    made = _makings(monkeypatch)
    _touch_others(past_limit)
    assert _findings(tmp_path) == {"passes.py": [7]}
    assert made == []
    _touch_others(past_limit, "os.path.join(x)")
    assert _findings(tmp_path) == {"passes.py": [7]}
    assert made == []
    assert _findings(tmp_path, use_cache=False) == {"passes.py": [7]}  # no cache, no marker: made
    assert made == [str(tmp_path)]


def test_no_marker_without_a_cache_nor_below_the_limit(tmp_path, monkeypatch):
    _project(tmp_path)
    assert _findings(tmp_path, use_cache=False) == {"passes.py": [7]}
    assert not (tmp_path / "cache").exists()
    assert _findings(tmp_path) == {"passes.py": [7]}
    record = _record(tmp_path)
    assert record.indexed and record.too_many is None and {"insert_op", "put"} <= record.functions


def test_an_edit_of_a_module_the_names_came_from_makes_it_again(tmp_path, past_limit, monkeypatch):
    made = _makings(monkeypatch)
    # graph_utils no longer inserts: no wrapper, no name, an index again.
    old_file(past_limit / "graph_utils.py", "def insert_op(graph, op, args):\n    return op\n")
    _touch_others(past_limit)
    assert _findings(tmp_path) == {}
    assert made == [str(tmp_path)]
    assert _findings(tmp_path, use_cache=False) == {}
    record = _record(tmp_path)
    assert record.indexed and record.too_many is None


def test_a_module_coming_to_hold_a_sink_makes_it_again(tmp_path, past_limit, monkeypatch):
    made = _makings(monkeypatch)
    _touch_others(past_limit)
    old_file(past_limit / "m3.py", "def put_relu(graph, op):\n    return graph.call_function(op, ())\n")
    assert _findings(tmp_path) == {"passes.py": [7]}
    assert made == [str(tmp_path)]
    assert not _record(tmp_path).indexed  # still past the limit: the marker, taken anew


def test_a_module_gone_that_the_names_came_from_makes_it_again(tmp_path, past_limit, monkeypatch):
    made = _makings(monkeypatch)
    (past_limit / "graph_utils.py").unlink()
    _touch_others(past_limit)
    assert _findings(tmp_path) == {}
    assert made == [str(tmp_path)]
    assert _findings(tmp_path, use_cache=False) == {}


def test_the_marker_stands_for_no_index_in_the_results_cache(tmp_path, past_limit, monkeypatch):
    """A result's dependency on the root's names is checked against the marker as against a
    root with no index (`DerivedDependencies.wrapper_digest`): none, whatever digest the
    marker keeps, and without making the index again."""
    from qlint.analysis import wrapper_record
    from qlint.cache import Cache

    made = _makings(monkeypatch)
    dependency = wrapper_record.dependency(str(tmp_path))
    settings = Settings(select=("QL102",), root=tmp_path, cache_dir=tmp_path / "cache")
    assert Cache.for_settings(settings).derived.wrapper_digest(dependency) is None  # the snapshot holds
    _touch_others(past_limit)
    assert Cache.for_settings(settings).derived.wrapper_digest(dependency) is None  # the long way
    assert made == []


def test_an_edit_of_a_chain_module_alone_keeps_it(tmp_path, monkeypatch):
    """A module calling a wrapper (a link of a chain) is not followed: an edit of it, even one
    dropping the call, keeps the marker (it stands for a count past the limit, and decides
    no finding), and the run finds what a run without a cache does."""
    pkg = _project(tmp_path)
    helpers = (
        "from pkg.graph_utils import insert_op\n\n\ndef add_relu(graph, op):\n    return insert_op(graph, op, ())\n"
    )
    old_file(pkg / "helpers.py", helpers)
    monkeypatch.setattr(wrapper_index, "_MAX_NAMES", 1)
    assert _findings(tmp_path) == {"passes.py": [7]}
    made = _makings(monkeypatch)
    old_file(pkg / "helpers.py", helpers.replace("return insert_op(graph, op, ())", "return op"))
    _touch_others(pkg)
    assert _findings(tmp_path) == {"passes.py": [7]}
    assert made == []
    assert _findings(tmp_path, use_cache=False) == {"passes.py": [7]}


def test_a_module_outside_ascii_holding_no_sink_keeps_it(tmp_path, past_limit, monkeypatch):
    """The marker asks a moved module for a sink's name alone (a record of names also takes
    a module outside ASCII for one that may spell a name: torch's nn/modules/loss.py made it
    again)."""
    made = _makings(monkeypatch)
    _touch_others(past_limit)
    old_file(past_limit / "m3.py", "import os\n\n\ndef f3(x):\n    return os.sep  # \u00e9t\u00e9: nothing inserted\n")
    assert _findings(tmp_path) == {"passes.py": [7]}
    assert made == []
