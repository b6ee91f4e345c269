"""A helper's flag reached through `**kwargs` (QL203).

`def g(m, x, **kwargs): return f(m, x, **kwargs)`, with `f(m, x, is_qat=False)` copying the
graph under `if not is_qat:`: what `g(gm, x, is_qat=True)` gets back depends on the keyword
the caller names, and `g(gm, x)` leaves `f`'s default. The arm `f` takes is then a condition
on a key of `g`'s `**kwargs`, written `**is_qat?0` (`?1`: the condition holds when the key is
absent, as `f`'s default makes it; `?0`: it does not), followed by what the condition compares
(`**mode?1 == 'qat'`). `g`'s callers rule it out from the keyword they pass, or from its
absence (`contradicted`); a helper handing its own untouched `**kwargs` on keeps the condition
for its callers in turn (`in_caller_terms`).

The key is read only where the dict reaches `f` as the caller gave it: the forwarding
function never touches the name other than to forward it (`**kwargs`) or read it
(`kwargs.get(...)`), the call names one `**` and no `*args` (which might fill the parameter by
position), the parameter takes a keyword, and the forwarding function has no parameter of
that name (which would take the keyword before `**kwargs` does). Anything else leaves the
condition out, and the graph is taken as handed back, as for a flag qlint cannot read.

A positional-only parameter of `f` (`def f(m, x, is_qat=False, /, **options)`) is the other
way round: no keyword reaches it, so its default decides at every call that fills it neither by
position nor through `*args`, whatever key the dict holds (`_positional_default`).
"""

from __future__ import annotations

import ast

from qlint.analysis.flow.dead_branches import contradicted_at_call, defaults, holds, on_name, rebound
from qlint.analysis.names.resolver import dotted_parts
from qlint.analysis.node_memo import kept_on_node

_MARK = "**"


def keyed(condition: str) -> bool:
    """The condition is on a key of a `**kwargs` (`**is_qat?0`)."""
    return condition.startswith(_MARK)


def contradicted_at(guard, callee: ast.AST, written: dict, caller, home, ended: bool, call: ast.Call) -> bool:
    """`dead_branches.contradicted_at_call`, and the guard's conditions on keys of `callee`'s
    `**kwargs` read at `call` as well, and those on a positional-only parameter the call leaves
    out (`_positional_default`)."""
    if contradicted_at_call(guard, callee, written, caller, home, ended):
        return True
    if any(keyed(c) and contradicted(c, p, call, caller, home) for c, p in guard):
        return True
    return ended and any(_positional_default(c, callee, written, call, home) is (not p) for c, p in guard)


def _positional_default(condition: str, callee: ast.AST, written: dict, call: ast.Call, home) -> bool | None:
    """The truth of a condition on a positional-only parameter of `callee` that `call` fills
    neither by position nor through `*args` (None: not such a condition, or not known). No
    keyword can fill it, not one in a `**` the call hands over: Python puts it in the callee's
    own `**` or raises `TypeError` (checked on 3.11), so its default is what any return sees."""
    args = getattr(callee, "args", None)
    if args is None or not args.posonlyargs:
        return None
    name = on_name(condition)
    names = [a.arg for a in args.posonlyargs]
    if name not in names or rebound(callee, name):
        return None
    index = names.index(name)
    if index in written or any(type(a) is ast.Starred for a in call.args):
        return None
    default = defaults(callee).get(name)
    return holds(condition, default, home, home) if default is not None else None


def contradicted(condition: str, polarity: bool, call: ast.Call, caller, home) -> bool:
    """The call (to the function whose `**kwargs` the condition reads) rules the condition's
    arm out: by the keyword it names for the key (read with `caller`; the compared side with
    `home`), or, naming none and no `**` of its own, by the default the key's absence leaves."""
    key, absent, _ = _parts(condition)
    for kw in call.keywords:
        if kw.arg == key:
            return holds(condition, kw.value, caller, home) is (not polarity)
    if absent is None or any(kw.arg is None for kw in call.keywords):
        return False
    return absent is (not polarity)


