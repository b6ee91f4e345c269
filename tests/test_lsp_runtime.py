"""Runtime verdicts in the language server.

The first tests seed the verdict cache `qlint check --runtime` writes, so they need no
torch: what the CLI established must show in the editor at once, without a worker. The
last ones run the real worker (torch, torchao) and are skipped where those are missing.
"""

from __future__ import annotations

import os
import signal
import time
from pathlib import Path

import attrs
import pytest

pytest.importorskip("pygls")

from lsprotocol import types

from qlint.analysis.names.project import ProjectIndex
from qlint.config import ConfigError, load_settings
from qlint.diagnostic import RuntimeVerdict
from qlint.engine import check_source
from qlint.lsp.client import DEFAULT_TIMEOUT as TIMEOUT
from qlint.lsp.client import LspClient, server_env
from qlint.lsp.verdicts import decorate, fix_title_suffix
from qlint.runtime.cache import VerdictCache, checker_fingerprint, installed_versions
from qlint.runtime.request import build_request, request_key
from tests.snippets import LSP_FINDING as RELU

SIGMOID = RELU.replace("is_relu", "is_sigmoid").replace("aten.relu", "aten.sigmoid")
ON_SAVE = '[tool.qlint]\n[tool.qlint.runtime]\neditor = "on-save"\n'


def seed(path: Path, text: str, verdict: RuntimeVerdict) -> None:
    """Store `verdict` for the file's one finding, exactly where and how the CLI would."""
    settings = load_settings([str(path.parent)])
    (diag,) = check_source(text, str(path), settings, ProjectIndex()).diagnostics
    key = request_key(build_request(diag, verify_fix=True), installed_versions(), checker_fingerprint())
    VerdictCache(settings.root / ".qlint_cache" / "runtime").put(key, verdict)


def runtime_of(diag: dict) -> dict | None:
    return (diag.get("data") or {}).get("runtime")


def wait_runtime(client: LspClient, uri: str, version: int = 1, timeout: float = TIMEOUT) -> dict:
    def has_verdict(p: dict) -> bool:
        return p["uri"] == uri and p.get("version") == version and any(runtime_of(d) for d in p["diagnostics"])

    (diag,) = client.wait_for("textDocument/publishDiagnostics", has_verdict, timeout)["diagnostics"]
    return diag


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / "pyproject.toml").write_text(ON_SAVE)
    (tmp_path / "relu.py").write_text(RELU)
    (tmp_path / "sigmoid.py").write_text(SIGMOID)
    seed(tmp_path / "relu.py", RELU, RuntimeVerdict("confirmed", "no node of the exported graph matched", True, 1.5))
    seed(tmp_path / "sigmoid.py", SIGMOID, RuntimeVerdict("refuted", "the graph carries the packet itself", False))
    return tmp_path


def start(root: Path, options=None) -> LspClient:
    client = LspClient(root)
    caps = {"textDocument": {"publishDiagnostics": {"dataSupport": True}}}
    params = {"processId": None, "rootUri": root.as_uri(), "capabilities": caps, "initializationOptions": options}
    client.request("initialize", params)
    client.notify("initialized", {})
    return client


def test_cached_verdicts_show_at_once_without_a_worker(project: Path):
    client = start(project)
    try:
        relu = client.open(project / "relu.py", RELU)
        (static,) = client.diagnostics(relu, 1)
        assert runtime_of(static) is None  # static results first
        confirmed = wait_runtime(client, relu)
        assert confirmed["message"] == static["message"] + (
            ". Confirmed on the real pipeline: no node of the exported graph matched."
        )
        assert confirmed["severity"] == static["severity"]
        assert runtime_of(confirmed) == {
            "verdict": "confirmed",
            "evidence": "no node of the exported graph matched",
            "fixVerified": True,
            "seconds": 1.5,
        }
        (fix, _) = client.code_actions(relu, [confirmed], only=["quickfix"])
        assert fix["title"] == "Use `torch.ops.aten.relu.default` (verified on the real pipeline)"
        assert fix["isPreferred"] is True

        sigmoid = client.open(project / "sigmoid.py", SIGMOID)
        refuted = wait_runtime(client, sigmoid)
        assert refuted["severity"] == types.DiagnosticSeverity.Hint.value
        assert refuted["message"].endswith(" Refuted on the real pipeline: the graph carries the packet itself.")
        (fix, _) = client.code_actions(sigmoid, [refuted], only=["quickfix"])
        assert fix["title"].endswith("(the real pipeline refutes this fix)") and fix["isPreferred"] is False

        # Everything came from the cache: no worker, no torch in this process.
        assert client.request("qlint/debugRuntimeWorkers") == {"pids": []}
        assert not {"torch", "torchao"} & set(client.request("qlint/debugModules")["modules"])
    finally:
        client.close()


