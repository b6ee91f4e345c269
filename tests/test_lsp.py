"""`qlint server` end to end: the real server process over stdio, driven by the small
JSON-RPC client of `qlint.lsp.client`, so the wire format is checked independently of pygls.

Every wait is bounded: a server that hangs fails the test instead of hanging CI.
"""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("pygls")

from lsprotocol import types

from qlint.lsp.client import DEFAULT_TIMEOUT as TIMEOUT
from qlint.lsp.client import LspClient
from tests.conftest import write_package
from tests.test_lsp_convert import apply_text_edits

MATCHER = (
    "import torch\n"
    "\n"
    "# 🚀 an astral character on an earlier line changes nothing\n"
    "def is_relu(node):\n"
    '    s = "😀"; return node.target == torch.ops.aten.relu\n'
)
FINDING_LINE = 4  # 0-based LSP line of the comparison
FINDING_PREFIX = '    s = "😀"; return node.target == '


def utf16_len(text: str) -> int:
    return len(text.encode("utf-16-le")) // 2


def edits_of(action: dict, uri: str) -> list[dict]:
    edit = action["edit"]
    if "documentChanges" in edit:
        return [
            e for change in edit["documentChanges"] if change["textDocument"]["uri"] == uri for e in change["edits"]
        ]
    return edit["changes"][uri]


@pytest.fixture(scope="module")
def workspace(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("lsp_ws")


@pytest.fixture(scope="module")
def client(workspace: Path):
    lsp = LspClient(workspace)
    try:
        lsp.capabilities = lsp.initialize(workspace)["capabilities"]
        yield lsp
    finally:
        lsp.close()


def test_initialize_announces_what_the_server_does(client: LspClient):
    caps = client.capabilities
    assert caps["textDocumentSync"]["change"] == types.TextDocumentSyncKind.Incremental.value
    assert caps["textDocumentSync"]["openClose"] is True
    assert caps["textDocumentSync"]["save"] == {"includeText": False}
    assert set(caps["codeActionProvider"]["codeActionKinds"]) == {"quickfix", "source.fixAll", "source.fixAll.qlint"}
    assert caps["positionEncoding"] == "utf-16"


def test_unsaved_buffer_is_checked_with_utf16_ranges(client: LspClient, workspace: Path):
    path = workspace / "matcher.py"
    path.write_text("import torch\n", encoding="utf-8")  # on disk: clean; the buffer is what counts
    uri = client.open(path, MATCHER)
    (diag,) = client.diagnostics(uri, 1)
    start = utf16_len(FINDING_PREFIX)
    assert start == len(FINDING_PREFIX) + 1  # the emoji is two UTF-16 units
    assert diag["range"] == {
        "start": {"line": FINDING_LINE, "character": start},
        "end": {"line": FINDING_LINE, "character": start + len("torch.ops.aten.relu")},
    }
    assert diag["code"] == "QL101"
    assert diag["source"] == "qlint"
    assert diag["severity"] == types.DiagnosticSeverity.Warning.value
    assert diag["codeDescription"]["href"].endswith("/qlint/rule_pages/QL101.md")  # the page qlint ships
    assert diag["data"]["fix"]["applicability"] == "safe"
    assert diag["data"]["version"] == 1

    # The quick fix comes from the diagnostic: applied, it gives the fixed buffer.
    actions = client.code_actions(uri, [diag], only=["quickfix"])
    titles = [a["title"] for a in actions]
    assert titles == ["Use `torch.ops.aten.relu.default`", "Disable QL101 for this line"]
    fix, disable = actions
    assert fix["kind"] == "quickfix" and fix["isPreferred"] is True and fix["diagnostics"] == [diag]
    assert fix["edit"]["documentChanges"][0]["textDocument"] == {"uri": uri, "version": 1}
    fixed = apply_text_edits(MATCHER, edits_of(fix, uri))
    assert fixed == MATCHER.replace("aten.relu\n", "aten.relu.default\n")
    suppressed = apply_text_edits(MATCHER, edits_of(disable, uri))
    assert suppressed == MATCHER.replace("aten.relu\n", "aten.relu  # noqa: QL101\n")

    # Typing the fix (several quick edits, debounced into one check) clears the finding.
    halfway = MATCHER.replace("aten.relu\n", "aten.relu.def\n")
    client.send(client.change(uri, 2, halfway), client.change(uri, 3, fixed))
    assert client.diagnostics(uri, 3) == []

    # The noqa the action wrote really suppresses the finding.
    client.send(client.change(uri, 4, suppressed))
    assert client.diagnostics(uri, 4) == []
    published = [
        m["params"]["version"]
        for m in client.received
        if m["method"] == "textDocument/publishDiagnostics" and m["params"]["uri"] == uri
    ]
    assert published == [1, 3, 4]  # one check for versions 2 and 3: the newer edit cancelled the pending one

    # A code action for a diagnostic of an older version is refused, not misapplied.
    assert client.code_actions(uri, [diag], only=["quickfix"]) == []

    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})
    assert client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri and "version" not in p)


