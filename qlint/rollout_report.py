"""Per-repository summaries of a rollout: a text table, JSON, and Markdown for a pull request.

The JSON (`--summary-json FILE`) is one object, `{"mode", "repositories": [...], "totals"}`;
each repository has `name, root, config, git, files_checked, findings{code: n}` (before
fixing, in `fix` mode), `fixed{code: n}` and `fixed_total`, `remaining{code: n}`,
`fixable_remaining`, `files_changed[]`, `runtime{code: {verdict: n}}` (when `--runtime` or
`--verify` ran), `baseline{hidden, stale[]}`, `errors[]`, `seconds`, `patch`. Rule links in
Markdown come from `Diagnostic.url` (via `qlint.reporters.rule_url`), never built here.
"""

from __future__ import annotations

from collections import Counter

from qlint import __version__
from qlint.registry import rule_class
from qlint.reporters import rule_url
from qlint.rollout import RepoOutcome, Rollout


def summary(o: RepoOutcome, unsafe: bool) -> dict:
    remaining = Counter(d.code for d in o.diagnostics)
    findings = o.before if o.before is not None else remaining + Counter()
    fixed = {c: n - remaining.get(c, 0) for c, n in findings.items() if n > remaining.get(c, 0)}
    runtime: dict[str, Counter] = {}
    for d in o.diagnostics:
        if d.runtime is not None:
            runtime.setdefault(d.code, Counter())[d.runtime.verdict] += 1
    return {
        "name": o.repo.name,
        "root": str(o.repo.root),
        "config": str(o.repo.settings.config_path) if o.repo.settings.config_path else None,
        "git": o.repo.is_git,
        "files_checked": len(o.files),
        "findings": dict(sorted(findings.items())),
        "fixed": dict(sorted(fixed.items())),
        "fixed_total": o.fixed,
        "remaining": dict(sorted(remaining.items())),
        "fixable_remaining": sum(1 for d in o.diagnostics if d.fix is not None and d.fix.applies(unsafe)),
        "files_changed": sorted(c.path for c in o.changes),
        "runtime": {c: dict(sorted(v.items())) for c, v in sorted(runtime.items())},
        "baseline": {"hidden": o.baseline_hidden, "stale": list(o.baseline_stale)},
        "errors": list(o.errors),
        "seconds": round(o.seconds, 3),
        "patch": o.patch_file,
    }


def to_json(rollout: Rollout, unsafe: bool) -> str:
    repos = [summary(o, unsafe) for o in rollout.outcomes]
    totals = {
        "repositories": len(repos),
        "files_checked": sum(r["files_checked"] for r in repos),
        "findings": sum(sum(r["findings"].values()) for r in repos),
        "fixed": sum(r["fixed_total"] for r in repos),
        "remaining": sum(sum(r["remaining"].values()) for r in repos),
        "files_changed": sum(len(r["files_changed"]) for r in repos),
    }
    import json  # for this report alone: a run's start-up never needs it (`plain_json`)

    return json.dumps({"mode": rollout.mode, "repositories": repos, "totals": totals}, indent=2) + "\n"


def _first_sentence(message: str) -> str:
    """A pull-request description lists findings; the rule page linked next to it explains."""
    first = message.splitlines()[0] if message else ""
    head, sep, _ = first.partition(". ")
    return head + "." if sep else first


def _codes(counts: dict[str, int]) -> str:
    return ", ".join(f"{c} x{n}" for c, n in counts.items()) or "-"


def text(rollout: Rollout, unsafe: bool) -> str:
    rows = [summary(o, unsafe) for o in rollout.outcomes]
    fix = rollout.mode == "fix"
    # In `check` mode nothing was fixed: the findings are what remains, one column says it.
    header = ["repository", "files", "findings", *(["fixed", "changed", "remaining"] if fix else []), "seconds"]
    table = [header]
    for r in rows:
        cells = [r["name"], str(r["files_checked"]), str(sum(r["findings"].values()))]
        if fix:
            cells += [str(r["fixed_total"]), str(len(r["files_changed"])), str(sum(r["remaining"].values()))]
        cells.append(f"{r['seconds']:.1f}")
        table.append(cells)
    widths = [max(len(row[i]) for row in table) for i in range(len(header))]
    lines = ["", "Per repository:"]
    for row in table:
        cells = (c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(row, widths, strict=True)))
        lines.append("  " + "  ".join(cells))
    for r in rows:
        detail = [f"findings {_codes(r['findings'])}"]
        if fix:
            detail.append(f"fixed {_codes(r['fixed'])}")
            detail.append(f"remaining {_codes(r['remaining'])}")
        if r["runtime"]:
            verdicts = "; ".join(
                f"{c} " + ", ".join(f"{v} {n}" for v, n in vs.items()) for c, vs in r["runtime"].items()
            )
            detail.append(f"runtime {verdicts}")
        if r["baseline"]["hidden"] or r["baseline"]["stale"]:
            detail.append(f"baseline hid {r['baseline']['hidden']}, {len(r['baseline']['stale'])} stale")
        if r["errors"]:
            detail.append(f"{len(r['errors'])} error(s)")
        if r["patch"]:
            detail.append(f"patch {r['patch']}")
        lines.append(f"  {r['name']}: " + "; ".join(detail))
    return "\n".join(lines) + "\n"