def test_an_edit_shows_the_verdict_again_only_for_the_same_finding(project: Path):
    client = start(project)
    try:
        uri = client.open(project / "relu.py", RELU)
        wait_runtime(client, uri)
        moved = "# a comment moves the finding down\n" + RELU
        client.send(client.change(uri, 2, moved))
        assert runtime_of(wait_runtime(client, uri, 2))["verdict"] == "confirmed"  # same request, same verdict
        other = moved.replace("aten.relu", "aten.hardtanh")
        client.send(client.change(uri, 3, other))
        (diag,) = client.diagnostics(uri, 3)
        assert runtime_of(diag) is None
    finally:
        client.close()


def test_off_by_default_and_switched_by_the_editor(project: Path):
    (project / "pyproject.toml").write_text("[tool.qlint]\n")
    client = start(project)
    try:
        uri = client.open(project / "relu.py", RELU)
        (diag,) = client.diagnostics(uri, 1)
        assert runtime_of(diag) is None
        seen = len(client.received)
        client.notify("workspace/didChangeConfiguration", {"settings": {"qlint": {"runtime": "on-save"}}})
        diag = client.wait_for(
            "textDocument/publishDiagnostics",
            lambda p: p["uri"] == uri and any(runtime_of(d) for d in p["diagnostics"]),
            since=seen,
        )["diagnostics"][0]
        assert runtime_of(diag)["verdict"] == "confirmed"
    finally:
        client.close()
    # initializationOptions "off" wins over the project's "on-save".
    (project / "pyproject.toml").write_text(ON_SAVE)
    client = start(project, {"runtime": "off"})
    try:
        uri = client.open(project / "relu.py", RELU)
        (diag,) = client.diagnostics(uri, 1)
        client.send(client.change(uri, 2, RELU + "\n"))
        (diag,) = client.diagnostics(uri, 2)
        assert runtime_of(diag) is None
        assert not [m for m in client.received if runtime_of((m["params"].get("diagnostics") or [{}])[0])]
    finally:
        client.close()


def test_a_bad_editor_mode_is_shown(project: Path):
    client = start(project, {"runtime": "always"})
    try:
        shown = client.wait_for("window/showMessage")
        assert 'expected "off" or "on-save", got "always"' in shown["message"]
    finally:
        client.close()


def test_the_editor_key_is_validated(tmp_path: Path):
    (tmp_path / "pyproject.toml").write_text('[tool.qlint.runtime]\neditor = "sometimes"\n')
    with pytest.raises(ConfigError, match=r'\[tool.qlint.runtime\] "editor": expected "off" or "on-save"'):
        load_settings([str(tmp_path)])
    (tmp_path / "pyproject.toml").write_text('[tool.qlint.runtime]\neditr = "on-save"\n')
    with pytest.raises(ConfigError, match='did you mean "editor"'):
        load_settings([str(tmp_path)])
    (tmp_path / "pyproject.toml").write_text(ON_SAVE)
    assert load_settings([str(tmp_path)]).runtime_editor == "on-save"


def test_how_each_verdict_reads():
    base = types.Diagnostic(
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=1)),
        message="Packet compared.",
        severity=types.DiagnosticSeverity.Warning,
        data={"version": 3},
    )
    inconclusive = decorate(base, RuntimeVerdict("inconclusive", "the runtime worker hung; it was killed."))
    assert (
        inconclusive.message == "Packet compared. Runtime check inconclusive: the runtime worker hung; it was killed."
    )
    assert inconclusive.severity == types.DiagnosticSeverity.Warning
    assert inconclusive.data["version"] == 3 and base.data == {"version": 3}
    skipped = decorate(base, RuntimeVerdict("skipped", "torch not installed"))
    assert skipped.message == base.message and skipped.data["runtime"]["verdict"] == "skipped"
    assert fix_title_suffix(RuntimeVerdict("confirmed", "", None)) == ""


def test_a_display_only_fix_shows_its_verdict_in_the_message():
    """No quick fix carries a display-only fix's verdict in its title: the message does."""
    fix = {"applicability": "display-only", "message": "Key the entry on `aten.arange.default`", "edits": []}
    base = types.Diagnostic(
        range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=0, character=1)),
        message="Packet compared.",
        severity=types.DiagnosticSeverity.Warning,
        data={"version": 3, "fix": fix},
    )
    ok = decorate(base, RuntimeVerdict("confirmed", "the keys match 3 of 12 nodes", True))
    assert ok.message == (
        "Packet compared. Confirmed on the real pipeline: the keys match 3 of 12 nodes. "
        "Its fix (display-only: Key the entry on `aten.arange.default`) is verified on the real pipeline."
    )
    wrong = decorate(base, RuntimeVerdict("confirmed", "the keys match 3 of 12 nodes", False))
    assert wrong.message.endswith(
        "Its fix (display-only: Key the entry on `aten.arange.default`) is refuted by the real pipeline."
    )
    # Not judged, or a fix a quick fix offers (its title says it): nothing more.
    assert decorate(base, RuntimeVerdict("confirmed", "e", None)).message.endswith("on the real pipeline: e.")
    unsafe = attrs.evolve(base, data={"fix": {**fix, "applicability": "unsafe"}})
    assert decorate(unsafe, RuntimeVerdict("confirmed", "e", True)).message.endswith("on the real pipeline: e.")


