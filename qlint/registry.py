"""The rule registry: qlint's own rules and those of installed plugins, loaded once.

Settings, config, the CLI, the reporters, the language server and the runtime client ask
this module about rules; none of them imports a rule module. A plugin is any installed
distribution with an entry point in the `qlint.rules` group that names a `Rule` subclass
(or a list or tuple of them):

    [project.entry-points."qlint.rules"]
    print-in-pass = "acme_qlint.print_in_pass:PrintInGraphPass"

Plugins are loaded lazily, the first time anything asks for the rules, and once per
process. qlint's own rule modules are imported one by one when needed: what the engine must
know beforehand (codes, names, preview, triggers) is in `qlint.rules.manifest`, so checking
a file imports only the rules whose triggers it holds (`facts`, `rule_class`,
`DeferredRule`); `rules()` still imports them all for whoever wants every class.

A plugin that cannot be imported or declares a malformed rule, and two rules that claim
one code or name (two plugins, or a plugin and a built-in rule), stop qlint at start-up with
a `RegistryError` naming the packages involved: guessing which rule wins would make a CI
job's result depend on install order. Plugins are found and loaded by `rule_plugins`; what a
rule must declare, and where it comes from, is `rule_origins`'.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from qlint.analysis.identifier_text import normalised
from qlint.analysis.text_needles import holds_any
from qlint.rule_origins import BUILTIN_ORIGIN, Origin, RegistryError, add_rule, described, validate
from qlint.rule_plugins import ENTRY_POINT_GROUP, may_declare, origin_of, plugin_entry_points, plugin_rules
from qlint.rules.base import EngineReport, Rule, Severity, imported_trigger, skips_by_name
from qlint.rules.builtin import BUILTIN
from qlint.rules.manifest import MANIFEST
from qlint.rules.rule_facts import RuleFacts

if TYPE_CHECKING:
    pass


class Registry:
    """Code -> rule class, with each rule's origin. `rules()` returns the same dict every
    time (tests add rules to it with `monkeypatch.setitem`)."""

    def __init__(self, builtin: Iterable[str] = BUILTIN, group: str | None = ENTRY_POINT_GROUP):
        self._builtin = tuple(builtin)
        self._group = group
        self._rules: dict[str, type[Rule]] | None = None
        self._origins: dict[str, Origin] = {}
        self._loaded: dict[str, type[Rule]] = {}  # built-in classes imported one by one
        self._manifest: dict[str, tuple[str, RuleFacts]] | None = None
        self._engine_rules: dict[EngineReport, type[Rule]] = {}  # only while the manifest answers

    def _by_manifest(self) -> dict[str, tuple[str, RuleFacts]] | None:
        """Code -> (spec, facts) of the built-in rules, when no plugin is installed and every
        built-in rule is in the manifest; None: the classes have to be imported to know."""
        if self._rules is not None:
            return None
        if self._manifest is None:
            plugins = self._group is not None and may_declare(self._group)
            if plugins or not all(spec in MANIFEST for spec in self._builtin):
                self.rules()  # a broken or conflicting plugin is reported here, at start-up
                return None
            self._manifest = {MANIFEST[spec].code: (spec, MANIFEST[spec]) for spec in self._builtin}
        return self._manifest

    def facts(self) -> dict[str, RuleFacts]:
        """Code -> what the engine needs to know before running a rule, for every rule."""
        manifest = self._by_manifest()
        if manifest is not None:
            return {code: facts for code, (_, facts) in manifest.items()}
        return {code: _facts_of(cls) for code, cls in self.rules().items()}

    def rule_class(self, code: str) -> type[Rule] | None:
        """One rule's class, importing only its module when the others are not loaded yet."""
        manifest = self._by_manifest()
        if manifest is None:
            return self.rules().get(code)
        if code not in self._loaded:
            if code not in manifest:
                return None
            module, _, attr = manifest[code][0].partition(":")
            cls = getattr(importlib.import_module(module), attr)
            validate(cls, BUILTIN_ORIGIN)
            if _facts_of(cls) != manifest[code][1]:
                raise RegistryError(
                    f"rule {described(cls, BUILTIN_ORIGIN)} does not match qlint/rules/manifest.py: "
                    "run scripts/generate_rule_manifest.py"
                )
            self._loaded[code] = cls
        return self._loaded[code]

    def rules(self) -> dict[str, type[Rule]]:
        if self._rules is None:
            rules: dict[str, type[Rule]] = {}
            origins: dict[str, Origin] = {}
            for spec in self._builtin:
                module, _, attr = spec.partition(":")
                add_rule(rules, origins, getattr(importlib.import_module(module), attr), BUILTIN_ORIGIN)
            if self._group is not None:
                for entry_point in plugin_entry_points(self._group):
                    origin = origin_of(entry_point)
                    for cls in plugin_rules(entry_point, origin):
                        add_rule(rules, origins, cls, origin)
            self._rules, self._origins = rules, origins
        return self._rules

    def origin(self, code: str) -> Origin:
        """The rule's package; qlint's own for codes the registry did not load (a rule a
        test added to the table)."""
        if self._by_manifest() is not None:
            return BUILTIN_ORIGIN  # no plugin is installed
        return self._origins.get(code, BUILTIN_ORIGIN)

    def lookup(self, code_or_name: str) -> type[Rule] | None:
        """A rule by code (any case) or by kebab name."""
        found = self.rule_class(code_or_name.strip().upper())
        if found is not None:
            return found
        wanted = code_or_name.strip().lower()
        code = next((code for code, facts in self.facts().items() if facts.name == wanted), None)
        return self.rule_class(code) if code is not None else None

    def engine_rule(self, report: EngineReport) -> type[Rule]:
        """The rule whose findings the engine makes itself (the parse-error rule, ...).
        Asked twice per file checked: remembered while the manifest (which cannot change
        within a process) answers, so a run does not rebuild the facts per file."""
        known = self._engine_rules.get(report)
        if known is not None and self._by_manifest() is not None:
            return known
        code = next(code for code, facts in self.facts().items() if facts.engine_report == report.name)
        cls = self.rule_class(code)
        assert cls is not None
        if self._by_manifest() is not None:
            self._engine_rules[report] = cls
        return cls

    def url(self, code: str, default: str) -> str | None:
        """A rule's documentation URL: `default` (`Diagnostic.url`) for qlint's own rules, the
        rule's `url` for a plugin's (None when it publishes none: not a link into qlint's repo)."""
        cls = self.rule_class(code)
        if cls is None or self.origin(code).builtin:
            return cls.url if cls is not None and cls.url else default
        return cls.url

    def severity(self, code: str) -> Severity:
        cls = self.rule_class(code)
        return Severity(cls.severity) if cls is not None else Severity.WARNING


