"""Resolved settings: which rules run on which file, with which options.

`qlint.config` builds this from `[tool.qlint]`; the engine, the CLI and the language
server only ever see this type.
"""

from __future__ import annotations

import fnmatch
import hashlib
import json
from dataclasses import dataclass, field
from functools import cached_property, lru_cache
from pathlib import Path, PurePosixPath
from typing import Any

from qlint import __version__
from qlint.rules import RULES, Rule

# Directories nobody wants linted, as in ruff. Not `site-packages`: qlint is pointed at
# installed package trees on purpose. `exclude` replaces this list, `extend-exclude` adds.
DEFAULT_EXCLUDE: tuple[str, ...] = (
    ".bzr",
    ".direnv",
    ".eggs",
    ".git",
    ".hg",
    ".mypy_cache",
    ".nox",
    ".pants.d",
    ".pytype",
    ".qlint_cache",
    ".ruff_cache",
    ".svn",
    ".tox",
    ".venv",
    "__pycache__",
    "__pypackages__",
    "_build",
    "buck-out",
    "build",
    "dist",
    "node_modules",
    "venv",
)


def code_matches(code: str, selector: str) -> bool:
    """`QL1` selects QL101 and QL102; `ALL` selects everything, as in ruff."""
    return selector == "ALL" or code.startswith(selector)


@dataclass(frozen=True)
class Settings:
    select: tuple[str, ...] = ("QL",)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    unsafe_fixes: bool = False
    rule_options: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    root: Path = field(default_factory=Path.cwd)
    config_path: Path | None = None
    # File discovery and caching only: they never change a finding, so not in `fingerprint`.
    respect_gitignore: bool = True
    force_exclude: bool = False
    cache_dir: Path | None = None
    # `[tool.qlint.runtime] models`: factories the runtime checker may import and run (opt-in).
    runtime_models: tuple[str, ...] = ()

    @cached_property
    def enabled_codes(self) -> frozenset[str]:
        def chosen(code: str) -> bool:
            # The most specific selector wins, as in ruff: `--select QL --ignore QL1
            # --extend-select QL102` runs QL0xx and QL102.
            best_sel = max(
                (len(s) for s in self.select + self.extend_select if code_matches(code, s)),
                default=-1,
            )
            best_ign = max((len(s) for s in self.ignore if code_matches(code, s)), default=-1)
            return best_sel >= 0 and best_sel > best_ign

        return frozenset(code for code in RULES if chosen(code))

    def options_for(self, code: str) -> dict[str, Any]:
        return dict(dict(self.rule_options).get(code, ()))

    def ignored_for(self, path: str) -> frozenset[str]:
        if not self.per_file_ignores:
            return frozenset()  # resolving the path costs a stat per directory level
        rel = self.relative(path)
        ignored: set[str] = set()
        for pattern, codes in self.per_file_ignores:
            if _glob_match(rel, pattern):
                ignored.update(c for c in RULES if any(code_matches(c, s) for s in codes))
        return frozenset(ignored)

    def rules_for(self, path: str) -> list[Rule]:
        codes = self.enabled_codes - self.ignored_for(path)
        return [rule for code, rule in self._instances.items() if code in codes]

    @cached_property
    def _instances(self) -> dict[str, Rule]:
        return {code: cls(self.options_for(code)) for code, cls in RULES.items() if code in self.enabled_codes}

    def relative(self, path: str) -> str:
        p = Path(path)
        try:
            return PurePosixPath(p.resolve().relative_to(self.root.resolve())).as_posix()
        except (ValueError, OSError):
            return PurePosixPath(p).as_posix()

    @cached_property
    def fingerprint(self) -> str:
        """Changes whenever something that could change a finding changes (for the cache)."""
        data = {
            "version": __version__,
            "code": _code_fingerprint(),
            "codes": sorted(self.enabled_codes),
            "pfi": [list(map(str, x)) for x in self.per_file_ignores],
            "opts": repr(self.rule_options),
        }
        return hashlib.sha256(json.dumps(data, sort_keys=True).encode()).hexdigest()[:16]


def _glob_match(rel: str, pattern: str) -> bool:
    """Patterns match the path relative to the project root, or its basename (ruff-style)."""
    if fnmatch.fnmatch(rel, pattern):
        return True
    if "/" not in pattern:
        return fnmatch.fnmatch(PurePosixPath(rel).name, pattern)
    return fnmatch.fnmatch(rel, pattern.rstrip("/") + "/*")


@lru_cache(maxsize=1)
def _code_fingerprint() -> str:
    """Size and mtime of every file of the package (rules, analysis, op table data): a
    development checkout or a regenerated op table invalidates cached findings, not only a
    version bump. About a hundred stats per run."""
    package = Path(__file__).parent
    stamps = []
    for path in sorted(package.rglob("*")):
        if path.suffix in (".py", ".json") and "runtime" not in path.parts and "lsp" not in path.parts:
            st = path.stat()
            stamps.append(f"{path.relative_to(package)}:{st.st_size}:{st.st_mtime_ns}")
    return hashlib.sha256("\n".join(stamps).encode()).hexdigest()[:16]
