"""A cached answer resting on another module stays right whatever happens to that module: created,
edited, deleted, renamed, made a package, or shadowed by a module created ahead of it.

Every rule that reads other modules (QL101/QL102 through their import gate and helper search,
QL201/QL202 through the builder a capture's model comes from, QL203 through the helper that
switches a graph, QL204 through the helper that calibrates it) is run on files that import a
module of their project in each layout qlint resolves: a package module's plain import of a
sibling (`import_paths.SCRIPT_DIR`), a relative import, an absolute one, a script directory, a
namespace directory without `__init__.py` (dotted and plain), a module found in a directory
above, and a repository root mapped as the package (`proj.backends.x` from `backends/x/`).

For each (rules, layout, change): a cached run, the change on disk, a cached run again, which
must report what a `--no-cache` run reports. Real `qlint check` processes, one per step over all
the cases at once (each case is its own repository): what one process keeps in memory between
runs is not what a user's next command starts from. Stop 53's hole (item 6): a module created
beside a script, in a namespace directory or under a root-mapped package, or ahead of the one
found, was not recorded as a dependency, and the cached answer stood until the file changed.

The language server's summaries and its rechecks are tested in-process below: after the same
changes (reported by the watcher, or seen at the next check), its check agrees with a fresh one,
and the change is among what the check depended on (`recheck_due`), so the buffer is rechecked.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.watched_files import CREATED, DELETED
from qlint.engine import check_source
from qlint.lsp.disk_changes import recheck_due
from qlint.settings import Settings
from tests.snippets import NET_AND_BUILD

ROOT = Path(__file__).resolve().parents[1]

# The module depended on: loud for every rule (a packet to match and insert, a builder that
# trains for PTQ and evals for QAT, a helper that switches the graph) and quiet for QL204 (its
# helper runs the model).
LOUD = (
    """
import torch
from torch import nn


"""
    + NET_AND_BUILD
    + """

DQ = torch.ops.quantized_decomposed.dequantize_per_tensor


def switch(m):
    m.eval()


def calib(m, x):
    m(x)
"""
)
# Its other version: an overload, an evaling builder, helpers that neither switch nor calibrate.
QUIET = """
import torch
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(8)

    def forward(self, x):
        return self.bn(x)


def build(train_mode=False):
    return Net().eval()


DQ = torch.ops.quantized_decomposed.dequantize_per_tensor.default


def switch(m):
    return m


def calib(m, x):
    return None
"""
USES = """

def match(gm):
    for n in gm.graph.nodes:
        if n.target == DQ:
            return n


def insert(gm, n):
    return gm.graph.call_function(DQ, (n,))
"""
CAPTURES = """
import torch
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e


def ptq(q):
    model = build(train_mode=True)
    gm = torch.export.export(model, (torch.randn(1, 3, 8, 8),)).module()
    return prepare_pt2e(gm, q)


def qat(q):
    model = build(train_mode=False)
    gm = torch.export.export(model, (torch.randn(1, 3, 8, 8),)).module()
    return prepare_qat_pt2e(gm, q)


def q203(m, q, x):
    gm = prepare_pt2e(torch.export.export(m.eval(), (x,)).module(), q)
    switch(gm)
    return gm


def q204(m, q, x):
    prepared = prepare_pt2e(torch.export.export(m.eval(), (x,)).module(), q)
    calib(prepared, x)
    return convert_pt2e(prepared)
