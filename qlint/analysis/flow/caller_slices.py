"""The statements of a caller's body that can affect what its calls of a helper pass.

A helper's callers in other modules are read for the modes they pass (`project_callers`):
the model flow walks each body holding a call. ExecuTorch's Qualcomm helpers are called from
whole test methods and example scripts' `main()` (532 calls of `get_qdq_module`, 44 modules
calling `build_executorch_binary`: ~1 s of a cold run), and most of what those bodies do
(pushing the program to a device, reading its outputs, scoring them) happens after the call
or touches nothing it is handed. The walk reads only a backward slice (`dropped` names what it passes over):

- the statements enclosing each call, the call's own statement, and, before them in each
  statement list they lie in (anywhere in a loop around the call: a later pass reaches the
  call again), every statement that names one of the related names, or can end a path
  (`return`/`raise`/`break`/`continue` anywhere in it: paths that skip the call change what
  reaches it);
- the related names: those of the call's arguments and callee (but `self`/`cls` of a
  `self.helper(...)`: the method is found from the class, not from the value), then every
  name a kept statement holds (its targets, what it is built from, a function or class it
  defines, what it imports), and the headers of the compound statements kept (a test may be
  decided by a constant, `dead_branches`, or by what a name holds), until none is added.

A statement that names none of them reaches none of their values: a name not bound in the
body is read where it is bound, and a value is stored into or taken out of another holder only
by a statement naming both (`holder.m = model`, `m = holder.m`), which makes the holder's
name a related one; a nested function that closes over one of them names it, so its name
is related and its calls are kept. What reaches values without naming them keeps the whole
body (None): `global`/`nonlocal`, `exec`/`eval`/`locals()`/`globals()`/`vars()` in a statement
that may run before the call (one after it, outside a loop around it, runs too late), a call of
the helper in a nested function, lambda or class, or a body that is a module's (its names
are globals, which the module's functions change by name elsewhere). So does a call handing
on one of the body's parameters as it is (`helper(model, is_qat)`): whether it is right is
then asked of the body's own callers, whose walks read the body whole as a helper of theirs,
and a slice would only be walked besides.
The walk keeps the function node itself, so every syntactic reading of the body (constant
flags, containers, a function's locals) sees it whole, as before.

On ExecuTorch (-j1, cold) 239 of 370 caller bodies are sliced: the 44 `main()`s calling
`build_executorch_binary` walk 628 of their 1,467 statements (callers' bodies 0.60 -> 0.31 s,
`cold_split --caller-searches`); the Qualcomm tests 1,319 of 1,689 (most calls are in a loop
whose every statement handles the model). Every call read and every caller verdict is the
same as a whole walk's on the five bench trees (a harness comparing both, lane slice62).
"""

from __future__ import annotations

import ast

from qlint.analysis.tree_walk import walk

# Names whose call reads or writes a scope's variables without naming them.
_SCOPE_CALLS = frozenset({"exec", "eval", "locals", "globals", "vars"})
_NESTED = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)
_ENDS = (ast.Return, ast.Raise, ast.Break, ast.Continue)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_RECEIVERS = frozenset({"self", "cls"})


class _Whole(Exception):
    """A statement read reaches a scope's variables without naming them: read the body whole."""


def dropped(func: ast.AST, refs: list[ast.AST]) -> frozenset[int] | None:
    """The ids of the statements of `func` (at any depth) the walk passes over for the calls
    whose callee expression holds one of `refs` (None: none, the whole body is read). Dropped
    rather than kept: the walk also reads statements of its own making (a comprehension is read
    as the loop it stands for, `comprehension_loops`), which are never passed over."""
    try:
        return _dropped_ids(func, refs)
    except _Whole:
        return None


