"""Summary facts: what other modules contribute to QL101/QL102's helper search is read from
their summaries (memory and disk), never from their trees, and an edit invalidates it."""

from __future__ import annotations

import ast
import marshal
from pathlib import Path

import pytest

from qlint.analysis.graphs.forwarding_facts import ForwardingFact, RemoteFunction
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.summary import ModuleSummary, _LazyTable
from qlint.analysis.names.summary_facts import plain
from qlint.runner import run_check
from qlint.settings import Settings
from qlint.summary_cache import SummaryStore
from tests.conftest import old_file

HELPERS = """\
import torch


def check(case, m, occurrence, extra=None):
    _inner(case, m, occurrence)


def _inner(case, m, occ):
    case.checkGraphModuleNodes(m, expected_node_occurrence=occ)


def rebinds(case, m, occ):
    occ = dict(occ)
    occ = {k: v for k, v in occ.items()}
    case.checkGraphModuleNodes(m, expected_node_occurrence=occ)


def unpacked(case, m, occ, *rest):
    _inner(case, m, *rest)


class Base:
    @staticmethod
    def nodes(m, occ):
        _inner(None, m, occ)

    def by_keyword(self, m, *, occ):
        self.nodes(m, occ)
"""

USER = """\
import torch
from pkg.helpers import Base, check, rebinds, unpacked


class TestX(Base):
    def test(self, m):
        check(self, m, {torch.ops.aten.hardtanh: 1})
        check(self, m, {}, {torch.ops.aten.relu: 1})
        rebinds(self, m, {torch.ops.aten.linear: 1})
        unpacked(self, m, {torch.ops.aten.sub: 1}, {torch.ops.aten.add: 1})
        self.nodes(m, {torch.ops.aten.mul: 1})
        self.by_keyword(m, occ={torch.ops.aten.div: 1})
        self.checkGraphModuleNodes(m, expected_node_occurrence={})
"""


