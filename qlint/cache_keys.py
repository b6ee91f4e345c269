"""Where the results cache of some settings is kept and under which key (`qlint.cache`), alone:
a check of one buffer reads the summaries kept under that key (`summary_cache`) and never the
results, so it does not import the results cache and what that imports."""

from __future__ import annotations

from pathlib import Path

from qlint.analysis.names.run_layout import layout_key
from qlint.settings import Settings
from qlint.short_digests import sha256_hex


def cache_dir_for(settings: Settings) -> Path:
    return settings.cache_dir or settings.root / ".qlint_cache"


def cache_key(settings: Settings) -> str:
    """The settings' fingerprint, the project root and the run's layout: the root decides
    per-file-ignores and module names, so two projects sharing a `--cache-dir` never see each
    other's entries; the layout (`run_layout`) how the run's imports resolve."""
    return sha256_hex(f"{settings.fingerprint}\0{settings.root}\0{layout_key()}".encode())[:16]
