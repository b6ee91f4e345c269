"""The names of the helpers that forward to QL101's default sinks, kept in the project index
beside the insertion wrappers' (`sink_index`, `wrapper_index`): a superset of what the helper
search finds, read from texts once per run, which QL101's search and import trigger then ask
instead of resolving every import of every file."""

from __future__ import annotations

import os
from pathlib import Path

from qlint.analysis import wrapper_record
from qlint.analysis.graphs import wrapper_index, wrapper_names
from qlint.analysis.graphs.sink_index import holds_sink, sink_module_text
from qlint.analysis.graphs.sinks import DEFAULT_SINKS, parse_sinks, sink_needles
from qlint.analysis.graphs.wrapper_candidates import candidates
from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import old_file, write_package

IMPL = """\
import torch


def check_nodes(case, m, occurrence):
    case.checkGraphModuleNodes(m, None, None, occurrence)


def fixed(case, m):
    case.checkGraphModuleNodes(m, expected_node_occurrence={})


def unrelated(x):
    return x


class QuantTestCase:
    def _test_quantizer(self, model, inputs, quantizer, occurrence):
        self.checkGraphModuleNodes(model, expected_node_occurrence=occurrence)
"""


def test_the_needles_are_the_default_sinks():
    assert {n.decode() for n in wrapper_record.QL101_NEEDLES} == set(sink_needles(parse_sinks(DEFAULT_SINKS)))
    assert holds_sink(b"x.checkGraphModuleNodes(m)") and holds_sink(b"f(expected_node_list=[])")
    assert not holds_sink(b"n.target == torch.ops.aten.relu")


def test_a_function_spanning_a_sink_is_a_candidate():
    functions, classes = candidates([sink_module_text(IMPL)], [])
    assert {"check_nodes", "_test_quantizer"} <= functions and classes == {"QuantTestCase"}
    assert "unrelated" not in functions
    # A sink named only in a string or a comment is none.
    text = 'def doc(m, occ):\n    """checkGraphModuleNodes(m, occ)"""\n    # expected_node=occ\n    return m\n'
    assert candidates([sink_module_text(text)], []) == (set(), set())


def test_a_module_of_other_sinks_is_read_with_their_needles():
    # A rule given `extra-sinks` names more callees: its sink calls stand for sinks there.
    text = "def lower(pattern, fn):\n    register_lowering_pattern(pattern)(fn)\n\n\ndef other(x):\n    return x\n"
    assert candidates([sink_module_text(text)], []) == (set(), set())
    needles = (*sink_needles(parse_sinks(DEFAULT_SINKS)), "register_lowering_pattern")
    assert candidates([sink_module_text(text, "", needles)], []) == ({"lower"}, set())
    # The default needles, spelled out, read as the default does.
    assert candidates([sink_module_text(IMPL, "", sink_needles(parse_sinks(DEFAULT_SINKS)))], []) == candidates(
        [sink_module_text(IMPL)], []
    )


def _project(tmp_path: Path, chain: str | None = None) -> Path:
    """A package with a module of sink helpers, a chain link calling one, users of both, a
    look-alike, and enough other modules for a run to use the index."""
    others = {f"m{i}": f"import os\n\n\ndef f{i}(x):\n    return os.path.join(x)\n" for i in range(30)}
    pkg = write_package(tmp_path, "pkg", impl=IMPL, **others)
    old_file(pkg / "__init__.py", "from .impl import check_nodes as expect_nodes\n")
    if chain is None:
        chain = "from pkg.impl import check_nodes\n\n\ndef expect(case, m, occ):\n    check_nodes(case, m, occ)\n"
    old_file(pkg / "chain.py", chain)
    old_file(pkg / "quiet.py", "def expect_quietly(case, m, occ):\n    print(occ)\n")
    user = "import torch\n\nfrom pkg import expect_nodes\nfrom pkg.{module} import {name}\n\n\n"
    # `.target_dtype`: the rule's trigger text, without a node target or a sink on any row.
    user += "def test(case, m):\n    case.target_dtype = torch.int8\n"
    user += "    {name}(case, m, {{torch.ops.aten.hardtanh: 1}})\n"
    user += "    expect_nodes(case, m, {{torch.ops.aten.hardtanh: 1}})\n"
    old_file(pkg / "by_chain.py", user.format(module="chain", name="expect"))
    old_file(
        pkg / "by_quiet.py",
        user.replace("    expect_nodes(", "    print(").format(module="quiet", name="expect_quietly"),
    )
    # A helper called as a function of the module it imports (`impl.check_nodes(...)`).
    by_module = "import torch\n\nfrom pkg import impl as helpers\n\n\ndef test(case, m):\n"
    by_module += "    case.target_dtype = torch.int8\n    helpers.check_nodes(case, m, {torch.ops.aten.hardtanh: 1})\n"
    old_file(pkg / "by_module.py", by_module)
    for path in pkg.iterdir():
        if path.suffix == ".py":
            old_file(path, path.read_text())
    return pkg


