"""What a method called on an instance of a registry's class hands back, when the key the
caller passes says which class it is (issue 14; Samsung TICO's GPTQ tests).

    def prepare(model, quant_config):              # tico.quantization.public_interface
        quantizer = get_quantizer(quant_config)    # `_REGISTRY[type(cfg)](cfg)`
        return quantizer.prepare(model)

    q_m.eval()
    q_m = prepare(q_m, GPTQConfig())               # GPTQQuantizer.prepare: returns `model`
    q_m = prepare(q_m, PT2EConfig(), ...)          # PT2EQuantizer.prepare captures it

The walk of `prepare` cannot tell which class runs: the key is its caller's
(`decorator_registries`). Its result is a value of its own (`REGISTRY_RESULT`) that keeps what
the walk knows there: which parameter chooses the key (or the key itself, once a caller passes
a construction of a class: `rekeyed`), the registry and the method, and the modes of the
first argument (`Origin.items`), which each summarised call puts in its caller's terms like
any fact. To the verdicts (`caller_verdicts`) such a value is the argument in the modes it came
in when the registry holds, under that key, exactly one class, nothing else can register a
class under it (`key_closed`), and the method that class runs (inherited across modules)
returns its first parameter on every path without switching its mode, decorated with nothing
but mode-neutral gradient contexts (`mode_neutral`). Anything else keeps it what it was: the
result of a call the walk does not read.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.context import FileContext
from qlint.analysis.flow.decorator_registries import REGISTRY_RESULT, decorators_of, registered_classes
from qlint.analysis.flow.inherited_methods import inherited_method
from qlint.analysis.flow.model_values import PARAM, ModeFact
from qlint.analysis.flow.pass_through import transparent
from qlint.analysis.flow.project_search import tree_at
from qlint.analysis.flow.registry_closure import decorator_users, named_outside, spells_word
from qlint.analysis.flow.registry_registrations import ends_with_name, registers_own_classes_only

_MEMO = "registry_results.carried"


def carried(ctx: FileContext, flow, fact: ModeFact) -> frozenset[ModeFact] | None:
    """The modes of the argument a registry result stands for, when the class its key selects
    hands that argument back as it came (None: not known to)."""
    origin = fact.origin
    if fact.state != "unset" or origin is None or origin.kind != REGISTRY_RESULT:
        return None
    if flow is None or origin.index is not None or not origin.name or "::" not in origin.name:
        return None  # no analysis of the module to read the class from, or the key not known
    module, registry, attr = origin.makes
    memo = ctx.cache.setdefault(_MEMO, {})
    asked = (module, registry, attr, origin.name)
    if asked not in memo:
        memo[asked] = _returns_first(ctx, flow, module, registry, attr, origin.name)
    return origin.items if memo[asked] else None


def _returns_first(ctx: FileContext, flow, module: str, registry: str, attr: str, key: str) -> bool:
    owner = flow.for_module(module)
    if owner is None:
        return False
    decorators = decorators_of(owner.scope, registry)
    if len(decorators) != 1:
        return False
    found = _selected(ctx, flow, module, registry, decorators[0], key)
    if found is None:
        return False
    fowner, cls = found
    method = inherited_method(fowner, cls, attr)
    if method is None or not isinstance(method[1], ast.FunctionDef):
        return False
    mowner, func, holder = method
    if not transparent(mowner, func.decorator_list):
        return False
    summary = mowner.function(func, holder)
    if summary is None or len(summary.params) < 2 or not summary.returns:
        return False
    param = summary.param_objs.get(summary.params[1])
    if param is None:
        return False
    for env, obj in summary.returns:
        if obj != param:
            return False  # another value on some path (a copy, a fresh model, None)
        facts = env.facts(param)
        if not facts or any(not _as_it_came(f, func) for f in facts):
            return False  # switched (`.train()`) or handed to something that may have
    return True


def _as_it_came(fact: ModeFact, func: ast.AST) -> bool:
    origin = fact.origin
    if fact.state != "unset" or origin is None:
        return False
    return origin.kind == PARAM and origin.node is func and origin.index == 1


def _selected(ctx: FileContext, flow, module: str, registry: str, decorator: str, key: str):
    """(the `ModelFlow` of its module, its class scope) of the one class the registry holds
    under `key`, when nothing but the decorator writes the registry, every use of the decorator
    is read, and none can register another class under `key`; None otherwise."""
    users = decorator_users(ctx, module, registry, decorator)
    if users is None:
        return None
    key_name = key.rpartition("::")[2]
    chosen, by_hand = [], []
    for path in sorted({*map(os.path.abspath, users), os.path.abspath(ctx.path)}):
        user = ctx.tree if path == os.path.abspath(ctx.path) else tree_at(ctx, path)
        uscope = ctx.project.scope_at(path)
        if user is None or uscope is None or not uscope.module:
            return None
        fowner = flow.for_module(uscope.module)
        if fowner is None:
            return None
        for cls, keys in registered_classes(fowner, module, (decorator,)):
            if keys is None:
                return None  # a key we cannot resolve may be this one
            if key in keys:
                chosen.append((fowner, cls))
        if _by_hand(user, decorator):
            # A class registered by a call or inside a function: only a module's own test
            # double, and under a key the module does not name.
            if spells_word(ctx.project.text(path) or "", key_name):
                return None
            by_hand.append((path, user))
    if len(chosen) != 1:
        return None
    name = chosen[0][1].node.name
    if any(not registers_own_classes_only(user, decorator, name, named_outside(ctx, path)) for path, user in by_hand):
        return None
    return chosen[0]


def _by_hand(tree: ast.Module, decorator: str) -> bool:
    """Some use of `decorator` in the module is not the decorator of a class statement of the
    module's body (those `registered_classes` reads)."""
    decorating = {
        id(d.func)
        for s in tree.body
        if isinstance(s, ast.ClassDef)
        for d in s.decorator_list
        if isinstance(d, ast.Call)
    }
    return any(
        isinstance(n, (ast.Name, ast.Attribute))
        and isinstance(n.ctx, ast.Load)
        and ends_with_name(n, decorator)
        and id(n) not in decorating
        for n in ast.walk(tree)
    )


__all__ = ["carried"]
