"""Shared helpers: lint or fix a snippet in memory, exactly as the CLI would."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from qlint.analysis import node_memo
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from qlint.fixes import fix_text
from qlint.runner import run_check
from qlint.settings import Settings
from tests import kept_answer_cycles

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True)
def _per_file_cache_path(request, monkeypatch):
    """The results cache's tests count the hits and misses of its per-file path, corrupt its
    shards and inspect its entries: once a test's tree is older than the whole-run record's
    window, the record would answer such a run instead (by construction with the same
    results). It has its own tests (`test_run_record.py`); elsewhere it stays out of the way."""
    if request.module.__name__.endswith("test_run_record"):
        return
    from qlint import run_record

    monkeypatch.setattr(run_record, "answer", lambda *args, **kwargs: None)


@pytest.fixture(autouse=True)
def _no_kept_cycles():
    """Every answer a test's checks keep on a node is searched for a cycle through that node
    (`tests/kept_answer_cycles.py`): one found fails the test."""
    node_memo.WITNESS = kept_answer_cycles.witness
    kept_answer_cycles.found.clear()
    yield
    node_memo.WITNESS = None
    if kept_answer_cycles.found:
        found = sorted(set(kept_answer_cycles.found))
        kept_answer_cycles.found.clear()
        pytest.fail("answers kept on nodes hold a cycle through them:\n" + "\n".join(found))


def pytest_configure(config):
    """Ctrl-C as a terminal gives it, whoever started the suite. A shell starts a command put in
    the background (`cmd &`, `nohup cmd &` in a script) with SIGINT ignored, and a Python started
    so keeps ignoring it, as do the processes it starts: `test_interrupted_start`'s Ctrl-C tests
    then all failed together (three full runs launched so, passing in the foreground)."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def _ctrl_c_not_left_held():
    """A test that leaves SIGINT blocked in pytest's main thread, or its handler changed, fails,
    and both are put back: every later child inherits the block, and an ignored SIGINT across
    exec (a Python started with SIGINT ignored keeps ignoring it)."""
    handler = signal.getsignal(signal.SIGINT)
    yield
    if hasattr(signal, "pthread_sigmask") and signal.SIGINT in signal.pthread_sigmask(signal.SIG_BLOCK, []):
        signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
        pytest.fail("the test left SIGINT blocked in the main thread")
    if signal.getsignal(signal.SIGINT) is not handler:
        signal.signal(signal.SIGINT, handler)
        pytest.fail("the test left SIGINT's handler changed")


def settings_for(select=("QL",), preview: bool = False, **options) -> Settings:
    """`options` maps a rule code to its option dict, e.g. QL101={"fix-style": "both"}."""
    rule_options = tuple((code, tuple(opts.items())) for code, opts in options.items())
    return Settings(select=tuple(select), rule_options=rule_options, root=ROOT, preview=preview)


_ALONE: list[Path] = []


def alone(name: str = "snippet.py") -> str:
    """A path in a repository that holds nothing else (made once per session): a helper's
    callers in other modules decide QL201/QL202, and a snippet under this repository's root
    would be judged with qlint's own 1,700 tests and modules as its project."""
    if not _ALONE:
        import tempfile

        root = Path(tempfile.mkdtemp(prefix="qlint-alone-"))
        (root / ".git").mkdir()
        _ALONE.append(root)
    return str(_ALONE[0] / name)


def lint(source: str, path: str | None = None, select=("QL",), overlay=None, preview: bool = False, **options):
    """Diagnostics for a dedented snippet; `overlay` adds other project files (path -> text).

    Without a path the snippet lies alone in an empty repository (`overlay` paths stay
    relative to the working directory, so with one it is `snippet.py` there)."""
    if path is None:
        path = "snippet.py" if overlay else alone()
    source = textwrap.dedent(source)
    project = ProjectIndex({os.path.abspath(p): textwrap.dedent(t) for p, t in (overlay or {}).items()})
    result = check_source(source, os.path.abspath(path), settings_for(select, preview, **options), project)
    assert not result.errors, result.errors
    return result.diagnostics


def fix(source: str, path: str = "snippet.py", select=("QL",), unsafe: bool = False, overlay=None, **options) -> str:
    source = textwrap.dedent(source)
    project = ProjectIndex({os.path.abspath(p): textwrap.dedent(t) for p, t in (overlay or {}).items()})
    outcome = fix_text(source, os.path.abspath(path), settings_for(select, **options), unsafe, project)
    assert outcome.error is None, outcome.error
    return outcome.fixed


def write_package(root: Path, name: str, **modules: str) -> Path:
    """Package `name` (dotted: nested packages) under `root`, with `modules` as module name ->
    source. Module resolution follows `__init__.py` files on disk, so multi-module tests need it."""
    path = root
    for part in name.split("."):
        path = path / part
        path.mkdir(exist_ok=True)
        (path / "__init__.py").touch()
    for module, text in modules.items():
        (path / f"{module}.py").write_text(text)
    return path


def dedented_package(root: Path, files: dict[str, str]) -> Path:
    """A repository at `root` (its `.git`) holding package `pkg` with `files` (file name ->
    source, dedented). Returns the package's folder."""
    (root / ".git").mkdir(exist_ok=True)
    pkg = write_package(root, "pkg")
    for name, text in files.items():
        (pkg / name).write_text(textwrap.dedent(text))
    return pkg


