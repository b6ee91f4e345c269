"""QL101: a matcher on an argument of a node of the project's own op, which only the project's
own insertions make (issue 14, item 15).

A matcher that has checked a node to be the packet of an op the project defines
(`if n.op != "call_function" or n.target != torch.ops.ns.requantize: return None`), then steps
to one of its arguments (`n = n.args[0]`, `requant, n = n, n.args[0]`, or `n.args[0].target`
read directly) and compares that argument's target with a packet, sees only nodes the project
put there itself. Nothing else makes a packet node of the project's own op: a capture or a
re-trace records its overloads, and the project never calls the op (a symbolic trace of a
call would record the packet, with any argument). So when every insertion of the op as its
packet in the project (`graph.call_function(ns.requantize, (n3, ...))`, `create_node` alike)
hands at that position a local the inserting function binds only to nodes it inserts as
packets (`n3 = graph.call_function(aten.relu, (n2,))`, through a tuple's item too), and the
compared packet is among them, the matcher is keyed on exactly the nodes the project inserted
there. pytorch-shir's rewriter inserts `requantize(relu(int_addmm(...)))` with the relu as its
packet; `isel_utils.extract_qaddmm_relu` walks from a requantize node to that relu by the packet.

The guard must be one QL101 accepts: when this check reports the guard's own packet (its
graphs hold the overload), the argument's packet stays reported too, as fixing the guard alone
would leave it matching nothing. Reported as before, besides: a guard on an op torch, torchao
or ExecuTorch define (anyone's graph holds its nodes), on an op no module of the project
defines, or one the project calls; an argument bound other than once before the comparison, by
a plain or tuple assignment, after a guard at the function's own level with nothing rebinding
the guarded node between; an insertion whose argument at that position is anything else (a
node of the graph it was handed, a parameter, an overload's node), or an insertion the
project makes any other way (`node.target = op`, a wrapper, a `partial`). A pass that later
rewires the argument of the op's nodes (`replace_input_with`) is not looked for: the nodes it
puts there are assumed to be what it replaces.
"""

from __future__ import annotations

import ast

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.graph_local_reads import local_bindings
from qlint.analysis.graphs.insertions import inserted_exprs, writes_insertion
from qlint.analysis.graphs.project_texts import parsed_module
from qlint.analysis.names.functions import innermost_body
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.tree_walk import binds_name
from qlint.rules.module_insertions import inserted_ops

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_CACHE_KEY = "ql101.own-op-arguments"
# Where an insertion call takes its node arguments: `call_function(op, args)`,
# `create_node("call_function", op, args)`.
_ARGS_AT = {"call_function": 1, "create_node": 2}


def matched_on_own_op_argument(
    ctx: FileContext, key: tuple[str, str, str], body, use: ast.expr, reported: set[tuple[str, str, str]]
) -> bool:
    """Whether the packet `key`, compared at `use` in `body`, is compared with an argument of a
    node guarded to be the packet of the project's own op, at a position where every insertion
    of that op puts a node inserted as a packet, `key` among them (above). `reported`: the op
    keys this check reports in the module."""
    if body is None or not isinstance(body.node, _FUNCS):
        return False
    found = _guarded_argument(body.node, use)
    if found is None:
        return False
    guard, index = found
    resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
    ref = resolver.op_ref(guard)
    if ref is None or not ref.is_packet or ref.key in reported:
        return False
    dialect, namespace, op = ref.key
    if dialect != "aten" or namespace == "aten" or ctx.optable.lookup(namespace, op) is not None:
        return False  # an op torch, torchao or ExecuTorch define: anyone's graph holds its nodes
    memo = (_CACHE_KEY, ref.key, index)
    if memo not in ctx.cache:
        ctx.cache[memo] = _argument_ops(ctx, ref.key, index)
    ops = ctx.cache[memo]
    return ops is not None and key in ops


