"""What `qlint check|fix` do with a rollout beyond the usual report: adoption (`--add-noqa`,
baselines), per-repository summaries, patches and diffs. Messages go to stderr, so stdout
stays the report (or the diff) a tool reads.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from qlint import rollout, rollout_report
from qlint.results import display_path

if TYPE_CHECKING:
    import argparse  # annotations only: a plain command line never imports argparse

# Reports people read; the others are parsed by tools and stdout must stay theirs alone.
HUMAN_FORMATS = ("text", "full", "concise")


def _say(message: str) -> None:
    print(message, file=sys.stderr)


def adoption(args: argparse.Namespace, run: rollout.Rollout, errors: list[str]) -> int | None:
    """`--add-noqa` and `--write-baseline` end the command (its exit code); `--baseline`
    filters the findings in place and lists stale entries (None: go on reporting).
    Raises ValueError (`BaselineError`) for a baseline that cannot be read or written."""
    if args.add_noqa:
        line, unplaced, noqa_errors = rollout.add_noqa(run, display_path)
        for message in unplaced:
            _say(f"qlint: {message}")
        _say(line)
        for message in errors + noqa_errors:
            _say(f"qlint: error: {message}")
        return 2 if errors or noqa_errors else 0
    if args.write_baseline:
        _say(rollout.write_baseline(run, args.write_baseline))
        for message in errors:
            _say(f"qlint: error: {message}")
        return 2 if errors else 0
    if args.baseline:
        rollout.apply_baseline(run, args.baseline)
        for o in run.outcomes if not args.quiet else ():
            for line in o.baseline_stale:
                _say(f"qlint: baseline: {o.repo.name}: {line}")
    return None


def outputs(args: argparse.Namespace, run: rollout.Rollout, unsafe: bool) -> list[str]:
    """Per-repository summaries: text after the report (2+ repositories or --repo-summary),
    JSON and Markdown files, patches when asked. Returns what could not be written."""
    try:
        _write_outputs(args, run, unsafe)
    except OSError as exc:
        return [f"{exc.filename or ''}: cannot write: {exc.strerror or exc}"]
    return []


def _write_outputs(args: argparse.Namespace, run: rollout.Rollout, unsafe: bool) -> None:
    if getattr(args, "patch_dir", None):
        for note in rollout_report.write_patches(run, args.patch_dir):
            if not args.quiet:
                _say(f"qlint: {note}")
    if args.summary_dir:
        rollout_report.write_markdown(run, args.summary_dir, unsafe)
    if args.summary_json:
        data = rollout_report.to_json(run, unsafe)
        if args.summary_json == "-":
            sys.stderr.write(data)
        else:
            Path(args.summary_json).write_text(data, encoding="utf-8")
    human = args.output_format in HUMAN_FORMATS
    shown = args.repo_summary or (len(run.outcomes) > 1 and human)
    if shown and not args.quiet:
        # Behind a diff or a machine-readable report, the table must not corrupt stdout.
        to_stderr = getattr(args, "diff", False) or not human
        (sys.stderr if to_stderr else sys.stdout).write(rollout_report.text(run, unsafe))


def diff(args: argparse.Namespace, run: rollout.Rollout) -> str:
    """`qlint fix --diff`: one git-style diff per repository when there are several (or
    with `--patch-dir`); over one repository, the plain diff with paths as typed (as before)."""
    if len(run.outcomes) > 1 or getattr(args, "patch_dir", None):
        return rollout_report.diffs(run)
    from dataclasses import replace

    from qlint.fixes import FixOutcome, unified_diff

    out = []
    for o in run.outcomes:
        for c in sorted(o.changes, key=lambda c: c.path):
            full = str(o.repo.root / c.path)
            path = display_path(full)
            cells = o.cell_diffs.get(full) or o.cell_diffs.get(os.path.abspath(full))
            if cells:  # notebooks show one diff per changed cell, as ruff does
                out.append(cells)
                continue
            out.append(unified_diff(replace(FixOutcome(path, c.original, c.fixed, 0, None), path=path)))
    return "".join(out)
