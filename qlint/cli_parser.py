"""The `qlint` command line as argparse reads it: every command's parser, or only one's.

Not for a plain `qlint check` command line: `qlint.plain_args` reads those without argparse
(importing it, with gettext and locale, and building the parsers cost ~19 M instructions),
and answers what `build_parser("check").parse_args(argv)` would; `tests/test_plain_args.py`
holds the two to the same table. Help, `--version`, the other commands and anything
unusual come here.
"""

from __future__ import annotations

import argparse

from qlint import __version__
from qlint.plain_args import OUTPUT_FORMATS

COMMANDS = ("check", "fix", "rules", "rule", "server")


def build_parser(command: str | None = None) -> argparse.ArgumentParser:
    """The whole command line; with `command` (the first argument, one of `COMMANDS`), only
    that subcommand's parser: each parser argparse builds looks its messages up with
    `gettext` (three searches for translation files), 2 of the 6 are all a `qlint check`
    needs to parse its arguments, identically (a third of the parser's 5 ms)."""
    parser = argparse.ArgumentParser(prog="qlint", description="Linter and codemod for PyTorch PT2E quantization code.")
    parser.add_argument("--version", action="version", version=f"qlint {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")
    wanted = (command,) if command in COMMANDS else COMMANDS
    if "check" in wanted:
        _add_check(sub)
    if "fix" in wanted:
        _add_fix(sub)
    if "rules" in wanted:
        sub.add_parser("rules", help="list the rules")
    if "rule" in wanted:
        rule = sub.add_parser("rule", help="print a rule's documentation")
        rule.add_argument("code", metavar="CODE")
    if "server" in wanted:
        sub.add_parser("server", help="run the language server on stdio")
    return parser


def _add_check(sub) -> None:
    check = sub.add_parser("check", help="lint files and directories")
    _add_common(check)
    check.add_argument("--output-format", choices=OUTPUT_FORMATS, default="full")
    check.add_argument("--output-file", metavar="FILE", help="write the report here instead of stdout")
    check.add_argument("--statistics", action="store_true", help="count findings per rule")
    check.add_argument("--exit-zero", action="store_true", help="exit 0 even if findings remain")
    check.add_argument("--fix", action="store_true", help="apply fixes (same as `qlint fix`)")
    check.add_argument("--runtime", action="store_true", help="confirm findings on the real pipeline")
    from qlint import rollout_args

    rollout_args.add_arguments(check, "check")


def _add_fix(sub) -> None:
    fix = sub.add_parser("fix", help="apply fixes to files and directories")
    _add_common(fix)
    fix.add_argument("--diff", action="store_true", help="print the changes as a diff, write nothing")
    fix.add_argument(
        "--verify", action="store_true", help="check fixes on the real pipeline first; skip files with a refuted fix"
    )
    fix.add_argument("--output-format", choices=OUTPUT_FORMATS, default="full")
    fix.add_argument("--exit-zero", action="store_true", help="exit 0 even if findings remain")
    from qlint import rollout_args

    rollout_args.add_arguments(fix, "fix")


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
    p.add_argument("--preview", action="store_true", default=None, help="also run preview rules")
    p.add_argument("--no-cache", action="store_true", help="neither read nor write the cache")
    p.add_argument("--cache-dir", metavar="DIR", help="where to keep the cache (default: .qlint_cache)")
    p.add_argument("--force-exclude", action="store_true", default=None, help="exclude even named files")
    p.add_argument(
        "--jobs",
        "-j",
        type=_positive_int,
        metavar="N",
        help="processes that check (default: cores; 1 for a run of few bytes)",
    )
    p.add_argument("--quiet", "-q", action="store_true", help="print findings only, no summary")
    p.add_argument("--stdin-filename", metavar="PATH", help="the name of the file `-` (standard input) stands for")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError("must be at least 1")
    return value