def _dropped_ids(func: ast.AST, refs: list[ast.AST]) -> frozenset[int] | None:
    """`dropped`, raising `_Whole` where a statement read names scope variables without naming them."""
    if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)) or not refs:
        return None
    chains = [_chain(func, ref) for ref in refs]
    if any(c is None for c in chains):
        return None
    calls = [_call_of(chain[-1][1], ref) for chain, ref in zip(chains, refs, strict=True)]
    if any(c is None for c in calls) or _hands_on_parameter(func, calls):
        return None
    # The receivers of `self.helper(...)`: the method is found from the class, not the value.
    skip = frozenset(id(r) for c in calls if (r := _receiver_node(c)) is not None)
    related: set[str] = set()
    kept = {id(stmt) for chain in chains for _, stmt in chain}
    candidates: list[ast.stmt] = []  # read whole (`_select` picks inside them)
    for chain, call in zip(chains, calls, strict=True):
        related |= _names(call, skip)
        for block, stmt in chain:
            candidates.extend(block[: next(i for i, s in enumerate(block) if s is stmt)])
            if isinstance(stmt, _LOOPS):
                # A later pass reaches the call again: all the loop holds may come before it.
                candidates.append(stmt)
                break
            if stmt is not chain[-1][1]:
                related |= _header_names(stmt)
        else:
            related |= _names(chain[-1][1], skip)  # the call's own statement
    memo: dict[int, frozenset[str]] = {}

    def names(stmt: ast.stmt) -> frozenset[str]:
        found = memo.get(id(stmt))
        if found is None:
            found = memo[id(stmt)] = frozenset(_header_names(stmt) if _blocks(stmt) else _names(stmt, skip))
        return found

    # Until no kept statement adds a related name.
    while True:
        before = len(related)
        for stmt in candidates:
            _select(stmt, related, kept, names)
        if len(related) == before:
            break
    out = frozenset(id(s) for s in _own(func.body) if id(s) not in kept)
    return out or None


def _hands_on_parameter(func: ast.FunctionDef | ast.AsyncFunctionDef, calls: list[ast.Call]) -> bool:
    """Whether a call hands on a parameter of `func` as it is (`helper(mod, inputs, is_qat)` in
    `def _test_common(self, mod, inputs, is_qat=False)`): the question of what it passes is
    then its callers' (`call_paths` walks up to them), whose walks summarise `func` whole, and
    a slice would be walked besides (ao's cold run: a test module's shared `_test_common` was
    sliced, its cut worked out again for a second search, then walked whole for its callers)."""
    args = func.args
    params = {a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg) if a}
    params -= _RECEIVERS
    if not params:
        return False
    for call in calls:
        for arg in (*call.args, *(kw.value for kw in call.keywords)):
            if type(arg) is ast.Starred:
                arg = arg.value
            if type(arg) is ast.Name and arg.id in params:
                return True
    return False


def _own(block: list[ast.stmt]) -> list[ast.stmt]:
    """The statements of `block` at any depth, but those of nested functions and classes."""
    return [t for s in block for t in (s, *(u for b in _blocks(s) for u in _own(b)))]


def _select(stmt: ast.stmt, related: set[str], kept: set[int], names) -> bool:
    """Keep `stmt` if it names a related name or can end a path, with its kept children;
    its names join `related` (`names(stmt)`: what it names, or its header for a compound one)."""
    inner = _blocks(stmt)
    if not inner:
        held = names(stmt)
        if id(stmt) in kept or isinstance(stmt, _ENDS) or not held.isdisjoint(related):
            kept.add(id(stmt))
            related |= held
            return True
        return False
    chosen = False
    for block in inner:
        for child in block:
            chosen = _select(child, related, kept, names) or chosen
    if chosen or id(stmt) in kept or not names(stmt).isdisjoint(related):
        kept.add(id(stmt))
        related |= names(stmt)
        return True
    return False