def _guarded_argument(func: ast.AST, use: ast.expr) -> tuple[ast.expr, int] | None:
    """(the guard's op expression, the argument's position) when the target compared with `use`
    is that of an argument of a node the function has checked to be a node of that op, by an
    early exit at its own level."""
    compare = next(
        (n for n in ast.walk(func) if isinstance(n, ast.Compare) and any(o is use for o in (n.left, *n.comparators))),
        None,
    )
    if compare is None:
        return None
    target = next(
        (o for o in (compare.left, *compare.comparators) if isinstance(o, ast.Attribute) and o.attr == "target"), None
    )
    if target is None:
        return None
    statements = func.body
    at = next((i for i, s in enumerate(statements) if _holds(s, compare)), None)
    if at is None or not _evaluated_first(statements[at], compare):
        return None
    argument = _argument(target.value)
    if argument is None:
        # `x.target`: `x` bound once before, to an argument of the guarded node.
        if not isinstance(target.value, ast.Name):
            return None
        name = target.value.id
        at = next((i for i in range(at - 1, -1, -1) if binds_name(statements[i], name)), None)
        if at is None:
            return None  # a parameter: its callers' nodes
        argument = _assigned(statements[at], name)
        if argument is None:
            return None
    source, index = argument
    for statement in reversed(statements[:at]):
        guard = _guard(statement, source)
        if guard is not None:
            return guard, index
        if binds_name(statement, source):
            # `requant = n` after the guard on `n`: the same node under another name.
            alias = _alias(statement, source)
            if alias is None:
                return None
            source = alias
    return None


def _alias(statement: ast.stmt, name: str) -> str | None:
    """`other` for `name = other`."""
    if (
        isinstance(statement, ast.Assign)
        and len(statement.targets) == 1
        and isinstance(statement.targets[0], ast.Name)
        and statement.targets[0].id == name
        and isinstance(statement.value, ast.Name)
    ):
        return statement.value.id
    return None


def _holds(statement: ast.stmt, node: ast.AST) -> bool:
    return any(n is node for n in ast.walk(statement))


def _evaluated_first(statement: ast.stmt, compare: ast.Compare) -> bool:
    """The comparison runs before the statement binds anything: in an `if`'s or `while`'s test,
    or in the value of an assignment, a `return` or an expression."""
    if isinstance(statement, (ast.If, ast.While)):
        return _holds(statement.test, compare)
    if isinstance(statement, (ast.Assign, ast.Return, ast.Expr)) and statement.value is not None:
        return _holds(statement.value, compare)
    return False


def _argument(node: ast.expr) -> tuple[str, int] | None:
    """(`n`, `i`) for `n.args[i]`."""
    if (
        isinstance(node, ast.Subscript)
        and isinstance(node.slice, ast.Constant)
        and type(node.slice.value) is int
        and node.slice.value >= 0
        and isinstance(node.value, ast.Attribute)
        and node.value.attr == "args"
        and isinstance(node.value.value, ast.Name)
    ):
        return node.value.value.id, node.slice.value
    return None


def _assigned(statement: ast.stmt, name: str) -> tuple[str, int] | None:
    """What a plain assignment (`n = m.args[0]`) or a flat tuple one (`r, n = n, n.args[0]`: its
    values are read before the names are bound) binds `name` to, as an argument of a node."""
    if not isinstance(statement, ast.Assign) or len(statement.targets) != 1:
        return None
    target, value = statement.targets[0], statement.value
    if isinstance(target, ast.Name) and target.id == name:
        return _argument(value)
    if isinstance(target, (ast.Tuple, ast.List)) and isinstance(value, (ast.Tuple, ast.List)):
        names = [e.id if isinstance(e, ast.Name) else None for e in target.elts]
        if None in names or len(names) != len(value.elts) or names.count(name) != 1:
            return None
        return _argument(value.elts[names.index(name)])
    return None


def _guard(statement: ast.stmt, name: str) -> ast.expr | None:
    """The op of `if ... or name.target != op or ...: return/raise` (no `else`)."""
    if (
        not isinstance(statement, ast.If)
        or statement.orelse
        or not isinstance(statement.body[-1], (ast.Return, ast.Raise))
    ):
        return None
    test = statement.test
    for clause in test.values if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or) else [test]:
        if (
            isinstance(clause, ast.Compare)
            and len(clause.ops) == 1
            and isinstance(clause.ops[0], (ast.NotEq, ast.IsNot))
        ):
            for a, b in ((clause.left, clause.comparators[0]), (clause.comparators[0], clause.left)):
                if (
                    isinstance(a, ast.Attribute)
                    and a.attr == "target"
                    and isinstance(a.value, ast.Name)
                    and a.value.id == name
                ):
                    return b
    return None


