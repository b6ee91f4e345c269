"""What QL201 and QL202 say about the model's content: the submodules that make its mode matter.

A capture in the wrong mode changes only what depends on `self.training` (batch norm,
dropout, code reading the flag). Where the model's class resolves, the message names those
parts, or says that none was found; where a part of it does not resolve, it says nothing.
"""

from __future__ import annotations

from qlint.analysis.flow.model_flow import PARAM, STORED, Capture, FunctionFlow, caller_facts

_NAMED = 2  # models named in one message; more is noise


def content_note(cap: Capture, flow: str, flows: list[FunctionFlow]) -> str:
    """`; `Net` holds BatchNorm2d and Dropout, ...` for the message, or "" when nothing is known."""
    notes: list[str] = []
    for built in _builds(cap, flow, flows):
        content = built.content()
        name = f"`{content.name}`"
        if content.dependent:
            parts = [p if p != "`self.training`" else "code reading `self.training`" for p in content.dependent]
            held = ", ".join(parts[:-1]) + f" and {parts[-1]}" if len(parts) > 1 else parts[0]
            notes.append(f"in {name}, the mode changes {held}")
        elif content.complete:
            notes.append(f"no batch norm, dropout or `self.training` was found in {name}, so its mode may not matter")
    return "".join(f"; {n}" for n in list(dict.fromkeys(notes))[:_NAMED])  # one class built twice: one note


def _builds(cap: Capture, flow: str, flows: list[FunctionFlow]) -> list:
    """The constructions the captured model may come from on this flow's paths, first seen first.

    Those the facts on the paths name (a parameter: what its callers pass); else the model's own
    origins (an eval-mode capture for QAT: `.eval()` facts do not say what was built)."""
    origins = []
    for fact in sorted(cap.modes_for(flow), key=lambda f: getattr(f.node, "lineno", 0)):
        origin = fact.origin
        if origin is None:
            continue
        origins.append(origin)
        if fact.state == "unset" and origin.kind in (PARAM, STORED):
            origins.extend(f.origin for _, f in caller_facts(flows, origin.node, origin.index) or () if f.origin)
    if not any(o.built is not None for o in origins):
        origins = list(cap.origins)
    seen: dict[int, object] = {}
    for origin in origins:
        built = origin.built
        if built is not None and id(built.call) not in seen:
            seen[id(built.call)] = built
    return sorted(seen.values(), key=lambda b: (b.call.lineno, b.call.col_offset))
