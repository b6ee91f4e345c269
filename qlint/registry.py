"""The rule registry: qlint's own rules and those of installed plugins, loaded once.

Settings, config, the CLI, the reporters, the language server and the runtime client ask
this module about rules; none of them imports a rule module. A plugin is any installed
distribution with an entry point in the `qlint.rules` group that names a `Rule` subclass
(or a list or tuple of them):

    [project.entry-points."qlint.rules"]
    print-in-pass = "acme_qlint.print_in_pass:PrintInGraphPass"

Plugins are loaded lazily, the first time anything asks for the rules, and once per
process. A plugin that cannot be imported or declares a malformed rule, and two rules that
claim one code or name (two plugins, or a plugin and a built-in rule), stop qlint at start-up
with a `RegistryError` naming the packages involved: guessing which rule wins would make a
CI job's result depend on install order.
"""

from __future__ import annotations

import importlib
import os
import re
import sys
from collections.abc import Iterable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from qlint import __version__
from qlint.rules.base import EngineReport, FixAvailability, Rule, Severity
from qlint.rules.builtin import BUILTIN

if TYPE_CHECKING:
    from importlib import metadata

ENTRY_POINT_GROUP = "qlint.rules"
# Any upper-case prefix, then digits: plugins pick their own prefix (ruff's and flake8's
# convention), so `select`/`ignore`/`noqa` treat their codes like qlint's own.
CODE = re.compile(r"^[A-Z]+[0-9]+$")
NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")


class RegistryError(Exception):
    """A plugin that cannot be loaded, a malformed rule, or two rules claiming one code."""


@dataclass(frozen=True)
class Origin:
    """Where a rule comes from: the distribution that ships it and, for a plugin, its entry point."""

    package: str
    version: str
    entry_point: str | None = None  # `name = module:attr`; None for qlint's own rules

    @property
    def builtin(self) -> bool:
        return self.entry_point is None

    def __str__(self) -> str:
        return f"{self.package} {self.version}"


BUILTIN_ORIGIN = Origin("qlint", __version__)


class Registry:
    """Code -> rule class, with each rule's origin. `rules()` returns the same dict every
    time (tests add rules to it with `monkeypatch.setitem`)."""

    def __init__(self, builtin: Iterable[str] = BUILTIN, group: str | None = ENTRY_POINT_GROUP):
        self._builtin = tuple(builtin)
        self._group = group
        self._rules: dict[str, type[Rule]] | None = None
        self._origins: dict[str, Origin] = {}

    def rules(self) -> dict[str, type[Rule]]:
        if self._rules is None:
            rules: dict[str, type[Rule]] = {}
            origins: dict[str, Origin] = {}
            for spec in self._builtin:
                module, _, attr = spec.partition(":")
                _add(rules, origins, getattr(importlib.import_module(module), attr), BUILTIN_ORIGIN)
            if self._group is not None:
                for entry_point in _entry_points(self._group):
                    origin = _origin_of(entry_point)
                    for cls in _load(entry_point, origin):
                        _add(rules, origins, cls, origin)
            self._rules, self._origins = rules, origins
        return self._rules

    def origin(self, code: str) -> Origin:
        """The rule's package; qlint's own for codes the registry did not load (a rule a
        test added to the table)."""
        self.rules()
        return self._origins.get(code, BUILTIN_ORIGIN)

    def lookup(self, code_or_name: str) -> type[Rule] | None:
        """A rule by code (any case) or by kebab name."""
        rules = self.rules()
        found = rules.get(code_or_name.strip().upper())
        if found is not None:
            return found
        wanted = code_or_name.strip().lower()
        return next((cls for cls in rules.values() if cls.name == wanted), None)

    def engine_rule(self, report: EngineReport) -> type[Rule]:
        """The rule whose findings the engine makes itself (the parse-error rule, ...)."""
        return next(cls for cls in self.rules().values() if cls.engine_report is report)

    def url(self, code: str, default: str) -> str | None:
        """A rule's documentation URL: `default` (`Diagnostic.url`) for qlint's own rules, the
        rule's `url` for a plugin's (None when it publishes none: not a link into qlint's repo)."""
        cls = self.rules().get(code)
        if cls is None or self.origin(code).builtin:
            return cls.url if cls is not None and cls.url else default
        return cls.url

    def severity(self, code: str) -> Severity:
        cls = self.rules().get(code)
        return Severity(cls.severity) if cls is not None else Severity.WARNING


def _entry_points(group: str) -> list[metadata.EntryPoint]:
    if not _may_declare(group):
        return []
    from importlib import metadata

    # Sorted: the order rules are listed and checked in must not depend on sys.path order.
    found = metadata.entry_points(group=group)
    return sorted(found, key=lambda ep: (_origin_of(ep).package.lower(), ep.name))