# -- with the real worker ----------------------------------------------------------------


def real_project(tmp_path: Path) -> Path:
    pytest.importorskip("torchao")
    (tmp_path / "pyproject.toml").write_text(ON_SAVE)
    (tmp_path / "relu.py").write_text(RELU)
    return tmp_path


def test_a_real_verdict_arrives_with_progress_and_is_cached(tmp_path: Path):
    project = real_project(tmp_path)
    client = LspClient(project)
    try:
        caps = {"window": {"workDoneProgress": True}, "textDocument": {"publishDiagnostics": {"dataSupport": True}}}
        client.request("initialize", {"processId": None, "rootUri": project.as_uri(), "capabilities": caps})
        client.notify("initialized", {})
        uri = client.open(project / "relu.py", RELU)
        diag = wait_runtime(client, uri, timeout=300)
        assert runtime_of(diag)["verdict"] == "confirmed", diag
        assert runtime_of(diag)["fixVerified"] is True
        assert client.server_request("window/workDoneProgress/create")
        client.wait_for("$/progress", lambda p: p["value"]["kind"] == "end")
        kinds = [m["params"]["value"]["kind"] for m in client.received if m["method"] == "$/progress"]
        assert kinds[0] == "begin" and kinds[-1] == "end"
    finally:
        client.close()
    # The same cache the CLI reads: a new server shows it at once, without a worker.
    client = start(project)
    try:
        uri = client.open(project / "relu.py", RELU)
        assert runtime_of(wait_runtime(client, uri))["verdict"] == "confirmed"
        assert client.request("qlint/debugRuntimeWorkers") == {"pids": []}
    finally:
        client.close()


def test_a_worker_killed_mid_check_gives_inconclusive_and_restarts(tmp_path: Path):
    project = real_project(tmp_path)
    client = start(project)
    try:
        uri = client.open(project / "relu.py", RELU)
        client.diagnostics(uri, 1)
        pids = []  # a worker that has started (imported torch) and now runs the check
        end = time.monotonic() + 300
        while not pids and time.monotonic() < end:
            pids = client.request("qlint/debugRuntimeWorkers")["pids"]
            time.sleep(0.05)
        assert pids
        os.kill(pids[0], signal.SIGKILL)
        diag = wait_runtime(client, uri, timeout=120)
        assert runtime_of(diag)["verdict"] == "inconclusive", diag
        assert "Runtime check inconclusive" in diag["message"]
        # The server lives on; saving again restarts the worker and gets the real verdict.
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        seen = len(client.received)
        diag = client.wait_for(
            "textDocument/publishDiagnostics",
            lambda p: (
                p["uri"] == uri and any((runtime_of(d) or {}).get("verdict") == "confirmed" for d in p["diagnostics"])
            ),
            timeout=300,
            since=seen,
        )
        assert client.request("qlint/debugRuntimeWorkers")["pids"] != pids
    finally:
        client.close()


