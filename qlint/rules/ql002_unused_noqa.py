"""QL002: a `# noqa: QL...` that suppresses nothing hides the next real finding on that line."""

from qlint.rules.base import EngineReport, FixAvailability, Rule


class UnusedNoqa(Rule):
    code = "QL002"
    name = "unused-noqa"
    summary = "Unused `noqa` directive for a qlint code"
    fix_availability = FixAvailability.ALWAYS
    unnecessary = True
    # Computed by the engine from the other rules' results (see qlint.suppressions).
    engine_report = EngineReport.UNUSED_NOQA

    def check(self, ctx):
        return iter(())
