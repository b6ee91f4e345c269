"""The project index of insertion-wrapper names (`wrapper_index`) that a run over many files
answers QL102's import trigger from: a superset of what the helper search finds, read from
texts, and a dependency the results cache checks (`wrapper_record`)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from qlint.analysis import forked_call
from qlint.analysis.graphs import chain_modules, index_roots, wrapper_index, wrapper_names, wrapper_reads
from qlint.analysis.graphs.module_text import ModuleText
from qlint.analysis.graphs.wrapper_candidates import candidates
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import old_file, settings_for, write_package
from tests.test_ql102_imported_wrappers import GRAPH_UTILS


def _names(*texts: str, renames=()) -> tuple[set[str], set[str]]:
    return candidates([ModuleText(t) for t in texts], list(renames))


def test_a_function_inserting_its_parameter_is_a_candidate():
    functions, classes = _names(GRAPH_UTILS)
    assert {"insert_op", "insert"} <= functions
    assert classes == {"Rewriter"}
    assert "first_user" not in functions and "is_op_node" not in functions  # no insertion


def test_target_passed_by_keyword_or_in_brackets():
    text = (
        "def by_keyword(graph, op):\n    return graph.create_node('call_function', target=op)\n\n\n"
        "def bracketed(graph, op):\n    return graph.call_function((op), ())\n"
    )
    assert _names(text)[0] == {"by_keyword", "bracketed"}


def test_a_fixed_target_or_a_parameter_elsewhere_is_no_candidate():
    text = (
        "def add_relu(graph, node):\n    return graph.call_function(aten.relu.default, (node,))\n\n\n"
        "def create(graph, op):\n    return graph.create_node(op, aten.add.Tensor, ())\n\n\n"
        "class P(ExportPass):\n    def call(self, gm):\n        gm.graph.call_function(aten.relu.default, ())\n"
        "        return super().call(gm)\n"
    )
    assert _names(text) == (set(), set())


def test_a_wrapper_calling_another_one_and_its_new_names():
    helper = "from pkg.graph_utils import insert_op as ins\n\n\ndef relu(graph, op):\n    return ins(graph, op, ())\n"
    # Its module inserts too (elsewhere): only inserting modules are summarised for the search.
    helper += "\n\ndef other(graph):\n    graph.call_function(aten.relu.default, ())\n"
    init = "from .helpers import relu as relu_op\n"
    functions, _ = _names(GRAPH_UTILS, helper, renames=[("insert_op", "ins"), ("relu", "relu_op")])
    assert {"insert_op", "ins", "relu", "relu_op"} <= functions
    assert "other" not in functions
    assert init  # the re-export itself is read from every file's text (`wrapper_reads._renames`)


def test_a_subclass_of_a_class_with_a_wrapper_method_is_a_candidate():
    sub = "from pkg.graph_utils import Rewriter\n\n\nclass Sub(\n    Rewriter,\n):\n    pass\n"
    sub += "\n\nclass Unrelated(Base):\n    def go(self, graph):\n        graph.call_function(aten.relu.default, ())\n"
    assert _names(GRAPH_UTILS, sub)[1] == {"Rewriter", "Sub"}


def test_a_method_call_on_an_instance_counts_where_the_module_spells_its_class():
    # `GraphBuilder(graph).insert(op)` / `self.b.insert(op)` in an inserting module: a class
    # as a link makes `add` and `Holder` candidates.
    builder = "class GraphBuilder:\n    def insert(self, op, args=()):\n        return self.g.call_function(op, args)\n"
    user = (
        "from pkg.builders import GraphBuilder\n\n\n"
        "def add(graph, op):\n    graph.call_function(aten.relu.default, ())\n"
        "    return GraphBuilder(graph).insert(op)\n\n\n"
        "class Holder:\n    def put(self, op):\n        self.b.insert(op)\n"
    )
    functions, classes = _names(builder, user)
    assert {"insert", "add", "put"} <= functions and {"GraphBuilder", "Holder"} <= classes
    # A module that does not spell the class: `x.insert(op)` is a list's, not a link.
    other = user.replace("from pkg.builders import GraphBuilder", "").replace("GraphBuilder(graph)", "items")
    functions, classes = _names(builder, other)
    assert "add" not in functions and "put" not in functions and classes == {"GraphBuilder"}


def test_a_chain_module_is_read_for_a_class_only_with_a_call_of_its_method(tmp_path, monkeypatch):
    # Modules that insert nothing: one builds the class and calls its wrapper method (a link),
    # one only lists it (as pass managers list passes) and is not read again.
    builders = (
        "class GraphBuilder:\n    def insert(self, op, args=()):\n        return self.g.call_function(op, args)\n"
    )
    link = "from pkg.builders import GraphBuilder\n\n\ndef add_op(graph, op):\n"
    link += "    return GraphBuilder(graph).insert(op)\n"
    listing = "from pkg.builders import GraphBuilder\n\nPASSES = [GraphBuilder]\n\n\ndef run(op):\n    return op\n"
    write_package(tmp_path, "pkg", builders=builders, link=link, listing=listing)
    read = []
    more = chain_modules.Chains.more

    def reading(self, *args):
        found = more(self, *args)
        read.extend(os.path.basename(m.path) for m in found)
        return found

    monkeypatch.setattr(chain_modules.Chains, "more", reading)
    index = wrapper_index.build(str(tmp_path))
    assert {"insert", "add_op"} <= index.functions and "GraphBuilder" in index.classes
    assert read == ["link.py"]


def test_a_chain_is_read_as_many_modules_deep_as_the_search_follows(tmp_path):
    # graph_utils <- mid <- mid2 <- b <- c: mid, mid2 and b are read (each calls a function of
    # a module read before it), c is not (`wrapper_chains.CHAIN_LINKS`, three modules deep).
    mid = "from pkg.graph_utils import insert_op\n\n\ndef put(graph, op):\n    return insert_op(graph, op, ())\n"
    mid2 = "from pkg import mid\n\n\ndef put2(graph, op):\n    return mid.put(graph, op)\n"
    b = "from pkg.mid2 import put2\n\n\ndef add_op(graph, op):\n    return put2(graph, op)\n"
    c = "from pkg import b\n\n\ndef add(graph, op):\n    return b.add_op(graph, op)\n"
    write_package(tmp_path, "pkg", graph_utils=GRAPH_UTILS, mid=mid, mid2=mid2, b=b, c=c)
    functions = wrapper_index.build(str(tmp_path)).functions
    assert {"insert_op", "put", "put2", "add_op"} <= functions and "add" not in functions


def test_a_def_row_in_a_string_does_not_end_the_function_it_lies_in():
    text = (
        "def real(graph, op):\n"
        '    example = """\n'
        "def fake(graph):\n"
        "    pass\n"
        '"""\n'
        "    # def commented(graph, op):\n"
        "    return graph.call_function(op, ())\n"
    )
    assert _names(text)[0] == {"real"}


