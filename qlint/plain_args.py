"""`qlint check` command lines read without argparse, as argparse reads them.

Pre-commit and editors start a process per check with a plain command line (`qlint check
--exit-zero -q --stdin-filename F -`, `qlint check a.py b.py`). Importing argparse (with
gettext and locale), building the check parser and parsing took about 19 M instructions
(~5 ms of CPU): a seventh of what qlint adds to Python's start-up for a file no rule
reads. `parse` reads the command lines that use only the check command's own options,
spelled out, and returns what `cli_parser.build_parser("check").parse_args(argv)` returns; anything
else (help, `--version`, another command, an abbreviated or unknown option, `--`, a short
option other than `-q` and `-j N`, a value argparse would refuse or read otherwise, paths
split by options) is None, and argparse reads it (its messages and exit codes included).
`tests/test_plain_args.py` checks the table against the parser and the answers against
argparse's.
"""

from __future__ import annotations

OUTPUT_FORMATS = ("full", "concise", "text", "json", "json-lines", "sarif", "github", "lintrunner")
# The check command's options: option -> (dest, kind). Kinds: "flag" (store_true),
# "value" (store one string), "append" (append a string), "jobs" (a positive int),
# "format" (one of OUTPUT_FORMATS).
OPTIONS: dict[str, tuple[str, str]] = {
    "--select": ("select", "append"),
    "--extend-select": ("extend_select", "append"),
    "--ignore": ("ignore", "append"),
    "--config": ("config", "value"),
    "--unsafe-fixes": ("unsafe_fixes", "flag"),
    "--preview": ("preview", "flag"),
    "--no-cache": ("no_cache", "flag"),
    "--cache-dir": ("cache_dir", "value"),
    "--force-exclude": ("force_exclude", "flag"),
    "--jobs": ("jobs", "jobs"),
    "-j": ("jobs", "jobs"),
    "--quiet": ("quiet", "flag"),
    "-q": ("quiet", "flag"),
    "--stdin-filename": ("stdin_filename", "value"),
    "--output-format": ("output_format", "format"),
    "--output-file": ("output_file", "value"),
    "--statistics": ("statistics", "flag"),
    "--exit-zero": ("exit_zero", "flag"),
    "--fix": ("fix", "flag"),
    "--runtime": ("runtime", "flag"),
    "--summary-json": ("summary_json", "value"),
    "--summary-dir": ("summary_dir", "value"),
    "--repo-summary": ("repo_summary", "flag"),
    "--add-noqa": ("add_noqa", "flag"),
    "--write-baseline": ("write_baseline", "value"),
    "--baseline": ("baseline", "value"),
}

# What argparse gives an option not on the command line (None for the flags whose default
# is None: a config may set them, the command line only turns them on).
DEFAULTS: dict[str, object] = {
    "select": None,
    "extend_select": None,
    "ignore": None,
    "config": None,
    "unsafe_fixes": None,
    "preview": None,
    "no_cache": False,
    "cache_dir": None,
    "force_exclude": None,
    "jobs": None,
    "quiet": False,
    "stdin_filename": None,
    "output_format": "full",
    "output_file": None,
    "statistics": False,
    "exit_zero": False,
    "fix": False,
    "runtime": False,
    "summary_json": None,
    "summary_dir": None,
    "repo_summary": False,
    "add_noqa": False,
    "write_baseline": None,
    "baseline": None,
}


class Namespace:
    """The attributes argparse's `Namespace` would hold (compared as argparse compares them)."""

    def __init__(self, **values: object):
        self.__dict__.update(values)

    def __eq__(self, other: object) -> bool:
        return vars(self) == vars(other) if hasattr(other, "__dict__") else NotImplemented

    def __repr__(self) -> str:
        return f"Namespace({', '.join(f'{k}={v!r}' for k, v in vars(self).items())})"


def parse(argv: list[str]) -> Namespace | None:
    """The parsed `qlint check` command line, or None where argparse must read `argv`."""
    if not argv or argv[0] != "check":
        return None
    values: dict[str, object] = {"command": "check", "paths": [], **DEFAULTS}
    paths: list[str] = []
    runs = 0  # runs of paths: argparse takes the `*` positional once, a second run is an error
    last_was_path = False
    i = 1
    while i < len(argv):
        arg = argv[i]
        i += 1
        if arg == "-" or not arg.startswith("-"):
            if not last_was_path:
                runs += 1
            paths.append(arg)
            last_was_path = True
            continue
        last_was_path = False
        name, eq, inline = arg.partition("=")
        known = OPTIONS.get(name)
        if known is None or (eq and not name.startswith("--")):
            return None
        dest, kind = known
        if kind == "flag":
            if eq:
                return None  # argparse: "ignored explicit argument"
            values[dest] = True
            continue
        if eq:
            value = inline
        else:
            if i >= len(argv) or argv[i].startswith("-"):
                return None  # no value, or one argparse may read as an option: its call
            value = argv[i]
            i += 1
        if kind == "append":
            values[dest] = [*values[dest], value] if values[dest] is not None else [value]  # type: ignore[list-item]
        elif kind == "jobs":
            if not value.isascii() or not value.isdigit() or int(value) < 1:
                return None  # argparse's message for it
            values[dest] = int(value)
        elif kind == "format":
            if value not in OUTPUT_FORMATS:
                return None
            values[dest] = value
        else:
            values[dest] = value
    if runs > 1:
        return None
    values["paths"] = paths
    return Namespace(**values)
