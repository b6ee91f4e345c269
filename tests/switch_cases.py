"""What the mode-switch tests of QL201-QL203 share (`test_ql201_reflective_switches`,
`test_ql201_carried_switches`): one module per case in a package, each checked by a tree run,
by `check FILE` and from standard input, each to give the findings torch's own run decides."""

from __future__ import annotations

import os
from pathlib import Path

from tests.conftest import check_file, json_findings

SELECT = ("QL201", "QL202", "QL203")


def graph_cases(template: str, raises: dict[str, str], raises_nothing: dict[str, str]) -> dict:
    """Module name -> (source, findings): `template` with each switch on an exported graph,
    QL203 at the switch's row for those that raise on the graph, none for the others."""
    out = {}
    for cases, loud in ((raises, True), (raises_nothing, False)):
        for name, switch in cases.items():
            src = template.format(switch=switch)
            row = src.splitlines().index(f"    {switch}") + 1
            out[f"graph_{name}".replace("-", "_")] = (src, [("QL203", row)] if loud else [])
    return out


def capture_cases(template: str, capture: str, tables, field: str = "cls") -> dict:
    """Module name -> (source, findings): `template` with each case's model (its `field`) and
    switch, before a PTQ and a QAT capture (the line `capture`). `tables`: (cases, evaled),
    cases mapping a name to (model, switch); evaled True (eval mode at the capture: QL202 on the
    QAT one), False (train mode: QL201 on the PTQ one), None (not known: neither) or "both"."""
    out = {}
    for cases, evaled in tables:
        for name, (model, switch) in cases.items():
            for prep in ("pt2e", "qat_pt2e"):
                indented = "\n".join("    " + line for line in switch.splitlines())
                src = template.format(**{field: model}, switch=indented, prep=prep)
                row = src.splitlines().index(capture) + 1
                loud = evaled == "both" or (evaled is not None and (prep == "qat_pt2e") == evaled)
                code = "QL202" if prep == "qat_pt2e" else "QL201"
                out[f"{prep}_{name}".replace("-", "_")] = (src, [(code, row)] if loud else [])
    return out


def tree_findings(repo: Path, names) -> dict[str, list[tuple[str, int]]]:
    """(code, row) of each module's findings in one tree run of the package."""
    found: dict[str, list[tuple[str, int]]] = {name: [] for name in names}
    for d in json_findings(repo, "--select", ",".join(SELECT), "--no-cache", "pkg"):
        found[Path(d["filename"]).stem].append((d["code"], d["location"]["row"]))
    return found


def file_findings(repo: Path, name: str) -> list[tuple[str, int]]:
    """(code, row) of `qlint check FILE` on the module, in order."""
    return sorted((d.code, d.range.start.row) for d in check_file(repo / "pkg" / f"{name}.py", SELECT).diagnostics)


def stdin_findings(repo: Path, name: str, source: str) -> list[tuple[str, int]]:
    """(code, row) of the module's source checked from standard input under its path, in order."""
    path = os.path.join("pkg", f"{name}.py")
    found = json_findings(repo, "--select", ",".join(SELECT), "--no-cache", "--stdin-filename", path, "-", stdin=source)
    return sorted((d["code"], d["location"]["row"]) for d in found)