def package_repository(root: Path, **modules: str) -> Path:
    """A git repository at `root` holding package `pkg` with `modules` (module name -> source):
    the project in which a helper's callers are searched. Returns `root`."""
    (root / ".git").mkdir(parents=True)
    write_package(root, "pkg", **modules)
    return root


def check_file(path: Path, select=("QL",), project: ProjectIndex | None = None):
    """A one-file run's result for the file at `path`, read from disk with the project around it
    (a fresh `ProjectIndex` unless `project` is given); the check must raise no error."""
    project = ProjectIndex() if project is None else project
    result = check_source(path.read_text(), str(path), settings_for(select), project)
    assert not result.errors, result.errors
    return result


def alone_and_in_run(script: Path, root: Path, select, cache_dir: Path) -> list[tuple[str, int, str]]:
    """(code, row, message) of `script`'s findings in a one-file run, which a run over the
    repository at `root` must give too (pre-commit and CI agree)."""
    alone = [(d.code, d.range.start.row, d.message) for d in check_file(script, select).diagnostics]
    run = run_check([str(root)], Settings(select=select, root=root, cache_dir=cache_dir), use_cache=False, jobs=1)
    together = [
        (d.code, d.range.start.row, d.message)
        for r in run.results
        if os.path.basename(r.path) == script.name
        for d in r.diagnostics
    ]
    assert together == alone
    return alone


def json_findings(repo: Path, *args: str, stdin: str | None = None) -> list[dict]:
    """`qlint check --exit-zero --output-format json ARGS` run as a user runs it, in a process
    started in `repo` with this checkout's qlint: its findings as decoded."""
    proc = subprocess.run(
        [sys.executable, "-P", "-m", "qlint", "check", "--exit-zero", "--output-format", "json", *args],
        input=stdin,
        cwd=repo,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
    )
    assert proc.returncode == 0, proc.stderr
    return json.loads(proc.stdout or "[]")


def rows_of(diagnostics) -> list[int]:
    return [d.range.start.row for d in diagnostics]


def old_file(path: Path, text: str) -> Path:
    """Write `text` with an mtime well in the past, so its stat is trusted by the caches."""
    path.write_text(text)
    past = time.time_ns() - 3600 * 10**9
    os.utime(path, ns=(past, past))
    return path


def old_package(root: Path, **modules: str) -> Path:
    """Package `pkg` under `root` with `modules` (module name -> source), every file written
    with an old mtime (`old_file`). Returns the package's folder."""
    pkg = root / "pkg"
    pkg.mkdir()
    old_file(pkg / "__init__.py", "")
    for module, text in modules.items():
        old_file(pkg / f"{module}.py", text)
    return pkg


def kept_store(tmp_path: Path, monkeypatch, new_process):
    """For a fixture: a summary store in which answers about other modules are kept, as a run
    with the cache on has. `new_process` forgets what this process learned, before and after."""
    from qlint.analysis.graphs import kept_answers
    from qlint.summary_cache import SummaryStore

    store = SummaryStore(tmp_path / "cache")
    monkeypatch.setattr(ProjectIndex, "store", store)
    new_process()
    kept_answers.use(store)
    yield store
    kept_answers.use(None)
    new_process()


def mapped_repository(root: Path) -> Path:
    """A repository shaped like ExecuTorch's: `executorch = "src/executorch"` in its
    `pyproject.toml`, `src/executorch/backends -> ../../backends`, and
    `backends/nxp/aten_passes` without `__init__.py`. Returns `.../aten_passes/fusion`, a
    package (empty) whose modules are named `executorch.backends.nxp.aten_passes.fusion.*`."""
    (root / ".git").mkdir()
    (root / "pyproject.toml").write_text('[tool.setuptools.package-dir]\nexecutorch = "src/executorch"\n')
    (root / "src" / "executorch").mkdir(parents=True)
    (root / "src" / "executorch" / "backends").symlink_to("../../backends", target_is_directory=True)
    passes = root / "backends" / "nxp" / "aten_passes" / "fusion"
    passes.mkdir(parents=True)
    for d in (root / "backends", root / "backends" / "nxp", passes):
        (d / "__init__.py").touch()
    return passes


def codes(diagnostics) -> list[str]:
    return [d.code for d in diagnostics]


@pytest.fixture
def root() -> Path:
    return ROOT


@pytest.fixture
def scan_reads(monkeypatch) -> list[str]:
    """The modules the project search reads for a name (`project_texts.text_holding`), in order."""
    from qlint.analysis.graphs import project_texts, scanned_facts

    seen: list[str] = []
    holding = project_texts.text_holding

    def counted(project, path, key, needles):
        seen.append(path)
        return holding(project, path, key, needles)

    for module in (project_texts, scanned_facts):
        monkeypatch.setattr(module, "text_holding", counted)
    return seen


@pytest.fixture
def fresh_project_words():
    """No project words known before or after the test, none shared (`project_words`)."""
    from qlint.analysis.names import project_words

    project_words.forget()
    yield
    project_words.share(None)
    project_words.forget()


@pytest.fixture
def fresh_package_roots():
    """No run directories, and no package roots or import paths known before or after the test."""
    from qlint.analysis import run_roots
    from qlint.analysis.names import import_paths, package_map

    run_roots.use_directories(())
    package_map.forget_roots()
    import_paths.forget_roots()
    yield
    package_map.forget_roots()
    import_paths.forget_roots()