def test_renames_are_read_from_imports_not_prose():
    data = b"from .a import (\n    insert_op as ins,  # why\n)\nimport x.y.z as w\r\n# we run as the caller\n"
    assert wrapper_reads._renames(data) == [("insert_op", "ins"), ("z", "w")]


# ------------------------------------------------------------------ the index in a run


def _project(tmp_path: Path, wrapper: str = GRAPH_UTILS) -> Path:
    """A package with a wrapper module, a pass calling it through a re-export, look-alikes,
    and enough other modules for a run to use the index."""
    others = {f"m{i}": f"import os\n\n\ndef f{i}(x):\n    return os.path.join(x)\n" for i in range(30)}
    pkg = write_package(tmp_path, "pkg", graph_utils=wrapper, **others)
    old_file(pkg / "__init__.py", "from .graph_utils import insert_op as put\n")
    passes = "import torch\n\nfrom pkg import put\n\n\ndef rewrite(gm):\n    put(gm.graph, torch.ops.aten.relu, ())\n"
    old_file(pkg / "passes.py", passes)
    quiet = "import torch\n\nfrom pkg.graph_utils import first_user\n\n\ndef f(n):\n    return first_user(n)\n"
    old_file(pkg / "quiet.py", quiet)
    for path in pkg.iterdir():
        if path.suffix == ".py":
            old_file(path, path.read_text())
    return pkg


