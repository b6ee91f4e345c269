"""What a rule is: a small class that carries its own facts and a `check`.

The class is the one source of truth for everything other parts of qlint say about a
rule (code, name, summary, severity, fix availability, whether the engine reports it,
its page, its runtime check, preview or stable): `qlint.registry` serves those facts to
settings, config, the CLI, the reporters, the language server and the runtime client.

Rules see one parsed file at a time through `FileContext`; anything that needs other
files goes through `ctx.project`, which records what it read so the cache can tell
when a finding depends on another file.
"""

from __future__ import annotations

import enum
import functools
import importlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar

from qlint.analysis.text_needles import holds_any

if TYPE_CHECKING:
    from qlint.analysis.context import FileContext
    from qlint.diagnostic import Diagnostic
    from qlint.evidence import Evidence


class Severity(str, enum.Enum):
    """How bad a finding is; every output maps it to its own levels (LSP, SARIF, ...)."""

    ERROR = "error"
    WARNING = "warning"
    INFO = "info"
    HINT = "hint"


class FixAvailability(str, enum.Enum):
    """Whether the rule's findings come with a fix: what `qlint rules` and the page say."""

    ALWAYS = "always"
    SOMETIMES = "sometimes"
    NONE = "none"


class EngineReport(str, enum.Enum):
    """Findings the engine itself makes, for a rule that has nothing to `check`."""

    PARSE_ERROR = "parse-error"  # a file that cannot be decoded or parsed
    UNUSED_NOQA = "unused-noqa"  # a suppression that suppressed nothing


class Rule:
    code: ClassVar[str]
    name: ClassVar[str]
    summary: ClassVar[str]
    severity: ClassVar[Severity] = Severity.WARNING
    fix_availability: ClassVar[FixAvailability] = FixAvailability.NONE
    # Set for rules whose findings the engine makes (QL001, QL002): they never run `check`.
    engine_report: ClassVar[EngineReport | None] = None
    # Findings that mark text which can simply go: editors grey it out.
    unnecessary: ClassVar[bool] = False
    # Preview rules run only with `--preview` / `preview = true`.
    preview: ClassVar[bool] = False
    # The rule's Markdown page, relative to the directory of the module defining the class
    # (None: `rule_pages/<code>.md` beside qlint's own rules, mirrored from `rules/`).
    page: ClassVar[str | None] = None
    # Where a plugin publishes its page on the web (qlint's own rules link to the repository).
    url: ClassVar[str | None] = None
    # The worker-side module whose `run(params)` confirms a finding (imported only in the
    # runtime worker), and whether that check may run the user's opt-in model factories.
    runtime_check: ClassVar[str | None] = None
    runtime_models: ClassVar[bool] = False
    # The type of the evidence its findings carry for that check (qlint.evidence).
    evidence_type: ClassVar[type[Evidence] | None] = None
    # A file that contains none of these substrings cannot hold a finding and is not parsed.
    triggers: ClassVar[tuple[str, ...]] = ()
    # "module:function" `(text, path, project) -> bool`, asked of a file without the triggers
    # whose finding may still come through what it imports from other modules of the project
    # (the project index every check reads them through; what it reads is recorded as a
    # dependency of the file's check). Named, not defined here: the engine asks it without
    # importing the rule.
    import_trigger: ClassVar[str | None] = None
    # "module:function" `(text) -> bool` of a module lighter than the rule's: what the rule's
    # `triggered_by` answers with its default options (the rule asks the same function). Named
    # so the engine can ask it first: a file holding a trigger that this turns away (QL401's
    # `torch.ao` in eager quantization code) then never imports the rule and its analysis.
    text_trigger: ClassVar[str | None] = None
    # Dotted-name prefixes (`"torch._inductor."`) of the modules where the rule has nothing to
    # say, whatever they hold (`skips_module`). Data, not only a method: the engine skips the
    # rule's import trigger in those modules without importing the rule (QL102's search for
    # wrappers cost ~0.6 s of a cold run over torch, in the compiler modules it then skipped).
    skipped_modules: ClassVar[tuple[str, ...]] = ()
    # The triggers are identifiers, and the text triggers read identifiers: both are asked
    # of the text as Python reads them (NFKC, `identifier_text`), where `graph.call_function`
    # in fullwidth letters calls `call_function` (QL101, QL102). The triggers of other rules read the raw text.
    identifier_triggers: ClassVar[bool] = False
    # Option name -> default value. Config validates types against the defaults and,
    # where given, against `option_choices`.
    options: ClassVar[dict[str, Any]] = {}
    option_choices: ClassVar[dict[str, tuple[Any, ...]]] = {}
    # Option name -> (regex every string value must fully match, the form in words), so a
    # malformed value is a config error naming key and file instead of silently doing nothing.
    option_patterns: ClassVar[dict[str, tuple[str, str]]] = {}

    def __init__(self, options: dict[str, Any] | None = None):
        self.opts = {**self.options, **(options or {})}

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        raise NotImplementedError

    def triggered_by(self, text: str) -> bool:
        """Asked of the text as the registry reads it (`identifier_triggers`: NFKC)."""
        return not self.triggers or holds_any(text, self.triggers)  # the registry asked them already

    def triggered_through_imports(self, text: str, path: str, project: Any) -> bool:
        """For a file `triggered_by` turned away: what `import_trigger` says (asked as
        `triggered_by` is)."""
        return imported_trigger(self.import_trigger)(text, path, project) if self.import_trigger else False

    def skips_module(self, module: str | None) -> bool:
        """True when the rule can have nothing to say in this module whatever it holds,
        decided before parsing (the largest files are often exactly those). An override
        answers True at least in `skipped_modules`, which the engine reads without asking."""
        return skips_by_name(self.skipped_modules, module)

    @classmethod
    def page_path(cls) -> Path | None:
        """Where the rule's page is: `page` beside the defining module, else qlint's own
        page for the code (the repository's `rules/` in a checkout, package data otherwise)."""
        module_file = getattr(sys.modules.get(cls.__module__), "__file__", None)
        if cls.page is not None:
            return Path(module_file).parent / cls.page if module_file else None
        package = Path(__file__).resolve().parent.parent
        for directory in (package.parent / "rules", package / "rule_pages"):
            candidate = directory / f"{cls.code}.md"
            if candidate.is_file():
                return candidate
        return None


__all__ = ["FileContext", "Rule"]


def __getattr__(name: str) -> Any:
    # FileContext lives in the analysis layer (analysis helpers take it too); rules import it
    # here. On first use: the registry imports this module for the rule facts on every run,
    # and a run the cache answers needs no analysis.
    if name == "FileContext":
        from qlint.analysis.context import FileContext

        return FileContext
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def skips_by_name(prefixes: tuple[str, ...], module: str | None) -> bool:
    """Whether `module` is one of the modules `prefixes` (a rule's `skipped_modules`) name."""
    return bool(prefixes) and bool(module) and module.startswith(prefixes)


@functools.cache
def imported_trigger(spec: str) -> Callable[..., bool]:
    """The function an `import_trigger` or a `text_trigger` names."""
    module, _, name = spec.partition(":")
    return getattr(importlib.import_module(module), name)
