"""An editor's checks of one buffer, keystroke after keystroke, held against fresh checks: what
the tests of carried work (QL201 flows, QL204 summaries) share."""

from __future__ import annotations

import os
import sys

from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import settings_for

_ROOT = os.path.join(os.path.dirname(__file__), "..")


def findings(project, path, text, select):
    result = check_source(text.encode(), path, settings_for(select), project)
    assert not result.errors, result.errors
    return [(d.code, d.range.start.row, d.range.start.col, d.message) for d in result.diagnostics]


def package(tmp_path):
    pkg = tmp_path / "pkg"
    pkg.mkdir(exist_ok=True)
    (pkg / "__init__.py").write_text("")
    return pkg


def steps(tmp_path, texts, select, others=None, files=None):
    """Each text checked in turn with one project (carrying) and with a fresh one: the same
    findings at every step. `others`: another module's buffer at each step; `files`: the
    package's files on disk at each step (relative path -> text, None: absent)."""
    pkg = package(tmp_path)
    path = str(pkg / "checked.py")
    kept = ProjectIndex()
    seen = []
    for step, text in enumerate(texts):
        for name, versions in (files or {}).items():
            target = pkg / name
            if versions[step] is None:
                if target.exists():
                    target.unlink()
            else:
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_text(versions[step])
        overlay = {str(pkg / name): versions[step] for name, versions in (others or {}).items()}
        for other, content in overlay.items():
            kept.update(other, content)
        found = findings(kept, path, text, select)
        assert found == findings(ProjectIndex(overlay), path, text, select), step
        seen.append(found)
    return seen


def counted_runs(monkeypatch, cls) -> list[str]:
    """The function names whose bodies `cls.run` (an interpreter or walker) runs over, in order."""
    seen: list[str] = []
    run = cls.run

    def counting(self):
        seen.append(getattr(self.func, "name", "<module>"))
        return run(self)

    monkeypatch.setattr(cls, "run", counting)
    return seen


def example_edits(edits):
    """(path, text, the buffers `edits` keystrokes make of it) for each bundled example, in order:
    the keystrokes `benchmarks/keystroke_edits.py` types for the in-process benchmark."""
    sys.path.insert(0, os.path.join(_ROOT, "benchmarks"))
    from keystroke_edits import keystroke_edits

    examples = os.path.join(_ROOT, "examples")
    paths = sorted(os.path.join(root, f) for root, _, files in os.walk(examples) for f in files if f.endswith(".py"))
    for path in paths:
        with open(path, encoding="utf-8") as fh:
            text = fh.read()
        yield path, text, keystroke_edits(text, edits)


def same_as_fresh(buffers, path, select):
    """Each buffer checked with one project (carrying) and with a fresh one gives the same findings."""
    kept = ProjectIndex()
    for buffer in buffers:
        assert findings(kept, path, buffer, select) == findings(ProjectIndex(), path, buffer, select), path
