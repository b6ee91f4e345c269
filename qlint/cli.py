"""`qlint check|fix|rules|rule|server`: argparse in front of the runner and the reporters.

Exit codes follow ruff: 0 clean, 1 findings remain, 2 usage, config or internal error.
Findings of the files that could be checked are printed even when other files failed,
and bad input never produces a traceback: config problems are one-line messages naming
the file and key; an unexpected crash is one line unless QLINT_DEBUG is set.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
import traceback
from collections.abc import Sequence
from pathlib import Path

from qlint import __version__, rollout_args

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130
OUTPUT_FORMATS = ("text", "json", "json-lines", "sarif", "github", "lintrunner")


class UsageError(Exception):
    """Bad command-line input or config: one message, exit code 2."""


def main(argv: Sequence[str] | None = None) -> int:
    try:
        return _dispatch(build_parser().parse_args(argv))
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `qlint check | head`: stop quietly, and keep Python from complaining at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FINDINGS
    except UsageError as exc:
        _error(str(exc))
        return EXIT_ERROR
    except Exception as exc:  # a bug in qlint: say so briefly, details on request
        if os.environ.get("QLINT_DEBUG"):
            traceback.print_exc()
        _error(f"internal error: {type(exc).__name__}: {exc} (set QLINT_DEBUG=1 for a traceback)")
        return EXIT_ERROR


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="qlint", description="Linter and codemod for PyTorch PT2E quantization code.")
    parser.add_argument("--version", action="version", version=f"qlint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    check = sub.add_parser("check", help="lint files and directories")
    _add_common(check)
    check.add_argument("--output-format", choices=OUTPUT_FORMATS, default="text")
    check.add_argument("--output-file", metavar="FILE", help="write the report here instead of stdout")
    check.add_argument("--statistics", action="store_true", help="count findings per rule")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even if findings remain")
    check.add_argument("--fix", action="store_true", help="apply fixes (same as `qlint fix`)")
    check.add_argument("--runtime", action="store_true", help="confirm findings on the real pipeline")
    rollout_args.add_arguments(check, "check")

    fix = sub.add_parser("fix", help="apply fixes to files and directories")
    _add_common(fix)
    fix.add_argument("--diff", action="store_true", help="print the changes as a diff, write nothing")
    fix.add_argument(
        "--verify", action="store_true", help="check fixes on the real pipeline first; skip files with a refuted fix"
    )
    fix.add_argument("--output-format", choices=OUTPUT_FORMATS, default="text")
    fix.add_argument("--exit-zero", action="store_true", help="exit 0 even if findings remain")
    rollout_args.add_arguments(fix, "fix")

    sub.add_parser("rules", help="list the rules")
    rule = sub.add_parser("rule", help="print a rule's documentation")
    rule.add_argument("code", metavar="CODE")
    sub.add_parser("server", help="run the language server on stdio")
    return parser


def _add_common(p: argparse.ArgumentParser) -> None:
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or directories (default: .); @FILE lists paths")
    for flag, what in (
        ("--select", "rules to enable, replacing the config's selection"),
        ("--extend-select", "rules to enable in addition"),
        ("--ignore", "rules to disable"),
    ):
        p.add_argument(flag, action="append", metavar="CODES", help=f"{what} (comma-separated codes or prefixes)")
    p.add_argument("--config", metavar="FILE", help="a pyproject.toml or qlint.toml to use")
    p.add_argument("--unsafe-fixes", action="store_true", default=None, help="also apply unsafe fixes")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--cache-dir", metavar="DIR", help="where to keep the cache (default: .qlint_cache)")
    p.add_argument("--force-exclude", action="store_true", default=None, help="exclude even named files")
    p.add_argument("--jobs", "-j", type=_positive_int, metavar="N", help="worker processes (default: cores)")
    p.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value


def _dispatch(args: argparse.Namespace) -> int:
    if args.command is None:
        build_parser().print_help(sys.stderr)
        return EXIT_ERROR
    if args.command == "rules":
        return _cmd_rules()
    if args.command == "rule":
        return _cmd_rule(args.code)
    if args.command == "server":
        return _cmd_server()
    if args.command == "fix" or args.fix:
        return _cmd_fix(args, diff_only=getattr(args, "diff", False))
    return _cmd_check(args)


def _repositories(args: argparse.Namespace):
    """The repositories the PATH arguments (with `@FILE` lists expanded) belong to, each with
    its own settings and the command line on top (`qlint.repos`)."""
    from qlint.argfiles import ArgfileError, expand, expanded_to_nothing
    from qlint.config import ConfigError, Overrides, split_codes
    from qlint.repos import group_paths

    def codes(values: list[str] | None) -> tuple[str, ...] | None:
        if values is None:
            return None
        return tuple(c for v in values for c in split_codes(v))

    overrides = Overrides(
        select=codes(args.select),
        extend_select=codes(args.extend_select) or (),
        ignore=codes(args.ignore) or (),
        unsafe_fixes=args.unsafe_fixes,
        force_exclude=args.force_exclude,
        cache_dir=args.cache_dir,
    )
    try:
        paths = expand(args.paths)
    except ArgfileError as exc:
        raise UsageError(str(exc)) from None
    if expanded_to_nothing(args.paths, paths):
        return []
    args.paths = paths
    try:
        return group_paths(paths, config=args.config, overrides=overrides)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _progress(args: argparse.Namespace):
    from qlint.progress import Progress, wanted

    return Progress(wanted(args.quiet))


def _cmd_check(args: argparse.Namespace) -> int:
    from qlint import rollout, rollout_cli
    from qlint.reporters import ReportOptions, render

    repos = _repositories(args)
    if not repos:
        return EXIT_CLEAN  # an empty `@FILE` list: nothing to check
    runtime = _runtime_checker() if args.runtime else None
    run = rollout.check(repos, not args.no_cache, args.jobs, _progress(args), runtime)
    errors = run.errors
    try:
        handled = rollout_cli.adoption(args, run, errors)
    except ValueError as exc:  # a baseline that cannot be read or written
        raise UsageError(str(exc)) from None
    if handled is not None:
        return handled
    diagnostics = run.diagnostics
    settings = repos[0].settings
    options = ReportOptions(
        unsafe_fixes=settings.unsafe_fixes,
        statistics=args.statistics,
        quiet=args.quiet,
        settings=settings,
        settings_for=run.settings_for,
    )
    if args.output_format == "lintrunner":
        # lintrunner reads any nonzero exit as "Linter failed" and drops every message:
        # findings and per-file problems are all messages, the exit is 0.
        from qlint.reporters.lintrunner import render_errors

        errors += rollout_cli.outputs(args, run, settings.unsafe_fixes)
        _emit(render(args.output_format, diagnostics, options) + render_errors(errors), args.output_file)
        return EXIT_CLEAN
    _emit(render(args.output_format, diagnostics, options), args.output_file)
    errors += rollout_cli.outputs(args, run, settings.unsafe_fixes)
    _print_errors(errors)
    if errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if diagnostics and not args.exit_zero else EXIT_CLEAN


def _cmd_fix(args: argparse.Namespace, diff_only: bool) -> int:
    from qlint import rollout, rollout_cli
    from qlint.reporters import ReportOptions, render
    from qlint.reporters.text import diff_summary

    repos = _repositories(args)
    if not repos:
        return EXIT_CLEAN
    verify = getattr(args, "verify", False)
    run = rollout.fix(
        repos,
        lambda repo: repo.settings.unsafe_fixes,
        diff_only,
        not args.no_cache,
        args.jobs,
        _progress(args),
        prepare=(lambda repo: _verify_before_fixing(args, repo)) if verify else None,
        verify=_runtime_checker() if verify else None,
    )
    settings = repos[0].settings
    remaining = run.diagnostics
    fixed = sum(o.fixed for o in run.outcomes)
    errors = run.errors
    if diff_only:
        _emit(rollout_cli.diff(args, run), None)
        if not args.quiet:
            hidden = sum(1 for d in remaining if d.fix and d.fix.applies(True) and not d.fix.applies(False))
            print(diff_summary(fixed, 0 if settings.unsafe_fixes else hidden), file=sys.stderr)
        errors += rollout_cli.outputs(args, run, settings.unsafe_fixes)
        _print_errors(errors)
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
    )
    _emit(render(args.output_format, remaining, options), getattr(args, "output_file", None))
    errors += rollout_cli.outputs(args, run, settings.unsafe_fixes)
    _print_errors(errors)
    if errors:
        return EXIT_ERROR
    if args.output_format == "lintrunner":
        return EXIT_CLEAN
    return EXIT_FINDINGS if remaining and not args.exit_zero else EXIT_CLEAN


def _cmd_rules() -> int:
    from qlint.rules import RULES

    rows = [(code, cls.name, cls.fix_availability, cls.summary) for code, cls in sorted(RULES.items())]
    header = ("Code", "Name", "Fix", "Summary")
    widths = [max(len(r[i]) for r in [header, *rows]) for i in range(3)]
    lines = [
        "  ".join(cell.ljust(w) for cell, w in zip(row[:3], widths, strict=True)) + "  " + row[3]
        for row in [header, *rows]
    ]
    _emit("".join(line.rstrip() + "\n" for line in lines), None)
    return EXIT_CLEAN


def rule_page(code: str) -> Path | None:
    """The rule's Markdown page: the repo's `rules/` next to the package, else package data."""
    here = Path(__file__).resolve().parent
    for directory in (here.parent / "rules", here / "rule_pages"):
        page = directory / f"{code}.md"
        if page.is_file():
            return page
    return None


def _cmd_rule(code: str) -> int:
    from qlint.rules import RULES

    code = code.strip().upper()
    if code not in RULES:
        raise UsageError(f"unknown rule code {code!r} (see `qlint rules`)")
    page = rule_page(code)
    if page is None:
        raise UsageError(f"no documentation page found for {code}")
    _emit(page.read_text(encoding="utf-8"), None)
    return EXIT_CLEAN


def _cmd_server() -> int:
    try:
        server = importlib.import_module("qlint.lsp.server")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("pygls", "lsprotocol"):
            raise UsageError("the language server needs pygls: pip install 'qlint[lsp]'") from None
        if exc.name and exc.name.startswith("qlint.lsp"):
            raise UsageError("language server not available in this build of qlint") from None
        raise
    return server.main() or EXIT_CLEAN


def _verify_before_fixing(args: argparse.Namespace, repo) -> tuple[list[str], list]:
    from qlint.runner import run_check
    from qlint.runtime import verify_before_fixing

    _runtime_checker()  # a clear usage error when the runtime checker is not available
    settings = repo.settings
    run = run_check(repo.paths, settings, use_cache=not args.no_cache, jobs=args.jobs)
    paths, held = verify_before_fixing(run.results, settings, unsafe=settings.unsafe_fixes, cache=not args.no_cache)
    for path in sorted({d.path for d in held}) if not args.quiet else ():
        print(f"qlint: not fixing {path}: the runtime checker refutes a fix there", file=sys.stderr)
    return paths, held


def _runtime_checker():
    """`qlint.runtime.attach_verdicts`, imported only for `--runtime` (it is not torch-free
    to *run*: it starts a worker that imports torch)."""
    try:
        runtime = importlib.import_module("qlint.runtime")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("qlint.runtime"):
            raise UsageError("runtime checker not available in this build of qlint") from None
        raise
    attach = getattr(runtime, "attach_verdicts", None)
    if attach is None:
        raise UsageError("runtime checker not available in this build of qlint")
    return attach


def _sorted(diagnostics: list) -> list:
    return sorted(diagnostics, key=lambda d: d.sort_key())


def _emit(text: str, output_file: str | None) -> None:
    if output_file:
        try:
            Path(output_file).write_text(text, encoding="utf-8")
        except OSError as exc:
            raise UsageError(f"{output_file}: cannot write: {exc.strerror or exc}") from None
        return
    try:
        sys.stdout.write(text)
    except UnicodeEncodeError:  # a non-UTF-8 terminal and a non-ASCII message or path
        sys.stdout.flush()
        sys.stdout.buffer.write(text.encode(sys.stdout.encoding or "utf-8", "backslashreplace"))
    sys.stdout.flush()


def _print_errors(errors: list[str]) -> None:
    for message in errors:
        _error(message)


def _error(message: str) -> None:
    try:
        print(f"qlint: error: {message}", file=sys.stderr)
    except UnicodeEncodeError:
        print(f"qlint: error: {message}".encode("ascii", "backslashreplace").decode(), file=sys.stderr)
