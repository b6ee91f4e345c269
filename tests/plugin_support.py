"""Installed-looking plugin distributions without pip: a module plus a `.dist-info` directory
with `METADATA` and `entry_points.txt`, which is all `importlib.metadata` reads. Put the
directory on `sys.path` (or PYTHONPATH for a subprocess) and qlint's registry finds it."""

from __future__ import annotations

import textwrap
from pathlib import Path


def write_plugin(
    directory: Path,
    package: str,
    module: str,
    source: str,
    entry_points: dict[str, str],
    version: str = "0.1",
) -> Path:
    """`entry_points`: entry-point name -> `module:attr`, in the `qlint.rules` group."""
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{module}.py").write_text(textwrap.dedent(source))
    info = directory / f"{package.replace('-', '_')}-{version}.dist-info"
    info.mkdir()
    (info / "METADATA").write_text(f"Metadata-Version: 2.1\nName: {package}\nVersion: {version}\n")
    lines = "".join(f"{name} = {target}\n" for name, target in entry_points.items())
    (info / "entry_points.txt").write_text(f"[qlint.rules]\n{lines}")
    return directory


RULE_TEMPLATE = """
from qlint.rules.base import Rule, Severity


class {cls}(Rule):
    code = "{code}"
    name = "{name}"
    summary = "{summary}"
    severity = Severity.{severity}
    triggers = ("{trigger}",)

    def check(self, ctx):
        import ast

        for node in ast.walk(ctx.tree):
            if isinstance(node, ast.Name) and node.id == "{trigger}":
                {body}
"""


def rule_source(
    cls: str = "Shout",
    code: str = "ACME101",
    name: str = "shout",
    summary: str = "a name nobody should use",
    severity: str = "INFO",
    trigger: str = "SHOUT",
    crash: bool = False,
) -> str:
    body = 'raise RuntimeError("plugin bug")' if crash else 'yield ctx.diagnostic(self, node, "do not shout")'
    return RULE_TEMPLATE.format(
        cls=cls, code=code, name=name, summary=summary, severity=severity, trigger=trigger, body=body
    )
