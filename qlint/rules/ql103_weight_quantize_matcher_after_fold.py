"""QL103 weight-quantize-matcher-after-fold: a matcher that needs a quantize op on a weight.

Since PyTorch PR #118605 `convert_pt2e` folds each weight's quantize op into an int8
constant (`fold_quantize=True` is the default), so a converted graph holds
`get_attr(int8 weight) -> dequantize`, never `get_attr(weight) -> quantize -> dequantize`.
A function that only accepts a weight when a quantize node is fed by it finds nothing.

What counts as such a matcher, within one function: a comparison of a node's target with a
quantize op (`quantize_per_tensor/_per_channel/_per_channel_group/_per_token`,
`quantize_affine`; through aliases, edge dialect and collections), and a weight test
(`.op == "get_attr"`, `is_param(...)`, `get_param(...)`, ...) that only runs once that
comparison matched (same `and` chain, the `if` body, or after `if not ...: continue`).
A weight test that runs regardless (the function also takes the folded form), a matcher of
activations (no weight test), and project graphs all made with `fold_quantize=False` stay quiet.

Preview: real matchers reach quantize nodes through helpers (`is_quant(node)`) and string
tests this rule does not follow; see the page.
"""

from __future__ import annotations

import ast
import os
from collections.abc import Iterator

from qlint.analysis.convert_calls import ConvertCall, calls_in, project_calls
from qlint.analysis.names.functions import bodies
from qlint.analysis.names.resolver import Resolver
from qlint.analysis.statement_walk import statement_lists
from qlint.analysis.tree_walk import own_nodes
from qlint.analysis.tree_walk import parents as tree_parents
from qlint.diagnostic import Applicability, Diagnostic, Fix, RelatedInfo
from qlint.evidence.weight_matchers import WeightMatcherEvidence
from qlint.rules.base import FileContext, Rule

_QUANTIZE_OPS = frozenset(
    {
        ("quantized_decomposed", "quantize_per_tensor"),
        ("quantized_decomposed", "quantize_per_channel"),
        ("quantized_decomposed", "quantize_per_channel_group"),
        ("quantized_decomposed", "quantize_per_token"),
        ("torchao", "quantize_affine"),
    }
)
_WEIGHT_HELPERS = frozenset(
    {
        "is_param",
        "is_param_node",
        "is_parameter",
        "get_param",
        "get_param_tensor",
        "is_get_attr_node",
        "get_attr_node",
        "is_lifted_tensor_constant",
        "is_buffer",
    }
)
_EXITS = (ast.Continue, ast.Return, ast.Raise, ast.Break)


class WeightQuantizeMatcherAfterFold(Rule):
    code = "QL103"
    name = "weight-quantize-matcher-after-fold"
    runtime_check = "qlint.runtime.checks.capture_apis"
    evidence_type = WeightMatcherEvidence
    summary = "a matcher that needs a quantize op on a weight, which `convert_pt2e` folds away by default"
    # Every matcher needs a weight test; the quantize ops may live in another module
    # (`from .utils import q_ops`), so their names are no prefilter.
    triggers = ("get_attr", "is_param", "get_param", "is_buffer", "is_lifted_tensor_constant")
    fix_availability = "none"
    preview = True

    def check(self, ctx: FileContext) -> Iterator[Diagnostic]:
        calls: list[ConvertCall] | None = None
        for body in bodies(ctx.tree, ctx.scope, ctx.cache):
            if not isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            resolver = Resolver(ctx.scope, ctx.project, ctx.optable, body.local, body.class_scope)
            hit = _matcher(body.node, resolver)
            if hit is None:
                continue
            if calls is None:
                calls = _visible_calls(ctx)
            if calls and all(c.folds in ("false", "unknown") for c in calls):
                continue
            yield _diagnostic(self, ctx, body.node, hit, calls)


def _matcher(func: ast.AST, resolver: Resolver) -> tuple[ast.Compare, ast.AST] | None:
    """(the quantize comparison, the weight test that depends on it), when every weight test does."""
    # Lambdas are read as part of the function: `filter(lambda n: n.op == "get_attr", ...)`.
    own = own_nodes(func, scopes=False, lambdas=True)
    tests = [n for n in own if _is_weight_test(n)]  # syntax only: the cheap exit comes first
    if not tests:
        return None
    compares = [n for n in own if isinstance(n, ast.Compare) and _is_quantize_test(n, resolver)]
    if not compares:
        return None
    parents = tree_parents(func)
    found, reported = None, _reported(tests, parents)
    for test in tests:
        guard = _guarding_compare(test, compares, parents)
        if guard is None:
            return None  # a weight test that runs without a quantize node: the folded form is taken too
        if test is reported:
            found = (guard, test)
    return found


def _reported(tests: list[ast.AST], parents: dict) -> ast.AST:
    """The weight test the finding names: the last in the source, or the outermost test
    holding it (`is_param(ep, get_param(...))` names the outer call)."""
    held = {id(t) for t in tests}
    report, node = tests[-1], parents.get(id(tests[-1]))
    while node is not None:
        if id(node) in held:
            report = node
        node = parents.get(id(node))
    return report


def _is_quantize_test(cmp: ast.Compare, resolver: Resolver) -> bool:
    if not all(isinstance(op, (ast.Eq, ast.NotEq, ast.In, ast.NotIn, ast.Is, ast.IsNot)) for op in cmp.ops):
        return False
    for side in (cmp.left, *cmp.comparators):
        if _quantize_ref(side, resolver):
            return True
        members = (
            resolver.members(side)
            if isinstance(side, (ast.Name, ast.Attribute, ast.Set, ast.List, ast.Tuple))
            else None
        )
        if members is not None and any(_quantize_ref(m.node, resolver.for_scope(m.scope)) for m in members):
            return True
    return False


