"""QL101/QL102's and the caller verdicts' text readers read rows and names as every other text
reader does (stop 69's leftovers of `source.lf_rows`, issue 14): through
`identifier_text.normalised` (NFKC, a lone `\\r` made `\\n`, the same rows) or, for bytes,
`source.lf_row_bytes`. A module whose rows end in a lone `\\r` (an old Mac file), or that spells
a name in fullwidth letters, reads as its plain twin.

- `text_imports.may_import` read the raw text: `from pkg.checks \\` continued over a lone `\\r`,
  and `from pkg import checks` in fullwidth letters, imported nothing it could see.
- `kept_caller_verdicts`' shape of the checked module masked a body by its `\\n`s: a `\\r`-only
  body masked to nothing, so a row added in a body no caller reads moved the rows below it
  unseen, and the verdicts were taken where its `\\n` twin works them out again.
- `packet_text.identifiers` read the two already, NFKC-normalising every text outside ASCII
  whole; it now reads through `normalised` too (same answers), and still makes `\\r\\n` one
  `\\n`, deliberately (its row patterns know `\\n` alone).
"""

from __future__ import annotations

import pytest

from qlint.analysis.graphs.packet_text import identifiers, spells_packet
from qlint.analysis.names.text_imports import may_import
from tests.conftest import kept_store
from tests.kept_callers_support import callers_repo, check_anew, edit, new_process
from tests.test_caller_modules import CALLER, HELPER

FULLWIDTH_C = "\uff43"  # NFKC `c`

IMPORTS = {
    "continued": "import os\nfrom pkg.checks \\\n    import assert_nodes\n",
    "bracketed": "from pkg import (\n    other,  # a comment\n    checks,\n)\n",
    "plain": "x = 1\nimport pkg.checks\n",
    "aliased": "from pkg import checks as c\n",
    "prose": "import os\n\n\ndef f():\n    return os  # see pkg.checks\n",
    "attribute": "import pkg\n\npkg.checks.assert_nodes(case, gm, occ)\n",
}


@pytest.mark.parametrize("name", sorted(IMPORTS))
def test_may_import_reads_a_cr_only_text_as_its_plain_twin(name):
    text = IMPORTS[name]
    assert may_import(text.replace("\n", "\r"), "checks") == may_import(text, "checks")
    assert may_import(text.replace("\n", "\r\n"), "checks") == may_import(text, "checks")


def test_may_import_reads_a_continued_cr_only_import():
    assert may_import(IMPORTS["continued"].replace("\n", "\r"), "checks")


@pytest.mark.parametrize("name", sorted(IMPORTS))
def test_may_import_reads_a_fullwidth_name_as_its_plain_twin(name):
    text = IMPORTS[name]
    assert may_import(text.replace("checks", FULLWIDTH_C + "hecks"), "checks") == may_import(text, "checks")


def test_may_import_stays_a_yes_for_imports_and_no_for_other_spellings():
    assert [n for n in sorted(IMPORTS) if may_import(IMPORTS[n], "checks")] == [
        "aliased",
        "bracketed",
        "continued",
        "plain",
    ]


PACKET = "import torch\n\n\ndef f(n):\n    # a note\n    return n.target == torch.ops.aten.relu\n"


@pytest.mark.parametrize("end", ["\r", "\r\n"])
def test_the_packet_gate_reads_rows_ended_otherwise_as_its_plain_twin(end):
    assert identifiers(PACKET.replace("\n", end)) == PACKET
    assert spells_packet(PACKET.replace("\n", end))
    # The comment ends at its row's end: the packet on the next row is code.
    hidden = PACKET.replace("    # a note\n    return", "    # a note\n    return 1  #")
    assert not spells_packet(hidden.replace("\n", end))


def test_the_packet_gate_reads_fullwidth_names_and_leaves_other_text_alone():
    # (The rules' triggers hand the gate the normalised text: `registry`'s `triggered_by`.)
    fullwidth = PACKET.replace("torch.ops", "torch.\uff4fps")  # a fullwidth `o`
    assert identifiers(fullwidth) == PACKET
    # No name changes: the text itself (strings and comments are not normalised).
    prose = PACKET.replace("a note", "a note\u2026")  # `…`
    assert identifiers(prose) is prose


RULES = ("QL201",)


@pytest.fixture
def store(tmp_path, monkeypatch):
    yield from kept_store(tmp_path, monkeypatch, new_process)


# A function below every body the verdicts read: a row added in it moves none of theirs.
LAST = HELPER + "\n\ndef last(path):\n    return path.upper()\n"


@pytest.mark.parametrize("end", ["\n", "\r"])
def test_a_row_added_in_a_body_no_caller_reads_is_seen_as_in_the_plain_twin(tmp_path, store, end):
    text = LAST.replace("\n", end)
    _, path = callers_repo(tmp_path, "export_utils.py", text, {"c0": CALLER, "c1": CALLER})
    assert check_anew(RULES, path, text) == ([], 2)
    # An edit within a row keeps every row where it was: the kept verdicts are taken.
    same_rows = edit(text, "path.upper()", "path.lower()")
    assert check_anew(RULES, path, same_rows) == ([], 0)
    # A row added moves the rows below it: the verdicts are worked out again.
    head = f"def last(path):{end}"
    moved = edit(text, head, f"{head}    path = path.strip(){end}")
    assert check_anew(RULES, path, moved) == ([], 2)
