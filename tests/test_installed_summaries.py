"""Modules of installed packages (`installed_classes`) are summarised once per content in the
summary store, like the project's own: a later run reads the summary and parses only the
classes asked for, and a changed module (an upgrade) is parsed again."""

from __future__ import annotations

import ast
import textwrap

import pytest

from qlint.analysis import forked_call
from qlint.analysis.flow import installed_classes
from qlint.analysis.names import piecewise_parse
from qlint.analysis.names.project import ProjectIndex
from qlint.summary_cache import SummaryStore

HELPERS = textwrap.dedent(
    """
    import torch


    class Helpers:
        class ConvOnly(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.conv = torch.nn.Conv2d(3, 3, 3)

        class ConvBn(torch.nn.Module):
            def __init__(self):
                super().__init__()
                self.bn = torch.nn.BatchNorm2d(3)
    """
)
NAME = "fakepkg.helpers.Helpers.ConvBn"


@pytest.fixture
def installed(tmp_path, monkeypatch):
    site = tmp_path / "site-packages"
    (site / "fakepkg").mkdir(parents=True)
    (site / "fakepkg" / "__init__.py").touch()
    helpers = site / "fakepkg" / "helpers.py"
    helpers.write_text(HELPERS)
    monkeypatch.setattr(installed_classes, "site_dirs", lambda: (str(site),))
    installed_classes.module_file.cache_clear()
    store = SummaryStore(tmp_path / "summaries")
    monkeypatch.setattr(ProjectIndex, "store", store)
    yield helpers
    installed_classes.module_file.cache_clear()
    installed_classes._SCOPES.pop(str(helpers), None)


def _whole_module_parses(monkeypatch, path) -> list[int]:
    """Counts parses of the whole module (a statement's own parse is padded and shorter)."""
    seen: list[int] = []
    real = ast.parse

    def counting(source, *args, **kwargs):
        if isinstance(source, str) and source == path.read_text():
            seen.append(1)
        return real(source, *args, **kwargs)

    monkeypatch.setattr(installed_classes.ast, "parse", counting)
    return seen


def _ask(path) -> ast.ClassDef:
    installed_classes._SCOPES.pop(str(path), None)  # as a new process would start
    found = installed_classes.installed_class(NAME, ProjectIndex(), "user.py")
    assert found is not None
    return found[0]


def test_a_later_run_reads_the_summary_and_parses_only_the_class(installed, monkeypatch):
    first = _ask(installed)
    parses = _whole_module_parses(monkeypatch, installed)
    again = _ask(installed)
    assert parses == []
    # The same class as a parse of the whole module finds, positions included.
    assert ast.dump(again, include_attributes=True) == ast.dump(first, include_attributes=True)
    assert again.lineno == HELPERS.splitlines().index("    class ConvBn(torch.nn.Module):") + 1


def test_a_changed_module_is_parsed_again(installed, monkeypatch):
    _ask(installed)
    installed.write_text(HELPERS.replace("self.bn = torch.nn.BatchNorm2d(3)", "self.bn = torch.nn.Identity()"))
    parses = _whole_module_parses(monkeypatch, installed)
    node = _ask(installed)
    assert parses == [1]
    assert "Identity" in ast.unparse(node)


def test_a_module_that_does_not_parse_has_no_classes(installed):
    installed.write_text(HELPERS + "\nclass Broken(:\n")
    installed_classes._SCOPES.pop(str(installed), None)
    assert installed_classes.installed_class(NAME, ProjectIndex(), "user.py") is None


def test_a_run_parses_the_module_here_without_forking(installed, monkeypatch):
    """A command-line run parses the whole module in its own process: a forked child copied
    the pages it touched and counted twice at the run's peak while it lived."""
    here = _ask(installed)
    monkeypatch.setattr(ProjectIndex, "store", None)
    monkeypatch.setattr(ProjectIndex, "fixed_content", True)
    monkeypatch.setattr(forked_call.os, "fork", lambda: pytest.fail("forked for an installed module"))
    parses = _whole_module_parses(monkeypatch, installed)
    again = _ask(installed)
    assert parses == [1]
    assert ast.dump(again, include_attributes=True) == ast.dump(here, include_attributes=True)


def test_the_check_depends_on_the_installed_module_when_served_from_memory(installed):
    project = ProjectIndex()
    _ask(installed)
    assert installed_classes.installed_class(NAME, project, "/x/user.py") is not None
    assert str(installed) in project.dependencies_of("/x/user.py")


def test_a_large_module_is_parsed_in_pieces_into_the_same_class(installed, monkeypatch):
    """Parsed in the middle of a check, beside that file's tree: torch's common_quantization.py
    (113 KB), parsed whole while ao's test_quantize_pt2e.py was checked, made a run's peak. The
    smaller module above is one parse (`test_a_run_parses_the_module_here_without_forking`)."""
    filler = "".join(f"\n\ndef helper_{i}(x):\n    return x + {i}\n" for i in range(2500))
    assert len(HELPERS + filler) > piecewise_parse._SMALL
    installed.write_text(HELPERS + filler)
    monkeypatch.setattr(ProjectIndex, "store", None)
    parses = _whole_module_parses(monkeypatch, installed)
    node = _ask(installed)
    assert parses == []  # never the whole text at once
    whole = next(n for n in ast.walk(ast.parse(HELPERS + filler)) if getattr(n, "name", "") == "ConvBn")
    assert ast.dump(node, include_attributes=True) == ast.dump(whole, include_attributes=True)
