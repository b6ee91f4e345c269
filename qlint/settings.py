"""Resolved settings: which rules run on which file, with which options.

`qlint.config` builds this from `[tool.qlint]`; the engine, the CLI and the language
server only ever see this type.
"""

from __future__ import annotations

import fnmatch
import re
import sys
from functools import cached_property
from pathlib import Path, PurePosixPath
from typing import Any

from qlint import __version__, plain_json, registry
from qlint.rules.base import Rule
from qlint.short_digests import file_digest, sha256_hex
from qlint.value_classes import field, value_class

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


@value_class(frozen=True)
class Settings:
    # Every installed rule, qlint's and its plugins' (as flake8 does with its extensions);
    # `select = ["QL"]` keeps qlint's own only.
    select: tuple[str, ...] = ("ALL",)
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    exclude: tuple[str, ...] = DEFAULT_EXCLUDE
    extend_exclude: tuple[str, ...] = ()
    per_file_ignores: tuple[tuple[str, tuple[str, ...]], ...] = ()
    unsafe_fixes: bool = False
    # Preview rules run only when this is on (`--preview`, `preview = true`).
    preview: bool = False
    rule_options: tuple[tuple[str, tuple[tuple[str, Any], ...]], ...] = ()
    root: Path = field(default_factory=Path.cwd)
    config_path: Path | None = None
    # File discovery and caching only: they never change a finding, so not in `fingerprint`.
    respect_gitignore: bool = True
    force_exclude: bool = False
    cache_dir: Path | None = None
    # `[tool.qlint.runtime] models`: factories the runtime checker may import and run (opt-in).
    runtime_models: tuple[str, ...] = ()
    # `[tool.qlint.runtime] editor`: "on-save" lets the language server run runtime checks.
    runtime_editor: str = "off"
    # `rule-url`: where diagnostics link to ("{code}"/"{name}" filled in); None: the shipped page.
    rule_url: str | None = None

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

        facts = registry.facts()
        return frozenset(code for code, f in facts.items() if chosen(code) and (self.preview or not f.preview))

    @cached_property
    def noqa_pattern(self) -> re.Pattern[str]:
        """Finds a `noqa` comment that lists an enabled code's prefix: only files with one
        pay for tokenizing when the unused-noqa rule runs."""
        prefixes = sorted({re.match(r"[A-Z]+", code).group() for code in self.enabled_codes})
        alternatives = "|".join(map(re.escape, prefixes)) or "(?!)"
        return re.compile(rf"noqa\s*:[^\n]*\b(?:{alternatives})\d", re.IGNORECASE)

    def options_for(self, code: str) -> dict[str, Any]:
        return dict(dict(self.rule_options).get(code, ()))

    def ignored_for(self, path: str) -> frozenset[str]:
        if not self.per_file_ignores:
            return frozenset()  # resolving the path costs a stat per directory level
        rel = self.relative(path)
        ignored: set[str] = set()
        for pattern, codes in self.per_file_ignores:
            if _glob_match(rel, pattern):
                ignored.update(c for c in registry.facts() if any(code_matches(c, s) for s in codes))
        return frozenset(ignored)

    def explicit_per_file_ignores(self, path: str) -> frozenset[str]:
        """Codes a per-file-ignores entry for `path` names in full (not by prefix or `ALL`)."""
        if not self.per_file_ignores:
            return frozenset()
        rel = self.relative(path)
        return frozenset(
            code for pattern, codes in self.per_file_ignores if _glob_match(rel, pattern) for code in codes
        )

    def rules_for(self, path: str) -> list[Rule]:
        codes = self.enabled_codes - self.ignored_for(path)
        return [rule for code, rule in self._instances.items() if code in codes]

    @cached_property
    def checking_rules(self) -> tuple[Rule, ...]:
        """The enabled rules that check files (not the engine's QL001/QL002), whatever
        per-file-ignores say: what decides which files QL001 covers."""
        return tuple(rule for rule in self._instances.values() if rule.engine_report is None)

    @cached_property
    def _instances(self) -> dict[str, Rule]:
        # Deferred: a rule's module is imported when a file first holds one of its triggers.
        codes = registry.facts()
        return {code: registry.deferred(code, self.options_for(code)) for code in codes if code in self.enabled_codes}

    def relative(self, path: str) -> str:
        p = Path(path)
        try:
            return PurePosixPath(p.resolve().relative_to(self.root.resolve())).as_posix()
        except (ValueError, OSError):
            return PurePosixPath(p).as_posix()

    @cached_property
    def fingerprint(self) -> str:
        """Changes whenever something in the settings that could change a finding changes (for
        the cache, whose key adds qlint's own code: `cache_keys`)."""
        data = {
            "version": __version__,
            "codes": sorted(self.enabled_codes),
            "pfi": [list(map(str, x)) for x in self.per_file_ignores],
            "opts": repr(self.rule_options),
            "plugins": _plugin_fingerprint(tuple(sorted(self.enabled_codes))),
        }
        return sha256_hex(plain_json.dumps(data, sort_keys=True).encode())[:16]


def _glob_match(rel: str, pattern: str) -> bool:
    """Patterns match the path relative to the project root, or its basename (ruff-style)."""
    if fnmatch.fnmatch(rel, pattern):
        return True
    if "/" not in pattern:
        return fnmatch.fnmatch(PurePosixPath(rel).name, pattern)
    return fnmatch.fnmatch(rel, pattern.rstrip("/") + "/*")


def _plugin_fingerprint(codes: tuple[str, ...]) -> list[str]:
    """Package, version and module file content of each enabled plugin rule: editing a plugin
    in development invalidates its cached findings too, and a reinstall of the same plugin
    (new mtimes, as each CI job's) does not (`key_digests`)."""
    out = []
    for code in codes:
        origin = registry.origin(code)
        if origin.builtin:
            continue
        cls = registry.rule_class(code)
        module_file = getattr(sys.modules.get(cls.__module__ if cls else ""), "__file__", None) or ""
        try:
            stamp = file_digest(module_file)
        except OSError:
            stamp = "?"
        out.append(f"{code}:{origin}:{stamp}")
    return out
