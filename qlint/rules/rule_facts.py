"""What the engine knows about a built-in rule before importing its module.

Hand-written: the generated `qlint/rules/manifest.py` holds only the data (one `RuleFacts`
per rule), so a change to this shape is reviewed here, not in a generator's template.
"""

from __future__ import annotations

from typing import NamedTuple


class RuleFacts(NamedTuple):
    code: str
    name: str
    preview: bool
    engine_report: str | None  # an `EngineReport` member's name
    # The rule's `triggers`: a file with none of them cannot hold a finding.
    triggers: tuple[str, ...]
    # The rule's `import_trigger` ("module:function"): asked of a file without the triggers,
    # whose finding may come through what it imports from the project.
    import_trigger: str | None = None
    # The rule's `text_trigger` ("module:function"): what its `triggered_by` answers, for its
    # default options, asked of a file that holds a trigger before the rule's module is imported.
    text_trigger: str | None = None
    # The rule's `skipped_modules`: prefixes of the dotted names of modules it never checks,
    # read before its import trigger is asked (which would be asked for nothing there).
    skipped_modules: tuple[str, ...] = ()
    # The rule's `identifier_triggers`: its triggers are asked of the text in NFKC.
    identifier_triggers: bool = False
