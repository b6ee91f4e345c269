"""Text scans that read a text as Python reads its names (NFKC, PEP 3131), as the rest of the
rules do (`identifier_text.normalised`; issue 14, stop 70's leftovers).

- QL203's triggers were asked of the raw text: a file whose only switch is `getattr(gm,
  "eval")()` with a fullwidth `getattr`, or whose only graph source is `.module()` so spelled,
  was turned away before the check (which reads the tree, where the names are plain). The
  rule's triggers are now asked of the normalised text (`identifier_triggers`), as QL101's and
  QL102's are.
- The project scans for another module spelling a name (`project_texts.texts_naming`, and the
  modules' words they skip by, `project_words`) read raw bytes: a private matcher that another
  module calls as `matchers._is_relu(n)` with fullwidth letters was taken for one nothing
  calls (QL101 quiet). The words now hold the module's NFKC reading too, where it differs.
- `text_imports` read the import statements and class bases of the raw text: another module's
  `from pkg import checks` (or a base `checks.NodeChecks`) with a fullwidth `c` named a module
  no project has. It now reads the normalised text: the names and modules are the ASCII twin's.

Quiet: a letter NFKC does not map onto the ASCII one (an accented `e`), which names another
attribute for Python too."""

from __future__ import annotations

import pytest

from qlint.analysis.names.text_imports import class_bases, file_imports, import_spans, imported_modules, text_imports
from tests.conftest import check_file, json_findings, rows_of, write_package
from tests.test_chain_depth_paths import OTHERS
from tests.test_ql10x_nfkc_spellings import wide
from tests.test_ql203 import ql203

SWITCHED = """
def f(model, x):
    gm = torch.export.export(model, (x,)).{module}()
    {switch}
"""


@pytest.mark.parametrize(
    ("module", "switch"),
    [
        ("module", f'{wide("getattr")}(gm, "eval")()'),
        (wide("module"), "gm.eval()"),
        (wide("mod") + "ule", "gm.train(False)"),
    ],
)
def test_names_in_fullwidth_letters_reach_the_check(module, switch):
    (d,) = ql203(SWITCHED.format(module=module, switch=switch), head="import torch\n")
    assert d.code == "QL203" and d.range.start.row == 5


@pytest.mark.parametrize(
    ("module", "switch"),
    [
        ("module", 'g\u00e9tattr(gm, "eval")()'),  # `é` is no `e`: another name
        ("mod\u00fcle", "gm.eval()"),  # no `.module()`: no graph
        ("module", 'getattr(gm, "\u00e9val")()'),  # not `eval`
    ],
)
def test_letters_nfkc_keeps_stay_quiet(module, switch):
    assert ql203(SWITCHED.format(module=module, switch=switch), head="import torch\n") == []


TWINS = [
    (
        "from pkg import checks, mixins as m\nimport pkg.graph_utils as gu\n",
        "from pkg import {c}, mixins as m\nimport pkg.{g} as gu\n",
    ),
    ("from .checks import assert_nodes\r", "from .{c} import assert_nodes\r"),
    ("x = 1; import pkg.checks\n", "x = 1; import pkg.{c}\n"),
]


@pytest.mark.parametrize(("plain", "spelled"), TWINS)
def test_another_modules_imports_read_as_their_ascii_twin(tmp_path, plain, spelled):
    spelled = spelled.format(c=wide("checks"), g=wide("graph") + "_utils")
    path = str(tmp_path / "pkg" / "user.py")
    assert text_imports(spelled, "pkg.user", path) == text_imports(plain, "pkg.user", path)
    assert imported_modules(spelled, path) == imported_modules(plain, path)


def test_another_modules_bases_read_as_their_ascii_twin():
    plain = "class T(checks.NodeChecks, unittest.TestCase):\n    pass\n"
    spelled = f"class T({wide('checks')}.NodeChecks, unittest.{wide('Test')}Case):\n    pass\n"
    assert class_bases(spelled) == class_bases(plain) == {("checks", "NodeChecks"), ("unittest", "TestCase")}


def test_ascii_texts_read_as_they_are(tmp_path):
    text = "import os\nfrom pkg import checks  # why\n"
    path = str(tmp_path / "m.py")
    assert import_spans(text) == [(0, 9), (10, 34)]
    assert file_imports(text, path) == [("os", "os"), ("checks", "pkg.checks")]


# A private matcher of a package: reported only where another module of the project names it
# (`never_called`: otherwise nothing can call it), which the project scans find by its words
# (`project_texts.texts_naming`, `project_words`).
MATCHERS = "import torch\n\n\ndef _is_relu(n):\n    return n.target == torch.ops.aten.relu\n"


def _caller(name: str) -> str:
    return f"from pkg import matchers\n\n\ndef pick(n):\n    return matchers.{name}(n)\n"


CALLERS = {
    "ascii": ("_is_relu", [5]),
    "fullwidth": (f"_{wide('is')}_relu", [5]),
    "accented": ("_\u00efs_relu", []),  # `ï` is no `i`: another name, nothing calls the matcher
}


@pytest.mark.parametrize("case", sorted(CALLERS))
def test_a_caller_in_another_module_is_read_as_python_reads_it(tmp_path, case):
    name, rows = CALLERS[case]
    repo = tmp_path / "repo"
    (repo / "pyproject.toml").parent.mkdir()
    (repo / "pyproject.toml").write_text("[project]\nname = 'pkg'\n")
    pkg = write_package(repo, "pkg", matchers=MATCHERS, user=_caller(name), **OTHERS)
    assert rows_of(check_file(pkg / "matchers.py", ("QL101",)).diagnostics) == rows
    for run in (["--no-cache", "pkg"], ["--no-cache", "-j", "2", "pkg"], ["--no-cache", "pkg/matchers.py"]):
        found = json_findings(repo, "--select", "QL101", *run)
        assert [d["location"]["row"] for d in found] == rows, run