@pytest.mark.parametrize(
    "shadow, reason",
    [
        # torch installed but broken: the worker's `import torch` fails (the server never imports it)
        ("raise ImportError('libtorch_cpu.so: cannot open shared object file')", "ImportError: libtorch_cpu.so"),
        ("import sys; sys.exit(7)", "exited with code 7"),
    ],
)
def test_a_worker_that_cannot_start_gives_inconclusive_with_the_reason(tmp_path: Path, shadow: str, reason: str):
    project = tmp_path / "project"
    project.mkdir()
    (project / "pyproject.toml").write_text(ON_SAVE)
    (project / "relu.py").write_text(RELU)
    broken = tmp_path / "broken-torch"
    (broken / "torch").mkdir(parents=True)
    (broken / "torch" / "__init__.py").write_text(shadow + "\n")
    env = server_env()
    env["PYTHONPATH"] = os.pathsep.join([str(broken), env["PYTHONPATH"]])
    client = LspClient(project, env=env)
    try:
        caps = {"textDocument": {"publishDiagnostics": {"dataSupport": True}}}
        client.request("initialize", {"processId": None, "rootUri": project.as_uri(), "capabilities": caps})
        client.notify("initialized", {})
        uri = client.open(project / "relu.py", RELU)
        diag = wait_runtime(client, uri, timeout=60)
        verdict = runtime_of(diag)
        assert verdict["verdict"] == "inconclusive", diag
        assert verdict["evidence"].startswith("the runtime worker failed to start: "), verdict
        assert reason in verdict["evidence"]
        assert "Runtime check inconclusive: the runtime worker failed to start" in diag["message"]
        assert diag["severity"] == 2  # the static severity is kept
        # The server lives on: edits are checked, requests answered, a save tries again.
        client.send(client.change(uri, 2, RELU.replace("is_relu", "is_relu2")))
        assert client.diagnostics(uri, 2)
        assert client.request("qlint/debugRuntimeWorkers") == {"pids": []}
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        again = wait_runtime(client, uri, 2, timeout=60)
        assert runtime_of(again)["verdict"] == "inconclusive" and reason in runtime_of(again)["evidence"]
        assert client.proc.poll() is None
    finally:
        client.close()


def test_pull_clients_are_told_to_pull_again_when_a_verdict_arrives(project: Path):
    client = LspClient(project)
    try:
        caps = {"textDocument": {"diagnostic": {}}, "workspace": {"diagnostics": {"refreshSupport": True}}}
        client.request("initialize", {"processId": None, "rootUri": project.as_uri(), "capabilities": caps})
        client.notify("initialized", {})
        uri = client.open(project / "relu.py", RELU)
        client.server_request("workspace/diagnostic/refresh")
        (diag,) = client.request("textDocument/diagnostic", {"textDocument": {"uri": uri}})["items"]
        assert runtime_of(diag)["verdict"] == "confirmed"
    finally:
        client.close()


def test_an_edit_during_a_real_check_keeps_its_verdict_off_the_new_text(tmp_path: Path):
    project = real_project(tmp_path)
    client = LspClient(project)
    try:
        caps = {"window": {"workDoneProgress": True}, "textDocument": {"publishDiagnostics": {"dataSupport": True}}}
        client.request("initialize", {"processId": None, "rootUri": project.as_uri(), "capabilities": caps})
        client.notify("initialized", {})
        uri = client.open(project / "relu.py", RELU)
        client.wait_for("$/progress", lambda p: p["value"]["kind"] == "begin", timeout=60)
        # The finding changes while its check runs: relu's verdict belongs to version 1 only.
        client.send(client.change(uri, 2, SIGMOID))
        client.wait_for("$/progress", lambda p: p["value"]["kind"] == "end", timeout=60)
        client.diagnostics(uri, 2)
        # Saving version 2 checks its own finding; the worker runs one check at a time, so
        # relu's check has finished by the time sigmoid's verdict arrives.
        client.notify("textDocument/didSave", {"textDocument": {"uri": uri}})
        diag = wait_runtime(client, uri, 2, timeout=300)
        assert "sigmoid" in diag["message"]
        published = [m["params"] for m in client.received if m["method"] == "textDocument/publishDiagnostics"]
        with_verdicts = [p for p in published if any(runtime_of(d) for d in p["diagnostics"])]
        assert with_verdicts and all(p["version"] == 2 for p in with_verdicts)
        assert not any("relu" in d["message"] for p in with_verdicts for d in p["diagnostics"])
    finally:
        client.close()


def test_a_table_key_beside_its_overloads_shows_the_graphs_and_its_fix(tmp_path: Path):
    """FlatFlow's `aten.arange` key beside `.start` (`tests/test_runtime_sibling_keys.py`)."""
    from tests.test_runtime_sibling_keys import FLATFLOW

    project = real_project(tmp_path)
    (project / "ops.py").write_text(FLATFLOW)
    client = start(project)
    try:
        uri = client.open(project / "ops.py", FLATFLOW)
        diag = wait_runtime(client, uri, timeout=300)
        assert runtime_of(diag)["verdict"] == "confirmed", diag
        assert runtime_of(diag)["fixVerified"] is True
        message = diag["message"]
        assert "Confirmed on the real pipeline: `torch.ops.aten.arange` (packet) keyed beside `.start`" in message
        assert "the 9 nodes of `.default`, `.start_step` are the ones the packet's entry stands for" in message
        assert message.endswith(
            "Its fix (display-only: Key the entry on `aten.arange.default`, `aten.arange.start_step` "
            "(graphs carry them)) is verified on the real pipeline."
        )
        titles = [a["title"] for a in client.code_actions(uri, [diag], only=["quickfix"])]
        assert not [t for t in titles if t.startswith("Key the entry")], titles
    finally:
        client.close()