def _argument_ops(ctx: FileContext, key: tuple[str, str, str], index: int) -> frozenset | None:
    """The op keys of the nodes every insertion of the packet `key` in the project hands at
    position `index`, when each is a node its function inserted as a packet; None when one is
    not, when the op is not the project's own (defined by it, never called), or when nothing
    inserts it as its packet."""
    from qlint.rules.own_op_matchers import OpSpellings, op_texts

    _, namespace, op = key
    spellings = OpSpellings(namespace, op)
    defined = False
    found: set = set()
    inserting = 0
    for path, text, module in op_texts(ctx, op):
        if spellings.called(text):
            return None
        defined = defined or spellings.defined(text)
        if not writes_insertion(text):
            continue  # (its packet may be spelled through an alias of `torch.ops.<ns>`)
        module = module or parsed_module(ctx, path, text)
        if module is None:
            continue
        ops = _module_argument_ops(module, key, index)
        if ops is None:
            return None
        if ops:
            inserting += 1
            found |= ops
    return frozenset(found) if defined and inserting else None


def _module_argument_ops(module: FileContext, key: tuple[str, str, str], index: int) -> set | None:
    """`_argument_ops` for one module: an empty set when it inserts no packet of `key`."""
    by_expr: dict[int, list] = {}
    for ref, expr in inserted_ops(module):
        by_expr.setdefault(id(expr), []).append(ref)
    found: set = set()
    handed: list[ast.expr] = []  # the insertions of the nodes handed
    for ref, expr in inserted_ops(module):
        if ref.key != key or not ref.is_packet:
            continue
        body = innermost_body(module.tree, module.scope, module.cache, expr.lineno)
        if body is None or not isinstance(body.node, _FUNCS):
            return None
        call = next(
            (n for n in ast.walk(body.node) if isinstance(n, ast.Call) and any(e is expr for e in inserted_exprs(n))),
            None,
        )
        name = _handed_name(call, index) if call is not None else None
        values = local_bindings(body.node, name) if name is not None else None
        if not values:
            return None  # another kind of insertion, argument or binding; or a parameter
        for value, position in values:
            exprs = list(inserted_exprs(value)) if position is None else []
            refs = [r for e in exprs for r in by_expr.get(id(e), ())]
            if not exprs or not refs or any(not r.is_packet for r in refs) or any(id(e) not in by_expr for e in exprs):
                return None
            found.update(r.key for r in refs)
            handed.extend(exprs)
    return found if not handed or _left_alone_by_ql102(module, handed) else None


# The questions being answered: QL102's check of an inserting module asks QL101 of it
# (`guarded_insertions`), whose matchers may ask this again of a module it reads.
_ASKING: set[str] = set()


def _left_alone_by_ql102(module: FileContext, exprs: list[ast.expr]) -> bool:
    """QL102 (with its default options) reports none of these insertions: one it reports is to
    be fixed to the overload, and the matcher would then miss the node (a second `qlint fix`
    would change what the first left)."""
    # Through the registry: QL102's module asks QL101's verdicts (`guarded_insertions`).
    from qlint.registry import rule_class

    rule = rule_class("QL102")
    if rule is None:
        return False
    if module.path in _ASKING:
        return False
    _ASKING.add(module.path)
    try:
        reported = {d.range for d in rule().check(module)}
    finally:
        _ASKING.discard(module.path)
    return not any(module.range_of(e) in reported for e in exprs)


def _handed_name(call: ast.Call, index: int) -> str | None:
    """The local an insertion call hands as its node's argument `index`."""
    at = _ARGS_AT.get(call.func.attr) if isinstance(call.func, ast.Attribute) else None
    if at is None:
        return None
    args = call.args[at] if len(call.args) > at else next((k.value for k in call.keywords if k.arg == "args"), None)
    if not isinstance(args, (ast.Tuple, ast.List)) or any(isinstance(e, ast.Starred) for e in args.elts[: index + 1]):
        return None
    if index >= len(args.elts) or not isinstance(args.elts[index], ast.Name):
        return None
    return args.elts[index].id


__all__ = ["matched_on_own_op_argument"]
