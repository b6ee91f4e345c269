"""What `qlint server` must survive, and the editor features beyond diagnostics, over the wire.

Each fault case sends the server something a buggy client (or a busy user) really sends,
then checks the answer and that the server keeps working afterwards.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pygls")

from qlint.lsp.client import DEFAULT_TIMEOUT as TIMEOUT
from qlint.lsp.client import LspClient
from tests.conftest import write_package
from tests.snippets import LSP_FINDING as FINDING


def raw_request(client: LspClient, method: str, params, timeout: float = TIMEOUT) -> dict:
    """The whole reply, error or result."""
    client._next_id += 1
    msg_id = client._next_id
    client.send({"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params})
    return client.wait(lambda m: m.get("id") == msg_id and "method" not in m, timeout, f"reply to {method}")


def popups(client: LspClient) -> list[dict]:
    return [m["params"] for m in client.received if m["method"] == "window/showMessage"]


def published_versions(client: LspClient, uri: str) -> list:
    return [
        m["params"].get("version")
        for m in client.received
        if m["method"] == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
    ]


def still_works(client: LspClient, workspace: Path, name: str) -> None:
    uri = client.open(workspace / name, FINDING)
    assert [d["code"] for d in client.diagnostics(uri, 1)] == ["QL101"]
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    return tmp_path


@pytest.fixture
def client(workspace: Path):
    lsp = LspClient(workspace)
    try:
        lsp.initialize(workspace)
        yield lsp
    finally:
        lsp.close()


def test_malformed_json_is_answered_with_a_parse_error_not_a_popup(client: LspClient, workspace: Path):
    body = b'{"jsonrpc": "2.0", "id": 7, "method": "textDocument/hover", "params": {'
    client.proc.stdin.write(b"Content-Length: %d\r\n\r\n" % len(body) + body)
    client.proc.stdin.flush()
    reply = client.wait(lambda m: "error" in m and m.get("id") is None, TIMEOUT, "parse error")
    assert reply["error"]["code"] == -32700
    still_works(client, workspace, "after_bad_json.py")
    assert popups(client) == []


def test_unknown_methods(client: LspClient, workspace: Path):
    reply = raw_request(client, "qlint/noSuchMethod", {})
    assert reply["error"]["code"] == -32601
    client.notify("qlint/noSuchNotification", {"x": 1})
    still_works(client, workspace, "after_unknown.py")
    assert popups(client) == []


@pytest.mark.parametrize(
    ("method", "params"),
    [
        ("textDocument/hover", {"textDocument": 5, "position": {"line": 0, "character": 0}}),
        ("textDocument/hover", {"textDocument": {"uri": "file:///x.py"}}),  # no position
        ("textDocument/codeAction", {"textDocument": {"uri": "file:///x.py"}, "range": "all"}),
        ("textDocument/diagnostic", None),
    ],
)
def test_a_request_with_invalid_params_gets_an_error_reply(client: LspClient, workspace: Path, method, params):
    reply = raw_request(client, method, params)
    assert reply["error"]["code"] == -32602, reply
    still_works(client, workspace, "after_bad_params.py")
    assert popups(client) == []


def test_a_notification_with_invalid_params_is_logged_not_shown(client: LspClient, workspace: Path):
    client.notify("textDocument/didOpen", {"textDocument": {"uri": 3}})
    client.wait_for("window/logMessage", lambda p: "didOpen" in p["message"] or "invalid" in p["message"].lower())
    still_works(client, workspace, "after_bad_notification.py")
    assert popups(client) == []


def test_out_of_range_and_reversed_edits_keep_the_text(client: LspClient, workspace: Path):
    uri = client.open(workspace / "ranges.py", "import torch\n")
    assert client.diagnostics(uri, 1) == []

    def edit(version: int, start: tuple[int, int], end: tuple[int, int], text: str) -> dict:
        rng = {"start": {"line": start[0], "character": start[1]}, "end": {"line": end[0], "character": end[1]}}
        change = {"range": rng, "text": text}
        return {
            "jsonrpc": "2.0",
            "method": "textDocument/didChange",
            "params": {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
        }

    # Past the end of the document: appended there.
    client.send(edit(2, (40, 0), (41, 3), "\n\ndef is_relu(node):\n"))
    # Past the end of a line, even by one: at the line's end. End before start: an
    # insertion at the start.
    client.send(edit(3, (3, len("def is_relu(node):") + 1), (3, 120), "\n    return node.target == "))
    client.send(edit(4, (4, 200), (2, 0), "torch.ops.aten.relu"))
    (diag,) = client.diagnostics(uri, 4)
    assert diag["code"] == "QL101" and diag["range"]["start"]["line"] == 4


def test_200_rapid_changes_publish_only_the_last_version(client: LspClient, workspace: Path):
    uri = client.open(workspace / "rapid.py", "import torch\n")
    client.diagnostics(uri, 1)
    texts = [f"import torch\nX = {i}\n" for i in range(199)] + [FINDING]
    client.send(*(client.change(uri, v, t) for v, t in enumerate(texts, start=2)))
    (diag,) = client.diagnostics(uri, 201)
    assert diag["data"]["version"] == 201
    client.idle()  # every check those changes set off has ended, and what it published arrived
    assert published_versions(client, uri) == [1, 201]


def test_a_50k_line_document(client: LspClient, workspace: Path):
    filler = "".join(f"value_{i} = {i}\n" for i in range(50_000))
    text = "import torch\n" + filler + "\n\ndef is_relu(node):\n    return node.target == torch.ops.aten.relu\n"
    uri = client.open(workspace / "big.py", text)
    (diag,) = client.diagnostics(uri, 1, timeout=120)
    assert diag["range"]["start"]["line"] == text.count("\n") - 1
    # An edit at the top is applied incrementally and checked again.
    change = {"range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}, "text": "# x\n"}
    client.notify("textDocument/didChange", {"textDocument": {"uri": uri, "version": 2}, "contentChanges": [change]})
    (diag,) = client.diagnostics(uri, 2, timeout=120)
    assert diag["range"]["start"]["line"] == text.count("\n")


def test_a_file_deleted_under_the_server(client: LspClient, workspace: Path):
    path = workspace / "gone.py"
    path.write_text(FINDING)
    uri = client.open(path, FINDING)
    assert client.diagnostics(uri, 1)
    path.unlink()
    client.send(client.change(uri, 2, FINDING + "\n"))
    assert [d["code"] for d in client.diagnostics(uri, 2)] == ["QL101"]
    client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
    client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": uri, "type": 3}]})
    actions = client.code_actions(uri, client.diagnostics(uri, 2), only=["quickfix"])
    assert actions and actions[0]["title"] == "Use `torch.ops.aten.relu.default`"
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    still_works(client, workspace, "after_delete.py")


def test_hover_on_an_op_through_an_alias_and_on_a_finding(client: LspClient, workspace: Path):
    text = (
        "import torch\n"
        "aten = torch.ops.aten\n"
        "\n"
        "\n"
        "def is_add(node):\n"
        "    return node.target == aten.add\n"
        "\n"
        "\n"
        "def run(x):\n"
        "    return torch.ops.torchao.dequantize_affine.default(x)\n"
    )
    uri = client.open(workspace / "hovering.py", text)
    (diag,) = client.diagnostics(uri, 1)

    def hover(line: int, needle: str) -> dict | None:
        character = text.split("\n")[line].index(needle) + 1
        params = {"textDocument": {"uri": uri}, "position": {"line": line, "character": character}}
        return client.request("textDocument/hover", params)

    on_finding = hover(5, "add")["contents"]["value"]
    assert "**QL101** `packet-matcher`: FX node target compared with an `OpOverloadPacket`" in on_finding
    assert diag["codeDescription"]["href"] in on_finding
    assert "`torch.ops.aten.add` (OpOverloadPacket)" in on_finding
    assert "Exported / PT2E graphs carry: `.Tensor`" in on_finding
    assert "`.default`" not in on_finding.split("TorchScript only")[0].split("Overloads:")[1].split("\n")[0]

    overload = hover(9, "dequantize_affine")
    value = overload["contents"]["value"]
    assert value.startswith("`torch.ops.torchao.dequantize_affine.default` (OpOverload)")
    assert "QL101" not in value
    assert overload["range"]["start"] == {"line": 9, "character": 11}
    assert hover(4, "node") is None  # a parameter: nothing to say


def test_pull_diagnostics_when_the_client_supports_them(workspace: Path):
    lsp = LspClient(workspace)
    try:
        caps = {
            "textDocument": {"diagnostic": {"dynamicRegistration": False}},
            "workspace": {"diagnostics": {"refreshSupport": True}},
        }
        result = lsp.request("initialize", {"processId": None, "rootUri": workspace.as_uri(), "capabilities": caps})
        assert result["capabilities"]["diagnosticProvider"]["interFileDependencies"] is True
        lsp.notify("initialized", {})
        uri = lsp.open(workspace / "pulled.py", FINDING)
        report = lsp.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})
        assert report["kind"] == "full"
        assert [d["code"] for d in report["items"]] == ["QL101"]
        again = lsp.request(
            "textDocument/diagnostic", {"textDocument": {"uri": uri}, "previousResultId": report["resultId"]}
        )
        assert again == {"kind": "unchanged", "resultId": report["resultId"]}
        lsp.send(lsp.change(uri, 2, "import torch\n"))
        assert lsp.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})["items"] == []
        assert not [m for m in lsp.received if m["method"] == "textDocument/publishDiagnostics"]
    finally:
        lsp.close()


def test_a_client_that_pulls_but_cannot_be_told_to_pull_again_gets_pushes(workspace: Path):
    """Neovim 0.11: pulls, no `workspace/diagnostic/refresh`. Offered pull, it would never
    see a runtime verdict or an importer's recheck; so it is offered none and pushed to."""
    lsp = LspClient(workspace)
    try:
        caps = {"textDocument": {"diagnostic": {"dynamicRegistration": False}}}
        result = lsp.request("initialize", {"processId": None, "rootUri": workspace.as_uri(), "capabilities": caps})
        assert "diagnosticProvider" not in result["capabilities"]
        lsp.notify("initialized", {})
        uri = lsp.open(workspace / "pushed.py", FINDING)
        assert [d["code"] for d in lsp.diagnostics(uri, 1)] == ["QL101"]
    finally:
        lsp.close()


