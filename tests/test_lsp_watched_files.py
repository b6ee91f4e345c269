"""`qlint server` with and without the client's file watcher, over the wire.

A client that can (`workspace.didChangeWatchedFiles.dynamicRegistration`) is asked to watch
the workspace; from then on the server keeps what its checks read of the files there until
the watcher reports them (`ProjectIndex.watch`). A file created, changed or deleted on disk
outside the editor must still change the diagnostics of an open buffer whose check depends
on it: at once when the watcher reports it, and without a watcher at the buffer's next check
(each check stats what it depends on). The open buffer here inserts packets whose only
consumer is another module of the project (QL102's scan of the project's own consumers):
its finding comes and goes with that module.
"""

from __future__ import annotations

import os
import shutil
import time
from pathlib import Path

import pytest

pytest.importorskip("pygls")

from qlint.lsp.client import LspClient
from tests.conftest import write_package
from tests.test_edited_rechecks import OVERLOAD_ONLY
from tests.test_ql102_consumers import ADD, PIPELINE, REMOVE

CREATED, CHANGED, DELETED = 1, 2, 3
SLOW = 60.0  # a shared machine under load: the first check of a project may take seconds
WATCHING = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}


class Editor:
    """One open buffer (`pkg/add.py`) and the disk changes made beside it."""

    def __init__(self, client: LspClient, pkg: Path, watching: bool):
        self.client, self.pkg, self.watching = client, pkg, watching
        self.text = (pkg / "add.py").read_text()
        self.uri = client.open(pkg / "add.py", self.text)
        self.version = 1

    def codes(self) -> list[str]:
        return [d["code"] for d in self.client.diagnostics(self.uri, self.version, timeout=SLOW)]

    def on_disk(self, *changes: tuple[Path, int]) -> list[str]:
        """The diagnostics after `changes` were made on disk: reported by the watcher (the
        buffer is checked again as it is), else seen at the buffer's next edit."""
        client = self.client
        if self.watching:
            seen = len(client.received)
            events = [{"uri": path.as_uri(), "type": kind} for path, kind in changes]
            client.notify("workspace/didChangeWatchedFiles", {"changes": events})
            params = client.wait_for(
                "textDocument/publishDiagnostics", lambda p: p["uri"] == self.uri, since=seen, timeout=SLOW
            )
            return [d["code"] for d in params["diagnostics"]]
        self.version += 1
        self.text += "\n"
        client.send(client.change(self.uri, self.version, self.text))
        return self.codes()


@pytest.fixture(params=[True, False], ids=["watched", "unwatched"])
def editor(request, tmp_path: Path):
    watching = request.param
    workspace = tmp_path / "ws"
    workspace.mkdir()
    pkg = write_package(workspace, "pkg", add=ADD, pipeline=PIPELINE.format(between="pass"))
    client = LspClient(workspace)
    try:
        client.initialize(workspace, capabilities=WATCHING if watching else {})
        if watching:
            client.server_request("client/registerCapability", timeout=SLOW)
            deadline = time.monotonic() + SLOW  # the server takes the registration's answer in
            while client.request("qlint/debugWatchedFiles", timeout=SLOW)["roots"] is None:
                assert time.monotonic() < deadline
                time.sleep(0.05)
        opened = Editor(client, pkg, watching)
        assert opened.codes() == ["QL102"]
        yield opened
        if watching:  # what the checks read was kept, not stat'ed again: the events were needed
            assert client.request("qlint/debugWatchedFiles", timeout=SLOW)["roots"] == [str(workspace)]
        else:
            assert client.request("qlint/debugWatchedFiles", timeout=SLOW)["roots"] is None
    finally:
        client.close()


def _settle(editor: Editor) -> None:
    """With a watcher: the server keeps keys once a check ran after the registration."""
    if editor.watching:
        info = editor.client.request("qlint/debugWatchedFiles", timeout=SLOW)
        assert info["kept"] > 0, info


def test_a_consumer_module_created_changed_and_deleted_on_disk(editor: Editor):
    remove = editor.pkg / "remove.py"
    _settle(editor)
    remove.write_text(REMOVE)
    assert editor.on_disk((remove, CREATED)) == []
    _settle(editor)
    remove.write_text(OVERLOAD_ONLY)
    assert editor.on_disk((remove, CHANGED)) == ["QL102"]
    remove.write_text(REMOVE)
    assert editor.on_disk((remove, CHANGED)) == []
    remove.unlink()
    assert editor.on_disk((remove, DELETED)) == ["QL102"]


def test_a_directory_moved_in_and_deleted_is_one_event(editor: Editor, tmp_path: Path):
    pipeline = editor.pkg / "pipeline.py"
    pipeline.write_text(pipeline.read_text().replace("from pkg.remove import", "from pkg.passes.remove import"))
    staged = tmp_path / "staged"
    staged.mkdir()
    (staged / "__init__.py").touch()
    (staged / "remove.py").write_text(REMOVE)
    assert editor.on_disk((pipeline, CHANGED)) == ["QL102"]
    _settle(editor)
    os.rename(staged, editor.pkg / "passes")  # as a `git checkout` or a file manager does
    assert editor.on_disk((editor.pkg / "passes", CREATED)) == []
    shutil.rmtree(editor.pkg / "passes")
    assert editor.on_disk((editor.pkg / "passes", DELETED)) == ["QL102"]


def test_the_watcher_asked_for_reports_directories_too(tmp_path: Path):
    client = LspClient(tmp_path)
    try:
        client.initialize(tmp_path, capabilities=WATCHING)
        asked = client.server_request("client/registerCapability", timeout=SLOW)
        (registration,) = asked["params"]["registrations"]
        watchers = registration["registerOptions"]["watchers"]
        assert {"globPattern": "**/*", "kind": 5} in watchers  # created and deleted, any name
        assert {"globPattern": "**/*.py"} in watchers
    finally:
        client.close()


def test_which_checks_a_change_on_disk_makes_due(tmp_path: Path):
    from qlint.analysis.project_files import listing_dependency
    from qlint.lsp.disk_changes import recheck_due

    root = str(tmp_path / "ws")
    read = frozenset({f"{root}/pkg/ops.py", f"{root}/pkg/sub/missing.py"})
    assert recheck_due({f"{root}/pkg/ops.py"}, read)
    assert recheck_due({f"{root}/pkg/sub"}, read)  # a directory: all it held
    assert not recheck_due({f"{root}/pkg/other.py"}, read)
    assert not recheck_due(set(), read)
    scanned = frozenset({listing_dependency(f"{root}/pkg", True, ["RemovePass"])})
    assert recheck_due({f"{root}/pkg/deep/new.py"}, scanned)
    assert recheck_due({root}, scanned)  # the scanned directory itself went
    assert not recheck_due({f"{root}/elsewhere/new.py"}, scanned)
    flat = frozenset({listing_dependency(f"{root}/pkg", False, ["RemovePass"])})
    assert recheck_due({f"{root}/pkg/new.py"}, flat)
    assert not recheck_due({f"{root}/pkg/deep/new.py"}, flat)
