"""Which `convert_pt2e` calls receive a PTQ-prepared model that no path ran on data.

`prepare_pt2e` inserts observers; they learn ranges only while the prepared model runs.
This module follows each prepared model (a token per `prepare_pt2e` call) through a
function body: paths fork at `if`/`try`, loops run twice, and a token counts as run on a
path as soon as anything there may run it: a call, `.forward`, a comprehension or closure
that names it, a store into an attribute or container, a function qlint cannot resolve.
Project helpers are summarised once (which parameters they may run, which they convert
while still fresh, which prepared models they return), so `calibrate(prepared, data)` in
another module and `prepared = build(model)` both count.

The result per function: where a fresh prepared model is converted (directly, or by a
helper it is handed to), and, for tests, whether the converted model is ever run.
"""

from __future__ import annotations

import ast
import re

from qlint.analysis.calibration_carry import Ledger, Lookups
from qlint.analysis.flow.callgraph import CallGraph
from qlint.analysis.mentions import mentions, word_rows
from qlint.analysis.names.scope import ModuleScope
from qlint.value_classes import field, value_class

PREPARED, PARAM, CONVERTED, QAT = "prepared", "param", "converted", "qat"
QAT_CONFIG = "qat-config"  # a quantizer or config built or configured with `is_qat=` not False
_MAX_DEPTH = 4


@value_class(frozen=True)
class Token:
    """One model value: a `prepare_pt2e` result, a parameter, or a `convert_pt2e` result."""

    kind: str
    node: ast.AST  # the prepare/convert call, or the function for a parameter
    path: str
    index: int = -1  # parameter position
    helper: str = ""  # the helper function that prepared it, when another function did


@value_class(frozen=True)
class Uncalibrated:
    """A fresh prepared model reaching `convert_pt2e` at `site` (the convert, or a helper call)."""

    site: ast.Call
    prepared: Token
    convert: ast.Call  # the convert_pt2e call itself (in `convert_path`)
    convert_path: str
    results: frozenset[Token]  # the converted model as the function sees it
    helper: str = ""  # the helper that converts, when `site` calls one
    run_inside: bool = False  # that helper runs a model it converted


@value_class
class Summary:
    """What a function does with models, as its callers see it."""

    node: ast.AST
    path: str
    params: list[str]
    offset: int = 0  # 1 for a method called through `self.`
    runs: set[int] = field(default_factory=set)  # parameters it may run (or let escape)
    executes: set[int] = field(default_factory=set)  # parameters it calls on data
    converts: dict[int, ast.Call] = field(default_factory=dict)  # parameters converted while fresh
    returns: set[Token] = field(default_factory=set)  # fresh prepared, converted, and parameter tokens
    findings: list[Uncalibrated] = field(default_factory=list)
    executed: set[Token] = field(default_factory=set)  # tokens called on data anywhere in the body
    used: set[Token] = field(default_factory=set)  # converted models some path runs, hands on or stores
    test: bool = False


@value_class
class Env:
    vars: dict[str, frozenset[Token]] = field(default_factory=dict)
    ran: frozenset[Token] = frozenset()

    def copy(self) -> Env:
        return Env(dict(self.vars), self.ran)


def join(envs: list[Env | None]) -> Env | None:
    live = [e for e in envs if e is not None]
    if not live:
        return None
    out = Env(ran=frozenset().union(*(e.ran for e in live)))
    for env in live:
        for name, tokens in env.vars.items():
            out.vars[name] = out.vars.get(name, frozenset()) | tokens
    return out


def qat_configs(token_sets) -> frozenset[Token]:
    return frozenset(t for tokens in token_sets for t in tokens if t.kind == QAT_CONFIG)


def holds_models(env: Env) -> bool:
    return any(env.vars.values())


