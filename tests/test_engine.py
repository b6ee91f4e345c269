"""The per-file pipeline: decoding, parse errors, suppressions and the fixer."""

from __future__ import annotations

import os

import pytest

from qlint.config import load_settings
from qlint.diagnostic import Position
from qlint.engine import check_source
from qlint.fixes import fix_file, fix_text
from tests.conftest import codes, fix, lint, settings_for

PACKET = "import torch\n\ndef f(n):\n    return n.target == torch.ops.aten.relu{tail}\n"


def test_one_in_memory_entry_point_checks_text_as_if_it_were_a_path(tmp_path):
    path = str(tmp_path / "never_written.py")
    result = check_source(PACKET.format(tail=""), path, settings_for())
    assert codes(result.diagnostics) == ["QL101"] and result.diagnostics[0].path == path
    assert not os.path.exists(path)


def test_syntax_error_is_reported_at_its_position():
    (d,) = lint("import torch\nx = node.target == torch.ops.aten.relu ==\n")
    assert d.code == "QL001" and d.range.start == Position(2, 41)


def test_invalid_utf8_nul_and_deep_nesting_are_ql001():
    settings = settings_for()
    bad = check_source(b"x = node.target\n\xff\xfe = 1\n", "bad.py", settings)
    assert codes(bad.diagnostics) == ["QL001"] and bad.diagnostics[0].range.start.row == 2
    nul = check_source(b"x = node.target == torch.ops.aten.relu\0\n", "nul.py", settings)
    assert codes(nul.diagnostics) == ["QL001"]
    deep_text = "x = node.target == torch.ops.aten.relu + " + "(" * 5000 + "1" + ")" * 5000 + "\n"
    deep = check_source(deep_text, "deep.py", settings)
    assert codes(deep.diagnostics) == ["QL001"]


def test_pep263_encoding_is_honoured():
    src = "# -*- coding: latin-1 -*-\n# caf\xe9\nimport torch\ndef f(n):\n    return n.target == torch.ops.aten.relu\n"
    result = check_source(src.encode("latin-1"), "latin.py", settings_for())
    assert codes(result.diagnostics) == ["QL101"]


def test_columns_count_characters_not_bytes():
    (d,) = lint('import torch\ndef f(n):\n    s = "é"; return n.target == torch.ops.aten.relu\n')
    assert d.range.start.col == len('    s = "é"; return n.target == ')


def test_file_without_triggers_is_not_parsed():
    result = check_source("this is not python (\n", "x.py", settings_for())
    assert result.diagnostics == [] and not result.parsed


def test_noqa_forms():
    assert lint(PACKET.format(tail="  # noqa: QL101")) == []
    assert lint(PACKET.format(tail="  # noqa")) == []
    assert lint(PACKET.format(tail="  # NOQA:QL101,E501")) == []
    assert lint("# qlint: noqa\n" + PACKET.format(tail="")) == []
    assert lint("# qlint: noqa: QL101\n" + PACKET.format(tail="")) == []
    assert codes(lint("# qlint: noqa: QL102\n" + PACKET.format(tail=""))) == ["QL101"]
    # a noqa inside a string is not a comment
    assert codes(lint(PACKET.format(tail=' or "# noqa"'))) == ["QL101"]


def test_unused_noqa_is_reported_and_fixed():
    src = "import torch\ndef f(n):\n    return n.target == torch.ops.aten.relu.default  # noqa: QL101, E501\n"
    (d,) = lint(src)
    assert d.code == "QL002" and "QL101" in d.message
    assert fix(src) == src.replace("# noqa: QL101, E501", "# noqa: E501")
    # another tool's code and a bare noqa are not ours to judge
    assert lint(src.replace("QL101, ", "")) == []
    assert lint(src.replace(": QL101, E501", "")) == []


def test_fixes_do_not_overlap_and_reach_a_fixpoint():
    src = (
        "import torch\nOPS = [torch.ops.aten.relu, torch.ops.aten.relu, torch.ops.aten.linear]\n"
        "def f(n):\n    return n.target in OPS\n"
    )
    once = fix(src, select=("QL101",))
    assert "torch.ops.aten.relu.default, torch.ops.aten.relu.default, torch.ops.aten.linear.default" in once
    assert fix(once, select=("QL101",)) == once