def _findings(tmp_path: Path, use_cache: bool = True) -> dict[str, list[int]]:
    settings = Settings(select=("QL102",), root=tmp_path, cache_dir=tmp_path / "cache")
    run = run_check([str(tmp_path / "pkg")], settings, use_cache=use_cache, jobs=1)
    return {os.path.basename(r.path): [d.range.start.row for d in r.diagnostics] for r in run.results if r.diagnostics}


def test_a_helper_importing_in_brackets_behind_a_comment_is_a_wrapper_chain_link(tmp_path, monkeypatch):
    # The row opening the bracket closes one in its comment: the index read the import's
    # words from that row alone, never met `graph_utils` in them, never read the helper, and
    # the run missed what a check of the pass alone finds.
    helpers = (
        "from pkg import (  # the wrappers (see docs())\n"
        "    graph_utils,\n"
        ")\n\n\n"
        "def add_relu(graph, op):\n"
        "    return graph_utils.insert_op(graph, op, ())\n"
    )
    passes = (
        "import torch\n\nfrom pkg.helpers import add_relu\n\n\n"
        "def rewrite(gm):\n    add_relu(gm.graph, torch.ops.aten.relu)\n"
    )
    pkg = _project(tmp_path)
    old_file(pkg / "helpers.py", helpers)
    old_file(pkg / "passes.py", passes)
    alone = check_source(passes, str(pkg / "passes.py"), settings_for(("QL102",)), ProjectIndex())
    assert [d.range.start.row for d in alone.diagnostics] == [7]
    monkeypatch.setattr(forked_call, "call", lambda work, meanwhile=None: work())
    assert _findings(tmp_path, use_cache=False) == {"passes.py": [7]}


def test_a_run_over_many_files_finds_what_single_checks_find(tmp_path, monkeypatch):
    _project(tmp_path)
    built = []
    real = wrapper_index.build
    monkeypatch.setattr(wrapper_index, "build", lambda *a: built.append(a) or real(*a))
    # Made in a forked child (`forked_call`), whose list is its own: here in-process.
    monkeypatch.setattr(forked_call, "call", lambda work, meanwhile=None: work())
    assert _findings(tmp_path, use_cache=False) == {"passes.py": [7]}
    assert built, "the run answered the trigger from the index"


def test_the_index_is_made_apart_from_the_process_that_forks_the_workers(tmp_path, monkeypatch):
    """What reading the project's modules allocates stays in a child: the parent gets the
    names only (the same index as made in-process)."""
    _project(tmp_path)
    pkg = str(tmp_path / "pkg")
    parent = os.getpid()
    made_in = []
    real = wrapper_index.build

    def build(*args):
        made_in.append(os.getpid())
        return real(*args)

    monkeypatch.setattr(wrapper_index, "build", build)
    wrapper_index.enable(None, [os.path.join(pkg, "passes.py")])
    try:
        apart = wrapper_index.index_for(os.path.join(pkg, "passes.py"), ProjectIndex())
    finally:
        wrapper_index.disable()
    assert made_in == []  # not here: the child's list got the pid
    here = build(apart.root)
    assert (apart.functions, apart.classes, apart.digest) == (here.functions, here.classes, here.digest)
    assert (apart.sink_functions, apart.sink_classes) == (here.sink_functions, here.sink_classes)
    assert "insert_op" in apart.functions and made_in == [parent]


