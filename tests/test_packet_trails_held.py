"""QL101/QL102's packet gate (`packet_imports.name_kind`) compares a known name's trail (the
keys of the modules it was read from) once per run whose files hold still
(`ProjectIndex.contents_fixed` with `fix_layout`), not at every ask: a check of one buffer of
torch's `_dynamo` asked ~7,500 times. Outside such a run (the language server), and in the
next run, the trail is compared again, so a module changed meanwhile is read afresh."""

from __future__ import annotations

import contextlib

import pytest

from qlint.analysis.graphs import file_keys, packet_imports, packet_kinds, packet_modules
from qlint.analysis.names.project import ProjectIndex
from tests.conftest import dedented_package

OPS = "import torch\n\nA = {}\n"


@pytest.fixture(autouse=True)
def _fresh():
    memos = (packet_kinds._KINDS, packet_modules._MODULES, packet_modules._SHELLS)
    for memo in memos:
        memo.clear()
    yield
    for memo in memos:
        memo.clear()


@pytest.fixture
def keys_asked(monkeypatch) -> list[str]:
    asked: list[str] = []
    real = file_keys.content_key
    monkeypatch.setattr(file_keys, "content_key", lambda project, path: asked.append(path) or real(project, path))
    return asked


@contextlib.contextmanager
def _held_still():
    ProjectIndex.fix_layout(True)
    try:
        with ProjectIndex.contents_fixed():
            yield
    finally:
        ProjectIndex.fix_layout(False)


def _ops(tmp_path):
    pkg = dedented_package(tmp_path, {"ops.py": OPS.format("torch.nn.ReLU")})
    return pkg / "ops.py", ProjectIndex()


def test_a_trail_that_held_is_not_compared_again_in_the_run(tmp_path, keys_asked):
    ops, project = _ops(tmp_path)
    with _held_still():
        assert packet_imports.name_kind(project, str(ops), "A", []) == ""
        assert packet_imports.name_kind(project, str(ops), "A", []) == ""
        compared = len(keys_asked)
        assert packet_imports.name_kind(project, str(ops), "A", []) == ""
        assert packet_imports.name_kind(project, str(ops), "A", []) == ""
    assert compared > 0 and len(keys_asked) == compared


@pytest.mark.parametrize("held", [False, True])
def test_a_module_changed_between_asks_is_read_afresh(tmp_path, keys_asked, held):
    """The language server (files change while it runs) compares at every ask; a run that
    holds files still compares again in the next run."""
    ops, project = _ops(tmp_path)
    with _held_still() if held else contextlib.nullcontext():
        assert packet_imports.name_kind(project, str(ops), "A", []) == ""
        assert packet_imports.name_kind(project, str(ops), "A", []) == ""
    ops.write_text(OPS.format("torch.ops.aten.relu").replace("{}", "torch.ops.aten.relu") + "# changed\n")
    with _held_still() if held else contextlib.nullcontext():
        assert packet_imports.name_kind(project, str(ops), "A", []) == packet_imports.PACKET


def test_each_project_index_compares_its_own(tmp_path, keys_asked):
    """A buffer is part of the keys: another index (one holding the module's buffer) does not
    take the trail as held."""
    ops, project = _ops(tmp_path)
    with _held_still():
        assert packet_imports.name_kind(project, str(ops), "A", []) == ""
        buffered = ProjectIndex({str(ops): "import torch\n\nA = torch.ops.aten.relu\n"})
        assert packet_imports.name_kind(buffered, str(ops), "A", []) == packet_imports.PACKET
