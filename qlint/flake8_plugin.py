"""flake8 extension: qlint's `QL` findings inside a repository's existing flake8 run.

Registered as the `flake8.extension` entry point `QL`, so `flake8 --select QL` (or flake8's
default selection) reports QL101 and friends next to pyflakes. flake8 instantiates the
class once per file; it reuses qlint's engine on the text flake8 read, with the settings
of the file's repository (`qlint.file_settings.settings_for_path`). The engine never imports
torch. `# noqa` works as flake8 reads it; qlint's own suppression also applies.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from qlint import __version__


class QlintChecker:
    name = "qlint"
    version = __version__

    def __init__(self, tree: Any, filename: str, lines: list[str]):
        # `tree` is flake8's parse; qlint parses again with its own recursion budget and
        # needs the text anyway (prefilter, columns in code points, noqa comments).
        self.filename = filename
        self.lines = lines

    def run(self) -> Iterator[tuple[int, int, str, type]]:
        from qlint.config_messages import ConfigError
        from qlint.engine import check_source
        from qlint.file_settings import settings_for_path
        from qlint.settings import Settings

        try:
            settings = settings_for_path(self.filename)
        except ConfigError as exc:
            yield 1, 0, f"QL000 qlint configuration error: {exc}", type(self)
            settings = Settings()
        # QL001 is flake8's E999 here; QL002 judges qlint's noqa, which flake8 handles itself.
        settings_codes = settings.enabled_codes - {"QL001", "QL002"}
        result = check_source("".join(self.lines), self.filename, settings)
        for d in result.diagnostics:
            if d.code in settings_codes:
                yield d.range.start.row, d.range.start.col, f"{d.code} {d.message.splitlines()[0]}", type(self)
        for error in result.errors:
            yield 1, 0, f"QL000 qlint internal error: {error.splitlines()[0]}", type(self)