def test_the_callers_own_work_runs_once_however_the_index_is_had(tmp_path, monkeypatch):
    """`enable(..., meanwhile)`: done while a child makes the index, and once all the same where
    the index is read from the results cache, or where no path has one."""
    from qlint.cache import Cache

    pkg = _project(tmp_path)
    passes = str(pkg / "passes.py")
    ran: list[int] = []
    store = Cache.for_settings(Settings(root=tmp_path, cache_dir=tmp_path / "cache")).wrappers
    try:
        for paths in ([passes], [passes], []):  # made (and kept in the store), read back, none
            wrapper_index.enable(store, paths, None, lambda: ran.append(os.getpid()))
            made = wrapper_index._INDEXES
            assert ran == [os.getpid()] and (paths == [] or made[next(iter(made))] is not None)
            ran.clear()
            monkeypatch.setattr(wrapper_index, "_built_apart", lambda *a: pytest.fail("read from the store"))
    finally:
        wrapper_index.disable()


@pytest.mark.usefixtures("fresh_project_words")
def test_a_run_loads_what_its_workers_inherit_or_its_checks_import_while_the_index_is_made(tmp_path, monkeypatch):
    """Workers share the project's words cut by a child; a run of one process cuts them
    itself (into a mapping of its own, shared as the child's are: `cut_here`) and imports its
    checks' modules while it waits for the index child (`apart`), not when the results cache
    holds the index, and makes no third process for the words."""
    from qlint import run_indexes, runner
    from qlint.analysis.names import project_words, shared_words
    from qlint.cache import Cache

    pkg = _project(tmp_path)
    todo = sorted(str(p) for p in pkg.glob("*.py"))
    handed, loaded, seen, children = [], [], [], []
    real, start = wrapper_index.enable, shared_words.start

    def enable(store, paths, listed, meanwhile=None, apart=None):
        handed.append((meanwhile is not None, apart is not None))
        real(store, paths, listed, meanwhile, apart)

    def counted(*args):
        children.append(len(seen))
        return start(*args)

    monkeypatch.setattr(wrapper_index, "enable", enable)
    monkeypatch.setattr(shared_words, "start", counted)
    monkeypatch.setattr(run_indexes, "load_for_workers", lambda: loaded.append("inherited"))
    monkeypatch.setattr(run_indexes, "import_for_checks", lambda: loaded.append("imported"))
    cache = Cache.for_settings(Settings(root=tmp_path, cache_dir=tmp_path / "cache"))
    for parallel, store in ((True, None), (False, None), (False, cache), (False, cache)):
        project_words.forget()
        with runner._wrapper_index(store, todo, Settings(select=("QL102",), root=tmp_path), {}, parallel):
            seen.append((project_words._SHARED is not None, project_words.reads()))
    assert handed == [(True, False)] + [(False, True)] * 3
    # The last run finds the index the third made in the store: nothing to wait for.
    assert loaded == ["inherited", "imported", "imported"] and children == [0]
    assert seen == [(True, 0), (True, 0), (True, 0), (False, 0)]
    assert project_words._SHARED is None


def test_work_apart_runs_only_beside_a_child_making_the_index(tmp_path):
    """`enable(..., apart=)`: done first while a child makes the index; never where the index
    is read from the results cache, or where no path has one."""
    from qlint.cache import Cache

    pkg = _project(tmp_path)
    passes = str(pkg / "passes.py")
    ran: list[str] = []
    store = Cache.for_settings(Settings(root=tmp_path, cache_dir=tmp_path / "cache")).wrappers
    try:
        for paths, expected in (([passes], ["apart", "meanwhile"]), ([passes], ["meanwhile"]), ([], ["meanwhile"])):
            wrapper_index.enable(store, paths, None, lambda: ran.append("meanwhile"), lambda: ran.append("apart"))
            assert ran == expected, paths
            ran.clear()
    finally:
        wrapper_index.disable()