def _quantize_ref(expr: ast.AST, resolver: Resolver) -> bool:
    ref = resolver.op_ref(expr)
    return ref is not None and (ref.namespace, ref.op) in _QUANTIZE_OPS


def _is_weight_test(node: ast.AST) -> bool:
    if isinstance(node, ast.Compare) and isinstance(node.left, ast.Attribute) and node.left.attr == "op":
        for comparator in node.comparators:
            values = comparator.elts if isinstance(comparator, (ast.List, ast.Tuple, ast.Set)) else [comparator]
            if any(isinstance(v, ast.Constant) and v.value == "get_attr" for v in values):
                return True
    if isinstance(node, ast.Call):
        func = node.func
        name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else None
        return name in _WEIGHT_HELPERS
    return False


def _guarding_compare(test: ast.AST, compares: list[ast.Compare], parents: dict) -> ast.Compare | None:
    """The quantize comparison that must hold for `test` to run, if any."""
    child, parent = test, parents.get(id(test))
    while parent is not None:
        if isinstance(parent, ast.BoolOp) and isinstance(parent.op, ast.And):
            for value in parent.values[: parent.values.index(child)]:
                hit = _positive(value, compares)
                if hit is not None:
                    return hit
        elif isinstance(parent, (ast.If, ast.IfExp, ast.While)) and child is not parent.test:
            in_body = child in parent.body if isinstance(parent.body, list) else child is parent.body
            hit = _positive(parent.test, compares) if in_body else _negative(parent.test, compares)
            if hit is not None:
                return hit
        if isinstance(child, ast.stmt):
            for block in statement_lists(parent):
                if child in block:
                    for earlier in block[: block.index(child)]:
                        if isinstance(earlier, ast.If) and _exits(earlier.body) and not earlier.orelse:
                            hit = _negative(earlier.test, compares)
                            if hit is not None:
                                return hit
        child, parent = parent, parents.get(id(parent))
    return None


def _positive(test: ast.AST, compares: list[ast.Compare]) -> ast.Compare | None:
    """A quantize comparison that holds when `test` is true (`==`/`in`, possibly in an `and`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        return next((h for v in test.values if (h := _positive(v, compares)) is not None), None)
    if test in compares and isinstance(test.ops[0], (ast.Eq, ast.In, ast.Is)):
        return test
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _negative(test.operand, compares)
    return None


def _negative(test: ast.AST, compares: list[ast.Compare]) -> ast.Compare | None:
    """A quantize comparison that holds when `test` is false (`!=`/`not in`, possibly in an `or`)."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.Or):
        return next((h for v in test.values if (h := _negative(v, compares)) is not None), None)
    if test in compares and isinstance(test.ops[0], (ast.NotEq, ast.NotIn, ast.IsNot)):
        return test
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        return _positive(test.operand, compares)
    return None


def _exits(block: list[ast.stmt]) -> bool:
    return bool(block) and isinstance(block[-1], _EXITS)


def _visible_calls(ctx: FileContext) -> list[ConvertCall]:
    own = calls_in(ctx.tree, ctx.path)
    others = [c for c in project_calls(ctx) if c.path != ctx.path]
    return own + others


def _diagnostic(rule: Rule, ctx: FileContext, func, hit, calls: list[ConvertCall]) -> Diagnostic:
    compare, test = hit
    # Nearest first: the calls beside the matcher are the likeliest to make its graphs.
    folding = sorted(
        (c for c in calls if c.folds in ("default", "true")),
        key=lambda c: (-len(os.path.commonpath([c.path, ctx.path])), c.path, c.node.lineno),
    )
    if folding:
        first = folding[0]
        row = _range(ctx, first).start.row
        where = (
            f"line {row}"
            if first.path == ctx.path
            else f"{os.path.relpath(first.path, os.path.dirname(ctx.path))}:{row}"
        )
        more = f" (and {len(folding) - 1} more)" if len(folding) > 1 else ""
        cause = f"`convert_pt2e` at {where}{more} keeps `fold_quantize=True`"
        related = tuple(
            RelatedInfo(c.path, _range(ctx, c), "this convert_pt2e folds weight quantize ops") for c in folding[:5]
        )
    else:
        cause = "no `convert_pt2e` call is visible in the project, and its default is `fold_quantize=True`"
        related = ()
    message = (
        f"`{func.name}` accepts a weight only behind a quantize node, but {cause}: a converted graph "
        "carries the weight as an int8 constant feeding a dequantize. Match the dequantize of the int8 "
        "constant as well, or pass `fold_quantize=False` where the graph is made"
    )
    fix = Fix(
        Applicability.DISPLAY_ONLY,
        "Also accept `get_attr(int8 weight) -> dequantize`, or convert with `fold_quantize=False`",
    )
    evidence = {
        "kind": "weight-quantize-matcher",
        "function": func.name,
        "weight_test": ctx.source_of(test),
        "convert_calls": [{"path": c.path, "folds": c.folds} for c in calls[:20]],
    }
    return ctx.diagnostic(rule, compare, message, fix, evidence=evidence, related=related)


def _range(ctx: FileContext, call: ConvertCall):
    if call.path == ctx.path:
        return ctx.range_of(call.node)
    return ctx.project.locate(call.path, call.node)[0]