def _findings(tmp_path: Path, use_cache: bool = True, **options) -> dict[str, list[int]]:
    rule_options = tuple((code, tuple(opts.items())) for code, opts in options.items())
    settings = Settings(select=("QL101",), root=tmp_path, cache_dir=tmp_path / "cache", rule_options=rule_options)
    run = run_check([str(tmp_path / "pkg")], settings, use_cache=use_cache, jobs=1)
    return {os.path.basename(r.path): [d.range.start.row for d in r.diagnostics] for r in run.results if r.diagnostics}


def test_the_index_holds_chain_links_and_re_exports(tmp_path):
    _project(tmp_path)
    index = wrapper_index.build(str(tmp_path))
    assert {"check_nodes", "expect_nodes", "expect", "_test_quantizer"} <= index.sink_functions
    assert "expect_quietly" not in index.sink_functions and "unrelated" not in index.sink_functions
    assert index.sinks.may_lead_to_function("pkg.chain.expect")
    assert not index.sinks.may_lead_to_function("pkg.quiet.expect_quietly")
    assert index.sinks.digest == index.digest and index.sinks.dependency == index.dependency


def test_a_run_over_many_files_finds_what_single_checks_find(tmp_path, monkeypatch):
    _project(tmp_path)
    asked = []
    real = wrapper_names.WrapperIndex.may_lead_to_function
    monkeypatch.setattr(wrapper_names.WrapperIndex, "may_lead_to_function", lambda s, f: asked.append(f) or real(s, f))
    # Through a positional argument of a helper, of a chain's link and of a re-export.
    expected = {"by_chain.py": [9, 10], "by_quiet.py": [], "by_module.py": [8]}
    indexed = _findings(tmp_path, use_cache=False)
    assert asked, "the run answered from the index"
    assert {name: indexed.get(name, []) for name in expected} == expected
    wrapper_index.disable()
    monkeypatch.setattr(wrapper_index, "index_for", lambda *a: None)
    assert _findings(tmp_path, use_cache=False) == indexed


def test_a_helper_made_later_reaches_a_file_answered_from_the_index(tmp_path):
    pkg = _project(tmp_path, chain="def expect(case, m, occ):\n    print(occ)\n")
    assert _findings(tmp_path).get("by_chain.py") == [10]
    old_file(pkg / "chain.py", "def expect(case, m, occ):\n    case.checkGraphModuleNodes(m, None, None, occ)\n")
    assert _findings(tmp_path).get("by_chain.py") == [9, 10]


def test_other_sinks_are_not_answered_from_the_index(tmp_path):
    pkg = _project(tmp_path)
    old_file(pkg / "extra.py", "def wrapped(m, ops):\n    my_check(m, ops)\n")
    user = "import torch\n\nfrom pkg.extra import wrapped\n\n\ndef f(m):\n    m.target_dtype = torch.int8\n"
    user += "    wrapped(m, torch.ops.aten.hardtanh)\n"
    old_file(pkg / "by_extra.py", user)
    assert "by_extra.py" not in _findings(tmp_path, use_cache=False)
    assert _findings(tmp_path, use_cache=False, QL101={"extra-sinks": ["my_check:1"]})["by_extra.py"] == [8]


def test_a_kept_record_without_the_sink_names_is_made_again(tmp_path):
    record = wrapper_record.Record(str(tmp_path), {"f"}, {"C"}, {}, {"check_nodes"}, {"QuantTestCase"})
    data = record.to_data()
    again = wrapper_record.from_data(data, str(tmp_path))
    assert again is not None and (again.sink_functions, again.sink_classes) == (
        record.sink_functions,
        record.sink_classes,
    )
    assert again.digest == record.digest != wrapper_record.Record(str(tmp_path), {"f"}, {"C"}, {}).digest
    del data["sink_functions"]
    assert wrapper_record.from_data(data, str(tmp_path)) is None


def test_an_edit_naming_a_sink_drops_the_kept_index(tmp_path):
    pkg = _project(tmp_path)
    stats = {str(p): wrapper_record.trusted_stat(p.stat()) for p in tmp_path.rglob("*.py")}
    record = wrapper_record.Record(str(tmp_path), set(), set(), stats, {"check_nodes"}, set())

    def stat(path: str):
        return wrapper_record.trusted_stat(os.stat(path))

    assert record.still_valid(stat)
    old_file(pkg / "m3.py", "import os\n\n\ndef f3(x):\n    return os.sep\n")
    assert record.still_valid(stat)  # names no sink and no helper: kept
    old_file(pkg / "m4.py", "def g(m, occ):\n    f(m, expected_node_list=occ)\n")
    assert not record.still_valid(stat)
    stats = {str(p): wrapper_record.trusted_stat(p.stat()) for p in tmp_path.rglob("*.py")}
    record = wrapper_record.Record(str(tmp_path), set(), set(), stats, {"check_nodes"}, set())
    assert record.still_valid(stat)
    old_file(pkg / "m5.py", "from pkg.impl import check_nodes\n")  # a helper's name
    assert not record.still_valid(stat)