def in_caller_terms(
    condition: str, polarity: bool, param: str | None, callee: ast.AST, call: ast.Call, caller: ast.AST | None, home
) -> tuple[tuple[str, bool], ...]:
    """The condition of `callee` (`param`: the parameter it tests, which the call leaves out;
    None: it tests a key of `callee`'s own `**kwargs`) in the terms of `caller`, whose call
    `call` hands `callee` its `**kwargs` (or names the key as a keyword); none where the key
    is not known to reach the condition as the caller's caller wrote it."""
    if param is None:
        key, _, rest = _parts(condition)
        for kw in call.keywords:
            if kw.arg == key:  # `f(m, is_qat=flag)` into `f`'s `**kwargs`: a condition on `flag`
                parts = dotted_parts(kw.value)
                return ((".".join(parts) + rest, polarity),) if parts else ()
        return ((condition, polarity),) if _handed_on(call, caller, key, positional=False) else ()
    args = getattr(callee, "args", None)
    if args is None or any(a.arg == param for a in args.posonlyargs):
        return ()  # a keyword cannot fill it
    if not _handed_on(call, caller, param, positional=True):
        return ()
    default = defaults(callee).get(param)
    # Its absence leaves a value we cannot read (or a `TypeError`): the key is then unknown.
    truth = holds(condition, default, home, home) if default is not None else None
    if truth is None:
        return ()
    return ((f"{_MARK}{param}?{int(truth)}{condition[len(param) :]}", polarity),)


def _handed_on(call: ast.Call, caller: ast.AST | None, key: str, positional: bool) -> bool:
    """`call` hands on `caller`'s own `**kwargs`, untouched, as its one `**` (and, where the
    key fills a parameter by name, `positional`, no `*args` that might fill it first); a
    keyword `key` given to `caller` lands in that dict, not in a parameter of its own."""
    name = forwarded_kwargs(caller) if caller is not None else None
    if name is None:
        return False
    stars = [kw.value for kw in call.keywords if kw.arg is None]
    if len(stars) != 1 or type(stars[0]) is not ast.Name or stars[0].id != name:
        return False
    if positional and any(type(a) is ast.Starred for a in call.args):
        return False
    args = caller.args
    return all(a.arg != key for a in [*args.args, *args.kwonlyargs])


def forwarded_kwargs(func: ast.AST) -> str | None:
    """The name of `func`'s `**` parameter when its body only forwards or reads it (`**kwargs`,
    `kwargs.get(...)`): the dict a call hands on is the one its caller wrote. Kept on the node."""
    args = getattr(func, "args", None)
    if not isinstance(args, ast.arguments) or args.kwarg is None:
        return None
    found = kept_on_node(func, _FORWARDED, _untouched)
    return found or None


_FORWARDED = "_qlint_forwarded_kwargs"


def _untouched(func: ast.AST) -> str:
    """`func`'s `**` name, or "" when its body stores, deletes, changes or hands the dict on
    whole (`kwargs.pop`, `kwargs["k"] = v`, `kwargs.update`, `h(kwargs)`, `{**kwargs, ...}`)."""
    name = func.args.kwarg.arg
    read: set[int] = set()
    seen: list[ast.Name] = []
    for node in ast.walk(func):
        cls = type(node)
        if cls is ast.Name and node.id == name:
            seen.append(node)
        elif cls is ast.Call:
            for kw in node.keywords:
                if kw.arg is None and type(kw.value) is ast.Name:
                    read.add(id(kw.value))
            f = node.func
            if type(f) is ast.Attribute and f.attr == "get" and type(f.value) is ast.Name:
                read.add(id(f.value))
    # The parameter itself is no `ast.Name` (an `ast.arg`): every name is a use in the body.
    return name if all(id(n) in read for n in seen) else ""


def _parts(condition: str) -> tuple[str, bool | None, str]:
    """(key, the condition's truth when the key is absent, what it compares) of `**key?1 == 'x'`."""
    head, space, compared = condition.partition(" ")
    key, _, absent = head[len(_MARK) :].partition("?")
    return key, {"1": True, "0": False}.get(absent), space + compared


__all__ = ["contradicted", "contradicted_at", "forwarded_kwargs", "in_caller_terms", "keyed"]
