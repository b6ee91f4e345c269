"""The words of a project's modules (`project_words`), cut once per parallel run by a forked
child into memory that every process of the run maps, instead of once by each worker.

Each of the two workers of a run over ExecuTorch read and cut all 3,784 modules (~0.6 s CPU
and 6.4 MB of words each; on ao 627 of 633 each). Cutting them in the parent before forking
(46b6ddd, reverted) saved the CPU, but the parent's heap, which the workers inherit, grew, and
so did the run's peak PSS. Here a child forked before the workers reads the modules while
the parent makes the wrapper index (two cores busy where one was), and writes their words
into one anonymous shared mapping: the parent's heap gains only a table (path -> content key
and span), and the workers forked after it map the very same pages (PSS counts them once).

A module is answered from here only at the content key the parent took before the child read
it; at any other key (edited meanwhile) `project_words` reads it as before. A module the child
could not vouch for (its size changed under it) is left out and read by whoever asks.
"""

from __future__ import annotations

import array
import bisect
import contextlib
import mmap
import os
from collections.abc import Callable, Iterable

from qlint.analysis import held_interrupts
from qlint.analysis.forked_call import kill_and_reap
from qlint.analysis.names import content_keys

_SPAN = 16  # two int64 per module, before the words
_LEFT_OUT, _NOTHING = -2, -1  # span starts: read it yourself / holds nothing (absent, too large)


class SharedWords:
    """The words of modules at given content keys, in one shared mapping: each module's
    distinct words as b"\\nw1\\nw2\\n...\\n", one module after another."""

    def __init__(self, paths: list[str], keys: list[tuple], spans: array.array, blob: mmap.mmap):
        self._blob = blob
        self._at: dict[str, tuple[tuple, int, int]] = {}  # path -> (key, start, end)
        self._starts: list[int] = []  # the spans holding words, in blob order, for the scans
        self._ends: list[int] = []
        self._paths: list[str] = []
        self._end = 0  # where the words end: past it, pages never written (a scan reading them
        # there would have the system allocate them, zeroed: shared memory is not sparse to reads)
        for i, path in enumerate(paths):
            start, end = spans[2 * i], spans[2 * i + 1]
            if start == _LEFT_OUT:
                continue
            self._at[path] = (keys[i], start, end)
            if start >= 0:
                self._starts.append(start)
                self._ends.append(end)
                self._paths.append(path)
                self._end = max(self._end, end)

    def __len__(self) -> int:
        return len(self._at)

    def holds_key(self, path: str, key: tuple) -> bool:
        """Whether the module's words at `key` are here (or that it holds nothing)."""
        entry = self._at.get(path)
        return entry is not None and entry[0] == key

    def spells(self, path: str, needle: bytes) -> bool:
        """Whether `needle` is one of the module's words (`holds_key` first)."""
        _, start, end = self._at[path]
        return start >= 0 and self._blob.find(b"\n" + needle + b"\n", start, end) != -1

    def holds(self, path: str, needle: bytes) -> bool:
        """Whether one of the module's words holds `needle` (word characters only; `holds_key`
        first): the caller search asking module by module until its answer is decided."""
        _, start, end = self._at[path]
        return start >= 0 and self._blob.find(needle, start, end) != -1

    def lacks(self, path: str, needles: tuple[bytes, ...]) -> bool:
        """Whether none of the module's words holds any of `needles` (word characters only;
        `holds_key` first). False for a module holding nothing here: absent or too large to
        cut, which a reader with a larger limit may still find a needle in."""
        _, start, end = self._at[path]
        return start >= 0 and all(self._blob.find(n, start, end) == -1 for n in needles)

    def holding(self, needle: bytes) -> set[str]:
        """The modules one of whose words holds `needle` (made of word characters only, so a
        match lies within one module's words): one scan of the mapping."""
        out: set[str] = set()
        find, starts, ends, paths, stop = self._blob.find, self._starts, self._ends, self._paths, self._end
        at = find(needle, 0, stop)
        while at != -1:
            i = bisect.bisect_right(starts, at) - 1
            out.add(paths[i])
            at = find(needle, ends[i], stop)
        return out

    def close(self) -> None:
        with contextlib.suppress(BufferError, ValueError):
            self._blob.close()


class Pending:
    """The child cutting the words; `wait` gives what it made (None: it failed), `stop` ends it
    unheard (the run did not get as far as its workers)."""

    def __init__(self, pid: int, paths: list[str], keys: list[tuple], blob: mmap.mmap):
        self.pid, self.paths, self.keys, self.blob = pid, paths, keys, blob
        self.reaped = False  # once reaped, its pid may be another process's: never killed again

    def wait(self) -> SharedWords | None:
        try:
            _, status = os.waitpid(self.pid, 0)
        except (OSError, ChildProcessError):
            status = -1
        except BaseException:  # Ctrl-C while waiting: nothing of the child's outlives the run
            self.stop()
            raise
        self.reaped = True
        if status != 0:
            self.blob.close()
            return None
        return _shared(self.paths, self.keys, self.blob)

    def stop(self) -> None:
        """Kill the child, reap it (no zombie left behind) and unmap the words; once is enough."""
        if not self.reaped:
            self.reaped = True
            kill_and_reap(self.pid)
        self.blob.close()


