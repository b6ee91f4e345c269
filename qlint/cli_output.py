"""What a `qlint` command prints and returns: its report (to standard output or `--output-file`),
one-line error messages on standard error, and the exit codes (ruff's: 0 clean, 1 findings
remain, 2 usage, config or internal error; 130 interrupted).
"""

from __future__ import annotations

import sys
from pathlib import Path

from qlint.cli_inputs import UsageError

EXIT_CLEAN, EXIT_FINDINGS, EXIT_ERROR, EXIT_INTERRUPTED = 0, 1, 2, 130


def emit(text: str, output_file: str | None) -> None:
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


def print_errors(errors: list[str]) -> None:
    for message in errors:
        error(message)


def error(message: str) -> None:
    try:
        print(f"qlint: error: {message}", file=sys.stderr)
    except UnicodeEncodeError:
        print(f"qlint: error: {message}".encode("ascii", "backslashreplace").decode(), file=sys.stderr)
