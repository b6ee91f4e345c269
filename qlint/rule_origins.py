"""Where a rule comes from (qlint itself, or the package of a plugin's entry point), and what a
rule class must declare before the registry holds it: a rule that does not, or two that claim
one code or name, stop qlint at start-up with a `RegistryError` naming the packages involved.
"""

from __future__ import annotations

import re

from qlint import __version__
from qlint.rules.base import FixAvailability, Rule, Severity
from qlint.value_classes import value_class

# Any upper-case prefix, then digits: plugins pick their own prefix (ruff's and flake8's
# convention), so `select`/`ignore`/`noqa` treat their codes like qlint's own.
CODE = re.compile(r"^[A-Z]+[0-9]+$")
NAME = re.compile(r"^[a-z][a-z0-9]*(?:-[a-z0-9]+)*$")


class RegistryError(Exception):
    """A plugin that cannot be loaded, a malformed rule, or two rules claiming one code."""


@value_class(frozen=True)
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


def add_rule(rules: dict[str, type[Rule]], origins: dict[str, Origin], cls: type[Rule], origin: Origin) -> None:
    validate(cls, origin)
    for other_code, other in rules.items():
        if other_code == cls.code or other.name == cls.name:
            what = f"code {cls.code}" if other_code == cls.code else f"name {cls.name!r}"
            raise RegistryError(
                f"two rules claim the {what}: {described(other, origins[other_code])} and "
                f"{described(cls, origin)}; uninstall one of the packages"
            )
    rules[cls.code] = cls
    origins[cls.code] = origin


def described(cls: type[Rule], origin: Origin) -> str:
    return f"{cls.__module__}.{cls.__qualname__} from package {origin}"


def validate(cls: type[Rule], origin: Origin) -> None:
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
