"""Where the results cache of some settings is kept and under which key (`qlint.cache`), alone:
a check of one buffer reads the summaries kept under that key (`summary_cache`) and never the
results, so it does not import the results cache and what that imports."""

from __future__ import annotations

from pathlib import Path

from qlint import key_digests
from qlint.analysis.names.run_layout import layout_key
from qlint.settings import Settings
from qlint.short_digests import sha256_hex


def cache_dir_for(settings: Settings) -> Path:
    return settings.cache_dir or settings.root / ".qlint_cache"


def cache_key(settings: Settings) -> str:
    """The settings' fingerprint, qlint's own code, the project root and the run's layout: the
    root decides per-file-ignores and module names, so two projects sharing a `--cache-dir`
    never see each other's entries; the layout (`run_layout`) how the run's imports resolve.
    The code and the layout by content (`key_digests`): a key that moved with their stats alone
    made a reinstall of the same qlint, or a fresh clone, a cold run."""
    directory = cache_dir_for(settings)
    digests = key_digests.kept_in(directory)
    code = key_digests.package_digest(digests)
    layout = layout_key(digests.file_digest)
    key_digests.save_kept(directory)  # into a cache made before, else at its first `Cache.save`
    return sha256_hex(f"{settings.fingerprint}\0{code}\0{settings.root}\0{layout}".encode())[:16]
