"""`qlint.plain_args` reads a plain `qlint check` command line as argparse does, and leaves
every other one to argparse."""

from __future__ import annotations

import contextlib
import io
import random

import pytest

from qlint import cli, cli_parser, plain_args


def _argparse(argv: list[str]) -> dict | None:
    """What the check parser makes of `argv`, or None where it stops with a message."""
    with contextlib.redirect_stderr(io.StringIO()), contextlib.redirect_stdout(io.StringIO()):
        try:
            return vars(cli_parser.build_parser(argv[0] if argv else None).parse_args(argv))
        except SystemExit:
            return None


def test_the_table_is_the_check_parsers():
    parser = cli_parser.build_parser("check")
    check = next(a for a in parser._actions if a.dest == "command").choices["check"]
    kinds = {
        "_StoreTrueAction": "flag",
        "_AppendAction": "append",
    }
    seen = {}
    for action in check._actions:
        if action.dest in ("help", "paths"):
            continue
        kind = kinds.get(type(action).__name__)
        if kind is None:  # a store action: which value it takes
            if action.type is cli_parser._positive_int:
                kind = "jobs"
            elif action.choices is not None:
                assert tuple(action.choices) == plain_args.OUTPUT_FORMATS
                kind = "format"
            else:
                assert action.type is None and action.nargs is None
                kind = "value"
        for option in action.option_strings:
            seen[option] = (action.dest, kind)
        assert plain_args.DEFAULTS[action.dest] == action.default, action.dest
    assert seen == plain_args.OPTIONS
    assert set(plain_args.DEFAULTS) == {dest for dest, _ in seen.values()}


PLAIN = [
    ["check"],
    ["check", "--exit-zero", "--quiet", "--stdin-filename", "m.py", "-"],
    ["check", "--exit-zero", "-q", "--cache-dir", "/tmp/c", "--stdin-filename", "/a/b.py", "-"],
    ["check", "a.py", "b", "--select", "QL1,QL2", "--select=QL4", "--ignore", "QL401", "-j", "2"],
    ["check", "--no-cache", "-j", "1", "--output-format", "json", "src"],
    ["check", "--output-format=sarif", "--output-file", "out.sarif", "--statistics", "@paths.txt"],
    ["check", "--fix", "--unsafe-fixes", "--preview", "--force-exclude", "--config", "q.toml", "x.py"],
    ["check", "--cache-dir", "", "x"],
    ["check", "--cache-dir=-odd", "--jobs", "03", "x"],
    ["check", "--add-noqa", "--write-baseline", "b.json", "--baseline", "b.json", "--repo-summary"],
    ["check", "--summary-json", "s.json", "--summary-dir", "d", "--runtime", "a=b.py"],
    ["check", "--quiet", "--quiet", "--cache-dir", "a", "--cache-dir", "b", "x"],
]


@pytest.mark.parametrize("argv", PLAIN)
def test_a_plain_command_line_is_read_as_argparse_reads_it(argv):
    parsed = plain_args.parse(argv)
    assert parsed is not None
    assert vars(parsed) == _argparse(argv)


LEFT_TO_ARGPARSE = [
    [],
    ["--version"],
    ["fix", "x.py"],
    ["rules"],
    ["check", "--help"],
    ["check", "-h"],
    ["check", "--stdin", "m.py", "-"],  # an abbreviation argparse expands
    ["check", "--unknown"],
    ["check", "a", "--quiet", "b"],  # two runs of paths: argparse's error
    ["check", "--", "-x.py"],
    ["check", "-qj2"],
    ["check", "-j2"],
    ["check", "-j=2"],
    ["check", "-j", "0"],
    ["check", "-j", "two"],
    ["check", "-j", "+2"],
    ["check", "--output-format", "xml"],
    ["check", "--cache-dir"],
    ["check", "--cache-dir", "-"],
    ["check", "--cache-dir", "--quiet"],
    ["check", "--quiet=yes"],
    ["check", "-1"],
    ["check", "- x"],
]


@pytest.mark.parametrize("argv", LEFT_TO_ARGPARSE)
def test_any_other_command_line_is_left_to_argparse(argv):
    assert plain_args.parse(argv) is None


_TOKENS = [
    *plain_args.OPTIONS,
    "--select=QL1",
    "--output-format=json",
    "--output-format=nope",
    "--jobs=4",
    "--quiet=1",
    "--stdin",
    "--",
    "-",
    "-x",
    "-5",
    "",
    "a.py",
    "b",
    "QL101",
    "json",
    "3",
    "0",
    "@list",
    "x=y",
]


def test_random_command_lines_agree_with_argparse():
    rng = random.Random(50)
    read = 0
    for _ in range(3000):
        argv = ["check", *(rng.choice(_TOKENS) for _ in range(rng.randint(0, 7)))]
        parsed = plain_args.parse(argv)
        if parsed is not None:
            read += 1
            assert vars(parsed) == _argparse(argv), argv
    assert read > 300  # the comparison was made often


def test_main_reads_a_plain_command_line_without_argparse(monkeypatch, tmp_path, capsys):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text("x = 1\n")

    def refuse(command=None):
        raise AssertionError("argparse asked")

    monkeypatch.setattr(cli_parser, "build_parser", refuse)
    assert cli.main(["check", "--no-cache", "-q", "m.py"]) == cli.EXIT_CLEAN