def start(paths: list[str], limit: int, words_of: Callable[[bytes], Iterable[bytes]]) -> Pending | None:
    """Fork a child that cuts the words of `paths` with `words_of` (`project_words.module_words`;
    modules over `limit` bytes hold none), at the content keys taken now. None where no child
    can be forked (no `fork`: no workers are forked either, see `worker_pool._pool`)."""
    if not hasattr(os, "fork"):
        return None
    paths, keys = _keyed(paths)
    blob = _mapping(keys, limit)
    if blob is None:
        return None
    held = held_interrupts.hold()  # a Ctrl-C now waits until the child can be stopped
    try:
        pid = os.fork()
    except OSError:
        blob.close()
        held_interrupts.release(held)
        return None
    if pid == 0:  # the child: never returns, never runs the parent's exit handlers
        code = 1
        try:
            held_interrupts.release_in_child(held)
            _cut(paths, keys, blob, limit, words_of)
            code = 0
        finally:
            os._exit(code)
    pending = Pending(pid, paths, keys, blob)
    try:
        held_interrupts.release(held)
    except BaseException:
        pending.stop()
        raise
    return pending


def cut_here(paths: list[str], limit: int, words_of: Callable[[bytes], Iterable[bytes]]) -> SharedWords | None:
    """The same words cut by this process, for itself: a run of one process cuts them while it
    waits for the wrapper index's child (`run_indexes`). Kept module by module instead
    (`project_words`), each word a caller search asked of all of them was looked for module
    by module, a call per module: ExecuTorch -j1 asked 36 words of its 3,784 modules, ~10 ms
    each; one scan of one mapping takes about two thirds of that. The words take the same
    memory either way (pages of the mapping never written cost nothing)."""
    paths, keys = _keyed(paths)
    blob = _mapping(keys, limit)
    if blob is None:
        return None
    try:
        _cut(paths, keys, blob, limit, words_of)
    except BaseException:  # Ctrl-C while cutting: nothing of it is kept
        blob.close()
        raise
    return _shared(paths, keys, blob)


def _shared(paths: list[str], keys: list[tuple], blob: mmap.mmap) -> SharedWords:
    """The words cut into `blob` (by a child or by this process), with the spans `_cut` wrote
    at its start."""
    spans = array.array("q")
    spans.frombytes(blob[: _SPAN * len(paths)])
    return SharedWords(paths, keys, spans, blob)


def _keyed(paths: list[str]) -> tuple[list[str], list[tuple]]:
    """`paths` with a content key taken now, and those keys (an absent module: nothing to cut)."""
    keyed = [(p, content_keys.content_key({}, p, True)) for p in paths]
    keyed = [(p, k) for p, k in keyed if k is not None]
    return [p for p, _ in keyed], [k for _, k in keyed]


def _mapping(keys: list[tuple], limit: int) -> mmap.mmap | None:
    """An anonymous shared mapping with room for the spans and words of modules of `keys`.
    Words take at most the module's bytes and two line breaks; pages never written cost nothing."""
    room = _SPAN * len(keys) + sum(min(k[1], limit) + 2 for k in keys) + 1
    try:
        return mmap.mmap(-1, room)  # anonymous and MAP_SHARED: a child's writes are seen here
    except (OSError, ValueError, OverflowError):
        return None


def _cut(
    paths: list[str], keys: list[tuple], blob: mmap.mmap, limit: int, words_of: Callable[[bytes], Iterable[bytes]]
) -> None:
    spans = array.array("q", [_LEFT_OUT]) * (2 * len(paths))
    at = _SPAN * len(paths)
    for i, (path, key) in enumerate(zip(paths, keys, strict=True)):
        data = content_keys.content_bytes({}, path, key, limit)
        if data is None:
            if key[1] > limit:  # holds nothing, as `project_words` reads it
                spans[2 * i] = spans[2 * i + 1] = _NOTHING
            continue  # unreadable now: left to whoever asks
        if len(data) != key[1]:
            continue  # changed since its key was taken: left out
        words = b"\n" + b"\n".join(words_of(data)) + b"\n"
        if at + len(words) > len(blob):
            continue
        blob[at : at + len(words)] = words
        spans[2 * i], spans[2 * i + 1] = at, at + len(words)
        at += len(words)
    blob[: len(spans) * spans.itemsize] = spans.tobytes()
