"""What each check read, as the project index (`project.ProjectIndex`) records it: the files
(path -> sha256, "" = absent) a cached result depends on (`dependencies_of`), and where an
editor asks, who read each file (`dependents`): whom to recheck after it changes.

An object of its own, held by the index: it keeps only what was read, by whom, and answers
the cache and the language server, while the index's lookups (which cause the reads) stay
with the index. `add` is on the path of every module lookup (the index holds it bound, as
its `_record_absolute`); the index answers with its other methods bound too (`record_read`,
`record_reads`, `hand_over_dependencies`, `dependencies_of`, `dependents`).
"""

from __future__ import annotations

import os

from qlint.analysis.names import shadowed_names
from qlint.analysis.names.body_reads import BODY_READ


class DependencyRecords:
    __slots__ = ("deps", "read_by", "reads", "recorded", "track_dependents", "users")

    def __init__(self, track_dependents: bool):
        # Who read which file (`users`) serves an editor's rechecks; a command-line run checks
        # each file once and never asks, and on ExecuTorch its sets held ~36,000 entries per
        # process (every check that scans the project reads every file).
        self.track_dependents = track_dependents
        self.deps: dict[str, dict[str, str]] = {}
        # path -> the files whose last check read it: who to recheck after it changes.
        self.users: dict[str, set[str]] = {}
        self.read_by: dict[str, set[str]] = {}
        # requester -> the list of reads `add_many` last added it as a user of: the same
        # list again (`module_keys.project_keys` hands an editor's next check the one it
        # took, ~3,800 reads on ExecuTorch) finds it a user of all of them still, unless
        # `dependencies_of` dropped it from some since.
        self.recorded: dict[str, list[tuple[str, str]]] = {}
        # While a list: every (path, digest) a lookup reads is appended to it, so that an
        # analysis kept across checks (`qlint.analysis.flow.shared_flows`) knows what to
        # compare before it is reused (`ProjectIndex.reads`).
        self.reads: list[tuple[str, str]] | None = None

    def add(self, requester: str, path: str, digest: str) -> None:
        """The check of `requester` (absolute) read `path`."""
        self.deps.setdefault(requester, {})[path] = digest
        if self.track_dependents:
            self.users.setdefault(path, set()).add(requester)
        if self.reads is not None and not path.startswith(shadowed_names.PREFIX):
            # A kept fact's or verdict's reads are files (`kept_caller_verdicts._kept_reads`
            # keeps none with another dependency): the standard names under a lookup's roots
            # stay out of them, as before they were recorded at all. (A kept answer taken
            # then does not record them: a module made to shadow one leaves it standing.)
            self.reads.append((path, digest))

    def add_read(self, requester: str, path: str, digest: str) -> None:
        """`ProjectIndex.record_read`: a directory spelled with a trailing separator
        (`import_paths.tried_before`, through `file_keys.record_trail`) keeps it: `abspath`
        drops it, and the cache and `lsp.disk_changes.recheck_due` then took a directory created
        there for no change. The entries of roots with standard or installed names
        (`shadowed_names`) are no path."""
        if not path.startswith(shadowed_names.PREFIX):
            absolute = os.path.abspath(path)
            if path.endswith(os.sep) and absolute != os.sep:
                absolute += os.sep
            path = absolute
        self.add(os.path.abspath(requester), path, digest)

    def add_many(self, requester: str, reads: list[tuple[str, str]]) -> None:
        """`add` for many absolute, normalised paths at once (a scan of the project)."""
        requester = os.path.abspath(requester)
        self.deps.setdefault(requester, {}).update(reads)
        if not self.track_dependents or self.recorded.get(requester) is reads:
            return
        self.recorded[requester] = reads
        users = self.users
        for path, _ in reads:
            known = users.get(path)
            if known is None:
                users[path] = {requester}
            else:
                known.add(requester)

    def add_flow_reads(self, requester: str, reads) -> None:
        """The modules (path, digest) model flows read, those not recorded for `requester` yet."""
        requester = os.path.abspath(requester)
        known = self.deps.get(requester, {})
        for path, digest in reads:
            if path == BODY_READ:
                continue  # a body of the checked module read (`caller_modules`), no file
            if known.get(path) != digest:
                self.add(requester, path, digest)
                known = self.deps[requester]

    def hand_over(self, reader: str, requester: str) -> None:
        """What was recorded for `reader` becomes a dependency of `requester`'s check."""
        reader, requester = os.path.abspath(reader), os.path.abspath(requester)
        if reader == requester:
            return
        for path, digest in self.deps.pop(reader, {}).items():
            self.add(requester, path, digest)

    def dependencies_of(self, requester: str) -> dict[str, str]:
        """What the check of `requester` that just ended read; its reads of last time that it
        did not read again no longer make it their user."""
        requester = os.path.abspath(requester)
        deps = self.deps.pop(requester, {})
        if not self.track_dependents:
            return deps
        before = self.read_by.get(requester)
        if before is not None and len(before) == len(deps) and before == deps.keys():
            return deps  # read the same files as last time: its users hold it still
        dropped = (before or set()) - deps.keys()
        if dropped:
            self.recorded.pop(requester, None)  # no longer a user of every read it recorded
        for path in dropped:
            self.users.get(path, set()).discard(requester)
        self.read_by[requester] = set(deps)
        return deps

    def dependents(self, path: str) -> set[str]:
        """The files whose last check read `path` (directly)."""
        return set(self.users.get(os.path.abspath(path), ()))
