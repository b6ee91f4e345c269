"""What decides how a run's files are named and how their imports resolve, beyond the settings
and the files' contents: the projects of the paths the run was asked about, their packaging
files (`packaging_files`), and the project roots that no marker but the run's directories
makes (`run_roots`).

Results and summaries kept by a run with another layout are not this run's. `qlint check .`
from the top of an unmarked tree resolves `bench/`'s imports through `python/setup.py`;
`qlint check bench` from the same place does not (its root is `bench/`), and neither does a run
after `python/setup.py` is removed. A file's own content hash sees none of that. Runs over
other paths of the same projects share a layout: pre-commit's `qlint check FILE ...` reads
what `qlint check .` kept.
"""

from __future__ import annotations

from qlint.analysis import run_roots
from qlint.analysis.names.package_map import project_root
from qlint.analysis.names.packaging_files import packaging_stats
from qlint.short_digests import sha256_hex


def layout_key() -> str:
    """A digest of the run's layout (module docstring). Every packaging file counts, declaring
    or not (a marker's mere presence moves a project root), by its stat: a file touched but
    not changed costs a cold run, a changed one is never missed."""
    projects = {project_root(path) for path in run_roots.paths()}
    projects.discard(None)  # an installed tree: named from its `sys.path` entry alone
    return sha256_hex(repr([(project, packaging_stats(project)) for project in sorted(projects)]).encode())[:16]


__all__ = ["layout_key"]
