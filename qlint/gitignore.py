"""`.gitignore` files as the walk (`qlint.discovery`) applies them: git's semantics, matched fast.

The last matching rule decides, so only the order of `!` and plain rules matters: consecutive
rules of one polarity form a run, and the runs are tried from the last. Within a run a rule
is matched the cheapest way its glob allows, each as its regex would: names by equality
(`build`), by suffix (`*.pyc`), prefix (`bazel-*`) or infix (`*.so*`), `**/name` as a name;
the rest folded into one regex per run, compiled the first time an entry could need it.
Rules anchored below a literal directory (`torch/lib/*.so*`) are grouped by that first
directory and compiled only when a path under it is asked about: pytorch's `.gitignore`
(which ao copies, 262 rules) compiled whole cost more than walking ao (633 files) itself.
"""

from __future__ import annotations

import os
import re
from collections.abc import Sequence
from functools import cached_property

_WILDCARDS = "*?[\\"


def glob_to_regex(pattern: str, star_crosses_slash: bool) -> str:
    """Translate a glob with `**` to a regex body. gitignore's `*` stops at `/`; fnmatch's not."""
    star = ".*" if star_crosses_slash else "[^/]*"
    out: list[str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "*" and pattern.startswith("**", i):
            at_start = i == 0 or pattern[i - 1] == "/"
            j = i + 2
            if at_start and j < n and pattern[j] == "/":
                out.append("(?:.*/)?")  # `**/`: zero or more directories
                i = j + 1
                continue
            if at_start and j == n:
                out.append(".*")  # trailing `/**`: everything inside
                i = j
                continue
            out.append(star)
            i = j
        elif c == "*":
            out.append(star)
            i += 1
        elif c == "?":
            out.append("." if star_crosses_slash else "[^/]")
            i += 1
        elif c == "[":
            end = pattern.find("]", i + 2 if pattern.startswith("[!", i) else i + 1)
            if end == -1:
                out.append(re.escape(c))
                i += 1
                continue
            body = pattern[i + 1 : end]
            if body.startswith("!"):
                body = "^" + body[1:]
            out.append("[" + body.replace("\\", "\\\\") + "]")
            i = end + 1
        elif c == "\\" and i + 1 < n:
            out.append(re.escape(pattern[i + 1]))
            i += 2
        else:
            out.append(re.escape(c))
            i += 1
    return "".join(out)


class IgnoreRule:
    """One line of a `.gitignore` (a plain class: a dataclass costs every start ~1 ms)."""

    def __init__(self, glob: str, negate: bool, dir_only: bool, anchored: bool, literal: str | None = None):
        self.glob = glob  # as written, without `!`, a leading `/` or a trailing `/`
        self.negate = negate
        self.dir_only = dir_only
        self.anchored = anchored  # has a `/`: matches the path relative to the file, else the name
        self.literal = literal  # the glob, when it has no wildcard: matched by equality

    def __repr__(self) -> str:
        return f"IgnoreRule({self.glob!r}, negate={self.negate}, dir_only={self.dir_only}, anchored={self.anchored})"

    @cached_property
    def pattern(self) -> str:
        """The regex body, the rule's meaning: the matchers below are shortcuts of it, and
        most rules never need it (translated when first asked for, once)."""
        return glob_to_regex(self.glob, star_crosses_slash=False)

    @property
    def regex(self) -> re.Pattern[str]:
        return re.compile(self.pattern, re.DOTALL)

    @cached_property
    def place(self) -> tuple[str, object]:
        """Where `_RunMatcher` files the rule, and under which key: worked out once per rule
        (each rule is in two or three matchers: files, directories, the whole file's)."""
        glob, anchored = self.glob, self.anchored
        if anchored and glob.startswith("**/") and _name_shape(glob[3:]) is not None:
            glob, anchored = glob[3:], False  # `**/x`: the name x at any depth
        if not anchored:
            shape = _name_shape(glob)
            if shape is None:
                return "name_bodies", None
            return shape, glob if shape == "name" else glob.strip("*")
        if self.literal is not None:
            return "paths", self.literal
        first, last = glob.split("/", 1)[0], glob.rsplit("/", 1)[-1]
        if _plain(first) and "/" in glob:
            return "groups", first
        shape = _name_shape(last)
        if shape is not None and "/" in glob:
            # Its regex ends by matching the whole last component with `last`'s (see
            # `_name_shape`): the name must fit that before the regex is tried.
            return "gates", (shape, last.strip("*"))
        return "wild", None


class _RunMatcher:
    """The rules of one run that apply to one kind of entry (files, or directories)."""

    def __init__(self, rules: list[IgnoreRule]):
        names, suffixes, prefixes, infixes, name_bodies = set(), [], [], [], []
        paths: set[str] = set()
        groups: dict[str, list[IgnoreRule]] = {}
        wild: list[IgnoreRule] = []
        gates: dict[tuple[str, str], list[IgnoreRule]] = {}
        for rule in rules:
            where, key = rule.place
            if where == "name":
                names.add(key)
            elif where == "suffix":
                suffixes.append(key)
            elif where == "prefix":
                prefixes.append(key)
            elif where == "infix":
                infixes.append(key)
            elif where == "paths":
                paths.add(key)
            elif where == "groups":
                groups.setdefault(key, []).append(rule)
            elif where == "gates":
                gates.setdefault(key, []).append(rule)
            elif where == "wild":
                wild.append(rule)
            else:
                name_bodies.append(rule)
        self.names = frozenset(names)
        self.suffixes = tuple(suffixes)
        self.prefixes = tuple(prefixes)
        self.infixes = tuple(infixes)
        self._name_bodies = name_bodies
        self._name_re: re.Pattern[str] | None = None
        self.paths = frozenset(paths)
        self._groups = groups
        self._group_res: dict[str, re.Pattern[str] | None] = {}
        self._wild = wild
        self._wild_re: re.Pattern[str] | None = None
        self._gates = [[shape, core, bodies, None] for (shape, core), bodies in gates.items()]
        self.by_path = bool(paths or groups or wild or gates)
        self.empty = not rules

    def hits(self, rel: str, name: str) -> bool:
        if name in self.names or name.endswith(self.suffixes) or name.startswith(self.prefixes):
            return True
        for infix in self.infixes:
            if infix in name:
                return True
        if self._name_bodies:
            if self._name_re is None:
                self._name_re = _compiled(self._name_bodies)
            if self._name_re.fullmatch(name):
                return True
        if not self.by_path:
            return False
        if rel in self.paths:
            return True
        if self._wild:
            if self._wild_re is None:
                self._wild_re = _compiled(self._wild)
            if self._wild_re.fullmatch(rel):
                return True
        for gate in self._gates:
            shape, core = gate[0], gate[1]
            if shape == "suffix":
                fits = name.endswith(core)
            elif shape == "name":
                fits = name == core
            else:
                fits = name.startswith(core) if shape == "prefix" else core in name
            if fits:
                if gate[3] is None:
                    gate[3] = _compiled(gate[2])
                if gate[3].fullmatch(rel):
                    return True
        if self._groups:
            first = rel.split("/", 1)[0]
            group = self._group_res.get(first, _UNSET)
            if group is _UNSET:
                bodies = self._groups.get(first)
                group = self._group_res[first] = _compiled(bodies) if bodies else None
            if group is not None and group.fullmatch(rel):
                return True
        return False


_UNSET = object()


def _name_shape(glob: str) -> str | None:
    """How a glob without `/` matches a name when its regex is no more than equality, a
    suffix (`*.pyc`), a prefix (`bazel-*`) or an infix (`*.so*`): the regex of such a glob
    cannot match a `/`, so `**/` before it changes nothing but where it may be."""
    core = glob.strip("*")
    if not core or "/" in glob or not _plain(core) or "**" in glob:
        return None
    lead, trail = glob.startswith("*"), glob.endswith("*")
    return ("infix" if trail else "suffix") if lead else ("prefix" if trail else "name")


def _plain(text: str) -> bool:
    return not any(ch in text for ch in _WILDCARDS)


def _compiled(rules: list[IgnoreRule]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?:{r.pattern})" for r in rules), re.DOTALL)


class IgnoreFile:
    """One `.gitignore`: its rules apply to paths below `base`, relative to it."""

    def __init__(self, base: str, rules: list[IgnoreRule]):
        self.base = base
        self.rules = rules
        self.prefix = self.base.rstrip(os.sep) + os.sep
        runs: list[list[IgnoreRule]] = []
        for rule in self.rules:
            if runs and runs[-1][0].negate == rule.negate:
                runs[-1].append(rule)
            else:
                runs.append([rule])
        # Per kind of entry, the runs from the last, those with no rule for it left out.
        self._runs: dict[bool, list[tuple[bool, _RunMatcher]]] = {
            is_dir: [
                (run[0].negate, matcher)
                for run in reversed(runs)
                if not (matcher := _RunMatcher([r for r in run if is_dir or not r.dir_only])).empty
            ]
            for is_dir in (False, True)
        }
        # All of a kind's rules as one run: most entries match none, and one look says so
        # (with `!` rules, pytorch's .gitignore makes 7 runs).
        self._any = {
            is_dir: _RunMatcher([r for r in self.rules if is_dir or not r.dir_only]) if len(runs) > 1 else None
            for is_dir in (False, True)
        }
        self.needs_path = any(m.by_path for runs_ in self._runs.values() for _, m in runs_)

    @classmethod
    def parse(cls, base: str, text: str) -> IgnoreFile:
        rules = []
        for raw in text.splitlines():
            rule = _parse_ignore_line(raw)
            if rule is not None:
                rules.append(rule)
        return cls(base, rules)

    def match(self, rel: str, name: str, is_dir: bool) -> bool | None:
        """True: ignored, False: re-included by `!`, None: no rule here says anything."""
        whole = self._any[is_dir]
        if whole is not None and not whole.hits(rel, name):
            return None
        for negate, matcher in self._runs[is_dir]:
            if matcher.hits(rel, name):
                return not negate
        return None


def _parse_ignore_line(line: str) -> IgnoreRule | None:
    if not line or line.startswith("#"):
        return None
    # Trailing spaces are dropped unless escaped with a backslash.
    stripped = line.rstrip(" ")
    if stripped.endswith("\\") and len(stripped) < len(line):
        stripped += " "
    line = stripped
    negate = line.startswith("!")
    if negate or line.startswith(("\\!", "\\#")):  # `\!` and `\#` are literal
        line = line[1:]
    dir_only = line.endswith("/")
    line = line.rstrip("/")
    if not line:
        return None
    # A bare name (no `/` but a trailing one) matches at any depth, so by name alone.
    anchored = "/" in line
    line = line.lstrip("/")
    literal = line if _plain(line) else None
    return IgnoreRule(line, negate, dir_only, anchored, literal)


def is_ignored(stack: Sequence[IgnoreFile], path: str, name: str, is_dir: bool) -> bool:
    """Deeper `.gitignore` files override shallower ones; within one, the last rule wins."""
    for ignore in reversed(stack):
        if not path.startswith(ignore.prefix):
            continue
        rel = path[len(ignore.prefix) :].replace(os.sep, "/") if ignore.needs_path else ""
        verdict = ignore.match(rel, name, is_dir)
        if verdict is not None:
            return verdict
    return False
