"""`qlint check|fix|rules|rule|server`: argparse in front of the runner and the reporters.

Exit codes follow ruff: 0 clean, 1 findings remain, 2 usage, config or internal error.
Findings of the files that could be checked are printed even when other files failed,
and bad input never produces a traceback: config problems are one-line messages naming
the file and key; an unexpected crash is one line unless QLINT_DEBUG is set.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from qlint import DISTRIBUTION, __version__, lost_interrupts, plain_args
from qlint.registry import RegistryError

if TYPE_CHECKING:
    import argparse

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


class UsageError(Exception):
    """Bad command-line input or config: one message, exit code 2."""


def main(argv: Sequence[str] | None = None) -> int:
    # Parsing a user's `"\d"` makes Python 3.12+ print a SyntaxWarning (3.11: a DeprecationWarning
    # under -W default) on stderr for each one: noise about their code that is no finding.
    warnings.filterwarnings("ignore", category=SyntaxWarning)
    warnings.filterwarnings("ignore", "invalid escape sequence", DeprecationWarning)
    lost_interrupts.keep_lost_interrupts()
    try:
        args = list(sys.argv[1:] if argv is None else argv)
        if args == ["--version"]:
            # What argparse's version action prints, without importing argparse and building
            # every command's parser (~20 M instructions, half of `qlint --version`).
            _emit(f"qlint {__version__}\n", None)
            return EXIT_CLEAN
        # A plain `qlint check` command line is read without argparse (`qlint.plain_args`).
        parsed = plain_args.parse(args)
        code = _dispatch(parsed if parsed is not None else _parsed(args))
        lost_interrupts.raise_if_lost()
        return code
    except KeyboardInterrupt:
        return EXIT_INTERRUPTED
    except BrokenPipeError:
        # `qlint check | head`: stop quietly, and keep Python from complaining at exit.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        return EXIT_FINDINGS
    except (UsageError, RegistryError) as exc:
        _error(str(exc))
        return EXIT_ERROR
    except Exception as exc:  # a bug in qlint: say so briefly, details on request
        if os.environ.get("QLINT_DEBUG"):
            import traceback  # only for a crash: with textwrap, a millisecond of every start

            traceback.print_exc()
        _error(f"internal error: {type(exc).__name__}: {exc} (set QLINT_DEBUG=1 for a traceback)")
        return EXIT_ERROR


def run() -> None:
    """The `qlint` command: `main` on the process's arguments, then a fast exit
    (`qlint.process_exit`): nothing the run built is needed once its output is out."""
    from qlint.process_exit import ends_after_command, exit_now

    ends_after_command()
    exit_now(main())


def _parsed(args: list[str]) -> argparse.Namespace:
    """What argparse reads from a command line `qlint.plain_args` does not (`qlint.cli_parser`)."""
    from qlint.cli_parser import build_parser

    return build_parser(args[0] if args else None).parse_args(args)


def _dispatch(args: argparse.Namespace) -> int:
    if args.command is None:
        from qlint.cli_parser import build_parser

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


def _reads_stdin(args: argparse.Namespace) -> bool:
    if "-" not in args.paths and args.stdin_filename is None:
        return False  # the usual run: the standard input module is not imported at all
    from qlint import stdin

    try:
        return stdin.requested(args.paths, args.stdin_filename)
    except stdin.StdinUsageError as exc:
        raise UsageError(str(exc)) from None


def _settings(args: argparse.Namespace):
    """Settings for standard input: those `qlint check FILE` uses for `--stdin-filename` (the
    config search stops at the file's repository, whose top anchors a run without one), so an
    editor's or pre-commit's buffer reads the summaries the tree's runs wrote."""
    from qlint import stdin
    from qlint.config import ConfigError, apply_overrides, load_settings
    from qlint.file_settings import settings_for_path

    try:
        if args.stdin_filename and args.config is None:
            return apply_overrides(settings_for_path(args.stdin_filename), _overrides(args))
        return load_settings(stdin.config_paths(args.stdin_filename), config=args.config, overrides=_overrides(args))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def _repositories(args: argparse.Namespace):
    """The repositories the PATH arguments (with `@FILE` lists expanded) belong to, each with
    its own settings and the command line on top (`qlint.repos`)."""
    from qlint.argfiles import ArgfileError, expand, expanded_to_nothing
    from qlint.config import ConfigError
    from qlint.repos import group_paths

    overrides = _overrides(args)
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


def _overrides(args: argparse.Namespace):
    from qlint import registry
    from qlint.config import Overrides, split_codes

    registry.facts()  # a broken or conflicting plugin stops the run here, before any file is read

    def codes(values: list[str] | None) -> tuple[str, ...] | None:
        if values is None:
            return None
        return tuple(c for v in values for c in split_codes(v))

    overrides = Overrides(
        select=codes(args.select),
        extend_select=codes(args.extend_select) or (),
        ignore=codes(args.ignore) or (),
        unsafe_fixes=args.unsafe_fixes,
        preview=args.preview,
        force_exclude=args.force_exclude,
        cache_dir=args.cache_dir,
    )
    return overrides


def _progress(args: argparse.Namespace):
    from qlint.progress import Progress, wanted

    return Progress(wanted(args.quiet))


def _cmd_check(args: argparse.Namespace) -> int:
    if _reads_stdin(args):
        return _cmd_stdin(args, _settings(args), "check")
    # After the buffer's case: an editor's check of one buffer walks no tree (~2 ms of imports).
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
        errors=len(errors),
        color=False if args.output_file else None,
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

    if _reads_stdin(args):
        return _cmd_stdin(args, _settings(args), "diff" if diff_only else "fix")
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
    for notice in run.notices:  # files left alone on purpose: not errors
        print(f"qlint: {notice}", file=sys.stderr)
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
        fix_session=run,
        errors=len(errors),
        color=False if getattr(args, "output_file", None) else None,
    )
    _emit(render(args.output_format, remaining, options), getattr(args, "output_file", None))
    errors += rollout_cli.outputs(args, run, settings.unsafe_fixes)
    _print_errors(errors)
    if errors:
        return EXIT_ERROR
    if args.output_format == "lintrunner":
        return EXIT_CLEAN
    return EXIT_FINDINGS if remaining and not args.exit_zero else EXIT_CLEAN


