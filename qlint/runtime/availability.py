"""Is the runtime checker usable here, and if not, what to install.

`qlint fix --verify` promises fixes checked on the real pipeline: without torch and torchao
(the `runtime` extra) it would apply every fix unverified, so it refuses instead. Installed
metadata is read first (cheap, imports nothing); then the shared worker is started, which
imports torch and torchao in its own process: a broken or shadowed install that metadata
cannot see fails there. The linter process itself still never imports torch.
"""

from __future__ import annotations

from functools import cache
from importlib import metadata

from qlint import DISTRIBUTION
from qlint.runtime.client import WorkerDied, WorkerHung


class RuntimeUnavailable(Exception):
    """The runtime checker cannot run here; the message says what to install."""


@cache
def distribution_name() -> str:
    """The distribution that installed the `qlint` package (its name on the package index
    may differ from the import name)."""
    try:
        names = metadata.packages_distributions().get("qlint") or []
    except Exception:  # a broken metadata entry elsewhere must not hide the hint
        names = []
    return names[0] if names else DISTRIBUTION


def install_hint() -> str:
    return f'pip install "{distribution_name()}[runtime]"'


def require_runtime(settings, *, cache: bool = True) -> None:
    """Raise RuntimeUnavailable unless checks can run; leaves the shared worker warm."""
    from qlint.runtime import shared_checker

    checker = shared_checker(settings, cache)
    missing = [name for name in ("torch", "torchao") if not checker.versions.get(name)]
    if missing:
        raise RuntimeUnavailable(
            f"the runtime checker needs {' and '.join(missing)}, which {'is' if len(missing) == 1 else 'are'}"
            f" not installed; install the runtime extra: {install_hint()}"
        )
    if checker.worker.alive:
        return
    try:
        checker.worker.start(checker.startup_timeout)
    except (WorkerDied, WorkerHung, OSError) as exc:
        raise RuntimeUnavailable(
            f"the runtime checker cannot start ({exc}); check the runtime extra's install: {install_hint()}"
        ) from None