def test_the_gates_patterns_are_compiled_before_the_workers_fork(tmp_path):
    """Each worker compiled the trie patterns of the index's names on its first file: the
    parent compiles them once, and the workers inherit them."""
    from qlint import runner
    from qlint.analysis.graphs import called_names, word_trie

    pkg = _project(tmp_path)
    todo = sorted(str(p) for p in pkg.glob("*.py"))
    called_names._attribute_pattern.cache_clear()
    word_trie.substring_pattern.cache_clear()
    with runner._wrapper_index(None, todo, Settings(select=("QL102",), root=tmp_path), {}, True):
        (index,) = wrapper_index._INDEXES.values()
        assert "insert_op" in index.functions
        compiled = (called_names._attribute_pattern.cache_info(), word_trie.substring_pattern.cache_info())
        for names in (index, index.sinks):
            called_names.may_call_attribute("gu.insert_op(g, op)", names.attribute_or_class_names)
            called_names.may_call_attribute("gu.insert_op(g, op)", names.attribute_names)
            word_trie.holds_any("Rewriter", names.classes)
        asked = (called_names._attribute_pattern.cache_info(), word_trie.substring_pattern.cache_info())
        assert compiled[0].misses == asked[0].misses >= 3 and compiled[1].misses == asked[1].misses >= 1
        assert asked[0].hits > compiled[0].hits


def test_a_wrapper_made_later_reaches_a_file_answered_from_the_index(tmp_path):
    pkg = _project(tmp_path, wrapper="def insert_op(graph, op, args):\n    return graph.call_function(print, args)\n")
    assert _findings(tmp_path) == {}
    old_file(pkg / "graph_utils.py", GRAPH_UTILS)  # now it inserts what it is given
    assert _findings(tmp_path) == {"passes.py": [7]}


def test_an_edit_that_cannot_change_the_index_keeps_it(tmp_path, monkeypatch):
    pkg = _project(tmp_path)
    assert _findings(tmp_path) == {"passes.py": [7]}
    old_file(pkg / "m3.py", "import os\n\n\ndef f3(x):\n    return os.sep\n")
    monkeypatch.setattr(wrapper_index, "build", lambda *a: pytest.fail("the index was made again"))
    assert _findings(tmp_path) == {"passes.py": [7]}


def test_no_index_where_it_could_miss_a_module(tmp_path):
    pkg = _project(tmp_path)
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    wrapper_index.enable(None)
    try:
        assert wrapper_index.index_for(str(pkg / "passes.py"), ProjectIndex()) is not None
        # A buffer the editor holds is read through the project index, never listed.
        assert wrapper_index.index_for(str(pkg / "passes.py"), ProjectIndex({str(pkg / "x.py"): ""})) is None
        # A link to a directory outside the listed root.
        os.symlink(outside, pkg / "linked")
        wrapper_index.enable(None)
        assert wrapper_index.index_for(str(pkg / "passes.py"), ProjectIndex()) is None
    finally:
        wrapper_index.disable()
    # A dotted name through a directory the listing skips.
    index = wrapper_names.WrapperIndex(str(tmp_path), frozenset(), frozenset(), "")
    assert index.may_lead_to_function("build.helpers.anything")
    assert not index.may_lead_to_function("pkg.helpers.anything")