def test_a_module_changed_on_disk_rechecks_the_buffers_that_import_it(client: LspClient, workspace: Path):
    pkg = write_package(workspace, "pkg", ops="import torch\n\nDQ = {torch.ops.torchao.dequantize_affine.default}\n")
    match = (
        "from .ops import DQ\n\n\ndef count(ep):\n"
        "    return sum(1 for n in ep.graph_module.graph.nodes if n.target in DQ)\n"
    )
    (pkg / "match.py").write_text(match)
    uri = client.open(pkg / "match.py", match)
    assert client.diagnostics(uri, 1) == []
    seen = len(client.received)
    # A `git checkout` rewrites ops.py with a packet; the editor's file watcher reports it.
    (pkg / "ops.py").write_text("import torch\n\nDQ = {torch.ops.torchao.dequantize_affine}\n")
    client.notify("workspace/didChangeWatchedFiles", {"changes": [{"uri": (pkg / "ops.py").as_uri(), "type": 2}]})
    again = client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri, since=seen)
    assert [d["code"] for d in again["diagnostics"]] == ["QL101"]


def test_file_watching_is_registered_when_the_client_can(workspace: Path):
    lsp = LspClient(workspace)
    try:
        caps = {"workspace": {"didChangeWatchedFiles": {"dynamicRegistration": True}}}
        lsp.request("initialize", {"processId": None, "rootUri": workspace.as_uri(), "capabilities": caps})
        lsp.notify("initialized", {})
        asked = lsp.server_request("client/registerCapability")
        (registration,) = asked["params"]["registrations"]
        assert registration["method"] == "workspace/didChangeWatchedFiles"
        globs = [w["globPattern"] for w in registration["registerOptions"]["watchers"]]
        assert "**/*.py" in globs and "**/pyproject.toml" in globs
    finally:
        lsp.close()
