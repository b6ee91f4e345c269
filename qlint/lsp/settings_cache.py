"""Each buffer's settings, loaded once per state of the config files that could apply.

The server checks on every pause in typing, so it cannot re-read and re-validate
`pyproject.toml` each time; but a config edited (or created, or broken) while the editor
is open must take effect at the next check. The cache key is the list of candidate config
files above the buffer with their modification stamps: a few `stat` calls per check.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from pathlib import Path

from qlint.config import CONFIG_NAMES, ConfigError, load_settings
from qlint.discovery import ExcludeMatcher
from qlint.settings import Settings

_MAX_ENTRIES = 64


@dataclass
class LoadedSettings:
    settings: Settings
    # A config problem: the defaults are in use until it is fixed (shown to the user once).
    error: str | None = None
    reported: bool = False
    _exclude: ExcludeMatcher | None = field(default=None, repr=False)

    def excludes(self, path: str) -> bool:
        """`exclude`/`extend-exclude` apply in the editor too: no noise in vendored or
        generated files the project chose not to lint."""
        if self._exclude is None:
            s = self.settings
            self._exclude = ExcludeMatcher((*s.exclude, *s.extend_exclude), str(s.root))
        return self._exclude.excluded_or_below_excluded(os.path.abspath(path))


class SettingsCache:
    def __init__(self) -> None:
        self._entries: dict[tuple, LoadedSettings] = {}

    def get(self, path: str) -> LoadedSettings:
        key = _config_stamps(path)
        loaded = self._entries.get(key)
        if loaded is None:
            if len(self._entries) >= _MAX_ENTRIES:
                self._entries.clear()
            loaded = self._entries[key] = _load(path)
        return loaded


def _load(path: str) -> LoadedSettings:
    # A buffer not yet saved has no file: its folder (or the nearest existing one) decides.
    anchor = os.path.abspath(path)
    while not os.path.exists(anchor) and os.path.dirname(anchor) != anchor:
        anchor = os.path.dirname(anchor)
    try:
        return LoadedSettings(load_settings([anchor]))
    except ConfigError as exc:
        return LoadedSettings(Settings(root=Path.cwd().resolve()), error=str(exc))


def _config_stamps(path: str) -> tuple:
    """(file, mtime, size) of every config candidate from the buffer's folder upwards."""
    directory = os.path.dirname(os.path.abspath(path))
    stamps = []
    while True:
        for name in CONFIG_NAMES:
            candidate = os.path.join(directory, name)
            try:
                st = os.stat(candidate)
            except OSError:
                continue
            stamps.append((candidate, st.st_mtime_ns, st.st_size))
        parent = os.path.dirname(directory)
        if parent == directory:
            return tuple(stamps)
        directory = parent
