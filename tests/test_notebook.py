"""Jupyter notebooks: code cells are linted with cell positions, magics do not break the
parse, and fixes go back into the cells with the rest of the file untouched."""

from __future__ import annotations

import json

import pytest

from qlint.notebook import VirtualText, check_notebook, fix_notebook, mask_line
from tests.conftest import settings_for
from tests.test_cli import qlint

MATCHER = ["import torch\n", "\n", "def is_relu(n):\n", "    return n.target == torch.ops.aten.relu"]


def notebook(*cells, indent=1, language="python", list_sources=True) -> str:
    """nbformat's own layout: indent 1, sorted keys, sources as lists of lines."""
    out = []
    for kind, source in cells:
        cell = {"cell_type": kind, "metadata": {}, "source": source if list_sources else "".join(source)}
        if kind == "code":
            cell.update(execution_count=None, outputs=[])
        out.append(cell)
    data = {
        "cells": out,
        "metadata": {"kernelspec": {"display_name": "Python 3", "language": language, "name": "python3"}},
        "nbformat": 4,
        "nbformat_minor": 5,
    }
    return json.dumps(data, indent=indent, sort_keys=True, ensure_ascii=False) + "\n"


NB = notebook(
    ("markdown", ["# Title é\n"]),
    ("code", ["%matplotlib inline\n", "!pip install torch\n", "x = 1\n"]),
    ("code", MATCHER),
)


def test_findings_carry_the_cell_and_the_row_in_the_cell():
    result = check_notebook(NB.encode(), "nb.ipynb", settings_for())
    (d,) = result.diagnostics
    assert d.code == "QL101" and d.cell == 3 and (d.range.start.row, d.range.start.col) == (4, 23)
    assert d.noqa_row == 4


def test_magics_are_masked_so_the_cells_parse():
    assert mask_line("%timeit f()", False) == "pass"
    assert mask_line("    !ls", False) == "    pass"
    assert mask_line("files = !ls", False) == "files = None"
    assert mask_line("torch.ops?", False) == "pass"
    assert mask_line("??torch.ops", False) == "pass"
    assert mask_line("x = 1  # what?", False) == "x = 1  # what?"  # a comment is not help syntax
    assert mask_line("s = 'a%b'", False) == "s = 'a%b'"
    assert mask_line("anything", True) == ""
    virtual = VirtualText.build(["%%bash\necho hi\n", "for i in range(3):\n    %time f(i)\n"])
    assert virtual.text == "\n\nfor i in range(3):\n    pass\n"
    assert virtual.locate(4) == (1, 2)


def test_a_broken_cell_is_ql001_in_that_cell():
    nb = notebook(("code", ["x = 1\n"]), ("code", ["node.target == (torch.ops.aten.relu,\n"]))
    (d,) = check_notebook(nb.encode(), "nb.ipynb", settings_for(select=("QL101",))).diagnostics
    assert d.code == "QL001" and d.cell == 2 and d.range.start.row == 1


def test_invalid_json_and_other_languages():
    (d,) = check_notebook(b'{"cells": [\n  oops', "nb.ipynb", settings_for()).diagnostics
    assert d.code == "QL001" and "not valid JSON" in d.message and d.range.start.row == 2
    r_nb = notebook(("code", MATCHER), language="R")
    assert check_notebook(r_nb.encode(), "nb.ipynb", settings_for()).diagnostics == []


@pytest.mark.parametrize("indent", [1, 2])
@pytest.mark.parametrize("list_sources", [True, False])
def test_fix_rewrites_the_cell_and_keeps_the_json_layout(indent, list_sources):
    nb = notebook(
        ("markdown", ["# Title é\n"]),
        ("code", ["%time 1\n"]),
        ("code", MATCHER),
        indent=indent,
        list_sources=list_sources,
    )
    outcome = fix_notebook(nb.encode(), "nb.ipynb", settings_for(), unsafe=False)
    assert outcome.error is None and outcome.applied == 1 and outcome.remaining.diagnostics == []
    expected = json.loads(nb)
    fixed_source = "".join(MATCHER).replace("aten.relu", "aten.relu.default")
    expected["cells"][2]["source"] = fixed_source.splitlines(keepends=True) if list_sources else fixed_source
    assert outcome.fixed == json.dumps(expected, indent=indent, sort_keys=True, ensure_ascii=False) + "\n"
    assert "%time 1" in outcome.fixed  # the magic is kept as written
    assert "nb.ipynb:cell 3" in outcome.diff("nb.ipynb")


def test_key_order_is_kept_as_written():
    data = {
        "nbformat": 4,
        "nbformat_minor": 5,
        "metadata": {},
        "cells": [{"source": MATCHER, "cell_type": "code", "outputs": [], "metadata": {}, "execution_count": 3}],
    }
    raw = json.dumps(data, indent=2)
    outcome = fix_notebook(raw.encode(), "nb.ipynb", settings_for(), unsafe=False)
    assert outcome.applied == 1 and list(json.loads(outcome.fixed)) == [
        "nbformat",
        "nbformat_minor",
        "metadata",
        "cells",
    ]
    assert outcome.fixed.endswith("}") and outcome.fixed.startswith('{\n  "nbformat": 4')


