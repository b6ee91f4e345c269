"""QL201: a method that captures the model it is given is judged from its callers in the
project, as a module-level helper is (issue 14, item 7).

`Builder.quantize(self, model, x)` called as `self.quantize(...)` in its own module with an
eval-mode model used to be trusted whatever other modules passed it: `Builder(q).quantize(
Net(), x)` in another module went unseen. Its calls there are read (`Builder(q).quantize`,
`b.quantize` after `b = Builder(q)`), a receiver that may be an instance qlint cannot follow
(a parameter, a subclass's `self` taking the method as a value: `test_ql201_subclass_callers`)
leaves the callers unknown, and what cannot be the method (another class's own
`self.quantize`, a module's function of that name) is no caller.
"""

from __future__ import annotations

import textwrap

from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import check_file, package_repository, rows_of, settings_for
from tests.snippets import NET_BN2D

BUILDER = (
    NET_BN2D
    + """

class Builder:
    def __init__(self, quantizer):
        self.quantizer = quantizer

    def quantize(self, model, x):
        captured = export(model, (x,)).module()
        return prepare_pt2e(captured, self.quantizer)

    def default(self, x):
        return self.quantize(Net().eval(), x)
"""
)
CAPTURE_ROW = BUILDER.splitlines().index("        captured = export(model, (x,)).module()") + 1
IMPORT = "import torch\nfrom pkg.builder import Builder, Net\n"


def _repo(tmp_path, **scripts: str):
    modules = {name: IMPORT + textwrap.dedent(body) for name, body in scripts.items()}
    return package_repository(tmp_path / "repo", builder=BUILDER, **modules)


def _rows(root) -> list[int]:
    return rows_of(check_file(root / "pkg" / "builder.py", ("QL201",)).diagnostics)


def test_only_eval_callers_in_its_own_module_is_quiet(tmp_path):
    assert _rows(_repo(tmp_path)) == []


def test_an_instance_built_in_the_call_elsewhere_passing_a_train_model_is_reported(tmp_path):
    train = "\ndef main(q, x):\n    Builder(q).quantize(Net(), x)\n"
    assert _rows(_repo(tmp_path, script=train)) == [CAPTURE_ROW]


def test_an_instance_bound_to_a_name_elsewhere_is_followed(tmp_path):
    bound = "\ndef main(q, x):\n    b = Builder(q)\n    b.quantize(MODEL, x)\n"
    assert _rows(_repo(tmp_path / "t", script=bound.replace("MODEL", "Net()"))) == [CAPTURE_ROW]
    # The look-alike that is right: the caller there passes an eval-mode model.
    assert _rows(_repo(tmp_path / "e", script=bound.replace("MODEL", "Net().eval()"))) == []
    inline = "\ndef main(q, x):\n    Builder(q).quantize(Net().eval(), x)\n"
    assert _rows(_repo(tmp_path / "i", script=inline)) == []


def test_a_receiver_that_cannot_be_followed_leaves_the_callers_unknown(tmp_path):
    handed = "\ndef run(builder, model, x):\n    return builder.quantize(model.eval(), x)\n"
    assert _rows(_repo(tmp_path / "p", script=handed)) == [CAPTURE_ROW]
    # A subclass's `self.quantize` is read (`test_ql201_subclass_callers`), and hands on a
    # model its own method was given.
    subclass = """
class Sub(Builder):
    def go(self, model, x):
        return self.quantize(model, x)
"""
    assert _rows(_repo(tmp_path / "s", script=subclass)) == [CAPTURE_ROW]


def test_what_cannot_be_the_method_is_no_caller(tmp_path):
    others = """
class Other:
    def quantize(self, model):
        return model

    def go(self):
        return self.quantize(Net())


class Suite(torch.nn.Module):
    def go(self, model):
        return self.quantize(model)


def main(q, x):
    Builder(q).quantize(Net().eval(), x)
    return torch.quantize_per_tensor(x, 0.1, 0, torch.qint8), torch.quantize
"""
    assert _rows(_repo(tmp_path, script=others)) == []