def _blocks(stmt: ast.stmt) -> list[list[ast.stmt]]:
    """The statement lists a compound statement holds (a nested function's or class's body is
    not walked: the statement is read whole, as a simple one)."""
    if isinstance(stmt, _NESTED):
        return []
    out = []
    for name in ("body", "orelse", "finalbody"):
        block = getattr(stmt, name, None)
        if block:
            out.append(block)
    for handler in getattr(stmt, "handlers", ()):
        out.append(handler.body)
    for case in getattr(stmt, "cases", ()):
        out.append(case.body)
    return out


def _header_names(stmt: ast.stmt) -> set[str]:
    """The names a compound statement holds outside its statement lists (its test, iterable,
    target, context managers, handlers' types and names, match patterns)."""
    found: set[str] = set()
    for name, value in ast.iter_fields(stmt):
        if name in ("body", "orelse", "finalbody", "handlers", "cases"):
            continue
        for node in value if isinstance(value, list) else [value]:
            if isinstance(node, ast.AST):
                found |= _names(node)
    for handler in getattr(stmt, "handlers", ()):
        if handler.name:
            found.add(handler.name)
        if handler.type is not None:
            found |= _names(handler.type)
    for case in getattr(stmt, "cases", ()):
        found |= _names(case.pattern)
        if case.guard is not None:
            found |= _names(case.guard)
    return found


def _names(node: ast.AST, skip: frozenset[int] = frozenset()) -> set[str]:
    """Every name `node` holds, nested functions and classes included (theirs and what they
    close over), but the nodes `skip`."""
    found: set[str] = set()
    for n in walk(node):
        kind = type(n)
        if kind is ast.Name:
            if id(n) not in skip:
                found.add(n.id)
            continue
        if kind is ast.Global or kind is ast.Nonlocal:
            raise _Whole
        if kind is ast.Call and type(n.func) is ast.Name and n.func.id in _SCOPE_CALLS:
            raise _Whole
        if isinstance(n, ast.expr):
            continue
        if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            found.add(n.name)
        elif isinstance(n, ast.alias):
            found.add((n.asname or n.name).partition(".")[0])
        elif isinstance(n, ast.arg):
            found.add(n.arg)
        elif isinstance(n, (ast.MatchAs, ast.MatchStar)) and n.name:
            found.add(n.name)
        elif isinstance(n, ast.MatchMapping) and n.rest:
            found.add(n.rest)
        elif isinstance(n, ast.ExceptHandler) and n.name:
            found.add(n.name)
    return found


def _chain(func: ast.AST, ref: ast.AST) -> list[tuple[list[ast.stmt], ast.stmt]] | None:
    """(statement list, statement) from `func`'s body down to the simple statement holding
    `ref`; None when a nested function, lambda or class holds it, or a compound statement's
    header does (`while helper(m):` runs again after its body). Found by rows: the simple
    statement on the call's row must hold it (`if helper(a): helper(b)` on one row does not)."""
    out = []
    blocks = [func.body]
    row = ref.lineno
    while True:
        found = next(((b, s) for b in blocks for s in b if s.lineno <= row <= s.end_lineno), None)
        if found is None:
            return None
        out.append(found)
        stmt = found[1]
        if isinstance(stmt, _NESTED):
            return None
        blocks = _blocks(stmt)
        if not blocks:
            nodes = walk(stmt)
            if not any(n is ref for n in nodes):
                return None
            # A lambda or a comprehension's nested scope in it holding the call: the body whole.
            if any(isinstance(n, _NESTED) and _holds(n, ref) for n in nodes):
                return None
            return out


def _holds(node: ast.AST, ref: ast.AST) -> bool:
    return any(n is ref for n in walk(node))


def _call_of(stmt: ast.stmt, ref: ast.AST) -> ast.Call | None:
    """The call whose callee expression is (or holds) `ref`, in `stmt`."""
    for n in walk(stmt):
        if isinstance(n, ast.Call) and _holds(n.func, ref):
            return n
    return None


def _receiver_node(call: ast.Call) -> ast.AST | None:
    func = call.func
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) and func.value.id in _RECEIVERS:
        return func.value
    return None


__all__ = ["dropped"]