def test_fix_that_would_not_parse_is_not_applied(monkeypatch):
    import qlint.fixes as fixes

    real = fixes.apply_edits
    monkeypatch.setattr(fixes, "apply_edits", lambda text, diags, unsafe: (real(text, diags, unsafe)[0] + "(", 1))
    outcome = fix_text(PACKET.format(tail=""), "x.py", settings_for(), unsafe=False)
    assert outcome.error and "re-parse" in outcome.error
    assert outcome.fixed == PACKET.format(tail="")


def test_fix_file_writes_atomically_in_the_files_encoding(tmp_path):
    path = tmp_path / "latin.py"
    src = (
        "# -*- coding: latin-1 -*-\n# caf\xe9\r\nimport torch\r\n"
        "def f(n):\r\n    return n.target == torch.ops.aten.relu\r\n"
    )
    path.write_bytes(src.encode("latin-1"))
    os.chmod(path, 0o640)
    outcome = fix_file(str(path), settings_for(), unsafe=False, write=True)
    assert outcome.applied == 1
    data = path.read_bytes()
    assert data == src.replace("aten.relu\r", "aten.relu.default\r").encode("latin-1")
    assert oct(os.stat(path).st_mode & 0o777) == "0o640"
    assert [p.name for p in tmp_path.iterdir()] == ["latin.py"]  # no temp file left behind


def test_a_check_asked_to_stop_stops_between_rules_and_records_nothing(tmp_path):
    """The language server stops a check whose buffer changed again (`cancelled`)."""
    from qlint.analysis.names.project import ProjectIndex
    from qlint.engine import CheckCancelled

    pkg = tmp_path / "pkg"
    pkg.mkdir()
    (pkg / "__init__.py").write_text("")
    (pkg / "ops.py").write_text("import torch\n\nDQ = {torch.ops.torchao.dequantize_affine}\n")
    use = pkg / "use.py"
    text = (
        "import torch\nfrom .ops import DQ\n\n\ndef count(ep):\n"
        "    return sum(1 for n in ep.graph_module.graph.nodes if n.target in DQ)\n\n\n"
        "RELU = torch.ops.aten.relu\n\n\n"  # spelled here: no import trigger reads ops.py first
        "def insert(graph, x):\n"  # QL102 runs after QL101
        "    return graph.call_function(torch.ops.aten.relu.default, (x,))\n"
    )
    use.write_text(text)
    settings = load_settings([str(tmp_path)])
    project = ProjectIndex()
    asked = []

    def once_ops_was_read() -> bool:
        asked.append(1)
        return bool(project._records.deps.get(str(use)))  # a rule has read ops.py: stop before the next

    with pytest.raises(CheckCancelled):
        check_source(text, str(use), settings, project, cancelled=once_ops_was_read)
    assert len(asked) >= 2
    assert project.dependencies_of(str(use)) == {}  # the partial check left no dependency behind
    full = check_source(text, str(use), settings, project, cancelled=lambda: False)
    assert [d.code for d in full.diagnostics] == ["QL101"]
    assert str(pkg / "ops.py") in full.dependencies
    assert full.diagnostics == check_source(text, str(use), settings, ProjectIndex()).diagnostics


def test_finds_noqa_answers_as_the_whole_search():
    # Tried only where the word `noqa` is: the same answer as the IGNORECASE search of the file.
    from qlint.engine import finds_noqa

    pattern = settings_for().noqa_pattern
    texts = [
        "x = 1\n",
        "x = 1  # noqa\ny = 2  # NoQA: QL101\n",  # the first mention lists no code, the second does
        "x = 1  # noqa: E501\n",
        "x = 1  # noqa: e501, ql101\n",
        "İstanbul = 1  # NOQA:QL201\n",  # lowering changes the length: offsets differ
        "İ = 1  # noqa: E501\n",
        "# noqa\n# noqa :  QL4021\n",
    ]
    for text in texts:
        assert finds_noqa(pattern, text) == (pattern.search(text) is not None), text
    assert [finds_noqa(pattern, t) for t in texts] == [False, True, False, True, True, False, True]
