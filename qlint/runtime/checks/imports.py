"""QL401: import the old and the new home of each moved PT2E name (worker side).

Only library modules are imported (torch, torchao, executorch), never the user's code.
Confirmed when an old name does not resolve on the installed torch; refuted when every old
name still resolves there. The fix is verified when every new name resolves.
"""

from __future__ import annotations

import importlib
from typing import Any

from qlint.evidence.moved_imports import MovedImportEvidence


def resolve(dotted: str) -> tuple[Any, str | None]:
    """The object `dotted` names, from its longest importable module prefix; or why not."""
    parts = dotted.split(".")
    for cut in range(len(parts), 0, -1):
        module_name = ".".join(parts[:cut])
        try:
            obj = importlib.import_module(module_name)
        except ModuleNotFoundError as exc:
            if exc.name and (module_name + ".").startswith(exc.name + "."):
                continue  # this prefix is not a module: try a shorter one
            return None, f"importing `{module_name}` fails: {type(exc).__name__}: {exc}"
        except Exception as exc:  # the module exists but breaks while importing
            return None, f"importing `{module_name}` fails: {type(exc).__name__}: {exc}"
        for i, attr in enumerate(parts[cut:], start=cut):
            try:
                obj = getattr(obj, attr)
            except AttributeError:
                return None, f"`{'.'.join(parts[:i])}` has no submodule or attribute `{attr}`"
        return obj, None
    return None, f"no module `{parts[0]}`"


def _kind(obj: Any) -> str:
    if isinstance(obj, type):
        return "class"
    if callable(obj):
        return "function"
    return type(obj).__name__


def run(params: dict[str, Any]) -> dict[str, Any]:
    moves = MovedImportEvidence.from_json(params.get("evidence")).moves
    if not moves:
        return {"verdict": "skipped", "evidence": "the finding carries no moved name", "fix_verified": None}
    parts, missing, new_ok = [], 0, True
    for move in moves:
        old, new = move.old, move.new
        old_obj, old_error = resolve(old)
        if old_error is None:
            text = f"`{old}` still imports on the installed torch ({_kind(old_obj)})"
        else:
            missing += 1
            text = f"`{old}` does not import ({old_error})"
        if new:
            new_obj, new_error = resolve(new)
            if new_error is None:
                text += f"; `{new}` imports ({_kind(new_obj)})"
                if old_error is None and new_obj is old_obj:
                    text += ", the same object"
            else:
                new_ok = False
                text += f"; `{new}` does not import either ({new_error})"
        else:
            text += "; it has no successor"
        parts.append(text)
    verify = params.get("verify_fix") and params.get("fix") and (params["fix"].get("edits") or [])
    return {
        "verdict": "confirmed" if missing else "refuted",
        "evidence": "; ".join(parts),
        "fix_verified": new_ok if verify else None,
    }
