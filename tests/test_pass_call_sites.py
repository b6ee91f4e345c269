"""`pass_call_sites` finds the modules spelling a pass's name (`init_fields.modules_naming`)
from what is known of each module's content (`project_search.modules_holding`: its words,
read once per content, and what earlier runs found its text to hold or lack), not by reading
the package again for each name (ao's qat_utils.py: its ~440 modules once per name asked, 5
names), and walks each module once for every name asked of it. The modules and the sites are
those the text scan of the package for the name finds (`project_texts.texts_naming`, what
`modules_naming` was)."""

from __future__ import annotations

import ast
import os

import pytest

from qlint.analysis import scan_memo
from qlint.analysis.context import FileContext
from qlint.analysis.graphs import init_fields, pass_call_sites, project_texts
from qlint.analysis.names import project_words
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.project import ProjectIndex
from qlint.optable import load_op_table
from qlint.source import LineIndex
from tests.test_scan_memo import _new_process, _package, store  # noqa: F401 (a fixture)

CHECKED = """
def fold(gm):
    return gm


def helper(gm):
    return gm


def renamed(gm):
    return gm


def other(gm):
    return gm


def at_module_level(gm):
    return gm


def spelled_only(gm):
    return gm


def fäld(gm):
    return gm


def own_caller(gm):
    fold(gm)
    fäld(gm)
    return helper(gm)
"""

MODULES = {
    # `from ... import fold`, called in a function: one site.
    "a": "from pkg.checked import fold\n\n\ndef run(gm):\n    fold(gm)\n    return gm\n",
    # Called as the module's attribute, twice, in one function.
    "b": "from pkg import checked\n\n\ndef go(gm):\n    checked.fold(gm)\n    checked.helper(gm)\n",
    # Imported under another name: its calls are not spelled `renamed`.
    "c": "from pkg.checked import renamed as r\n\n\ndef f(gm):\n    r(gm)\n",
    # Named in a comment and a string only, and inside a longer name.
    "d": "# spelled_only and helper\nNAMES = ['spelled_only']\nhelper_v2 = 1\n",
    # Does not parse: left out, whatever it spells.
    "broken": "from pkg.checked import other\n\ndef f(:\n    other(gm)\n",
    # A method calling the pass.
    "g": "from pkg.checked import fold\n\n\nclass C:\n    def run(self, gm):\n        return fold(gm)\n",
    # Called at module level: its caller is no function.
    "h": "from pkg.checked import at_module_level\n\nat_module_level(None)\n",
    # Its own function of the name (a namesake), calling it.
    "own": "def other(gm):\n    return gm\n\n\ndef use(gm):\n    return other(gm)\n",
    # A name outside ASCII: found by reading the text, as before.
    "u": "from pkg.checked import fäld\n\n\ndef go(gm):\n    fäld(gm)\n",
    "nothing": "x = 1\n",
    # Called by name and as the module's attribute, one call inside another.
    "mix": (
        "from pkg import checked\nfrom pkg.checked import fold\n\n\n"
        "def f(gm):\n    checked.fold(fold(gm))\n    fold(gm)\n"
    ),
}
NAMES = ["fold", "helper", "renamed", "other", "at_module_level", "spelled_only", "fäld", "own_caller", "absent"]


@pytest.fixture
def pkg(tmp_path, fresh_project_words):
    return _package(tmp_path, checked=CHECKED, **MODULES)


def _ctx(pkg: str) -> FileContext:
    path = os.path.join(pkg, "checked.py")
    return FileContext(
        path, CHECKED, ast.parse(CHECKED), LineIndex(CHECKED), load_op_table(), ProjectIndex(), module_name_for(path)
    )


def _sites(pkg: str, name: str) -> list[tuple[str, str, int, int]]:
    found = pass_call_sites.pass_call_sites(_ctx(pkg), name)
    return [(os.path.basename(m.path), getattr(o, "name", ""), c.lineno, c.col_offset) for m, o, c in found]


def _scanned(ctx: FileContext, name: str) -> list[FileContext]:
    """`modules_naming` as the text scan of every module of the package for the name."""
    found = (project_texts.parsed_module(ctx, path, text) for path, text in project_texts.texts_naming(ctx, name))
    return [other for other in found if other is not None]


def _reference(pkg: str, name: str, monkeypatch) -> list[tuple[str, str, int, int]]:
    """The sites as found through the text scan of every module for the name."""
    with monkeypatch.context() as patched:
        patched.setattr(pass_call_sites, "modules_naming", _scanned)
        return _sites(pkg, name)


