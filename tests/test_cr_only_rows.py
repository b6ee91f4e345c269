"""Modules whose rows end in a lone `\\r` (old Mac files, which Python's tokenizer reads row by
row) read as Python reads them by every text reader of their import words (issue 14). The
readers found a row's end at `\\n` alone: a `\\r`-only module was one row, the names of its
import statements ran together (`text_imports`), and a chain through a wrapper or sink helper
imported in such a module was followed nowhere, even in ASCII. The text the readers read
(`identifier_text.normalised`, and `text_imports` for the readers of raw text) now has each
lone `\\r` made `\\n` (`source.lf_rows`: the same length, the same rows as `LineIndex`'s);
`str.splitlines` would cut rows at form feeds and separators Python does not end a row at.

Real qlint processes sharing one `--cache-dir` (`test_chain_depth_paths._every_path`): a tree
run, `qlint check FILE` and an editor's buffer, cached and not, answer alike."""

from __future__ import annotations

import pytest

from qlint.analysis.identifier_text import normalised, normalised_bytes
from qlint.analysis.names.text_imports import class_bases, import_spans, text_imports
from qlint.source import LineIndex, lf_row_bytes, lf_rows
from tests.test_chain_depth_paths import CHAIN, IMPL, MID, PASSES, USER, B, _every_path, _write, cached_project
from tests.test_ql102_imported_wrappers import GRAPH_UTILS

BOTH = [("pkg/passes.py", 7, "QL102"), ("pkg/user.py", 8, "QL101")]
LINKS = {"passes": PASSES, "b": B, "mid": MID, "user": USER, "chain": CHAIN}


def _cr(text: str) -> str:
    return text.replace("\n", "\r")


@pytest.fixture
def repo(tmp_path):
    repo, found = cached_project(tmp_path, graph_utils=GRAPH_UTILS, impl=IMPL, **{k: _cr(v) for k, v in LINKS.items()})
    assert found == BOTH
    return repo


def test_chains_through_cr_only_modules_are_followed_on_every_path(repo):
    assert _every_path(repo, "passes", "user", buffer_alone=True) == BOTH


def test_a_cr_only_link_edited_to_hand_on_an_overload_is_quiet_on_every_path(repo):
    _write(repo, passes=_cr(PASSES.replace("torch.ops.aten.relu", "torch.ops.aten.relu.default")))
    _write(repo, user=_cr(USER.replace("torch.ops.aten.hardtanh", "torch.ops.aten.hardtanh.default")))
    assert _every_path(repo, "passes", "user", buffer_alone=True) == []


def test_an_import_in_a_comment_of_a_cr_only_module_imports_nothing(repo):
    own = "import torch\r\r\rdef add_b(graph, op):\r    print(op)  # from pkg.b import add_b\r"
    _write(repo, passes=_cr(PASSES.replace("from pkg.b import add_b\n", "")) + own[len("import torch\r") :])
    assert _every_path(repo, "passes") == [("pkg/user.py", 8, "QL101")]


TEXT = "import a.b\rfrom pkg import (x,\r    y)\r\nclass C(a.b.Base,\r  M):\r\x0cpass\x0cimport z\x1cq\u2028\n"


def test_the_rows_are_pythons():
    rows = lf_rows(TEXT)
    assert len(rows) == len(TEXT) and [r.removesuffix("\r") for r in rows.split("\n")] == LineIndex(TEXT).lines
    assert rows.count("\x0c") == 2 and "\u2028" in rows  # no row ends there for Python either
    assert len(TEXT.splitlines()) != len(LineIndex(TEXT).lines)
    assert lf_row_bytes(TEXT.encode()) == rows.encode()
    plain = "import a\r\nimport b\n"
    assert lf_rows(plain) is plain and normalised(plain) is plain and normalised_bytes(plain.encode()) == plain.encode()


def test_the_import_words_and_bases_of_a_cr_only_text():
    assert text_imports(TEXT, None, "m.py") == [("a", "a"), ("x", "pkg.x"), ("y", "pkg.y")]
    assert text_imports(TEXT.replace("\r\n", "\r"), None, "m.py") == [("a", "a"), ("x", "pkg.x"), ("y", "pkg.y")]
    assert class_bases(TEXT) == {("a", "b", "Base"), ("M",)}
    assert [TEXT[s:e].split()[0] for s, e in import_spans(TEXT)] == ["import", "from"]
    assert normalised("import \uff41\rimport b\r") == "import a\nimport b\n"
    assert normalised_bytes(b"import a\rimport b\r") == b"import a\nimport b\n"