def test_fix_all_applies_every_safe_fix(client: LspClient, workspace: Path):
    text = (
        "import torch\n"
        "\n"
        "DQ = {torch.ops.torchao.dequantize_affine}  # ✨\n"
        "\n"
        "\n"
        "def count(ep):\n"
        "    return sum(1 for n in ep.graph_module.graph.nodes if n.target in DQ)\n"
        "\n"
        "\n"
        "def is_relu(node):\n"
        "    return node.target == torch.ops.aten.relu\n"
    )
    uri = client.open(workspace / "fix_all.py", text)
    diags = client.diagnostics(uri, 1)
    assert [d["code"] for d in diags] == ["QL101", "QL101"]
    actions = client.code_actions(uri, [], only=["source.fixAll"])
    (action,) = actions
    assert action["kind"] == "source.fixAll.qlint"
    fixed = apply_text_edits(text, edits_of(action, uri))
    # torchao's own convert_pt2e inserts dequantize_affine as a packet: the fix keeps it.
    both = "affine, torch.ops.torchao.dequantize_affine.default}"
    assert fixed == text.replace("affine}", both).replace("aten.relu\n", "aten.relu.default\n")
    # Nothing left: the lightbulb does not offer it, and an explicit request finds nothing.
    client.send(client.change(uri, 2, fixed))
    assert client.diagnostics(uri, 2) == []
    assert client.code_actions(uri, [], only=["source.fixAll.qlint"]) == []
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


def test_syntax_error_is_ql001_and_the_server_keeps_working(client: LspClient, workspace: Path):
    # Mid-typing: the parenthesis of `is_relu(` is not closed yet.
    uri = client.open(workspace / "broken.py", MATCHER.replace("is_relu(node)", "is_relu(node"))
    (diag,) = client.diagnostics(uri, 1)
    assert diag["code"] == "QL001"
    assert diag["severity"] == types.DiagnosticSeverity.Error.value
    assert diag["range"]["start"]["line"] == 3
    client.send(client.change(uri, 2, MATCHER))
    assert [d["code"] for d in client.diagnostics(uri, 2)] == ["QL101"]
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


def test_unsaved_module_is_seen_by_the_modules_that_import_it(client: LspClient, workspace: Path):
    saved_ops = "import torch\n\nDQ_OPS = {torch.ops.torchao.dequantize_affine.default}\n"
    pkg = write_package(workspace, "pkg", ops=saved_ops)
    match = (
        "from .ops import DQ_OPS\n\n\ndef count(ep):\n"
        "    return sum(1 for n in ep.graph_module.graph.nodes if n.target in DQ_OPS)\n"
    )
    (pkg / "match.py").write_text(match)
    match_uri = client.open(pkg / "match.py", match)
    assert client.diagnostics(match_uri, 1) == []

    # Editing ops.py (unsaved) to hold a packet: match.py is re-checked against the buffer.
    unsaved_ops = "import torch\n\nDQ_OPS = {torch.ops.torchao.dequantize_affine}  # 😀\n"
    unsaved_ops = unsaved_ops.replace("DQ_OPS = {", "DQ_OPS = {  # 🚀\n    ")
    ops_uri = client.open(pkg / "ops.py", unsaved_ops)
    assert client.diagnostics(ops_uri, 1) == []  # a packet in a set is fine until compared
    (diag,) = client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == match_uri and p["diagnostics"])[
        "diagnostics"
    ]
    assert diag["code"] == "QL101"
    (related,) = diag["relatedInformation"]
    assert related["location"]["uri"] == ops_uri
    packet_line = unsaved_ops.split("\n")[3]
    assert related["location"]["range"]["start"] == {"line": 3, "character": packet_line.index("torch")}
    # The quick fix edits ops.py (its unsaved buffer), not the buffer it was asked from.
    fix, noqa = client.code_actions(match_uri, [diag])
    assert noqa["title"] == "Disable QL101 for this line"
    assert list(fix["edit"]["changes"]) == [ops_uri]
    fixed_ops = apply_text_edits(unsaved_ops, edits_of(fix, ops_uri))
    packet = "torch.ops.torchao.dequantize_affine"
    assert fixed_ops == unsaved_ops.replace(f"{packet}}}", f"{packet}, {packet}.default}}")

    # Closing ops.py drops its overlay: match.py sees the saved file again.
    seen = len(client.received)
    client.notify("textDocument/didClose", {"textDocument": {"uri": ops_uri}})
    republished = client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == match_uri, since=seen)
    assert republished["diagnostics"] == []
    client.notify("textDocument/didClose", {"textDocument": {"uri": match_uri}})


