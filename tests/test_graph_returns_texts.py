"""QL203's import trigger reads a candidate helper's module from its text when the text names no
graph source (`graph_returns._graph_returns`): the module's fact is empty then, and parsing it
for its summary was most of what the trigger cost (ExecuTorch: 25 modules summarised for it
alone). The answers, and the dependencies recorded, are those of reading its summary."""

from __future__ import annotations

import os
import textwrap
import time
from pathlib import Path

import pytest

from qlint.analysis.flow import graph_returns
from qlint.analysis.names import module_entries
from qlint.analysis.names.project import ProjectIndex
from qlint.runner import run_check
from qlint.settings import Settings
from qlint.short_digests import content_sha256_hex
from tests.conftest import write_package

CAPTURING = """\
import torch


def capture(model, x):
    return torch.export.export(model, (x,)).module()
"""

# No graph source in the text: the helper returns what it was given.
PLAIN = """\
def attach(model, x):
    return model
"""

MAIN = """\
from pkg.helpers import capture
from pkg.plain import attach
from pkg import plain


def f(model, x):
    gm = capture(model, x)
    gm.eval()
    m = attach(model, x)
    m.eval()
    n = plain.attach(model, x)
    n.train()
"""


def _repo(tmp_path: Path, plain: str = PLAIN) -> tuple[Path, Path]:
    (tmp_path / ".git").mkdir()
    pkg = write_package(tmp_path, "pkg", helpers=CAPTURING, plain=plain)
    main = pkg / "main.py"
    main.write_text(MAIN)
    return main, pkg / "plain.py"


def _parsed(monkeypatch) -> list[str]:
    """The paths the project index parses a summary of from now on."""
    parsed: list[str] = []
    real = module_entries.summarise

    def parse(path, *args, **kwargs):
        parsed.append(os.path.abspath(path))
        return real(path, *args, **kwargs)

    monkeypatch.setattr(module_entries, "summarise", parse)
    return parsed


def test_a_helper_module_naming_no_graph_source_is_not_parsed(tmp_path, monkeypatch):
    main, plain = _repo(tmp_path)
    parsed = _parsed(monkeypatch)
    project = ProjectIndex()
    assert graph_returns.returning_calls(main.read_text(), str(main), project) == ("capture(",)
    assert str(tmp_path / "pkg" / "helpers.py") in parsed  # it names one: its summary decides
    assert str(plain) not in parsed


# Only the module naming no source is looked up: its dependencies are not hidden behind the
# other's (the paths tried before both are the same).
PLAIN_ONLY = """\
from pkg.plain import attach
from pkg import plain


def f(model, x):
    m = attach(model, x)
    m.eval()
    n = plain.attach(model, x)
    n.train()
"""


@pytest.mark.parametrize("where", ["pkg/main.py", "scripts/run.py"])
def test_its_text_is_read_as_its_summary_would_be(tmp_path, monkeypatch, where):
    """The same calls and the same dependencies (the module at its digest, the paths tried
    before it) as reading each module's summary (`module_fact`)."""
    _, plain = _repo(tmp_path)
    main = tmp_path / where
    main.parent.mkdir(exist_ok=True)
    for text, calls in ((MAIN, ("capture(",)), (PLAIN_ONLY, ())):
        main.write_text(text)
        by_text = ProjectIndex()
        assert graph_returns.returning_calls(text, str(main), by_text) == calls
        read = by_text.dependencies_of(str(main))
        with monkeypatch.context() as m:
            m.setattr(graph_returns, "_names_no_source", lambda project, path: False)
            by_summary = ProjectIndex()
            assert graph_returns.returning_calls(text, str(main), by_summary) == calls
        assert by_summary.dependencies_of(str(main)) == read
        assert read[str(plain)] == content_sha256_hex(plain.read_bytes())
        # From a script's directory, `pkg/` there would be imported first.
        assert (str(tmp_path / "scripts" / "pkg") + os.sep in read) == (where == "scripts/run.py")


@pytest.mark.parametrize(
    "plain",
    [
        PLAIN,
        "def attach(model, x:\n",  # no parse: its summary is empty, as its text is
        "# -*- coding: latin-1 -*-\ndef attach(model, x):\n    return model  # \xe9\n",
    ],
    ids=["plain", "syntax-error", "latin-1"],
)
def test_the_trigger_answers_as_before(tmp_path, monkeypatch, plain):
    main, _ = _repo(tmp_path, plain)
    path = tmp_path / "pkg" / "plain.py"
    path.write_bytes(plain.encode("latin-1"))
    text = main.read_text()
    by_text = ProjectIndex()
    assert graph_returns.switches_returned_graph(text, str(main), by_text)
    monkeypatch.setattr(graph_returns, "_names_no_source", lambda project, path: False)
    by_summary = ProjectIndex()
    assert graph_returns.switches_returned_graph(text, str(main), by_summary)
    assert by_summary.dependencies_of(str(main)) == by_text.dependencies_of(str(main))


def test_an_edit_that_makes_the_helper_return_a_graph_is_seen(tmp_path):
    """Loud once the helper's text names a source, in the same process (the text's answer is
    kept per content key) and through the results cache (the module is a dependency)."""
    main, plain = _repo(tmp_path)
    main.write_text(PLAIN_ONLY)  # the trigger alone decides whether the file is read for QL203
    settings = Settings(select=("QL203",), root=tmp_path, cache_dir=tmp_path / "cache")

    def rows(use_cache: bool) -> list[int]:
        run = run_check([str(tmp_path)], settings, use_cache=use_cache, jobs=1)
        return sorted(d.range.start.row for r in run.results if r.path.endswith("main.py") for d in r.diagnostics)

    assert rows(True) == []
    assert rows(True) == []  # answered by the cache
    time.sleep(0.01)  # another stat, whatever the clock's grain
    plain.write_text(
        textwrap.dedent(
            """\
            import torch


            def attach(model, x):
                return torch.export.export(model, (x,)).module()
            """
        )
    )
    assert rows(True) == [7, 9]
    assert rows(False) == [7, 9]
