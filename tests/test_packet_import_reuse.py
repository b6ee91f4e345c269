"""What QL101/QL102's packet gate (`packet_imports.name_kind`) reuses of a module it read
before, and when it reads the module again.

A module whose text the gate let go of (it keeps the texts of the last `_KEPT_MODULES` only)
keeps what was read of it (`_SHELLS`): asked again under the same content key, only its text
is read again, not split into statements again; changed meanwhile, it is read afresh.
"""

from __future__ import annotations

import pytest

from qlint.analysis.graphs import packet_imports, packet_kinds, packet_modules
from qlint.analysis.names.project import ProjectIndex
from tests.conftest import dedented_package

OPS = "import torch\n\nA = 1\nB = {}\n"


@pytest.fixture(autouse=True)
def _fresh():
    for memo in (packet_kinds._KINDS, packet_modules._MODULES, packet_modules._SHELLS):
        memo.clear()
    yield
    for memo in (packet_kinds._KINDS, packet_modules._MODULES, packet_modules._SHELLS):
        memo.clear()


@pytest.fixture
def splits(monkeypatch):
    """The texts split into statements (`_statements`), by module (the name asked first)."""
    out: list[str] = []
    real = packet_modules._statements

    def counted(text, bindings):
        out.append(text.split("\n")[2] if text.startswith("import torch") else text.split("\n")[0])
        return real(text, bindings)

    monkeypatch.setattr(packet_modules, "_statements", counted)
    monkeypatch.setattr(packet_modules, "_KEPT_MODULES", 1)
    return out


@pytest.mark.parametrize(
    ("value", "kind"),
    [
        ("torch.ops.aten.relu", packet_imports.PACKET),
        ("torch.ops.aten", packet_imports.NAMESPACE),
        ("torch.nn.ReLU", ""),
        ("A", ""),
    ],
)
def test_a_module_let_go_of_is_not_split_again(tmp_path, splits, value, kind):
    pkg = dedented_package(tmp_path, {"ops.py": OPS.format(value), "other.py": "C = 2\n"})
    ops, project = str(pkg / "ops.py"), ProjectIndex()
    assert packet_imports.name_kind(project, ops, "A", []) == ""
    assert packet_imports.name_kind(project, str(pkg / "other.py"), "C", []) == ""
    assert ops not in packet_modules._MODULES and ops in packet_modules._SHELLS  # its text let go
    assert packet_imports.name_kind(project, ops, "B", []) == kind
    assert splits == ["A = 1", "C = 2"]
    assert packet_modules._MODULES[ops][1].text == OPS.format(value)  # read again


@pytest.mark.parametrize(
    ("before", "after", "kind"),
    [
        ("None", "torch.ops.aten.relu", packet_imports.PACKET),
        ("torch.ops.aten.relu", "torch.nn.ReLU", ""),
    ],
)
def test_a_module_changed_while_let_go_of_is_read_afresh(tmp_path, splits, before, after, kind):
    pkg = dedented_package(tmp_path, {"ops.py": OPS.format(before), "other.py": "C = 2\n"})
    ops, project = pkg / "ops.py", ProjectIndex()
    assert packet_imports.name_kind(project, str(ops), "A", []) == ""
    assert packet_imports.name_kind(project, str(pkg / "other.py"), "C", []) == ""
    ops.write_text(OPS.format(after) + "# changed\n")
    assert packet_imports.name_kind(project, str(ops), "B", []) == kind
    assert splits == ["A = 1", "C = 2", "A = 1"]
