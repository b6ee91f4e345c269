"""A package module also run as a script imports a sibling plainly: `from core import build` in
`pkg/main.py`, beside `pkg/core.py`, with no `try` around it (issue 14, stop 52's item 5).

`python pkg/main.py` puts `pkg/` first on `sys.path`, so the import finds `pkg/core.py`; run as
a package module it finds the project's top-level `core`, an installed one or a standard one,
and fails where there is none. So where nothing else can be `core`, the sibling is the module
(`import_paths.SCRIPT_DIR`, the last root a package's file looks under). A project's top-level
`core`, a standard module (`types`) and an installed one (`torch`) are what a package run
imports, and stay what the name denotes.
"""

from __future__ import annotations

import textwrap

from qlint.analysis.names.project import ProjectIndex
from tests.conftest import check_file, package_repository
from tests.test_script_dir_import_fallback import CORE, MAIN, _row

PLAIN = "from core import build"
EVAL_ONLY = """
from pkg.core import Net


def build(train_mode=False):
    return Net().eval()
"""


def _main(imports: str = PLAIN, builder: str = "build") -> str:
    return textwrap.dedent(MAIN).format(imports=imports, builder=builder, ptq_train=True, qat_train=False)


def _rows(path, project: ProjectIndex | None = None) -> dict[str, list[int]]:
    rows: dict[str, list[int]] = {}
    for d in check_file(path, ("QL201", "QL202"), project).diagnostics:
        rows.setdefault(d.code, []).append(d.range.start.row)
    return rows


def _loud(main: str) -> dict[str, list[int]]:
    # The sibling's builder trains for PTQ and evals for QAT when asked to: both reported.
    return {"QL201": [_row(main, "def ptq")], "QL202": [_row(main, "def qat")]}


def test_a_plain_import_of_a_sibling_reads_its_builder(tmp_path):
    main = _main()
    root = package_repository(tmp_path / "repo", core=CORE, main=main)
    assert _rows(root / "pkg" / "main.py") == _loud(main)


def test_a_plain_import_of_a_sibling_module_reads_its_functions(tmp_path):
    main = _main("import core", "core.build")
    root = package_repository(tmp_path / "repo", core=CORE, main=main)
    assert _rows(root / "pkg" / "main.py") == _loud(main)


def test_the_sibling_of_a_run_over_the_tree_is_found_as_in_one_check(tmp_path):
    main = _main()
    root = package_repository(tmp_path / "repo", core=CORE, main=main)
    ProjectIndex.fix_layout(True)  # the listings of a run whose files stay put
    try:
        assert _rows(root / "pkg" / "main.py", ProjectIndex()) == _loud(main)
    finally:
        ProjectIndex.fix_layout(False)


def test_a_top_level_module_of_the_project_wins_over_the_sibling(tmp_path):
    main = _main()
    root = package_repository(tmp_path / "repo", core=CORE, main=main)
    (root / "core.py").write_text(EVAL_ONLY)
    # The top-level builder evals whatever it is asked: the QAT capture is reported, not the PTQ one.
    assert _rows(root / "pkg" / "main.py") == {"QL202": [_row(main, "def qat")]}


def test_a_name_the_sibling_does_not_define_stays_unknown(tmp_path):
    main = _main()
    core = CORE.replace("def build(", "def make(")
    root = package_repository(tmp_path / "repo", core=core, main=main)
    assert _rows(root / "pkg" / "main.py") == {}


def test_a_standard_or_installed_name_is_not_the_sibling(tmp_path):
    for name in ("types", "torch"):
        main = _main(f"from {name} import build")
        root = package_repository(tmp_path / name, **{name: CORE, "main": main})
        assert _rows(root / "pkg" / "main.py") == {}, name


def test_a_module_of_a_subpackage_finds_its_own_sibling_not_its_parents(tmp_path):
    main = _main()
    root = package_repository(tmp_path / "repo", core=CORE)
    sub = root / "pkg" / "sub"
    sub.mkdir()
    (sub / "__init__.py").write_text("")
    (sub / "main.py").write_text(main)
    assert _rows(sub / "main.py") == {}


