"""`[tool.qlint.QL101]`: a rule's options validated against the rule (names from
`Rule.options`, `-` and `_` alike; types from their defaults; patterns and choices the rule
declares) and frozen, since `Settings` is hashable (`FrozenDict`, tuples).

Apart from `config` because only a config with a rule's table needs it (`settings_from_table`
imports it then), and it imports that rule's class.
"""

from __future__ import annotations

import re
from typing import Any

from qlint import registry
from qlint.config_messages import ConfigError, Where, quoted, suggestion


def rule_options(code: str, value: dict[str, Any], loc: Where) -> tuple[tuple[str, Any], ...]:
    """`[tool.qlint.QL101]`: names from `Rule.options` (`-` and `_` alike), types from defaults."""
    known = registry.facts()  # one rule's options need its class only: the others stay unimported
    if code not in known:
        raise ConfigError(loc(f"unknown rule code {quoted(code)}{suggestion(code, known)}"))
    rule = registry.rule_class(code)
    by_norm = {n.replace("-", "_"): n for n in rule.options}
    out = []
    for given_name, given in value.items():
        name = by_norm.get(given_name.replace("-", "_"))
        if name is None:
            known = ", ".join(quoted(n) for n in rule.options) or "none"
            raise ConfigError(loc(f"unknown option {quoted(given_name)} (options of {code}: {known})"))
        out.append((name, _check_option(rule, name, given, loc.key(given_name))))
    return tuple(sorted(out))


def _check_option(rule, name: str, given: Any, label: str) -> Any:
    default = rule.options[name]
    given = _freeze(given) if default is None else _coerce(default, given, label)
    pattern = rule.option_patterns.get(name)
    if pattern is not None:
        for v in given if isinstance(given, tuple) else (given,):
            if isinstance(v, str) and re.fullmatch(pattern[0], v) is None:
                raise ConfigError(f"{label}: expected {pattern[1]}, got {quoted(v)}")
    choices = rule.option_choices.get(name)
    if choices is not None:
        values = given if isinstance(given, tuple) else (given,)
        for v in values:
            if v not in choices:
                allowed = ", ".join(quoted(c) for c in choices)
                raise ConfigError(f"{label}: {quoted(v)} is not one of {allowed}")
    return given


def _coerce(default: Any, given: Any, label: str) -> Any:
    """Check `given` against the type of `default`; lists become tuples (Settings is hashable)."""
    if isinstance(default, bool):
        ok = isinstance(given, bool)
        expected = "true or false"
    elif isinstance(default, int):
        ok = isinstance(given, int) and not isinstance(given, bool)
        expected = "an integer"
    elif isinstance(default, float):
        ok = isinstance(given, (int, float)) and not isinstance(given, bool)
        given = float(given) if ok else given
        expected = "a number"
    elif isinstance(default, str):
        ok = isinstance(given, str)
        expected = "a string"
    elif isinstance(default, (list, tuple, frozenset, set)):
        if not isinstance(given, list):
            raise ConfigError(f"{label}: expected a list, got {quoted(given)}")
        sample = next(iter(default), None)
        if sample is not None:
            given = [_coerce(sample, g, label) for g in given]
        return _freeze(given)
    elif isinstance(default, dict):
        ok = isinstance(given, dict)
        expected = "a table"
    else:
        return _freeze(given)
    if not ok:
        raise ConfigError(f"{label}: expected {expected}, got {quoted(given)}")
    return _freeze(given)


class FrozenDict(dict):
    """A read-only, hashable table option: `Settings` is frozen and must stay hashable."""

    def __hash__(self) -> int:  # type: ignore[override]
        return hash(tuple(self.items()))

    def _readonly(self, *args, **kwargs):
        raise TypeError("rule options are read-only")

    __setitem__ = __delitem__ = clear = pop = popitem = setdefault = update = _readonly  # type: ignore[assignment]


def _freeze(value: Any) -> Any:
    """TOML arrays become tuples and tables `FrozenDict`s, recursively."""
    if isinstance(value, list):
        return tuple(_freeze(v) for v in value)
    if isinstance(value, dict):
        return FrozenDict((k, _freeze(v)) for k, v in sorted(value.items()))
    return value
