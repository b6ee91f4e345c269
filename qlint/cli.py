"""`qlint check|fix|rules|rule|server`: argparse in front of the runner and the reporters.

Exit codes follow ruff: 0 clean, 1 findings remain, 2 usage, config or internal error.
Findings of the files that could be checked are printed even when other files failed,
and bad input never produces a traceback: config problems are one-line messages naming
the file and key; an unexpected crash is one line unless QLINT_DEBUG is set.

Here: the dispatch, `check`, `rules`, `rule` and `server`. What a command line asks for is read
by `cli_inputs`, printed by `cli_output`; `fix` is `cli_fix`, standard input `cli_stdin`.
"""

from __future__ import annotations

import importlib
import os
import sys
import warnings
from collections.abc import Sequence
from typing import TYPE_CHECKING

from qlint import DISTRIBUTION, __version__, lost_interrupts, plain_args
from qlint.cli_inputs import UsageError, progress, reads_stdin, repositories, runtime_checker, stdin_settings
from qlint.cli_output import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, EXIT_INTERRUPTED, emit, error, print_errors
from qlint.rule_origins import RegistryError

if TYPE_CHECKING:
    import argparse


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
            emit(f"qlint {__version__}\n", None)
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
        error(str(exc))
        return EXIT_ERROR
    except Exception as exc:  # a bug in qlint: say so briefly, details on request
        if os.environ.get("QLINT_DEBUG"):
            import traceback  # only for a crash: with textwrap, a millisecond of every start

            traceback.print_exc()
        error(f"internal error: {type(exc).__name__}: {exc} (set QLINT_DEBUG=1 for a traceback)")
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
        from qlint.cli_fix import fix_command

        return fix_command(args, diff_only=getattr(args, "diff", False))
    return _cmd_check(args)


def _cmd_check(args: argparse.Namespace) -> int:
    if reads_stdin(args):
        from qlint.cli_stdin import stdin_command

        return stdin_command(args, stdin_settings(args), "check")
    # After the buffer's case: an editor's check of one buffer walks no tree (~2 ms of imports).
    from qlint import rollout, rollout_cli
    from qlint.reporters import ReportOptions, render

    repos = repositories(args)
    if not repos:
        return EXIT_CLEAN  # an empty `@FILE` list: nothing to check
    runtime = runtime_checker() if args.runtime else None
    run = rollout.check(repos, not args.no_cache, args.jobs, progress(args), runtime)
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
        emit(render(args.output_format, diagnostics, options) + render_errors(errors), args.output_file)
        return EXIT_CLEAN
    emit(render(args.output_format, diagnostics, options), args.output_file)
    errors += rollout_cli.outputs(args, run, settings.unsafe_fixes)
    print_errors(errors)
    if errors:
        return EXIT_ERROR
    return EXIT_FINDINGS if diagnostics and not args.exit_zero else EXIT_CLEAN


def _cmd_rules() -> int:
    from qlint.rule_listing import rules_table

    emit(rules_table(), None)
    return EXIT_CLEAN


def _cmd_rule(code: str) -> int:
    from qlint.rule_listing import rule_page

    try:
        emit(rule_page(code), None)
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