def markdown(o: RepoOutcome, rollout: Rollout, unsafe: bool) -> str:
    """A pull-request description for one repository."""
    r = summary(o, unsafe)
    fix = rollout.mode == "fix"
    fixed_total = sum(r["fixed"].values())
    title = (
        f"Fix {fixed_total} PT2E quantization issue{'s' if fixed_total != 1 else ''} found by qlint"
        if fix
        else f"qlint: {sum(r['findings'].values())} PT2E quantization finding(s)"
    )
    out = [f"## {title}", ""]
    if fix:
        out.append(
            f"`qlint fix` changed {len(r['files_changed'])} file(s) in `{r['name']}` "
            f"({r['files_checked']} Python files checked). Each change is a minimal edit at the finding; "
            "the fixed files re-parse."
        )
    else:
        out.append(f"`qlint check` over `{r['name']}` ({r['files_checked']} Python files).")
    out += ["", "| rule | what it finds | found | fixed | remaining |", "|---|---|---:|---:|---:|"]
    codes = sorted(set(r["findings"]) | set(r["remaining"]))
    for code in codes:
        rule = rule_class(code)
        name = rule.name if rule else code
        what = rule.summary if rule else ""
        out.append(
            f"| [{code} {name}]({rule_url(code)}) | {what} | {r['findings'].get(code, 0)} | "
            f"{r['fixed'].get(code, 0)} | {r['remaining'].get(code, 0)} |"
        )
    if not codes:
        out.append("| - | no findings | 0 | 0 | 0 |")
    if r["files_changed"]:
        out += ["", "### Files changed", ""] + [f"- `{p}`" for p in r["files_changed"]]
    left = sorted(o.diagnostics, key=lambda d: d.sort_key())
    if left:
        out += ["", "### Left for a human", ""]
        for d in left[:50]:
            where = f"{o.repo.relative(d.path)}:{d.range.start.row}"
            out.append(f"- `{where}` [{d.code}]({d.url}): {_first_sentence(d.message)}")
        if len(left) > 50:
            out.append(f"- … and {len(left) - 50} more")
    if r["runtime"]:
        out += ["", "### Runtime verdicts (torch.export → prepare_pt2e → convert_pt2e)", ""]
        for code, verdicts in r["runtime"].items():
            out.append(f"- {code}: " + ", ".join(f"{v} {n}" for v, n in verdicts.items()))
    if r["baseline"]["stale"]:
        out += ["", f"Baseline: {len(r['baseline']['stale'])} recorded finding(s) no longer found."]
    out += ["", f"_Generated by qlint {__version__}; re-run `qlint check` to see what is left._", ""]
    return "\n".join(out)


def write_patches(rollout: Rollout, directory: str) -> list[str]:
    """`<repo>.patch` per repository with changes; returns one message line per repository."""
    from pathlib import Path

    from qlint.patches import patch_bytes

    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    notes = []
    for o in rollout.outcomes:
        path = target / f"{o.repo.name}.patch"
        if not o.changes:
            if path.exists():  # from an earlier run: applying it now would redo old changes
                path.unlink()
                notes.append(f"{o.repo.name}: nothing to patch (removed the earlier {path})")
            else:
                notes.append(f"{o.repo.name}: nothing to patch")
            continue
        path.write_bytes(patch_bytes(o.changes))
        o.patch_file = str(path)
        notes.append(f"{o.repo.name}: wrote {path} ({len(o.changes)} file{'s' if len(o.changes) != 1 else ''})")
    return notes


def write_markdown(rollout: Rollout, directory: str, unsafe: bool) -> None:
    from pathlib import Path

    target = Path(directory)
    target.mkdir(parents=True, exist_ok=True)
    for o in rollout.outcomes:
        (target / f"{o.repo.name}.md").write_text(markdown(o, rollout, unsafe), encoding="utf-8")


def diffs(rollout: Rollout) -> str:
    """`--diff` over several repositories: one git-style diff per repository, each after a
    header line naming it (`git apply` and `patch` skip such lines)."""
    from qlint.patches import patch_text

    out = []
    for o in rollout.outcomes:
        if o.changes:
            out.append(f"# repository {o.repo.name} ({o.repo.root})\n" + patch_text(o.changes))
    return "".join(out)
