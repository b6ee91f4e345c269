"""One `qlint fix` run's texts: what each file held when read, and what fixing made of it.

The per-file pass (in worker processes) hands its results here; cross-file fixes edit the
texts held here; the writes, the `--diff` output and lintrunner's whole-file patches all
read them from here. So no step re-reads a file another step already read or re-fixes a
file already fixed, and writing is decided in one place, the parent process: a worker
never writes, so a worker outliving a killed `qlint fix` cannot touch a file.
"""

from __future__ import annotations

import os
from dataclasses import dataclass

from qlint import fixes
from qlint.file_writes import ChangedOnDisk, replace_file
from qlint.results import FileResult, display_path
from qlint.settings import Settings
from qlint.source import decode_source


@dataclass
class FixedFile:
    path: str
    data: bytes  # the bytes read: a write happens only over these
    original: str
    fixed: str
    initial: FileResult | None = None  # findings of the text as read (reported if not written)
    written: bool = False

    @property
    def changed(self) -> bool:
        return self.fixed != self.original


class FixSession:
    def __init__(self, settings: Settings, unsafe: bool):
        self.settings = settings
        self.unsafe = unsafe
        self.files: dict[str, FixedFile] = {}
        # Cross-file fixes: target path -> the files whose findings they fix. If a target
        # cannot be written, those findings remain.
        self.cross_sources: dict[str, set[str]] = {}

    def add(self, fixed: FixedFile) -> None:
        self.files[os.path.abspath(fixed.path)] = fixed

    def get(self, path: str) -> FixedFile | None:
        return self.files.get(os.path.abspath(path))

    def text(self, path: str) -> str:
        """The file's text as this run has it: fixed if it was, else read once (OSError,
        DecodeError when it cannot be)."""
        known = self.get(path)
        if known is None:
            with open(path, "rb") as fh:
                data = fh.read()
            text = decode_source(data)
            known = FixedFile(path, data, text, text)
            self.add(known)
        return known.fixed

    def update(self, path: str, text: str) -> None:
        """A later step (cross-file fixes) changed the text; the file must have been read."""
        known = self.get(path)
        assert known is not None, path
        known.fixed = text

    def changed(self) -> list[FixedFile]:
        return [f for f in self.files.values() if f.changed]

    def write(self, path: str) -> str | None:
        """Write one changed file; None when written, else why not (one line)."""
        known = self.get(path)
        if known is None or not known.changed or known.written:
            return None
        try:
            replace_file(path, known.fixed, known.data)
        except ChangedOnDisk:
            return "skipped: changed on disk while fixing"
        except FileNotFoundError:
            return "cannot write: the file was deleted while fixing"
        except OSError as exc:
            return f"cannot write: {exc.strerror or exc}"
        known.written = True
        return None

    def diff(self, path: str) -> str:
        known = self.get(path)
        if known is None or not known.changed:
            return ""
        return fixes.text_diff(display_path(path), known.original, known.fixed)

    def patch(self, path: str) -> tuple[str, str] | None:
        """(text on disk, text `qlint fix` would leave) for a file, fixed once per session;
        None when fixing changes nothing or the file's fixes were already written."""
        known = self.get(path)
        if known is None:
            outcome = fixes.fix_file(path, self.settings, unsafe=self.unsafe, write=False)
            if outcome.error is not None or outcome.data is None:
                return None
            known = FixedFile(path, outcome.data, outcome.original, outcome.fixed, outcome.initial)
            self.add(known)
        if known.written or not known.changed:
            return None
        return known.original, known.fixed
