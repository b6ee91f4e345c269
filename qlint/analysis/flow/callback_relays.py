"""Higher-order helpers that call a callback only on the module they are given, or its submodules.

torchao's `_replace_with_custom_fn_if_matches_filter(model, replacement_fn, filter_fn)` calls
`replacement_fn(model)` or recurses into `model.named_children()` with the same callback: the
callback is only ever handed `model` or one of its descendants. `.eval()`/`.train()` set the
mode of a module and all its descendants, so what the callback gets is in the mode the caller
left `model` in: a lambda passed there (`lambda mod: capture_and_prepare(mod, ...)`) takes its
parameter in that mode, and its calls are calls with that model (`model_calls`).

The summary is syntactic and strict, so that it holds on every path:

- the callback parameter is only called (never stored, wrapped or handed to anything but the
  helper's own recursive call, at the same position), and never inside a nested scope or a
  comprehension, where names may be shadowed;
- at every call, one positional argument is the module parameter or a descendant of it
  (`for name, child in model.named_children()`, `list(model.children())`, `model.modules()`),
  by a flow-sensitive reading of the names: `model = replacement_fn(model)` rebinds the name
  for what follows on that path only;
- the helper's own recursive calls pass the callback at the same position and a descendant as
  the module;
- nothing in the helper switches a mode (`.train()`, `.eval()`, `.apply(...)`, `.training =`):
  a helper that does hands its callback modules in a mode of its own choosing.

But one: a helper whose only switches are statements putting the module parameter itself in
eval mode (`model.eval()`, `model.train(False)`, `model = model.eval()`) before it calls the
callback (`def run_evaled(helper, model, *args): model.eval(); return helper(model, *args)`),
or in the callback's call itself (`return helper(model.eval(), *args)`: `Module.eval` returns
the module), hands the callback that module, or a descendant, in eval mode, when the switch
runs on every path to each call and nothing between them (nor another argument of that call)
can change the mode: the module (or a name holding
it or a part) handed to any other call than the callback's, the helper's own recursion, a
method of `_NEUTRAL` or a builtin of `_INERT` (`prep(model)`, `model.fuse()`,
`setattr(model, ...)`), a part given to it (`model.bn = ...`), a nested scope naming it, or a
compound statement the reading does not follow, and the eval no longer counts. Such a relay is
`evaled`: its callback's model is in eval mode whatever mode the caller passed.

Anything else gives no summary, and the callback's calls stay unread: callers of what it calls
are then not all known (issue 14, item 7). The body is read in one pass (`relay_reading`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.relay_evals import evals
from qlint.analysis.flow.relay_reading import WHOLE, Reading
from qlint.analysis.names.scope import parameter_args
from qlint.analysis.node_memo import kept_on_node
from qlint.analysis.tree_walk import walk_kinds
from qlint.value_classes import value_class

_CALLS = frozenset({ast.Call})


@value_class(frozen=True)
class Relay:
    """Every call of parameter `callback` hands it parameter `model` (or a descendant) as its
    positional argument `position`."""

    callback: int
    model: int
    position: int
    # The helper put the module in eval mode on every path to each call: the callback gets it
    # in eval mode, not in the mode the caller passed.
    evaled: bool = False


def relays(func: ast.AST) -> tuple[Relay, ...]:
    """The relays of a function definition (kept on its node)."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return ()
    return kept_on_node(func, "_qlint_relays", _relays)


def _relays(func: ast.FunctionDef | ast.AsyncFunctionDef) -> tuple[Relay, ...]:
    if func.decorator_list:
        return ()
    params = [a.arg for a in parameter_args(func, star=False)]
    # A relay calls one of its parameters: most functions a call hands a name to never do, and
    # one walk turns them away without the two walks and the reading below (ExecuTorch asks
    # this of 153 functions).
    if not params or not _calls_a_parameter(func, frozenset(params)):
        return ()
    allowed = evals(func)
    if allowed is None:
        return ()
    reading = Reading(func, params, allowed)
    reading.block(func.body, {name: (WHOLE, i) for i, name in enumerate(params)})
    if reading.other_switch or reading.seen != allowed:
        return ()  # an eval of something else, or one the reading did not reach (a nested scope)
    found = []
    for k, name in enumerate(params):
        pairs = reading.calls.get(name)
        if not pairs or name in reading.escaped:
            continue
        common = set.intersection(*pairs)
        for recursive in reading.recursive:
            common = {(p, m) for p, m in common if (k, m) in recursive}
        evaled = set.intersection(*reading.evaled[name])
        if any(m in reading.ever_evaled and (p, m) not in evaled for p, m in common):
            continue  # a module evaled on some paths to the calls only: in no mode for sure
        if not reading.ever_evaled <= {m for _, m in evaled}:
            continue  # an evaled module not handed over evaled on every call: it may be rebound
        found += [Relay(k, m, p, (p, m) in evaled) for p, m in sorted(common) if m != k]
    return tuple(found)


def _calls_a_parameter(func: ast.AST, params: frozenset[str]) -> bool:
    """Some call anywhere in `func` calls a parameter by its name (`Reading.call` records
    only such calls, so without one no parameter is a callback)."""
    return any(isinstance(call.func, ast.Name) and call.func.id in params for call in walk_kinds(func, _CALLS))


__all__ = ["Relay", "relays"]