def test_a_module_no_other_module_can_import_keeps_its_calls(tmp_path):
    # Another module spells the method's name, on its own class; none names `builder`:
    # the class is built here, and the calls here decide, as for a test suite's helper.
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pkg").mkdir()
    (root / "pkg" / "builder.py").write_text(BUILDER)
    (root / "pkg" / "other.py").write_text("def main(tool, m):\n    return tool.quantize(m)\n")
    assert _rows(root) == []
    # ... unless the module can be imported there: the receiver may be a `Builder`.
    (root / "pkg" / "other.py").write_text("import pkg.builder\n\ndef main(tool, m):\n    return tool.quantize(m)\n")
    assert _rows(root) == [CAPTURE_ROW]


def test_an_instance_of_another_class_is_no_caller(tmp_path):
    others = """
from pkg.tools import Tool


class Local:
    def quantize(self, model, x):
        return model


def main(q, x):
    Local().quantize(Net(), x)
    tool = Tool(q)
    tool.quantize(Net(), x)
    return Builder(q).quantize(Net().eval(), x)
"""
    root = _repo(tmp_path, script=others)
    (root / "pkg" / "tools.py").write_text("class Tool:\n    def quantize(self, model, x):\n        return model\n")
    assert _rows(root) == []
    # A subclass of the method's class, built there: the method runs on it.
    sub = "\nclass Sub(Builder):\n    pass\n\n\ndef main(q, x):\n    return Sub(q).quantize(Net(), x)\n"
    assert _rows(_repo(tmp_path / "s", script=sub)) == [CAPTURE_ROW]


def test_a_caller_added_later_is_seen(tmp_path):
    root = _repo(tmp_path, script="\ndef main(q, x):\n    Builder(q).quantize(Net().eval(), x)\n")
    project = ProjectIndex()
    path = root / "pkg" / "builder.py"
    result = check_source(path.read_text(), str(path), settings_for(("QL201",)), project)
    assert result.diagnostics == []
    (root / "pkg" / "late.py").write_text(IMPORT + "\ndef main(q, x):\n    Builder(q).quantize(Net(), x)\n")
    result = check_source(path.read_text(), str(path), settings_for(("QL201",)), project)
    assert [d.range.start.row for d in result.diagnostics] == [CAPTURE_ROW]


def test_a_call_on_an_instance_in_its_own_module_is_not_dropped(tmp_path):
    # `b.quantize(Net())` here, with a train-mode batch-norm model, and an eval-mode caller
    # elsewhere: the call here counts only when every call of the method is known, and the
    # class is named in another module, so the helper is judged as if its callers were unknown.
    root = _repo(tmp_path, script="\ndef main(q, x):\n    Builder(q).quantize(Net().eval(), x)\n")
    path = root / "pkg" / "builder.py"
    path.write_text(BUILDER + "\n\ndef main(q, x):\n    b = Builder(q)\n    b.quantize(Net(), x)\n")
    assert _rows(root) == [CAPTURE_ROW]


def test_an_editor_check_again_reuses_the_scan_until_a_module_changes(tmp_path, monkeypatch):
    from qlint.analysis.flow import project_search

    root = _repo(tmp_path, script="\ndef main(q, x):\n    Builder(q).quantize(Net().eval(), x)\n")
    scans = []
    real = project_search._scan
    monkeypatch.setattr(project_search, "_scan", lambda *a: scans.append(a[2]) or real(*a))
    project = ProjectIndex()
    path = root / "pkg" / "builder.py"
    for typed in ("", "\n# typed\n"):  # a keystroke in the checked module: the others stay as they were
        result = check_source(path.read_text() + typed, str(path), settings_for(("QL201",)), project)
        assert result.diagnostics == []
    assert scans == ["quantize"]
    # Another module edited: searched again, and its new call is read.
    script = root / "pkg" / "script.py"
    script.write_text(script.read_text().replace("Net().eval()", "Net()"))
    result = check_source(path.read_text(), str(path), settings_for(("QL201",)), project)
    assert [d.range.start.row for d in result.diagnostics] == [CAPTURE_ROW]
    assert scans == ["quantize", "quantize"]