def test_a_link_out_of_the_root_made_after_the_index_drops_it(tmp_path):
    """The kept index holds only while no symbolic link leads out of the root: modules found
    through one made since were never read for wrappers (the listing does not follow it)."""
    pkg = _project(tmp_path)
    late = "import torch\n\nfrom pkg.linked.helpers import wrap_it\n\n\ndef rewrite(gm):\n"
    late += "    wrap_it(gm.graph, torch.ops.aten.relu, ())\n"
    old_file(pkg / "late.py", late)
    assert _findings(tmp_path) == {"passes.py": [7]}
    outside = tmp_path.parent / f"{tmp_path.name}-outside"
    outside.mkdir()
    old_file(outside / "helpers.py", "def wrap_it(graph, op, args):\n    return graph.call_function(op, args)\n")
    os.symlink(outside, pkg / "linked")
    fresh = _findings(tmp_path, use_cache=False)
    assert fresh == {"passes.py": [7], "late.py": [7]}
    assert _findings(tmp_path) == fresh


def test_a_warm_run_reads_the_listing_its_discovery_made(tmp_path, monkeypatch):
    """The kept index is checked against the directories the run's discovery listed: no
    directory is listed a second time (ExecuTorch: 640 of them, twice, on every warm run)."""
    from qlint.analysis import project_files

    _project(tmp_path)
    settings = Settings(select=("QL102",), root=tmp_path, cache_dir=tmp_path / ".qlint_cache")
    first = run_check([str(tmp_path)], settings, jobs=1)
    assert first.cached == 0 and [r for r in first.results if r.diagnostics]
    monkeypatch.setattr(project_files, "_DIRS", {})
    monkeypatch.setattr(project_files, "_listed", lambda *a: pytest.fail(f"listed again: {a[0]}"))
    again = run_check([str(tmp_path)], settings, jobs=1)
    assert again.cached == len(first.results)
    assert [r.diagnostics for r in again.results] == [r.diagnostics for r in first.results]


def test_a_relative_path_is_rooted_from_the_working_directory_it_is_asked_in(tmp_path, monkeypatch):
    # The root is kept per path as given: a relative one names another file once the
    # working directory changes (the language server, tests).
    for name in ("a", "b"):
        (tmp_path / name / "pkg").mkdir(parents=True)
        (tmp_path / name / "pyproject.toml").write_text("[project]\nname = 'x'\n")
        (tmp_path / name / "pkg" / "m.py").write_text("")
    roots = []
    for name in ("a", "b", "a"):
        monkeypatch.chdir(tmp_path / name)
        roots.append(index_roots.root_for(os.path.join("pkg", "m.py")))
    assert roots == [str(tmp_path / "a"), str(tmp_path / "b"), str(tmp_path / "a")]


def test_no_index_past_its_limit_of_names_and_the_same_findings(tmp_path, monkeypatch):
    """A root whose index would hold more than `_MAX_NAMES` names gets none (it would rule out
    too few lookups to pay for its making: a copy of the installed torch, 8,600): the search
    looks every name up, and a run finds what it finds with the index."""
    pkg = _project(tmp_path)
    with_index = _findings(tmp_path, use_cache=False)
    assert with_index == {"passes.py": [7]}
    assert wrapper_index.build(str(tmp_path)) is not None
    # graph_utils' insert_op and its re-exported name `put`: two names.
    monkeypatch.setattr(wrapper_index, "_MAX_NAMES", 1)
    assert wrapper_index.build(str(tmp_path)) is None
    wrapper_index.enable(None)
    try:
        assert wrapper_index.index_for(str(pkg / "passes.py"), ProjectIndex()) is None
    finally:
        wrapper_index.disable()
    assert _findings(tmp_path, use_cache=False) == with_index
    assert _findings(tmp_path) == with_index
    assert _findings(tmp_path) == with_index  # warm: no index kept, nothing depends on one


def test_the_limit_counts_every_name_found(tmp_path):
    from qlint.analysis.graphs.wrapper_candidates import TooManyNames

    wrapper = ModuleText("def insert_op(graph, op, args):\n    return graph.call_function(op, args)\n", "g.py")
    assert candidates([wrapper], [("insert_op", "put")], limit=2) == ({"insert_op", "put"}, set())
    with pytest.raises(TooManyNames):
        candidates([wrapper], [("insert_op", "put")], limit=1)