def _facts_of(cls: type[Rule]) -> RuleFacts:
    report = cls.engine_report.name if cls.engine_report is not None else None
    return RuleFacts(
        cls.code,
        cls.name,
        bool(cls.preview),
        report,
        tuple(cls.triggers),
        cls.import_trigger,
        cls.text_trigger,
        tuple(cls.skipped_modules),
        bool(cls.identifier_triggers),
    )


class DeferredRule:
    """A rule as the engine runs it, whose module is imported only when a file holds one of
    its triggers (or anything else about it is asked). Every answer is the rule's own: the
    triggers are only the necessary condition its `triggered_by` refines."""

    def __init__(self, facts: RuleFacts, options: dict[str, Any], registry: Registry | None = None):
        self.code = facts.code
        self.name = facts.name
        self.triggers = facts.triggers
        self.import_trigger = facts.import_trigger
        self.text_trigger = facts.text_trigger
        self.skipped_modules = facts.skipped_modules
        self.identifier_triggers = facts.identifier_triggers
        self.preview = facts.preview
        self.engine_report = EngineReport[facts.engine_report] if facts.engine_report else None
        self._options = options
        self._registry = registry or _REGISTRY
        self._rule: Rule | None = None

    @property
    def rule(self) -> Rule:
        if self._rule is None:
            cls = self._registry.rule_class(self.code)
            if cls is None:
                raise RegistryError(f"rule {self.code} is no longer registered")
            self._rule = cls(self._options)
        return self._rule

    def triggered_by(self, text: str) -> bool:
        if self.identifier_triggers:
            text = normalised(text)  # each step of the rule's triggers reads identifiers so (NFKC)
        # `holds_any`: the import triggers asked next search the same needles again.
        if self.triggers and not holds_any(text, self.triggers):
            return False
        if self._rule is None and self.text_trigger and not self._options:
            return imported_trigger(self.text_trigger)(text)  # the rule's own answer (`Rule.text_trigger`)
        return self.rule.triggered_by(text)

    def triggered_through_imports(self, text: str, path: str, project: Any) -> bool:
        # Asked of most files: the trigger's module is imported, not the rule's. It answers for
        # the rule's default options; a rule given options answers itself (QL101's sinks).
        if self.identifier_triggers:
            text = normalised(text)  # `import pkg.graph_utils as gu` in fullwidth binds `gu`
        if self._rule is None and self.import_trigger and not self._options:
            return imported_trigger(self.import_trigger)(text, path, project)
        return self.rule.triggered_through_imports(text, path, project)

    def skips_module(self, module: str | None) -> bool:
        # In its `skipped_modules` the rule's own answer is True: its module is not imported for it.
        return skips_by_name(self.skipped_modules, module) or self.rule.skips_module(module)

    def check(self, ctx: Any) -> Any:
        return self.rule.check(ctx)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("__") or name in ("_rule", "_registry", "_options"):
            raise AttributeError(name)
        return getattr(self.rule, name)


_REGISTRY = Registry()


def rules() -> dict[str, type[Rule]]:
    """Every rule, built-in and plugin, by code (loaded on first use)."""
    return _REGISTRY.rules()


def facts() -> dict[str, RuleFacts]:
    """Code -> facts of every rule; imports no built-in rule module when no plugin is installed."""
    return _REGISTRY.facts()


def rule_class(code: str) -> type[Rule] | None:
    return _REGISTRY.rule_class(code)


def deferred(code: str, options: dict[str, Any]) -> Rule:
    """An instance of rule `code` for the engine: imported when first needed."""
    return DeferredRule(_REGISTRY.facts()[code], options)  # type: ignore[return-value]


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