def test_two_packages_under_one_root_each_find_their_own_sibling(tmp_path):
    # One import root, two script directories: what is kept of a lookup per import root must
    # not hand one package's `core` to the other.
    main = _main()
    root = package_repository(tmp_path / "repo", core=CORE, main=main)
    other = root / "other"
    other.mkdir()
    (other / "__init__.py").write_text("")
    (other / "core.py").write_text(EVAL_ONLY.replace("pkg.core", "pkg.core"))
    (other / "main.py").write_text(main)
    for fixed in (False, True):
        ProjectIndex.fix_layout(fixed)
        try:
            project = ProjectIndex()
            assert _rows(root / "pkg" / "main.py", project) == _loud(main)
            assert _rows(other / "main.py", project) == {"QL202": [_row(main, "def qat")]}
            project = ProjectIndex()
            assert _rows(other / "main.py", project) == {"QL202": [_row(main, "def qat")]}
            assert _rows(root / "pkg" / "main.py", project) == _loud(main)
        finally:
            ProjectIndex.fix_layout(False)


def test_the_lookup_itself(tmp_path):
    root = package_repository(tmp_path / "repo", core=CORE, types=CORE, torch=CORE, main="")
    (root / "pkg" / "helpers").mkdir()
    (root / "pkg" / "helpers" / "__init__.py").write_text("")
    (root / "pkg" / "helpers" / "graph.py").write_text("")
    requester = str(root / "pkg" / "main.py")
    index = ProjectIndex(track_dependents=False)
    assert index.find_module("core", requester) == str(root / "pkg" / "core.py")
    assert index.find_module("helpers.graph", requester) == str(root / "pkg" / "helpers" / "graph.py")
    assert index.find_module("types", requester) is None
    assert index.find_module("torch", requester) is None
    assert index.find_module("missing", requester) is None
    # A file whose directory is no package's already imports from it: nothing changes there.
    (root / "scripts").mkdir()
    (root / "scripts" / "core.py").write_text("")
    assert index.find_module("core", str(root / "scripts" / "run.py")) == str(root / "scripts" / "core.py")


OPS = "import torch\n\nRELU = torch.ops.aten.relu{overload}\n"
MATCHER = """
from ops import RELU


def drop_relus(gm):
    for n in gm.graph.nodes:
        if n.target == RELU:
            n.replace_all_uses_with(n.args[0])
"""


def test_a_packet_bound_in_a_sibling_is_read_in_each_package_as_its_own(tmp_path):
    # QL101 reads `RELU` through the import (`packet_imports`, kept per import root and name).
    root = package_repository(tmp_path / "repo", ops=OPS.format(overload=""), main=MATCHER)
    other = root / "other"
    other.mkdir()
    (other / "__init__.py").write_text("")
    (other / "ops.py").write_text(OPS.format(overload=".default"))
    (other / "main.py").write_text(MATCHER)
    for fixed in (False, True):
        for order in ((root / "pkg", other), (other, root / "pkg")):
            ProjectIndex.fix_layout(fixed)
            try:
                project = ProjectIndex()
                found = {
                    p.name: [d.range.start.row for d in check_file(p / "main.py", ("QL101",), project).diagnostics]
                    for p in order
                }
            finally:
                ProjectIndex.fix_layout(False)
            assert found == {"pkg": [7], "other": []}, (fixed, order)


def test_a_sibling_made_later_concerns_the_module_that_looked_for_it(tmp_path):
    from qlint.engine import check_source
    from tests.conftest import settings_for

    text = _main()
    root = package_repository(tmp_path / "repo", main=text)
    main, core = str(root / "pkg" / "main.py"), str(root / "pkg" / "core.py")
    settings = settings_for(("QL201", "QL202"))
    project = ProjectIndex()
    assert check_source(text, main, settings, project).diagnostics == []
    # The absent sibling is part of what the check read: making it concerns the module.
    assert project.update(core, CORE) == {main}
    found = check_source(text, main, settings, project).diagnostics
    assert sorted((d.code, d.range.start.row) for d in found) == sorted(
        (code, rows[0]) for code, rows in _loud(text).items()
    )