class Calibration:
    """Summaries of the functions of one check, shared across modules (memoised by node).

    `walker` is `calibration_walk.Walker`, handed in because that module builds on this one.
    `carry`: the checked module's `statement_reuse.Carry`, whose stable summaries of the last
    check are taken where they hold and this check's are kept (`calibration_carry`)."""

    def __init__(self, project, optable, walker, carry=None):
        self.walker = walker
        self.ledger = Ledger(project, _MAX_DEPTH, carry)
        self.project = Lookups(project, self.ledger.frames)
        self.optable = optable
        self.callgraph = CallGraph(self.project, optable)
        self.memo: dict[int, Summary | None] = {}

    def summary(self, func: ast.AST, scope: ModuleScope, class_scope=None, depth: int = 0) -> Summary | None:
        key = id(func)
        memo, ledger = self.memo, self.ledger
        if key in memo:
            found = memo[key]  # None while in progress: a recursive call is opaque
            ledger.met(key, found, depth)
            return found
        if depth > _MAX_DEPTH:
            ledger.unsettled()  # memoised, it would have been answered
            return None
        if ledger.take(key, func, depth, memo):
            ledger.met(key, memo[key], depth)
            return memo[key]
        memo[key] = None
        ledger.push(key)
        result = None
        try:
            result = self.walker(self, func, scope, class_scope, depth).run()
        finally:
            ledger.pop(func, result)
        memo[key] = result
        return result

    def unsettled(self) -> None:
        """The summary being worked out met an answer that depends on the order of the check
        (the call stack's depth, when the interpreter's limit cut a resolution short)."""
        self.ledger.unsettled()


_WORDS = ("prepare_pt2e", "convert_pt2e")


def file_summaries(
    tree: ast.Module, scope: ModuleScope, text: str, analysis: Calibration, starts: list[int] | None = None
) -> list[Summary]:
    """Summaries of the module body and of every function and method that names `prepare_pt2e`
    or `convert_pt2e`, or calls a function of this module that does (up to three steps up).
    `starts`: the offset of each row of `text` (`LineIndex.starts`), if the caller has them.
    A body holds a word when one of its rows does (`mentions`: no word holds a line break)."""
    if starts is None:
        starts = [0] + [m.end() for m in re.finditer(r"\r\n|\r|\n", text)]
    pending = list(_functions(tree, scope))
    words: tuple[str, ...] = _WORDS
    chosen: list[tuple[ast.AST, object]] = []
    for _ in range(3):  # callers of helpers, and their callers
        rows = word_rows(text, starts, words)
        added = [(f, cls) for f, cls in pending if mentions(f, rows)]
        if not added:
            break
        chosen += added
        words = tuple(dict.fromkeys(f"{f.name}(" for f, _ in added if not isinstance(f, ast.Module)))
        taken = {id(f) for f, _ in added}
        pending = [p for p in pending if id(p[0]) not in taken]
    out = [analysis.summary(f, scope, cls) for f, cls in chosen]
    return [s for s in out if s is not None]


def _functions(tree: ast.Module, scope: ModuleScope):
    yield tree, None
    stack = [(tree.body, None)]
    while stack:
        body, cls = stack.pop()
        for node in body:
            kind = type(node)
            if kind is ast.ClassDef:
                known = scope.classes.get(node.name)
                stack.append((node.body, known if known is not None and known.key_node() is node else None))
            elif kind in _FUNCTION_TYPES:
                yield node, cls
                stack.append((node.body, None))
            elif kind in _BLOCK_TYPES:  # statements holding statements (not a `match`'s cases)
                for name in ("body", "orelse", "finalbody"):
                    block = getattr(node, name, None)
                    if isinstance(block, list):
                        stack.append((block, cls))
                for handler in getattr(node, "handlers", ()):
                    stack.append((handler.body, cls))


_FUNCTION_TYPES = frozenset({ast.FunctionDef, ast.AsyncFunctionDef})
_BLOCK_TYPES = frozenset(
    {ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try, getattr(ast, "TryStar", ast.Try)}
)