def test_cli_checks_and_fixes_notebooks_named_or_found(tmp_path):
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / "nb.ipynb").write_text(NB)
    proc = qlint("check", "--no-cache", cwd=tmp_path)  # found in a directory, like ruff
    assert proc.returncode == 1 and proc.stdout.startswith("sub/nb.ipynb:cell 3:4:24: QL101"), proc.stdout
    assert "4 |     return n.target == torch.ops.aten.relu" in proc.stdout  # the cell's own line
    as_json = json.loads(qlint("check", "--no-cache", "--output-format", "json", "sub/nb.ipynb", cwd=tmp_path).stdout)
    assert as_json[0]["cell"] == 3 and as_json[0]["location"] == {"row": 4, "column": 24}
    diff = qlint("fix", "--diff", "--no-cache", cwd=tmp_path)
    assert diff.returncode == 1 and "+++ b/sub/nb.ipynb:cell 3" in diff.stdout
    fixed = qlint("fix", "--no-cache", cwd=tmp_path)
    assert fixed.returncode == 0 and "1 fixed" in fixed.stdout
    data = json.loads((tmp_path / "sub" / "nb.ipynb").read_text())
    assert data["cells"][2]["source"][-1] == "    return n.target == torch.ops.aten.relu.default"
    assert data["cells"][1]["source"][0] == "%matplotlib inline\n"
    again = qlint("check", "--no-cache", cwd=tmp_path)
    assert again.returncode == 0


def test_stdin_notebook(tmp_path):
    proc = qlint("check", "--stdin-filename", "nb.ipynb", "-", cwd=tmp_path, input=NB)
    assert proc.returncode == 1 and proc.stdout.startswith("nb.ipynb:cell 3:4:24: QL101")
    proc = qlint("fix", "--stdin-filename", "nb.ipynb", "-", cwd=tmp_path, input=NB)
    assert proc.returncode == 0 and "torch.ops.aten.relu.default" in json.loads(proc.stdout)["cells"][2]["source"][-1]


@pytest.mark.parametrize("fmt", ["github", "sarif", "lintrunner"])
def test_formats_without_a_cell_field_name_the_cell_in_the_text(tmp_path, fmt):
    (tmp_path / "nb.ipynb").write_text(NB)
    proc = qlint("check", "--no-cache", "--output-format", fmt, "nb.ipynb", cwd=tmp_path)
    # lintrunner takes any exit but 0 as "Linter failed": its format exits 0 with findings.
    assert proc.returncode == (0 if fmt == "lintrunner" else 1)
    assert "cell 3: `torch.ops.aten.relu` is an OpOverloadPacket" in proc.stdout


def test_notebooks_can_be_left_out_of_directory_walks(tmp_path):
    (tmp_path / "pyproject.toml").write_text('[tool.qlint]\nextend-exclude = ["*.ipynb"]\n')
    (tmp_path / "nb.ipynb").write_text(NB)
    assert qlint("check", "--no-cache", ".", cwd=tmp_path).returncode == 0
    assert qlint("check", "--no-cache", "nb.ipynb", cwd=tmp_path).returncode == 1  # named: still checked


def test_a_constant_from_a_module_is_fixed_in_that_module(tmp_path):
    from tests.conftest import write_package

    write_package(tmp_path, "pkg", ops="import torch\n\nOPS = {torch.ops.aten.relu}\n")
    cells = ["from pkg.ops import OPS\n", "\n", "def is_relu(n):\n", "    return n.target in OPS\n"]
    (tmp_path / "nb.ipynb").write_text(notebook(("code", ["x = 1\n"]), ("code", cells)))
    out = json.loads(qlint("check", "--no-cache", "--output-format", "json", "nb.ipynb", cwd=tmp_path).stdout)
    (d,) = out
    assert d["cell"] == 2 and d["location"]["row"] == 4
    (edit,) = [e for e in d["fix"]["edits"] if e.get("filename")]
    assert edit["filename"].endswith("ops.py") and edit["location"]["row"] == 3  # the module's own row


def test_fixing_leaves_a_notebooks_edit_in_another_module_to_a_person(tmp_path):
    from tests.conftest import write_package

    write_package(tmp_path, "pkg", ops="import torch\n\nOPS = {torch.ops.aten.relu}\n")
    cells = ["from pkg.ops import OPS\n", "\n", "def is_relu(n):\n", "    return n.target in OPS\n"]
    nb = notebook(("code", ["x = 1\n"]), ("code", cells))
    (tmp_path / "nb.ipynb").write_text(nb)
    proc = qlint("fix", "--no-cache", ".", cwd=tmp_path)
    assert proc.returncode == 1 and "nb.ipynb:cell 2:4:24: QL101" in proc.stdout and "QL001" not in proc.stdout
    assert (tmp_path / "nb.ipynb").read_text() == nb and "aten.relu}" in (tmp_path / "pkg" / "ops.py").read_text()
