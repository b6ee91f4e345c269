"""QL203's import trigger reads two facts of other modules' summaries, `GraphReturns` (the
helpers that return or store a graph) and `FieldBases` (the classes that may store one in a
field), and both are lazy (`SummaryFact.lazy`): computed for the modules the trigger asks them
of, not for every module summarised once a file registered them (issue 13: on ExecuTorch they
were computed for ~560 modules summarised for other readers, and read for 7 and 15). The
answers are those the facts computed with every summary gave, for a module summarised before
they are asked (one more parse) as for one they are asked of first, and an edit of the module
is seen."""

from __future__ import annotations

import ast
import os
import time
from pathlib import Path

import pytest

from qlint.analysis.flow import graph_returns, inherited_fields
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.scope import ModuleScope
from qlint.runner import run_check
from qlint.settings import Settings
from tests.conftest import write_package

BASE = """\
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e


def capture(model, x, q):
    return prepare_pt2e(torch.export.export(model.eval(), (x,)).module(), q)


def attach(holder, model, x, q):
    holder.core = capture(model, x, q)


class Runner:
    def __init__(self, model, x, q):
        self.gm = capture(model, x, q)

    def keep(self, holder, gm):
        holder.gm = gm.module()
"""

# The same names, nothing that returns or stores a graph.
PLAIN_BASE = """\
def capture(model, x, q):
    return model


def attach(holder, model, x, q):
    holder.core = model


class Runner:
    def __init__(self, model, x, q):
        self.gm = model
"""

USER = """\
from pkg.base import Runner, capture


class Calibrated(Runner):
    def calibrate(self, x):
        self.gm.eval()


def f(model, x, q):
    gm = capture(model, x, q)
    gm.eval()
"""

# Names the base module, so that a check of it summarises the base for its names first.
OTHER = """\
from pkg.base import Runner


def build(model, x, q):
    return Runner(model, x, q)
"""

FACTS = (graph_returns._FACT, inherited_fields._FACT)


@pytest.fixture
def package(tmp_path, monkeypatch) -> Path:
    monkeypatch.setattr(ProjectIndex, "facts", {})  # the registered facts are process-wide
    monkeypatch.setattr(ProjectIndex, "store", None)
    (tmp_path / ".git").mkdir()
    return write_package(tmp_path, "pkg", base=BASE, user=USER, other=OTHER)


def _computed(monkeypatch) -> list[tuple[str, str]]:
    """(fact key, path) of every computation of the two facts from now on."""
    computed: list[tuple[str, str]] = []
    for fact in FACTS:
        real = type(fact).compute

        def compute(self, tree, scope, text, real=real):
            computed.append((self.key, scope.path))
            return real(self, tree, scope, text)

        monkeypatch.setattr(type(fact), "compute", compute)
    return computed


def _eager(path: Path) -> list:
    """Each fact as computed from the module's own parse (what every summary held before)."""
    text = path.read_text()
    tree = ast.parse(text)
    scope = ModuleScope.build(tree, module_name_for(str(path)), str(path))
    return [fact.load(str(path), None, fact.compute(tree, scope, text)) for fact in FACTS]


def _asked(index: ProjectIndex, requester: Path) -> list:
    return [index.module_fact("pkg.base", str(requester), fact) for fact in FACTS]


def test_a_module_summarised_for_its_names_computes_neither_fact(package, monkeypatch):
    computed = _computed(monkeypatch)
    index = ProjectIndex(track_dependents=False)
    index.begin_check()
    for fact in FACTS:  # registered, as the import trigger registers them for the run
        index.register_fact(fact)
    assert index.module_scope("pkg.base", str(package / "other.py")) is not None
    assert computed == []


@pytest.mark.parametrize("summarised_first", [False, True])
def test_the_facts_are_those_of_the_module_s_own_parse(package, monkeypatch, summarised_first):
    computed = _computed(monkeypatch)
    index = ProjectIndex(track_dependents=False)
    index.begin_check()
    for fact in FACTS:
        index.register_fact(fact)
    if summarised_first:
        index.module_scope("pkg.base", str(package / "other.py"))
    expected = _eager(package / "base.py")
    # Not vacuous: the base returns and stores graphs, and a class of it may hold one.
    assert expected == [frozenset({"capture", "attach", "Runner.keep"}), {"Runner": []}]
    computed.clear()
    assert _asked(index, package / "user.py") == expected
    assert sorted(computed) == sorted((f.key, os.path.abspath(package / "base.py")) for f in FACTS)
    assert _asked(index, package / "user.py") == expected  # kept with the summary: not again
    assert len(computed) == 2


def test_the_trigger_answers_after_the_module_was_summarised_for_its_names(package):
    index = ProjectIndex(track_dependents=False)
    index.begin_check()
    for fact in FACTS:
        index.register_fact(fact)
    index.module_scope("pkg.base", str(package / "other.py"))
    user = package / "user.py"
    assert inherited_fields.inherits_graph_field(user.read_text(), str(user), index)
    assert graph_returns.returning_calls(user.read_text(), str(user), index) == ("capture(",)


def test_an_edit_of_the_base_is_seen_through_the_results_cache(package, tmp_path):
    """The module read for a lazy fact is a dependency of the trigger's answer, as it was."""
    settings = Settings(select=("QL203",), root=tmp_path, cache_dir=tmp_path / "cache")

    def rows(use_cache: bool) -> list[int]:
        run = run_check([str(tmp_path)], settings, use_cache=use_cache, jobs=1)
        return sorted(d.range.start.row for r in run.results if r.path.endswith("user.py") for d in r.diagnostics)

    assert rows(True) == [6, 11]
    assert rows(True) == [6, 11]  # answered by the cache
    time.sleep(0.01)  # another stat, whatever the clock's grain
    (package / "base.py").write_text(PLAIN_BASE)
    assert rows(True) == []
    assert rows(False) == []
