"""Check that every import `qlint fix` writes for QL401 resolves on the installed packages.

Copies each tree into a temporary directory, applies QL401's fixes there (the originals are
never touched), collects every module and name the fixed files reference that the
originals did not, and imports each of them in a subprocess with the installed torch,
torchao and executorch. Prints counts; exits 1 if any rewritten name does not resolve.

    python scripts/verify_ql401_rewrites.py TREE [TREE ...] [--unsafe] [--json]
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from qlint.analysis.names.project import ProjectIndex  # noqa: E402
from qlint.engine import check_source  # noqa: E402
from qlint.fixes import fix_text  # noqa: E402
from qlint.settings import Settings  # noqa: E402
from qlint.source import DecodeError, decode_source  # noqa: E402

NEW_ROOTS = ("torchao.", "executorch.")

# Runs in the subprocess: resolve each reference, report the ones that fail.
_RESOLVER = r"""
import contextlib, importlib, io, json, logging, sys, warnings
logging.disable(logging.CRITICAL)
warnings.simplefilter("ignore")
refs = json.load(sys.stdin)
failed = {}
def resolve(module, attrs):
    obj = importlib.import_module(module)
    for a in attrs:
        obj = getattr(obj, a)
for ref in refs:
    parts = ref.split(":")
    module, attrs = parts[0], parts[1].split(".") if len(parts) > 1 and parts[1] else []
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            if not attrs and "." in module:
                # an attribute chain: import the longest importable prefix, getattr the rest
                bits = module.split(".")
                for cut in range(len(bits), 0, -1):
                    try:
                        importlib.import_module(".".join(bits[:cut]))
                        resolve(".".join(bits[:cut]), bits[cut:])
                        break
                    except ImportError:
                        if cut == 1:
                            raise
            else:
                resolve(module, attrs)
    except Exception as exc:
        failed[ref] = f"{type(exc).__name__}: {exc}"
json.dump(failed, sys.stdout)
"""


def references(tree: ast.Module) -> set[str]:
    """Imports (`module:name`, `module:`) and attribute chains into torchao/executorch."""
    out: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            if node.module.startswith(NEW_ROOTS):
                out.update(f"{node.module}:{a.name}" for a in node.names if a.name != "*")
        elif isinstance(node, ast.Import):
            out.update(f"{a.name}:" for a in node.names if a.name.startswith(NEW_ROOTS))
        elif isinstance(node, ast.Attribute):
            parts = []
            sub: ast.AST = node
            while isinstance(sub, ast.Attribute):
                parts.append(sub.attr)
                sub = sub.value
            if isinstance(sub, ast.Name) and sub.id in ("torchao", "executorch"):
                out.add(".".join([sub.id, *reversed(parts)]))
    return out


def fix_tree(src: Path, unsafe: bool) -> dict:
    settings = Settings(select=("QL401",), root=src)
    stats: Counter = Counter()
    new_refs: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory(prefix="ql401-") as tmp:
        copy = Path(tmp) / src.name
        shutil.copytree(src, copy, ignore=shutil.ignore_patterns("*.so", "*.pyc", "__pycache__", ".git"))
        project = ProjectIndex()
        for path in sorted(copy.rglob("*.py")):
            stats["files"] += 1
            try:
                text = decode_source(path.read_bytes())
            except (OSError, DecodeError):
                continue
            before = check_source(text, str(path), settings, project)
            found = [d for d in before.diagnostics if d.code == "QL401"]
            if not found:
                continue
            stats["files_with_findings"] += 1
            stats["findings"] += len(found)
            stats["fixable_safe"] += sum(1 for d in found if d.fixable and d.fix.applicability.value == "safe")
            stats["fixable_unsafe"] += sum(1 for d in found if d.fixable and d.fix.applicability.value == "unsafe")
            stats["display_only"] += sum(1 for d in found if not d.fixable)
            outcome = fix_text(text, str(path), settings, unsafe, project)
            if outcome.error:
                stats["fix_errors"] += 1
                print(f"fix error in {path.relative_to(copy)}: {outcome.error}", file=sys.stderr)
            stats["remaining"] += sum(1 for d in outcome.remaining.diagnostics if d.code == "QL401")
            if not outcome.changed:
                continue
            path.write_text(outcome.fixed, encoding="utf-8")
            stats["files_changed"] += 1
            added = references(ast.parse(outcome.fixed)) - references(ast.parse(text))
            for ref in added:
                new_refs.setdefault(ref, []).append(str(path.relative_to(copy)))
    return {"stats": dict(stats), "refs": new_refs}


def resolve_all(refs: list[str]) -> dict[str, str]:
    if not refs:
        return {}
    done = subprocess.run(
        [sys.executable, "-c", _RESOLVER],
        input=json.dumps(refs),
        capture_output=True,
        text=True,
        timeout=900,
        env={**os.environ, "PYTHONWARNINGS": "ignore"},
    )
    if done.returncode != 0:
        raise SystemExit(f"resolver crashed:\n{done.stderr[-3000:]}")
    return json.loads(done.stdout.strip().splitlines()[-1])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("trees", nargs="+", type=Path)
    parser.add_argument("--unsafe", action="store_true", help="apply unsafe fixes too")
    parser.add_argument("--json", action="store_true", help="print the full report as JSON")
    args = parser.parse_args(argv)
    report = {}
    all_refs: dict[str, list[str]] = {}
    for tree in args.trees:
        result = fix_tree(tree.resolve(), args.unsafe)
        report[str(tree)] = result["stats"]
        for ref, files in result["refs"].items():
            all_refs.setdefault(ref, []).extend(f"{tree.name}/{f}" for f in files)
    failed = resolve_all(sorted(all_refs))
    if args.json:
        print(json.dumps({"trees": report, "references": all_refs, "failed": failed}, indent=1))
    else:
        for tree, stats in report.items():
            print(f"{tree}: " + ", ".join(f"{k}={v}" for k, v in sorted(stats.items())))
        uses = sum(len(v) for v in all_refs.values())
        print(f"rewritten references: {len(all_refs)} distinct, {uses} uses; unresolved: {len(failed)}")
        for ref, why in sorted(failed.items()):
            print(f"  UNRESOLVED {ref} ({why}) in {', '.join(all_refs[ref][:3])}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