@pytest.fixture
def package(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    old_file(pkg / "__init__.py", "")
    old_file(pkg / "helpers.py", HELPERS)
    old_file(pkg / "test_user.py", USER)
    return pkg


@pytest.fixture
def fresh_process(monkeypatch):
    """No module remembered in memory by earlier tests (as in a new process)."""
    ProjectIndex._default = None
    monkeypatch.setattr(ProjectIndex, "facts", {})
    from qlint.analysis.graphs import forwarding_memos, forwarding_texts

    for memo in (forwarding_texts._TEXTS, forwarding_memos.IMPORTED, forwarding_memos.SHARED):
        memo.clear()
    yield
    ProjectIndex._default = None


def _rows(pkg: Path, s: Settings, use_cache: bool = True) -> tuple[int, list[int]]:
    run = run_check([str(pkg / "test_user.py")], s, use_cache=use_cache, jobs=1)
    rows = sorted(d.range.start.row for r in run.results for d in r.diagnostics if d.code == "QL101")
    return run.cached, rows


def _parses(monkeypatch) -> list[str]:
    """Every file `ast.parse` is asked to parse (whole or one statement of it)."""
    seen: list[str] = []
    real = ast.parse

    def counting(source, filename="<unknown>", *a, **kw):
        seen.append(str(filename))
        return real(source, filename, *a, **kw)

    monkeypatch.setattr(ast, "parse", counting)
    return seen


# Row 7: through `check` -> `_inner` (another function of the module); row 8: `extra` reaches
# nothing; row 9: the parameter is rebound; row 10: positions after `*rest` are unknowable;
# row 11: a staticmethod of a base class of another module, called bound; row 12: by keyword.
EXPECTED = [7, 11, 12]


def test_helpers_of_another_module_by_name_position_and_keyword(package, tmp_path, fresh_process):
    s = Settings(root=tmp_path, cache_dir=tmp_path / "cache", select=("QL101",))
    assert _rows(package, s, use_cache=False) == (0, EXPECTED)


def test_a_warm_check_reads_the_helpers_from_the_summary_without_parsing_them(
    package, tmp_path, fresh_process, monkeypatch
):
    s = Settings(root=tmp_path, cache_dir=tmp_path / "cache", select=("QL101",))
    assert _rows(package, s) == (0, EXPECTED)
    stored = list((tmp_path / "cache").glob("*/*.summaries/*.summary"))
    assert stored

    # A new process whose own result is not cached: helpers.py is read from its summary.
    ProjectIndex._default = None
    for index in (tmp_path / "cache").rglob("*.index"):  # every shard of the results index
        index.unlink()
    parsed = _parses(monkeypatch)
    assert _rows(package, s) == (0, EXPECTED)
    assert str(package / "helpers.py") not in parsed
    assert str(package / "test_user.py") in parsed  # the counter does see parses

    # An edit of the helpers drops the cached result and their summary: `_inner` no longer
    # reaches a sink, so neither does anything that calls it.
    assert _rows(package, s)[0] == 1
    old_file(package / "helpers.py", HELPERS.replace("expected_node_occurrence=occ", "expected_node_occurrence={}"))
    assert _rows(package, s) == (0, [])
    assert parsed.count(str(package / "helpers.py")) == 1  # once, for its new content
    assert _rows(package, s, use_cache=False) == (0, [])


def test_the_other_modules_tree_is_not_kept(package, tmp_path, fresh_process):
    s = Settings(root=tmp_path, cache_dir=tmp_path / "cache", select=("QL101",))
    assert _rows(package, s, use_cache=False) == (0, EXPECTED)
    index = ProjectIndex._default
    entry = index.entries[str(package / "helpers.py")]
    scope, loaded = entry[1], entry[2]
    # The scope parses statements on demand; the helper search asked for none of them.
    assert isinstance(scope.functions, _LazyTable) and isinstance(scope.classes, _LazyTable)
    assert not scope.functions._built and not scope.classes._built
    assert any(k.startswith("forwarding/") for k in loaded.summary.facts)


def _fact() -> ForwardingFact:
    from qlint.analysis.graphs.sinks import DEFAULT_SINKS, direct_sink_args, parse_sinks

    sinks = parse_sinks(DEFAULT_SINKS)
    from qlint.analysis.graphs.own_calls import own_calls

    return ForwardingFact("test", lambda call, _r: direct_sink_args(call, sinks), ("expected_node",), own_calls)


def test_the_fact_round_trips_through_the_disk_store_and_a_cut_file_is_a_miss(tmp_path):
    fact = _fact()
    tree = ast.parse(HELPERS)
    from qlint.analysis.names.scope import ModuleScope

    scope = ModuleScope.build(tree, "pkg.helpers", "/p/pkg/helpers.py")
    summary = ModuleSummary.of(tree, scope, "pkg.helpers", "d1")
    summary.facts[fact.key] = fact.compute(tree, scope, HELPERS)
    assert plain(summary.facts[fact.key])
    store = SummaryStore(tmp_path / "s")
    store.put("/p/pkg/helpers.py", summary)
    back = store.get("/p/pkg/helpers.py", "d1", "pkg.helpers")
    assert back is not None and back.facts == summary.facts
    view = fact.load("/p/pkg/helpers.py", back, back.facts[fact.key])
    inner = view.functions["_inner"]
    assert isinstance(inner, RemoteFunction) and inner.params == ("case", "m", "occ")
    assert inner.steps == ((("occ",),),)
    assert view.classes["Base"].methods["nodes"].static
    assert view.functions["rebinds"].rebound == frozenset({"occ"})
    assert view.functions["unpacked"].steps == (("n", "_inner", (), ()),)  # nothing after `*rest`
    (file,) = (tmp_path / "s").glob("*.summary")
    good = file.read_bytes()
    file.write_bytes(good[: len(good) - 7])
    assert store.get("/p/pkg/helpers.py", "d1", "pkg.helpers") is None


def test_a_module_without_the_sinks_text_holds_no_helper():
    fact = _fact()
    text = "def f(case, m, occ):\n    case.other(m, occ)\n"
    tree = ast.parse(text)
    from qlint.analysis.names.scope import ModuleScope

    assert fact.compute(tree, ModuleScope.build(tree, "m", "/p/m.py"), text) is None


class _Names:
    """A fact registered after modules were summarised."""

    key = "test-names/1"
    computed = 0

    def compute(self, tree, scope, text):
        _Names.computed += 1
        return sorted(scope.functions)

    def load(self, path, summary, value):
        if not isinstance(value, list):
            raise TypeError("bad")
        return tuple(value)


def test_a_fact_missing_from_a_stored_summary_is_computed_once_and_stored(package, tmp_path, monkeypatch):
    monkeypatch.setattr(ProjectIndex, "facts", {})
    monkeypatch.setattr(ProjectIndex, "store", SummaryStore(tmp_path / "store"))
    helpers = str(package / "helpers.py")
    index = ProjectIndex()
    assert index.fact_at(helpers, _Names()) == ("_inner", "check", "rebinds", "unpacked")
    # Registered: a new index whose summaries come from the store finds it there.
    index2 = ProjectIndex()
    _Names.computed = 0
    assert index2.fact_at(helpers, _Names()) == ("_inner", "check", "rebinds", "unpacked")
    assert _Names.computed == 0
    # A damaged value in the store is computed again, not trusted.
    digest = index2.entries[helpers][0][1]
    summary = ProjectIndex.store.get(helpers, digest, "pkg.helpers")
    summary.facts[_Names.key] = {"not": "a list"}
    ProjectIndex.store.put(helpers, summary)
    assert ProjectIndex().fact_at(helpers, _Names()) == ("_inner", "check", "rebinds", "unpacked")
    assert _Names.computed == 1


def test_an_edited_buffer_changes_the_fact_without_touching_the_store(package, tmp_path, monkeypatch):
    monkeypatch.setattr(ProjectIndex, "facts", {})
    monkeypatch.setattr(ProjectIndex, "store", None)
    helpers = str(package / "helpers.py")
    index = ProjectIndex()
    assert "check" in index.fact_at(helpers, _Names())
    index.update(helpers, "def renamed():\n    pass\n")
    assert index.fact_at(helpers, _Names()) == ("renamed",)
    index.update(helpers, None)
    assert "check" in index.fact_at(helpers, _Names())


def test_extra_sinks_name_another_fact(tmp_path, fresh_process):
    """A helper forwarding to a sink named by `extra-sinks` is one only under that option:
    summaries computed for the default sinks must not answer for it."""
    from tests.conftest import write_package

    pkg = write_package(
        tmp_path,
        "pkg2",
        # The default sinks' text, so the module is read under both settings.
        helpers="def check(m, ops):  # not checkGraphModuleNodes\n    assert_ops(m, ops)\n",
        test_user=(
            "import torch\nfrom pkg2.helpers import check\n\n"
            "def test(m):\n    check(m, [torch.ops.aten.relu])\n    m.expected_node = 1\n"
        ),
    )
    user = str(pkg / "test_user.py")
    base = dict(root=tmp_path, cache_dir=tmp_path / "cache", select=("QL101",))
    plain_run = run_check([user], Settings(**base), use_cache=True, jobs=1)
    assert [d.code for r in plain_run.results for d in r.diagnostics] == []
    options = (("QL101", (("extra-sinks", ["assert_ops:1"]),)),)
    extra = run_check([user], Settings(**base, rule_options=options), use_cache=True, jobs=1)
    assert [(d.code, d.range.start.row) for r in extra.results for d in r.diagnostics] == [("QL101", 5)]


def test_summary_data_is_plain():
    assert plain({"a": [1, None, ("x", 2.0, True)]})
    assert not plain({"a": {1, 2}}) and not plain({1: "x"}) and not plain(marshal)


# ------------------------------------------------------------------ QL201/QL202 class facts

MODELS = """\
import torch


class EvalNet(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(3)
        self.eval()


class Other(torch.nn.Module):
    pass
"""

CAPTURE = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
from pkg.models import EvalNet


def quantize(quantizer):
    m = EvalNet()
    return prepare_pt2e(export(m, (torch.randn(1, 3, 4, 4),)).module(), quantizer)
"""


def test_class_modes_fact():
    from qlint.analysis.flow.class_facts import CLASS_MODES
    from qlint.analysis.names.scope import ModuleScope

    # A wrapper that takes the mode of the module it is given (`self.train(model.training)`).
    # And one that evals the part it stores (`self.encoder = encoder.eval()`).
    evaling = "\n\nclass Evaling(torch.nn.Module):\n    def __init__(self, encoder):\n        super().__init__()\n"
    # And the bases (`nn_bases.local_bases`): a `torch.nn` module, or the bases a class takes
    # from imports, through the module's own classes (`nn_classes` follows them).
    imported = "\n\nfrom pkg.bases import Base\n\n\nclass Sub(Base):\n    pass\n\n\nclass Deeper(Sub):\n    pass\n"
    source = MODELS + MIRRORING + evaling + "        self.encoder = encoder.eval()\n" + imported
    tree = ast.parse(source)
    value = CLASS_MODES.compute(tree, ModuleScope.build(tree, "pkg.models", "/p/pkg/models.py"), source)
    assert plain(value)
    assert CLASS_MODES.load("/p/pkg/models.py", None, marshal.loads(marshal.dumps(value))) == {
        "EvalNet": (True, "", False, True),
        "Other": (False, "", False, True),
        "Mirroring": (False, "inner", False, True),
        "Evaling": (False, "", True, True),
        "Sub": (False, "", False, ("pkg.bases.Base",)),
        "Deeper": (False, "", False, ("pkg.bases.Base",)),
    }
    with pytest.raises((TypeError, ValueError)):
        CLASS_MODES.load("/p/pkg/models.py", None, {"EvalNet": [True, "", False, False]})
    with pytest.raises((TypeError, ValueError)):
        CLASS_MODES.load("/p/pkg/models.py", None, {"EvalNet": [True, "", False, [1]]})
    with pytest.raises((TypeError, ValueError)):
        CLASS_MODES.load("/p/pkg/models.py", None, {"EvalNet": ["yes"]})
    with pytest.raises((TypeError, ValueError)):
        CLASS_MODES.load("/p/pkg/models.py", None, {"EvalNet": [True, None, False]})
    with pytest.raises((TypeError, ValueError)):
        CLASS_MODES.load("/p/pkg/models.py", None, {"EvalNet": [True, "", None]})


MIRRORING = """

class Mirroring(torch.nn.Module):
    def __init__(self, inner):
        super().__init__()
        self.inner = inner
        self.train(inner.training)
"""


def test_a_class_of_another_module_starts_in_eval_mode_from_its_summary(tmp_path, fresh_process, monkeypatch):
    pkg = tmp_path / "pkg"
    pkg.mkdir()
    old_file(pkg / "__init__.py", "")
    old_file(pkg / "models.py", MODELS)
    old_file(pkg / "capture.py", CAPTURE)
    s = Settings(root=tmp_path, cache_dir=tmp_path / "cache", select=("QL201",))

    def findings() -> list[tuple[str, int]]:
        run = run_check([str(pkg / "capture.py")], s, use_cache=True, jobs=1)
        return [(d.code, d.range.start.row) for r in run.results for d in r.diagnostics]

    assert findings() == []  # `self.eval()` in `__init__`: captured in eval mode
    ProjectIndex._default = None
    for index in (tmp_path / "cache").rglob("*.index"):  # every shard of the results index
        index.unlink()
    parsed = _parses(monkeypatch)
    assert findings() == []
    assert str(pkg / "models.py") not in parsed and str(pkg / "capture.py") in parsed
    # Without the switch the model is captured in train mode; the cached result is dropped.
    old_file(pkg / "models.py", MODELS.replace("        self.eval()\n", ""))
    assert findings() == [("QL201", 9)]


def test_sinks_with_the_same_names_at_other_positions_share_no_answer(tmp_path, fresh_process):
    """What a helper forwards is remembered per process: per sink kind, not per sink text."""
    from tests.conftest import write_package

    pkg = write_package(
        tmp_path,
        "pkg3",
        helpers="def check(m, ops):\n    assert_ops(m, ops)\n",
        test_user=(
            "import torch\nfrom pkg3.helpers import check\n\n"
            "def test(m):\n    check(m, [torch.ops.aten.relu])\n    m.expected_node = 1\n"
        ),
    )
    user = str(pkg / "test_user.py")
    base = dict(root=tmp_path, select=("QL101",))

    def rows(spec: str) -> list[int]:
        options = (("QL101", (("extra-sinks", [spec]),)),)
        run = run_check([user], Settings(**base, rule_options=options), use_cache=False, jobs=1)
        return [d.range.start.row for r in run.results for d in r.diagnostics]

    assert rows("assert_ops:0") == []  # `m` reaches the sink, the ops do not
    assert rows("assert_ops:1") == [5]
