"""`[tool.qlint]` → `Settings`: find the config, validate every key, merge the command line.

Validation is strict on purpose: a misspelt key (`selekt`) or rule code silently ignored
would make a CI job pass that should fail, so every problem is a `ConfigError` whose
message names the file and the key, and the CLI turns it into exit code 2.

The messages' wording is `config_messages`; a rule's options are validated by
`rule_option_values`.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from qlint import registry
from qlint.config_messages import ConfigError, Where, quoted, shown, suggestion
from qlint.lazy_patterns import lazy
from qlint.settings import Settings
from qlint.value_classes import replace, value_class

CONFIG_NAMES = ("qlint.toml", "pyproject.toml")
_SELECTOR = lazy(r"^[A-Z]+[0-9]*$")
_RULE_CODE = re.compile(r"^[A-Z]+[0-9]+$")


@value_class(frozen=True)
class Overrides:
    """What the command line says; `None` means "not given, keep the config's value"."""

    select: tuple[str, ...] | None = None
    extend_select: tuple[str, ...] = ()
    ignore: tuple[str, ...] = ()
    unsafe_fixes: bool | None = None
    preview: bool | None = None
    force_exclude: bool | None = None
    cache_dir: str | None = None


def validate_selectors(selectors: Sequence[str], where: str) -> tuple[str, ...]:
    """Each selector is `ALL`, a full code or a prefix of at least one known code."""
    out = []
    for sel in selectors:
        if not isinstance(sel, str):
            raise ConfigError(f"{where}: expected a rule code, got {quoted(sel)}")
        sel = sel.strip()
        if not sel:
            continue
        # The codes from the manifest: the rule classes would import every rule's module (and
        # what it analyses with), ~30 ms of a run given `--select` or `per-file-ignores`, for
        # codes the manifest holds too (with a plugin installed, `facts` loads the classes).
        known = registry.facts()
        if sel != "ALL" and (not _SELECTOR.match(sel) or not any(c.startswith(sel) for c in known)):
            raise ConfigError(f"{where}: unknown rule selector {quoted(sel)}{suggestion(sel, known)}")
        out.append(sel)
    return tuple(out)


def split_codes(text: str) -> list[str]:
    """`--select QL101,QL102` or repeated flags: commas and spaces both separate."""
    return [part for part in re.split(r"[,\s]+", text) if part]


def find_config(start: Path) -> Path | None:
    """The nearest `qlint.toml`, or `pyproject.toml` with a `[tool.qlint]` table, upwards."""
    start = start.resolve() if start.exists() else Path.cwd().resolve()
    directory = start if start.is_dir() else start.parent
    for folder in (directory, *directory.parents):
        for name in CONFIG_NAMES:
            candidate = folder / name
            if not candidate.is_file():
                continue
            if name != "pyproject.toml":
                return candidate
            try:
                text = candidate.read_bytes()
            except OSError:
                continue
            # Cheap check first: most pyproject.toml files have no qlint table at all.
            if b"qlint" in text and "qlint" in _parse(candidate, text).get("tool", {}):
                return candidate
    return None


def load_settings(
    paths: Sequence[str] = (),
    config: str | os.PathLike | None = None,
    overrides: Overrides | None = None,
) -> Settings:
    """Settings for a run over `paths`: explicit `config`, else the one nearest the first path."""
    overrides = overrides or Overrides()
    if config is not None:
        config_path = Path(config)
        if not config_path.is_file():
            raise ConfigError(f"{config_path}: config file not found")
    else:
        config_path = find_config(Path(paths[0]) if paths else Path.cwd())
    if config_path is None:
        settings = Settings(root=Path.cwd().resolve())
    else:
        settings = settings_from_file(config_path)
    return apply_overrides(settings, overrides)


def settings_from_file(path: Path) -> Settings:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise ConfigError(f"{shown(path)}: cannot read: {exc.strerror or exc}") from None
    doc = _parse(path, data)
    tool = doc.get("tool")
    if path.name == "pyproject.toml" or (isinstance(tool, dict) and "qlint" in tool):
        # A pyproject.toml (by name, or any file shaped like one): only [tool.qlint] is ours.
        table = tool.get("qlint", {}) if isinstance(tool, dict) else {}
        prefix = "tool.qlint"
    else:
        table, prefix = doc, ""
    if not isinstance(table, dict):
        raise ConfigError(f"{shown(path)}: {prefix or 'qlint config'} must be a table")
    return settings_from_table(table, path, prefix)


def settings_from_table(table: dict[str, Any], path: Path, prefix: str = "tool.qlint") -> Settings:
    """Validate one qlint table; `path` anchors relative globs and the cache directory.

    `prefix` is the table's dotted name in the file ("" for a `qlint.toml`), for messages.
    """
    root = path.resolve().parent
    loc = Where(shown(path), prefix)
    kwargs: dict[str, Any] = {"root": root, "config_path": path.resolve()}
    options: dict[str, tuple[tuple[str, Any], ...]] = {}
    for key, value in table.items():
        if _RULE_CODE.match(key):
            if not isinstance(value, dict):
                raise ConfigError(loc.key(key, f"expected a table of rule options, got {quoted(value)}"))
            from qlint.rule_option_values import rule_options  # only a config with a rule's table

            options[key] = rule_options(key, value, loc.sub(key))
            continue
        if key not in _KEYS:
            raise ConfigError(loc(f"unknown key {quoted(key)}{suggestion(key, _KEYS)}"))
        field_name, kind = _KEYS[key]
        if kind == "selectors":
            kwargs[field_name] = validate_selectors(_str_list(value, loc, key), loc.key(key))
        elif kind == "globs":
            kwargs[field_name] = tuple(_str_list(value, loc, key))
        elif kind == "bool":
            if not isinstance(value, bool):
                raise ConfigError(loc.key(key, f"expected true or false, got {quoted(value)}"))
            kwargs[field_name] = value
        elif kind == "path":
            if not isinstance(value, str) or not value:
                raise ConfigError(loc.key(key, f"expected a path string, got {quoted(value)}"))
            kwargs[field_name] = (root / os.path.expanduser(value)).resolve()
        elif kind == "per-file-ignores":
            kwargs[field_name] = _per_file_ignores(value, loc, key)
        elif kind == "url":
            kwargs[field_name] = _rule_url(value, loc, key)
        elif kind == "runtime":
            kwargs.update(_runtime_table(value, loc.sub(key)))
    if options:
        kwargs["rule_options"] = tuple(sorted(options.items()))
    return Settings(**kwargs)


def apply_overrides(settings: Settings, o: Overrides) -> Settings:
    """Command line on top of the file. `--select` starts over, as in ruff."""
    changes: dict[str, Any] = {}
    if o.select is not None:
        changes.update(select=validate_selectors(o.select, "--select"), extend_select=(), ignore=())
    if o.extend_select:
        base = changes.get("extend_select", settings.extend_select)
        changes["extend_select"] = base + validate_selectors(o.extend_select, "--extend-select")
    if o.ignore:
        base = changes.get("ignore", settings.ignore)
        changes["ignore"] = base + validate_selectors(o.ignore, "--ignore")
    if o.unsafe_fixes is not None:
        changes["unsafe_fixes"] = o.unsafe_fixes
    if o.preview is not None:
        changes["preview"] = o.preview
    if o.force_exclude is not None:
        changes["force_exclude"] = o.force_exclude
    if o.cache_dir is not None:
        changes["cache_dir"] = Path(o.cache_dir).resolve()
    return replace(settings, **changes) if changes else settings


# key -> (Settings field, kind)
_KEYS: dict[str, tuple[str, str]] = {
    "select": ("select", "selectors"),
    "extend-select": ("extend_select", "selectors"),
    "ignore": ("ignore", "selectors"),
    "exclude": ("exclude", "globs"),
    "extend-exclude": ("extend_exclude", "globs"),
    "per-file-ignores": ("per_file_ignores", "per-file-ignores"),
    "unsafe-fixes": ("unsafe_fixes", "bool"),
    "preview": ("preview", "bool"),
    "respect-gitignore": ("respect_gitignore", "bool"),
    "force-exclude": ("force_exclude", "bool"),
    "cache-dir": ("cache_dir", "path"),
    "runtime": ("runtime_models", "runtime"),
    "rule-url": ("rule_url", "url"),
}


RUNTIME_EDITOR_MODES = ("off", "on-save")


def runtime_editor_mode(value: Any, where: str) -> str:
    """`editor = "on-save" | "off"`: whether the language server runs runtime checks (also
    set through the server's initializationOptions, hence shared)."""
    if value not in RUNTIME_EDITOR_MODES:
        choices = " or ".join(f'"{m}"' for m in RUNTIME_EDITOR_MODES)
        raise ConfigError(f"{where}: expected {choices}, got {quoted(value)}")
    return value


def _rule_url(value: Any, loc: Where, key: str) -> str:
    """`rule-url = "https://example.org/rules/{code}"`: a URL with `{code}` and/or `{name}`."""
    if not isinstance(value, str) or not re.match(r"^(https?|file)://\S+$", value):
        raise ConfigError(loc.key(key, f"expected an http(s) or file URL, got {quoted(value)}"))
    unknown = set(re.findall(r"\{([^}]*)\}", value)) - {"code", "name"}
    if unknown:
        raise ConfigError(
            loc.key(key, f"unknown placeholder {quoted('{' + sorted(unknown)[0] + '}')} (use {{code}} or {{name}})")
        )
    if "{code}" not in value and "{name}" not in value:
        raise ConfigError(loc.key(key, "the URL must contain {code} or {name}, or every rule links to the same page"))
    return value


def _runtime_table(value: Any, loc: Where) -> dict[str, Any]:
    """`[tool.qlint.runtime] models = ["pkg.mod:factory"]`: opt-in user models for the runtime
    checker's capture checks (`qlint check --runtime` then imports and runs that code);
    `editor = "on-save"`: runtime verdicts in the language server."""
    if not isinstance(value, dict):
        raise ConfigError(loc(f"expected a table, got {quoted(value)}"))
    for key in value:
        if key not in ("models", "editor"):
            raise ConfigError(loc(f"unknown key {quoted(key)}{suggestion(key, ['models', 'editor'])}"))
    fields: dict[str, Any] = {}
    if "editor" in value:
        fields["runtime_editor"] = runtime_editor_mode(value["editor"], loc.key("editor"))
    models = _str_list(value.get("models", []), loc, "models")
    for spec in models:
        module, sep, attr = spec.partition(":")
        if not (sep and all(p.isidentifier() for p in module.split(".")) and attr.isidentifier()):
            raise ConfigError(loc.key("models", f'expected "package.module:factory", got {quoted(spec)}'))
    fields["runtime_models"] = tuple(models)
    return fields


def _parse(path: Path, data: bytes) -> dict[str, Any]:
    # Imported here: most runs find no qlint table and parse nothing, and tomllib (with the
    # datetime and string it imports) costs every start a few milliseconds.
    if sys.version_info >= (3, 11):
        import tomllib
    else:  # pragma: no cover - Python 3.10 needs the backport
        import tomli as tomllib
    try:
        return tomllib.loads(data.decode("utf-8"))
    except UnicodeDecodeError as exc:
        raise ConfigError(f"{shown(path)}: not valid UTF-8: {exc.reason}") from None
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"{shown(path)}: invalid TOML: {exc}") from None


def _str_list(value: Any, loc: Where, key: str) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(loc.key(key, f"expected a list of strings, got {quoted(value)}"))
    return value


def _per_file_ignores(value: Any, loc: Where, key: str) -> tuple[tuple[str, tuple[str, ...]], ...]:
    if not isinstance(value, dict):
        raise ConfigError(loc.key(key, f"expected a table of glob = [codes], got {quoted(value)}"))
    sub = loc.sub(key)
    return tuple(
        (glob, validate_selectors(_str_list(codes, sub, glob), sub.key(glob))) for glob, codes in value.items()
    )