def test_broken_config_is_shown_once_and_defaults_apply(client: LspClient, workspace: Path):
    project = workspace / "broken_config"
    project.mkdir()
    (project / "pyproject.toml").write_text('[tool.qlint]\nselekt = ["QL1"]\n')
    first = client.open(project / "a.py", MATCHER)
    message = client.wait_for("window/showMessage", lambda p: "selekt" in p["message"])
    assert message["type"] == types.MessageType.Error.value
    assert "pyproject.toml" in message["message"]
    assert [d["code"] for d in client.diagnostics(first, 1)] == ["QL101"]  # checked with the defaults
    second = client.open(project / "b.py", MATCHER)
    client.diagnostics(second, 1)
    assert sum(1 for m in client.received if m["method"] == "window/showMessage") == 1

    # Fixing the config and saving it from the editor re-checks the open buffers with it.
    seen = len(client.received)
    (project / "pyproject.toml").write_text('[tool.qlint]\nignore = ["QL101"]\n')
    client.notify("textDocument/didSave", {"textDocument": {"uri": (project / "pyproject.toml").as_uri()}})
    for uri in (first, second):
        rechecked = client.wait_for("textDocument/publishDiagnostics", lambda p, u=uri: p["uri"] == u, since=seen)
        assert rechecked["diagnostics"] == []
    for uri in (first, second):
        client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


def test_a_buffer_only_a_preview_rule_reads_gets_ql001_as_the_config_enables_it(client: LspClient, workspace: Path):
    """QL001 covers the files the enabled rules read, in the editor too: a config turning
    preview on (and off again) rechecks the buffer, never keeping the other selection's result."""
    project = workspace / "preview_toggle"
    project.mkdir()
    config = project / "pyproject.toml"
    config.write_text("[tool.qlint]\npreview = false\n")
    uri = client.open(project / "weight.py", "def weight(n):\n    return n.op == 'get_attr' and\n")
    assert client.diagnostics(uri, 1) == []
    for preview, expected in (("true", ["QL001"]), ("false", [])):
        seen = len(client.received)
        config.write_text(f"[tool.qlint]\npreview = {preview}\n")
        client.notify("textDocument/didSave", {"textDocument": {"uri": config.as_uri()}})
        rechecked = client.wait_for("textDocument/publishDiagnostics", lambda p: p["uri"] == uri, since=seen)
        assert [d["code"] for d in rechecked["diagnostics"]] == expected
    client.notify("textDocument/didClose", {"textDocument": {"uri": uri}})


def test_server_never_imports_torch(client: LspClient, workspace: Path):
    uri = client.open(workspace / "torch_free.py", MATCHER)
    assert client.diagnostics(uri, 1)
    modules = client.request("qlint/debugModules")["modules"]
    assert "qlint" in modules and "pygls" in modules  # the answer is real
    assert not {"torch", "torchao", "executorch"} & set(modules)


def test_utf8_positions_when_negotiated_then_shutdown_and_exit(workspace: Path):
    lsp = LspClient(workspace)
    try:
        assert lsp.initialize(workspace, encodings=["utf-8", "utf-16"])["capabilities"]["positionEncoding"] == "utf-8"
        uri = lsp.open(workspace / "last.py", MATCHER)
        (diag,) = lsp.diagnostics(uri, 1)
        start = len(FINDING_PREFIX.encode("utf-8"))  # the emoji is four bytes
        assert diag["range"]["start"] == {"line": FINDING_LINE, "character": start}
        assert lsp.request("shutdown") is None
        lsp.notify("exit", None)
        assert lsp.proc.wait(timeout=TIMEOUT) == 0
    finally:
        lsp.close()
