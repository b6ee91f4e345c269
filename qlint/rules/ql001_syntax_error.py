"""QL001: the engine reports files it cannot read or parse instead of stopping the run."""

from qlint.rules.base import Rule


class SyntaxErrorRule(Rule):
    code = "QL001"
    name = "syntax-error"
    summary = "File cannot be decoded or parsed"
    # Reported by the engine itself whenever it parses a file; it has nothing to check.
    triggers = ("\0never\0",)

    def check(self, ctx):
        return iter(())
