"""`qlint fix` (and `check --fix`, `--diff`): fixes the PATH arguments' repositories and
reports what remains; with `--verify`, only the fixes the runtime checker does not refute.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from qlint.cli_inputs import UsageError, progress, reads_stdin, repositories, runtime_checker, stdin_settings
from qlint.cli_output import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, emit, print_errors

if TYPE_CHECKING:
    import argparse


def fix_command(args: argparse.Namespace, diff_only: bool) -> int:
    from qlint import rollout, rollout_cli
    from qlint.reporters import ReportOptions, render
    from qlint.reporters.text import diff_summary

    if reads_stdin(args):
        from qlint.cli_stdin import stdin_command

        return stdin_command(args, stdin_settings(args), "diff" if diff_only else "fix")
    repos = repositories(args)
    if not repos:
        return EXIT_CLEAN
    verify = getattr(args, "verify", False)
    run = rollout.fix(
        repos,
        lambda repo: repo.settings.unsafe_fixes,
        diff_only,
        not args.no_cache,
        args.jobs,
        progress(args),
        prepare=(lambda repo: verify_before_fixing(args, repo)) if verify else None,
        verify=runtime_checker() if verify else None,
    )
    settings = repos[0].settings
    remaining = run.diagnostics
    fixed = sum(o.fixed for o in run.outcomes)
    errors = run.errors
    for notice in run.notices:  # files left alone on purpose: not errors
        print(f"qlint: {notice}", file=sys.stderr)
    if diff_only:
        emit(rollout_cli.diff(args, run), None)
        if not args.quiet:
            hidden = sum(1 for d in remaining if d.fix and d.fix.applies(True) and not d.fix.applies(False))
            print(diff_summary(fixed, 0 if settings.unsafe_fixes else hidden), file=sys.stderr)
        errors += rollout_cli.outputs(args, run, settings.unsafe_fixes)
        print_errors(errors)
        if errors:
            return EXIT_ERROR
        return EXIT_FINDINGS if any(o.changes for o in run.outcomes) else EXIT_CLEAN
    options = ReportOptions(
        unsafe_fixes=settings.unsafe_fixes,
        statistics=getattr(args, "statistics", False),
        quiet=args.quiet,
        mode="fix",
        fixed=fixed,
        settings=settings,
        settings_for=run.settings_for,
        fix_session=run,
        errors=len(errors),
        color=False if getattr(args, "output_file", None) else None,
    )
    emit(render(args.output_format, remaining, options), getattr(args, "output_file", None))
    errors += rollout_cli.outputs(args, run, settings.unsafe_fixes)
    print_errors(errors)
    if errors:
        return EXIT_ERROR
    if args.output_format == "lintrunner":
        return EXIT_CLEAN
    return EXIT_FINDINGS if remaining and not args.exit_zero else EXIT_CLEAN


def verify_before_fixing(args: argparse.Namespace, repo) -> tuple[list[str], list]:
    from qlint.runner import run_check
    from qlint.runtime import verify_before_fixing

    runtime_checker()  # a clear usage error when the runtime checker is not available
    from qlint.runtime.availability import RuntimeUnavailable, require_runtime

    settings = repo.settings
    try:  # never apply "verified" fixes that nothing verified
        require_runtime(settings, cache=not args.no_cache)
    except RuntimeUnavailable as exc:
        raise UsageError(f"--verify: {exc}") from None
    run = run_check(repo.paths, settings, use_cache=not args.no_cache, jobs=args.jobs)
    paths, held = verify_before_fixing(run.results, settings, unsafe=settings.unsafe_fixes, cache=not args.no_cache)
    for path in sorted({d.path for d in held}) if not args.quiet else ():
        print(f"qlint: not fixing {path}: the runtime checker refutes a fix there", file=sys.stderr)
    return paths, held
