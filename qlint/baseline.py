"""Adoption baselines: record today's findings, then report only new ones.

An entry is keyed on the rule, the file (relative to its repository's top, so a baseline
works in any clone) and the finding's own source text with whitespace collapsed, never on
a line number: an edit above a finding, or a reformat of it, does not turn it into a "new"
one. Equal keys are counted, so a second copy of a recorded bug in the same file is new.
Entries that match nothing any more are reported (they are fixed or gone) so the file can
shrink with `--write-baseline`; only entries whose file this run checked, or whose file
no longer exists, count as stale: a run over part of a repository says nothing about the
rest.

A baseline written over several repositories names each entry's repository; one written
over a single repository matches whatever the checkout is called.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from qlint.diagnostic import Diagnostic
from qlint.source import read_source

VERSION = 1


class BaselineError(ValueError):
    """An unreadable or malformed baseline file (exit code 2)."""


@dataclass(frozen=True, order=True)
class Key:
    repository: str
    path: str
    code: str
    source: str


def normalise(text: str) -> str:
    return " ".join(text.split())


def finding_source(diag: Diagnostic, text: str | None) -> str:
    """The finding's own source text, whitespace-normalised; its line when the range is empty."""
    if text is None:
        return ""
    lines = text.split("\n")
    start, end = diag.range.start, diag.range.end
    if not 1 <= start.row <= len(lines):
        return ""
    if (start.row, start.col) >= (end.row, end.col) or end.row > len(lines):
        return normalise(lines[start.row - 1])
    if start.row == end.row:
        return normalise(lines[start.row - 1][start.col : end.col])
    parts = [lines[start.row - 1][start.col :], *lines[start.row : end.row - 1], lines[end.row - 1][: end.col]]
    return normalise("\n".join(parts))


@dataclass
class Located:
    """A finding with the key parts that depend on where it was found."""

    diagnostic: Diagnostic
    repository: str
    path: str  # repository-relative


def keys_of(found: Sequence[Located], read=None) -> list[Key]:
    read = read or read_source
    texts: dict[str, str | None] = {}
    out = []
    for item in found:
        path = item.diagnostic.path
        if path not in texts:
            texts[path] = read(path)
        out.append(Key(item.repository, item.path, item.diagnostic.code, finding_source(item.diagnostic, texts[path])))
    return out


def write(path: str | os.PathLike, found: Sequence[Located]) -> int:
    counts = Counter(keys_of(found))
    entries = [
        {"repository": k.repository, "path": k.path, "code": k.code, "source": k.source, "count": n}
        for k, n in sorted(counts.items())
    ]
    data = {"qlint-baseline": VERSION, "entries": entries}
    target = Path(path)
    tmp = target.with_name(target.name + ".tmp")
    try:
        tmp.write_text(json.dumps(data, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
        os.replace(tmp, target)
    except OSError as exc:
        raise BaselineError(f"{path}: cannot write baseline: {exc.strerror or exc}") from None
    return len(found)


@dataclass
class Baseline:
    counts: Counter = field(default_factory=Counter)

    @property
    def single_repository(self) -> bool:
        return len({k.repository for k in self.counts}) <= 1

    @classmethod
    def load(cls, path: str | os.PathLike) -> Baseline:
        try:
            data = json.loads(Path(path).read_text(encoding="utf-8"))
        except OSError as exc:
            raise BaselineError(f"{path}: cannot read baseline: {exc.strerror or exc}") from None
        except ValueError as exc:
            raise BaselineError(f"{path}: not a qlint baseline (invalid JSON: {exc})") from None
        if not isinstance(data, dict) or data.get("qlint-baseline") != VERSION:
            raise BaselineError(f"{path}: not a qlint baseline (version {VERSION} expected)")
        counts: Counter = Counter()
        for i, entry in enumerate(data.get("entries", [])):
            try:
                key = Key(str(entry["repository"]), str(entry["path"]), str(entry["code"]), str(entry["source"]))
                count = int(entry.get("count", 1))
            except (KeyError, TypeError, ValueError):
                raise BaselineError(f"{path}: entry {i} is malformed") from None
            counts[key] += count
        return cls(counts)

    def _lookup(self, key: Key) -> Key:
        return Key("", key.path, key.code, key.source) if self.single_repository else key

    def filter(self, found: Sequence[Located], checked: Iterable[tuple[str, str]], roots: dict[str, Path]):
        """(new findings, stale entries). `checked`: (repository, relative path) of every file
        the run checked; `roots`: repository name → top directory, to see deleted files."""
        left = Counter({self._lookup(k): n for k, n in self.counts.items()})
        new = []
        for item, key in zip(found, keys_of(found), strict=True):
            lookup = self._lookup(key)
            if left[lookup] > 0:
                left[lookup] -= 1
            else:
                new.append(item)
        checked_keys = {(("" if self.single_repository else repo), rel) for repo, rel in checked}
        stale = []
        for key, n in sorted(left.items()):
            if n <= 0:
                continue
            root = roots.get(key.repository) if key.repository else next(iter(roots.values()), None)
            gone = root is not None and not (root / key.path).exists()
            if (key.repository, key.path) in checked_keys or gone:
                stale.append((key, n))
        return new, stale


def stale_lines(stale: Sequence[tuple[Key, int]]) -> list[str]:
    return [
        f"{k.path}: {k.code} `{k.source[:60]}`" + (f" (x{n})" if n > 1 else "") + " no longer found" for k, n in stale
    ]
