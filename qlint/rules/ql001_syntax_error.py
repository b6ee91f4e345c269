"""QL001: the engine reports files it cannot read or parse instead of stopping the run."""

from qlint.rules.base import EngineReport, Rule, Severity


class SyntaxErrorRule(Rule):
    code = "QL001"
    name = "syntax-error"
    summary = "File cannot be decoded or parsed"
    severity = Severity.ERROR
    # Reported by the engine itself whenever it parses a file; it has nothing to check.
    engine_report = EngineReport.PARSE_ERROR

    def check(self, ctx):
        return iter(())