def test_a_subclass_elsewhere_decides_again_only_when_its_module_changes(tmp_path, monkeypatch):
    from qlint.analysis.flow import project_search, subclassed_methods

    # A subclass that hands the method on as a value: no flow reads its calls.
    subclass = "\nclass Sub(Builder):\n    def go(self, x):\n        return run(self.quantize, Net().eval(), x)\n"
    root = _repo(tmp_path, script=subclass)
    scans = []
    real = project_search._scan
    monkeypatch.setattr(project_search, "_scan", lambda *a: scans.append(a[2]) or real(*a))
    project = ProjectIndex()
    path = root / "pkg" / "builder.py"
    for typed in ("", "\n# typed\n"):
        result = check_source(path.read_text() + typed, str(path), settings_for(("QL201",)), project)
        assert [d.range.start.row for d in result.diagnostics] == [CAPTURE_ROW]
    assert scans == ["quantize"]  # the second check read the subclassing module only
    # ... which it depends on, and which decides while it keeps its content.
    assert str(root / "pkg" / "script.py") in result.dependencies
    kept = subclassed_methods._SUBCLASSING.get((str(root), "pkg.builder.Builder.quantize"))
    assert kept is not None and kept[-1][0][0] == str(root / "pkg" / "script.py")
    # The subclass goes, an eval-mode caller stays: searched again, and quiet.
    script = root / "pkg" / "script.py"
    script.write_text(IMPORT + "\ndef main(q, x):\n    Builder(q).quantize(Net().eval(), x)\n")
    result = check_source(path.read_text(), str(path), settings_for(("QL201",)), project)
    assert result.diagnostics == []
    assert scans == ["quantize", "quantize"]
    assert (str(root), "pkg.builder.Builder.quantize") not in subclassed_methods._SUBCLASSING


def test_a_one_file_check_takes_the_subclass_an_earlier_run_found_while_its_module_is_unchanged(tmp_path, monkeypatch):
    # `qlint check -` (a new process per edit) keeps what decided the method's callers
    # (`kept_answers`): the next run depends on the subclassing module alone, and neither
    # lists nor scans the project, until that module changes.
    import os
    import time

    from qlint.analysis import scan_memo
    from qlint.analysis.flow import project_search, subclassed_methods
    from qlint.analysis.graphs import kept_answers, kept_shards
    from qlint.analysis.names import content_keys
    from qlint.summary_cache import SummaryStore

    # A subclass that hands the method on as a value: no flow reads its calls.
    subclass = "\nclass Sub(Builder):\n    def go(self, x):\n        return run(self.quantize, Net().eval(), x)\n"
    root = _repo(tmp_path, script=subclass)
    past = time.time_ns() - 3600 * 10**9
    for p in [root, *root.rglob("*")]:
        os.utime(p, ns=(past, past))
    store = SummaryStore(tmp_path / "cache")
    monkeypatch.setattr(ProjectIndex, "store", store)
    scans = []
    real = project_search._scan
    monkeypatch.setattr(project_search, "_scan", lambda *a: scans.append(a[2]) or real(*a))
    path = root / "pkg" / "builder.py"
    script = str(root / "pkg" / "script.py")

    def new_process():
        subclassed_methods._SUBCLASSING.clear()
        project_search._SCANS.clear()
        content_keys._DIGESTS.clear()
        scan_memo.forget()
        kept_answers.forget()

    def run(text):
        result = check_source(text, str(path), settings_for(("QL201",)), ProjectIndex())
        assert not result.errors, result.errors
        kept_shards.flush()
        return result

    kept_answers.use(store)
    try:
        new_process()
        assert [d.range.start.row for d in run(path.read_text()).diagnostics] == [CAPTURE_ROW]
        assert scans == ["quantize"]
        new_process()
        result = run(path.read_text() + "\n# typed\n")
        assert [d.range.start.row for d in result.diagnostics] == [CAPTURE_ROW]
        assert scans == ["quantize"]  # taken from the earlier run: no scan
        # It depends on the subclassing module, and not on which modules exist that spell the name.
        assert script in result.dependencies
        assert not [d for d in result.dependencies if d.startswith("qlint-listing:") and '["quantize"]' in d]
        # The subclass goes, an eval-mode caller stays: searched again, and quiet.
        caller = "\ndef main(q, x):\n    Builder(q).quantize(Net().eval(), x)\n"
        (root / "pkg" / "script.py").write_text(IMPORT + caller)
        os.utime(script, ns=(past + 10**9, past + 10**9))
        new_process()
        assert run(path.read_text()).diagnostics == []
        assert scans == ["quantize", "quantize"]
    finally:
        kept_answers.use(None)
        new_process()