def _cmd_stdin(args: argparse.Namespace, settings, mode: str) -> int:
    """`-`: check or fix standard input; `fix -` prints the fixed text, the report on stderr."""
    from qlint import stdin
    from qlint.reporters import ReportOptions, render
    from qlint.reporters.snippet import use_color

    if getattr(args, "runtime", False) or getattr(args, "verify", False):
        raise UsageError("the runtime checker does not read standard input: name the file")
    data = stdin.read()
    from qlint.analysis import run_roots
    from qlint.process_exit import ending

    # The buffer stands in for the file, and so does its run: `qlint check FILE`'s directories
    # and layout (`run_layout`), hence its cache key. Without them an editor's check read none
    # of the summaries a run over the tree kept, and parsed every module it imports again.
    run_roots.use([stdin.buffer_path(args.stdin_filename)])
    from qlint.summary_cache import summary_store

    if ending():
        # One buffer, then the process ends: the cyclic collector would only scan the check's
        # garbage before the output (5 ms after ExecuTorch's 1,111-line vulkan/test/utils.py,
        # 14 ms after ao's 4,307-line test_quantize_pt2e.py). The check keeps it off then.
        import gc

        gc.disable()
        # Nor is what the check built freed (the tree, the analyses): the exit skips that.
        from qlint.engine import leave_for_exit

        leave_for_exit()

    with summary_store(settings, not getattr(args, "no_cache", False), answers=True):
        if mode == "check":
            outcome = stdin.check(data, args.stdin_filename, settings)
        else:
            outcome = stdin.fix(data, args.stdin_filename, settings, settings.unsafe_fixes, mode == "diff")
    options = ReportOptions(
        unsafe_fixes=settings.unsafe_fixes,
        statistics=getattr(args, "statistics", False),
        quiet=args.quiet,
        mode="check" if mode == "check" else "fix",
        fixed=outcome.applied,
        settings=settings,
        errors=len(outcome.errors),
        sources=outcome.sources,
        color=False if getattr(args, "output_file", None) else use_color(sys.stdout if mode == "check" else sys.stderr),
    )
    if mode == "check":
        _emit(render(args.output_format, outcome.diagnostics, options), args.output_file)
    elif mode == "diff":
        _emit(outcome.diff or "", None)
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(outcome.output or b"")
        sys.stdout.flush()
        if outcome.diagnostics or not args.quiet:
            sys.stderr.write(render(args.output_format, outcome.diagnostics, options))
    _print_errors(outcome.errors)
    if outcome.errors:
        return EXIT_ERROR
    if mode == "diff":
        return EXIT_FINDINGS if outcome.diff else EXIT_CLEAN
    return EXIT_FINDINGS if outcome.diagnostics and not args.exit_zero else EXIT_CLEAN


def _cmd_rules() -> int:
    from qlint.rule_listing import rules_table

    _emit(rules_table(), None)
    return EXIT_CLEAN


def _cmd_rule(code: str) -> int:
    from qlint.rule_listing import rule_page

    try:
        _emit(rule_page(code), None)
    except LookupError as exc:
        raise UsageError(str(exc.args[0])) from None
    return EXIT_CLEAN


def _cmd_server() -> int:
    from qlint.process_exit import collector_back

    collector_back()  # a long-lived process: its garbage is collected as usual
    try:
        server = importlib.import_module("qlint.lsp.features")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.split(".")[0] in ("pygls", "lsprotocol"):
            raise UsageError(f"the language server needs pygls: pip install '{DISTRIBUTION}[lsp]'") from None
        if exc.name and exc.name.startswith("qlint.lsp"):
            raise UsageError("language server not available in this build of qlint") from None
        raise
    return server.main() or EXIT_CLEAN


def _verify_before_fixing(args: argparse.Namespace, repo) -> tuple[list[str], list]:
    from qlint.runner import run_check
    from qlint.runtime import verify_before_fixing

    _runtime_checker()  # a clear usage error when the runtime checker is not available
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