def _reads(monkeypatch) -> list[str]:
    """The package's modules read from now on (opened as files or file descriptors)."""
    opened: list[str] = []
    real_open, real_os_open = open, os.open

    def counting(file, *args, **kwargs):
        if str(file).endswith(".py"):
            opened.append(os.path.basename(str(file)))
        return real_open(file, *args, **kwargs)

    def counting_fd(path, *args, **kwargs):
        if str(path).endswith(".py"):
            opened.append(os.path.basename(str(path)))
        return real_os_open(path, *args, **kwargs)

    monkeypatch.setattr("builtins.open", counting)
    monkeypatch.setattr(os, "open", counting_fd)
    return opened


@pytest.mark.parametrize("name", NAMES)
def test_the_sites_are_those_the_text_scan_finds(pkg, name, monkeypatch):
    assert _sites(pkg, name) == _reference(pkg, name, monkeypatch)


@pytest.mark.parametrize("name", [*NAMES, "checked", "C", "gm", "NAMES"])
def test_the_modules_are_those_the_text_scan_finds(pkg, name):
    modules = [(m.path, m.text) for m in init_fields.modules_naming(_ctx(pkg), name)]
    assert modules == [(m.path, m.text) for m in _scanned(_ctx(pkg), name)]


def test_what_the_sites_are(pkg):
    assert _sites(pkg, "fold") == [
        ("checked.py", "own_caller", 31, 4),
        ("a.py", "run", 5, 4),
        ("b.py", "go", 5, 4),
        ("g.py", "run", 6, 15),
        # In the order of the walk: the outer call, then the next statement's, then the inner.
        ("mix.py", "f", 6, 4),
        ("mix.py", "f", 7, 4),
        ("mix.py", "f", 6, 17),
    ]
    assert _sites(pkg, "helper") == [("checked.py", "own_caller", 33, 11), ("b.py", "go", 6, 4)]
    assert _sites(pkg, "fäld") == [("checked.py", "own_caller", 32, 4), ("u.py", "go", 5, 4)]
    assert _sites(pkg, "renamed") == []  # imported as `r` in c.py
    assert _sites(pkg, "at_module_level") == []  # called at h.py's top level
    assert _sites(pkg, "other") == []  # broken.py does not parse; own.py's is its own
    assert _sites(pkg, "spelled_only") == []


def test_each_module_is_walked_once_for_every_name_asked_of_it(pkg, monkeypatch):
    walked: list[str] = []
    real = pass_call_sites.walk_kinds

    def counted(tree, kinds):
        if kinds is pass_call_sites._SITE_KINDS:
            walked.append(tree)
        return real(tree, kinds)

    monkeypatch.setattr(pass_call_sites, "walk_kinds", counted)
    ctx = _ctx(pkg)
    for name in ("fold", "helper", "fäld", "renamed"):
        assert [c.lineno for _, _, c in pass_call_sites.pass_call_sites(ctx, name)][:1] == (
            [] if name == "renamed" else [{"fold": 31, "fäld": 32, "helper": 33}[name]]
        )
    assert walked.count(ctx.tree) == 1


def test_a_module_past_the_words_limit_is_read_as_text(pkg, monkeypatch):
    # No words are kept of a module past their size limit: it is searched as text, as the
    # scan of the package's texts searches it up to its own limit.
    monkeypatch.setattr(project_words, "MAX_BYTES", 60)
    assert len(MODULES["g"]) > 60
    assert _sites(pkg, "fold") == _reference(pkg, "fold", monkeypatch)
    assert ("g.py", "run", 6, 15) in _sites(pkg, "fold")
    names = [os.path.basename(m.path) for m in init_fields.modules_naming(_ctx(pkg), "fold")]
    assert names == [os.path.basename(m.path) for m in _scanned(_ctx(pkg), "fold")]
    assert "g.py" in names


def test_names_asked_one_after_another_read_each_module_once(pkg, monkeypatch):
    project_words.forget()
    opened = _reads(monkeypatch)
    for name in ("fold", "helper", "spelled_only", "absent"):
        _sites(pkg, name)
    # Each module once for its words and once for its hash (every module is a dependency of
    # the check, `project_keys`); one spelling a name again for its text, for each such name.
    assert opened.count("nothing.py") == 2
    assert opened.count("c.py") == 2
    assert opened.count("a.py") == 3  # spells `fold`
    assert opened.count("b.py") == 4  # spells `fold` and `helper`
    assert opened.count("d.py") == 4  # spells `helper` and `spelled_only` (in a comment and a string)


def test_a_later_run_reads_only_the_modules_spelling_the_name(pkg, store, monkeypatch):  # noqa: F811
    found = _sites(pkg, "fold")
    assert len(found) == 7
    scan_memo.flush()
    _new_process()
    project_words.forget()
    opened = _reads(monkeypatch)
    assert _sites(pkg, "fold") == found
    assert sorted(set(opened)) == ["a.py", "b.py", "g.py", "mix.py"]