"""
NAMES = "build, DQ, switch, calib"
# Rules and the file that imports the module: every rule reading other modules, or only QL101/
# QL102, whose import gate (`packet_imports`) alone decides whether the file is read at all.
RULES = {
    "all": ("QL101,QL102,QL201,QL202,QL203,QL204", "{imports}\n" + CAPTURES + USES),
    "gate": ("QL101,QL102", "{imports}\n" + USES),
}
# layout -> (package files, the importing file, the module it finds, its import, a path
# searched ahead of the module found, where a module created shadows it; None: no such path)
LAYOUTS = {
    "sibling": ({"pkg/__init__.py"}, "pkg/main.py", "pkg/core.py", "from core import", "core.py"),
    "relative": ({"pkg/__init__.py"}, "pkg/main.py", "pkg/core.py", "from .core import", None),
    "absolute": ({"pkg/__init__.py"}, "pkg/main.py", "pkg/core.py", "from pkg.core import", None),
    "script": (set(), "scripts/main.py", "scripts/core.py", "from core import", None),
    "script_above": (set(), "scripts/main.py", "core.py", "from core import", "scripts/core.py"),
    "namespace": (set(), "suite/quant/run_x.py", "suite/quant/helpers.py", "from suite.quant.helpers import", None),
    "namespace_plain": (set(), "suite/quant/run_x.py", "suite/quant/helpers.py", "from helpers import", None),
    "namespace_above": (
        set(),
        "suite/quant/run_x.py",
        "suite/helpers.py",
        "from helpers import",
        "suite/quant/helpers.py",
    ),
    "root_package": (
        {"backends/__init__.py", "backends/x/__init__.py"},
        "backends/x/main.py",
        "backends/x/core.py",
        "from proj.backends.x.core import",
        "proj/backends/x/core.py",  # the checkout's own `proj/`, tried first: a new directory
    ),
    # A subpackage directory that does not exist until the module is created in it.
    "subpackage": ({"pkg/__init__.py"}, "pkg/main.py", "pkg/sub/core.py", "from pkg.sub.core import", None),
    # A project module named as a standard or installed one, beside a script or at a package
    # module's import root: Python imports the project's (the script's directory, or the root
    # it is run from, comes first on `sys.path`), and so does a `--no-cache` run. Beside a
    # package module (`pkg/colorsys.py` for `pkg/main.py`) neither does (`SCRIPT_DIR`).
    "standard": (set(), "main.py", "colorsys.py", "from colorsys import", None),
    "standard_package": ({"pkg/__init__.py"}, "pkg/main.py", "colorsys.py", "from colorsys import", None),
    "installed": (set(), "scripts/main.py", "scripts/pytest.py", "from pytest import", None),
    # A namespace directory of that name: the model classes' "is it a package of the project"
    # (`ModelClasses._project_package`) reads the directory itself.
    "standard_namespace": (set(), "main.py", "colorsys/helpers.py", "from colorsys.helpers import", None),
}
# created: absent at the first run; twice: the importing file edited and checked (cached) in
# between, so the result the change must invalidate was written by a run that took what the
# first one kept (`kept_answers`) rather than working it out.
CHANGES = ("created", "created_twice", "edited", "deleted", "renamed_away", "renamed_in", "package", "shadowed")


def _cases() -> list[tuple[str, str, str]]:
    return [
        (rules, layout, change)
        for rules in RULES
        for layout, spec in LAYOUTS.items()
        for change in CHANGES
        if change != "shadowed" or spec[4] is not None
    ]


CASES = _cases()


def _write(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    past = time.time_ns() - 3600 * 10**9  # an old stat, trusted by the cache
    os.utime(path, ns=(past, past))


def _importer(rules: str, layout: str) -> str:
    return RULES[rules][1].format(imports=f"{LAYOUTS[layout][3]} {NAMES}")


def _setup(repo: Path, rules: str, layout: str, change: str) -> None:
    packages, main, module, _, _ = LAYOUTS[layout]
    (repo / ".git").mkdir(parents=True)
    for init in packages:
        _write(repo / init, "")
    _write(repo / main, _importer(rules, layout))
    if not change.startswith("created") and change != "renamed_in":
        _write(repo / module, LOUD)
    if change == "renamed_in":
        _write((repo / module).with_name("elsewhere.py"), LOUD)


def _edit_importer(repo: Path, rules: str, layout: str, change: str) -> None:
    if change == "created_twice":
        _write(repo / LAYOUTS[layout][1], _importer(rules, layout) + "\n# edited\n")


def _change(repo: Path, layout: str, change: str) -> None:
    module = repo / LAYOUTS[layout][2]
    if change.startswith("created"):
        _write(module, LOUD)
    elif change == "edited":
        _write(module, QUIET)
    elif change == "deleted":
        module.unlink()
    elif change == "renamed_away":
        module.rename(module.with_name("elsewhere.py"))
    elif change == "renamed_in":
        module.with_name("elsewhere.py").rename(module)
    elif change == "package":
        module.unlink()
        _write(module.with_suffix("") / "__init__.py", QUIET)
    elif change == "shadowed":
        _write(repo / LAYOUTS[layout][4], QUIET)


def _run(paths: list[Path], select: str, cache: Path | None) -> dict[str, list[tuple[str, int]]]:
    """What one `qlint check` process reports per file (absolute path -> sorted (code, row))."""
    args = [sys.executable, "-m", "qlint", "check", "--output-format", "json", "--exit-zero", "-j1"]
    args += ["--select", select, *map(str, paths)]
    args += ["--no-cache"] if cache is None else ["--cache-dir", str(cache)]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(p for p in (str(ROOT), os.environ.get("PYTHONPATH")) if p)}
    proc = subprocess.run(args, cwd=paths[0].parent, env=env, capture_output=True, text=True, timeout=600)
    assert "Traceback" not in proc.stderr, proc.stderr
    found: dict[str, list[tuple[str, int]]] = {str(p): [] for p in paths}
    for d in json.loads(proc.stdout):
        found[os.path.abspath(d["filename"])].append((d["code"], d["location"]["row"]))
    return {path: sorted(codes) for path, codes in found.items()}


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[tuple[str, str, str], tuple[list, list, list]]:
    """(rules, layout, change) -> what the first cached run, the cached run after the change
    and a `--no-cache` run after it reported of the importing file."""
    top = tmp_path_factory.mktemp("cases")
    repos = {case: top / "-".join(case) / "proj" for case in CASES}
    for case, repo in repos.items():
        _setup(repo, *case)
    out = {}
    for rules, (select, _) in RULES.items():
        mine = {case: repo / LAYOUTS[case[1]][1] for case, repo in repos.items() if case[0] == rules}
        cache = top / f"cache-{rules}"
        paths = sorted(mine.values())
        first = _run(paths, select, cache)
        for case in mine:
            _edit_importer(repos[case], *case)
        _run(paths, select, cache)
        for case in mine:
            _change(repos[case], case[1], case[2])
        warm = _run(paths, select, cache)
        cold = _run(paths, select, None)
        for case, path in mine.items():
            out[case] = (first[str(path)], warm[str(path)], cold[str(path)])
    return out


@pytest.mark.parametrize("case", CASES, ids=["-".join(c) for c in CASES])
def test_a_cached_answer_follows_the_module_it_rests_on(runs, case):
    first, warm, cold = runs[case]
    assert cold != first, "the change must change the answer, or the case proves nothing"
    assert warm == cold


# -- the language server ------------------------------------------------------------------------


def _lsp_check(path: Path, select: str, project: ProjectIndex):
    settings = Settings(root=path.parent, select=tuple(select.split(",")))
    result = check_source(path.read_bytes(), str(path), settings, project)
    assert not result.errors, result.errors
    return sorted((d.code, d.range.start.row) for d in result.diagnostics), frozenset(result.dependencies)


@pytest.mark.parametrize("watched", [True, False], ids=["watched", "unwatched"])
@pytest.mark.parametrize(
    ("layout", "change"),
    [
        ("sibling", "created"),
        ("sibling", "shadowed"),
        ("script", "created"),
        ("namespace_plain", "created"),
        ("namespace_above", "shadowed"),
        ("root_package", "created"),
        ("root_package", "deleted"),
        ("root_package", "shadowed"),
        ("subpackage", "created"),
        ("standard", "created"),
        ("standard_package", "created"),
        ("installed", "created"),
        ("standard_namespace", "created"),
        ("standard_namespace", "deleted"),
    ],
)
@pytest.mark.parametrize("rules", list(RULES))
def test_the_language_server_rechecks_and_reads_the_module_again(tmp_path, rules, layout, change, watched):
    """One project index kept across checks, as the server keeps it: after the change (the
    watcher's event, or none), the open buffer's check is due again (`recheck_due` of what
    its check read) and answers as a fresh index does."""
    repo = tmp_path / "proj"
    _setup(repo, rules, layout, change)
    main = repo / LAYOUTS[layout][1]
    select = RULES[rules][0]
    project = ProjectIndex()
    if watched:
        project.watch([str(repo)])
    before, read = _lsp_check(main, select, project)
    _change(repo, layout, change)
    touched = repo / (LAYOUTS[layout][4] if change == "shadowed" else LAYOUTS[layout][2])
    assert recheck_due({str(touched)}, read)
    if watched:
        project.files_changed([(str(touched), DELETED if change == "deleted" else CREATED)])
    after, _ = _lsp_check(main, select, project)
    fresh, _ = _lsp_check(main, select, ProjectIndex())
    assert after == fresh != before


# -- a directory read as absent --------------------------------------------------------------------


def test_paths_under_a_directory_that_does_not_exist_are_one_dependency(tmp_path):
    """The paths a lookup tried below a directory that does not exist are that directory,
    spelled with a trailing separator: `executorch.exir.*` tried under the checkout before its
    package root finds them was thousands of dependencies per ExecuTorch run."""
    from qlint.analysis.names.import_paths import forget_roots, tried_before

    repo = tmp_path / "proj"
    _setup(repo, "gate", "subpackage", "created")
    forget_roots()
    tried = tried_before("pkg.sub.core", str(repo / "pkg" / "main.py"), None)
    assert str(repo / "pkg" / "sub") + os.sep in tried
    assert not any(
        p.startswith(str(repo / "pkg" / "sub") + os.sep) and p != str(repo / "pkg" / "sub") + os.sep for p in tried
    )


def test_the_results_cache_takes_a_directory_there_for_a_change(tmp_path):
    """A dependency spelled as a directory, recorded absent, holds while nothing is at that
    path or a file is (a file `sub` makes no `sub/core.py` importable), and fails once a
    directory is there, even an empty one: a module may be made in it."""
    from qlint.cache import Cache
    from qlint.results import FileResult

    main = tmp_path / "main.py"
    _write(main, "x = 1\n")
    sub = tmp_path / "sub"
    deps = {str(sub) + os.sep: ""}

    def hit() -> bool:
        cache = Cache(tmp_path / "cache", "fp")
        found = cache.lookup(str(main))
        return found is not None

    cache = Cache(tmp_path / "cache", "fp")
    st = main.stat()
    from qlint.results import content_hash

    cache.store(
        FileResult(path=str(main), dependencies=deps), st.st_size, st.st_mtime_ns, content_hash(main.read_bytes())
    )
    cache.save()
    assert hit()
    sub.write_text("")  # a file of that name: still no package there
    assert hit()
    sub.unlink()
    sub.mkdir()
    assert not hit()


def test_the_server_rechecks_a_buffer_when_a_file_appears_below_such_a_directory(tmp_path):
    sub = str(tmp_path / "pkg" / "sub")
    read = frozenset({sub + os.sep})
    assert recheck_due({sub}, read)  # the watcher reports the directory
    assert recheck_due({sub + "/core.py"}, read)  # or the file alone
    assert recheck_due({sub + "/deep/core.py"}, read)
    assert not recheck_due({sub + "x/core.py"}, read)
    assert not recheck_due({str(tmp_path / "pkg" / "other.py")}, read)


# -- a directory read as there ----------------------------------------------------------------------


def test_a_read_keeps_the_trailing_separator_of_a_directory(tmp_path):
    """`record_read` of a directory read as absent (`file_keys.record_trail` of a kept fact's
    lookups) keeps it spelled as a directory: `abspath` dropped the separator, and the cache and
    the server then took a module created below it for no change."""
    project = ProjectIndex()
    main = str(tmp_path / "main.py")
    project.record_read(main, str(tmp_path / "sub") + os.sep, "")
    project.record_read(main, str(tmp_path / "other.py"), "")
    deps = project.dependencies_of(main)
    assert deps == {str(tmp_path / "sub") + os.sep: "", str(tmp_path / "other.py"): ""}


def test_a_module_read_as_a_namespace_directory_depends_on_the_directory(tmp_path):
    """`function_references._elsewhere` takes a module the index does not find for the project's
    own when a directory of that name is where it would be: the directory, there or not, is a
    dependency, so removing or creating it invalidates the answer (the files below it may be
    none)."""
    from qlint.analysis.flow.function_references import _elsewhere
    from qlint.analysis.names.shadowed_names import DIRECTORY

    repo = tmp_path / "proj"
    _write(repo / "run.py", "from tools.quant import f\n")
    (repo / ".git").mkdir()
    (repo / "tools" / "quant").mkdir(parents=True)  # a namespace directory, no module in it
    (repo / "elsewhere").mkdir()
    run = str(repo / "run.py")
    project = ProjectIndex()
    assert not _elsewhere("tools.quant.f", "f", project, run, str(repo / "helpers.py"))
    assert project.dependencies_of(run).get(str(repo / "tools" / "quant") + os.sep) == DIRECTORY
    assert _elsewhere("other.quant.f", "f", project, run, str(repo / "helpers.py"))
    assert project.dependencies_of(run).get(str(repo / "other" / "quant") + os.sep) == ""
    # Removing the directory is what the server rechecks a buffer for.
    read = frozenset({str(repo / "tools" / "quant") + os.sep})
    assert recheck_due({str(repo / "tools" / "quant")}, read)
    assert recheck_due({str(repo / "tools")}, read)


def test_the_results_cache_takes_a_directory_gone_for_a_change(tmp_path):
    """A dependency recorded as a directory there (`DIRECTORY`) holds while a directory is at
    that path and fails once none is: removed, or a file of that name instead."""
    from qlint.analysis.names.shadowed_names import DIRECTORY
    from qlint.cache import Cache
    from qlint.results import FileResult, content_hash

    main = tmp_path / "main.py"
    _write(main, "x = 1\n")
    sub = tmp_path / "sub"
    sub.mkdir()

    def hit() -> bool:
        return Cache(tmp_path / "cache", "fp").lookup(str(main)) is not None

    cache = Cache(tmp_path / "cache", "fp")
    st = main.stat()
    result = FileResult(path=str(main), dependencies={str(sub) + os.sep: DIRECTORY})
    cache.store(result, st.st_size, st.st_mtime_ns, content_hash(main.read_bytes()))
    cache.save()
    assert hit()
    (sub / "new.py").write_text("")  # what is in it changes no answer resting on it being there
    assert hit()
    (sub / "new.py").unlink()
    sub.rmdir()
    assert not hit()
    sub.write_text("")  # a file of that name: no directory
    assert not hit()


# -- a standard or installed name looked up ----------------------------------------------------------


def test_a_standard_name_looked_up_is_one_dependency_on_the_entries_of_its_roots(tmp_path):
    """A lookup of a standard or installed module the project does not hold depends on the
    entries of its import roots that carry such names (`shadowed_names`): one dependency for
    all of them, not three paths per name and root (ExecuTorch: 21,000 more dependencies, a
    warm run +12%). Its digest moves when a module of such a name is made at a root, or a
    directory, and not when another module is."""
    from qlint.analysis.names import shadowed_names
    from qlint.analysis.names.import_paths import forget_roots, tried_before

    repo = tmp_path / "proj"
    _setup(repo, "gate", "standard", "created")
    forget_roots()
    tried = tried_before("colorsys", str(repo / "main.py"), None)
    assert tried == (shadowed_names.key((str(repo),)),)
    assert tried_before("typing.io", str(repo / "main.py"), None) == tried

    def digest() -> str:
        return shadowed_names.digest_now(shadowed_names.roots_of(tried[0]), {})

    before = digest()
    _write(repo / "core.py", LOUD)
    (repo / "helpers").mkdir()
    assert digest() == before
    _write(repo / "colorsys.py", LOUD)
    assert digest() != before
    (repo / "colorsys.py").unlink()
    assert digest() == before
    (repo / "typing").mkdir()  # a namespace directory: `typing.io` may be made in it
    assert digest() != before


def test_a_name_with_its_directory_in_the_project_keeps_its_paths(tmp_path):
    """Below a directory of the standard name (`colorsys/` holds other modules), the paths
    tried are read one by one, as a project module's."""
    from qlint.analysis.names.import_paths import forget_roots, tried_before

    repo = tmp_path / "proj"
    _setup(repo, "gate", "standard_namespace", "renamed_in")
    forget_roots()
    tried = tried_before("colorsys.helpers", str(repo / "main.py"), None)
    assert str(repo / "colorsys" / "helpers.py") in tried
    assert not any(p.startswith("shadows:") for p in tried)


def test_the_results_cache_keeps_a_result_resting_on_a_standard_name_while_no_module_shadows_it(tmp_path):
    from qlint.analysis.names import shadowed_names
    from qlint.cache import Cache
    from qlint.results import FileResult, content_hash

    main = tmp_path / "main.py"
    _write(main, "import colorsys\n")
    dep = shadowed_names.key((str(tmp_path),))

    def hit() -> bool:
        return Cache(tmp_path / "cache", "fp").lookup(str(main)) is not None

    cache = Cache(tmp_path / "cache", "fp")
    st = main.stat()
    digest = shadowed_names.digest_now(shadowed_names.roots_of(dep), {})
    cache.store(
        FileResult(path=str(main), dependencies={dep: digest}),
        st.st_size,
        st.st_mtime_ns,
        content_hash(main.read_bytes()),
    )
    cache.save()
    assert hit()
    _write(tmp_path / "core.py", "")
    assert hit()
    _write(tmp_path / "colorsys.pyi", "")
    assert not hit()


def test_the_server_rechecks_a_buffer_when_a_module_shadows_a_standard_name(tmp_path):
    from qlint.analysis.names import shadowed_names

    root = str(tmp_path / "proj")
    read = frozenset({shadowed_names.key((root, str(tmp_path)))})
    assert recheck_due({root + "/colorsys.py"}, read)
    assert recheck_due({root + "/pytest"}, read)  # a directory, reported alone
    assert recheck_due({root + "/typing/io.py"}, read)  # or a file below it
    assert recheck_due({str(tmp_path / "copy.py")}, read)  # at the other root
    assert recheck_due({root}, read)  # the root itself gone
    assert not recheck_due({root + "/core.py"}, read)
    assert not recheck_due({root + "/pkg/colorsys.py"}, read)  # no root of the lookup
    assert not recheck_due({str(tmp_path / "other" / "colorsys.py")}, read)
