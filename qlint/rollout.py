"""`qlint check|fix ROOT...` over several repositories: one run, per-repository results.

Each repository (see `qlint.repos`) is checked or fixed with its own settings, its own
cache and its own project index; what comes back per repository feeds the usual report
(all findings, as before), the per-repository summaries (`qlint.rollout_report`), the
`--diff` / `--patch-dir` patches (`qlint.patches`), baselines and `--add-noqa`.
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

from qlint.diagnostic import Diagnostic
from qlint.progress import Progress
from qlint.repos import Repository
from qlint.value_classes import field, value_class

if TYPE_CHECKING:
    from qlint.patches import FileChange


@value_class
class RepoOutcome:
    repo: Repository
    diagnostics: list[Diagnostic] = field(default_factory=list)  # reported: findings, or what a fix left
    files: list[str] = field(default_factory=list)  # files checked
    before: Counter | None = None  # fix: findings per rule before fixing
    fixed: int = 0
    changes: list[FileChange] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    seconds: float = 0.0
    baseline_hidden: int = 0
    baseline_stale: list[str] = field(default_factory=list)
    patch_file: str | None = None
    notices: list[str] = field(default_factory=list)  # files left alone on purpose (edited meanwhile)
    session: Any = None  # the repository's qlint.fix_session.FixSession, when it fixed
    cell_diffs: dict[str, str] = field(default_factory=dict)  # notebook path -> per-cell diff


@value_class
class Rollout:
    outcomes: list[RepoOutcome]
    mode: str  # "check" | "fix"

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return sorted((d for o in self.outcomes for d in o.diagnostics), key=lambda d: d.sort_key())

    @property
    def errors(self) -> list[str]:
        return [e for o in self.outcomes for e in o.errors]

    @property
    def notices(self) -> list[str]:
        return [n for o in self.outcomes for n in o.notices]

    def patch(self, path: str) -> tuple[str, str] | None:
        """(text on disk, fixed text) from the fix session of the repository holding `path`
        (what the lintrunner reporter asks a session)."""
        outcome = self._outcome_for(path)
        return outcome.session.patch(path) if outcome is not None and outcome.session is not None else None

    def settings_for(self, path: str):
        outcome = self._outcome_for(path)
        return (outcome or self.outcomes[0]).repo.settings

    def _outcome_for(self, path: str):
        """The outcome of the repository a reported path belongs to (longest root first)."""
        best = None
        for o in self.outcomes:
            root = str(o.repo.root)
            if (path == root or path.startswith(root.rstrip(os.sep) + os.sep)) and (
                best is None or len(root) > len(str(best.repo.root))
            ):
                best = o
        return best


def check(
    repos: Sequence[Repository],
    use_cache: bool,
    jobs: int | None,
    progress: Progress,
    runtime: Callable | None = None,
) -> Rollout:
    from qlint.runner import run_check

    outcomes = []
    for repo in repos:
        started = time.perf_counter()
        progress.repository(repo.name)
        run = run_check(repo.paths, repo.settings, use_cache=use_cache, jobs=jobs, progress=progress)
        diagnostics = [d for r in run.results for d in r.diagnostics]
        errors = run.all_errors
        if runtime is not None and diagnostics:
            try:
                diagnostics = list(runtime(diagnostics, repo.settings, verify_fixes=True, cache=use_cache))
            except Exception as exc:  # the static findings still stand; report the checker's failure
                errors.append(f"runtime checker failed: {type(exc).__name__}: {exc}")
        outcome = RepoOutcome(repo, diagnostics, [r.path for r in run.results], errors=errors)
        outcome.seconds = time.perf_counter() - started
        outcomes.append(outcome)
    progress.close()
    return Rollout(outcomes, "check")


def fix(
    repos: Sequence[Repository],
    unsafe_of: Callable[[Repository], bool],
    diff_only: bool,
    use_cache: bool,
    jobs: int | None,
    progress: Progress,
    prepare: Callable[[Repository], tuple[list[str], list[Diagnostic]]] | None = None,
    verify: Callable | None = None,
) -> Rollout:
    """`prepare` (for `--verify`): the paths to fix and the findings held back, per repository;
    `verify`: attaches runtime verdicts to what is left."""
    from qlint.runner import FixRunResult, run_fix

    outcomes = []
    for repo in repos:
        started = time.perf_counter()
        progress.repository(repo.name)
        paths, held = prepare(repo) if prepare is not None else (repo.paths, [])
        unsafe = unsafe_of(repo)
        run = (
            run_fix(
                paths,
                repo.settings,
                unsafe=unsafe,
                diff_only=diff_only,
                jobs=jobs,
                use_cache=use_cache,
                progress=progress,
            )
            if paths or prepare is None
            else FixRunResult()
        )
        texts = {r.path: t for r in run.reports if r.changed and (t := _texts_of(run, r)) is not None}
        remaining = [d for r in run.reports for d in r.remaining.diagnostics]
        if verify is not None:
            remaining = held + list(verify(remaining, repo.settings, verify_fixes=True, cache=use_cache))
        from qlint.patches import FileChange

        changes = [FileChange(repo.relative(path), *_with_bom(path, pair)) for path, pair in texts.items()]
        outcome = RepoOutcome(
            repo,
            remaining,
            [r.path for r in run.reports],
            fixed=sum(r.applied for r in run.reports),
            changes=changes,
            errors=run.all_errors,
            notices=run.notices,
            session=run.session,
            cell_diffs={r.path: r.diff for r in run.reports if r.diff and r.path.endswith(".ipynb")},
        )
        outcome.before = findings_before(repo, run.reports, texts, remaining)
        outcome.seconds = time.perf_counter() - started
        outcomes.append(outcome)
    progress.close()
    return Rollout(outcomes, "fix")


def _with_bom(path: str, texts: tuple[str, str]) -> tuple[str, str]:
    """Decoded texts lose a UTF-8 BOM that the file keeps on disk (before and after the
    fix): put it back, or a hunk at the top of the file would not apply."""
    try:
        with open(path, "rb") as fh:
            bom = fh.read(3) == b"\xef\xbb\xbf"
    except OSError:
        bom = False
    return ("\ufeff" + texts[0], "\ufeff" + texts[1]) if bom else texts


def _texts_of(run, report) -> tuple[str, str] | None:
    """(original, fixed) of a changed file: from the run's fix session when the runner keeps
    one, else from the report (`keep_texts`)."""
    session = getattr(run, "session", None)
    if session is not None:
        known = session.get(report.path)
        return (known.original, known.fixed) if known is not None and known.changed else None
    return getattr(report, "texts", None)


def findings_before(
    repo: Repository, reports, texts: dict[str, tuple[str, str]], remaining: list[Diagnostic]
) -> Counter:
    """Findings per rule before fixing: what is left, plus for each file that changed or had
    a finding fixed (a cross-module fix edits another file) what it had before minus what it
    has now. Files are re-checked against the original texts (an overlay), not the fixed
    files on disk, so cross-module findings count too."""
    from qlint.analysis.names.project import ProjectIndex
    from qlint.engine import check_source
    from qlint.source import DecodeError, decode_source

    counts = Counter(d.code for d in remaining)
    touched = [r for r in reports if r.path in texts or r.applied]
    if not touched:
        return counts
    project = ProjectIndex({path: pair[0] for path, pair in texts.items()})
    for r in touched:
        try:
            original = project.text(r.path) if r.path in texts else _read(r.path, decode_source)
        except (OSError, DecodeError):
            continue
        before = Counter(d.code for d in check_source(original, r.path, repo.settings, project).diagnostics)
        after = Counter(d.code for d in r.remaining.diagnostics)
        for code in before:
            counts[code] += max(before[code] - after[code], 0)
    return counts


def _read(path: str, decode) -> str:
    with open(path, "rb") as fh:
        return decode(fh.read())


# ----------------------------------------------------------------- adoption: baseline, noqa


def located(outcome: RepoOutcome, diagnostics: Sequence[Diagnostic]):
    from qlint.baseline import Located

    return [Located(d, outcome.repo.name, outcome.repo.relative(d.path)) for d in diagnostics]


def write_baseline(rollout: Rollout, path: str) -> str:
    from qlint import baseline

    found = [item for o in rollout.outcomes for item in located(o, o.diagnostics)]
    count = baseline.write(path, found)
    files = len({(i.repository, i.path) for i in found})
    plural = ("s" if count != 1 else "", "s" if files != 1 else "")
    return f"Wrote a baseline of {count} finding{plural[0]} in {files} file{plural[1]} to {path}."


def apply_baseline(rollout: Rollout, path: str) -> None:
    """Drop recorded findings from each outcome; note the entries that matched nothing."""
    from qlint.baseline import Baseline, stale_lines

    base = Baseline.load(path)
    roots = {o.repo.name: o.repo.root for o in rollout.outcomes}
    checked = [(o.repo.name, o.repo.relative(f)) for o in rollout.outcomes for f in o.files]
    for o in rollout.outcomes:
        items = located(o, o.diagnostics)
        new, stale = base.filter(items, [c for c in checked if c[0] == o.repo.name], roots)
        o.baseline_hidden = len(items) - len(new)
        o.diagnostics = [i.diagnostic for i in new]
        o.baseline_stale = stale_lines(stale)


def add_noqa(rollout: Rollout, display) -> tuple[str, list[str], list[str]]:
    """(summary line, lines about findings that could not be suppressed, errors)."""
    from qlint.add_noqa import add_noqa as write_noqa

    result = write_noqa(rollout.diagnostics, display)
    noun = "directive" if result.added == 1 else "directives"
    return f"Added {result.added} noqa {noun}.", result.unplaceable, result.errors