def _may_declare(group: str) -> bool:
    """False only when no distribution in a sys.path directory declares the group, read from
    their `entry_points.txt` as text. Most runs have no plugin, and `importlib.metadata`
    costs a tenth of a short run's start-up (it imports `email` and parses every package's
    metadata). Anything on sys.path that is not a plain directory (a zip) gets the full scan."""
    header = f"[{group}]"
    for entry in sys.path:
        try:
            with os.scandir(entry or ".") as found:
                names = [e.name for e in found if e.name.endswith((".dist-info", ".egg-info"))]
        except NotADirectoryError:
            return True
        except OSError:
            continue
        for name in names:
            try:
                with open(os.path.join(entry or ".", name, "entry_points.txt"), encoding="utf-8") as fh:
                    if header in fh.read():
                        return True
            except (OSError, UnicodeDecodeError):
                continue
    return False


def _origin_of(entry_point: metadata.EntryPoint) -> Origin:
    dist = getattr(entry_point, "dist", None)
    package = dist.metadata["Name"] if dist is not None else "an unknown package"
    version = dist.version if dist is not None else "?"
    return Origin(package, version, f"{entry_point.name} = {entry_point.value}")


def _load(entry_point: metadata.EntryPoint, origin: Origin) -> list[type[Rule]]:
    where = f"plugin {origin.package} ({ENTRY_POINT_GROUP} entry point `{origin.entry_point}`)"
    try:
        loaded = entry_point.load()
    except Exception as exc:
        raise RegistryError(f"{where} cannot be loaded: {type(exc).__name__}: {exc}") from exc
    classes = list(loaded) if isinstance(loaded, (list, tuple)) else [loaded]
    for cls in classes:
        if not (isinstance(cls, type) and issubclass(cls, Rule)):
            raise RegistryError(f"{where} names {cls!r}, which is not a subclass of qlint.rules.base.Rule")
    return classes


def _add(rules: dict[str, type[Rule]], origins: dict[str, Origin], cls: type[Rule], origin: Origin) -> None:
    _validate(cls, origin)
    for other_code, other in rules.items():
        if other_code == cls.code or other.name == cls.name:
            what = f"code {cls.code}" if other_code == cls.code else f"name {cls.name!r}"
            raise RegistryError(
                f"two rules claim the {what}: {_described(other, origins[other_code])} and "
                f"{_described(cls, origin)}; uninstall one of the packages"
            )
    rules[cls.code] = cls
    origins[cls.code] = origin


def _described(cls: type[Rule], origin: Origin) -> str:
    return f"{cls.__module__}.{cls.__qualname__} from package {origin}"


def _validate(cls: type[Rule], origin: Origin) -> None:
    """Facts the rest of qlint relies on without checking again."""
    problems = []
    code = getattr(cls, "code", None)
    if not isinstance(code, str) or not CODE.match(code):
        problems.append(f"code {code!r} is not upper-case letters followed by digits (like ACME101)")
    if not isinstance(getattr(cls, "name", None), str) or not NAME.match(cls.name):
        problems.append(f"name {getattr(cls, 'name', None)!r} is not a kebab-case name")
    if not isinstance(getattr(cls, "summary", None), str) or not cls.summary:
        problems.append("it has no summary")
    # The enums' values ("warning", "sometimes") are accepted too and stored as the enum,
    # so every reader sees one type.
    for fact, kind in (("severity", Severity), ("fix_availability", FixAvailability)):
        value = getattr(cls, fact)
        try:
            setattr(cls, fact, kind(value))
        except ValueError:
            allowed = ", ".join(m.value for m in kind)
            problems.append(f"{fact} {value!r} is not a qlint.rules.base.{kind.__name__} ({allowed})")
    if cls.engine_report is None and cls.check is Rule.check:
        problems.append("it does not define `check`")
    if problems:
        raise RegistryError(f"rule {cls.__module__}.{cls.__qualname__} from package {origin}: " + "; ".join(problems))


_REGISTRY = Registry()


def rules() -> dict[str, type[Rule]]:
    """Every rule, built-in and plugin, by code (loaded on first use)."""
    return _REGISTRY.rules()


def origin(code: str) -> Origin:
    return _REGISTRY.origin(code)


def lookup(code_or_name: str) -> type[Rule] | None:
    return _REGISTRY.lookup(code_or_name)


def engine_rule(report: EngineReport) -> type[Rule]:
    return _REGISTRY.engine_rule(report)


def url(code: str, default: str) -> str | None:
    return _REGISTRY.url(code, default)


def severity(code: str) -> Severity:
    return _REGISTRY.severity(code)
