"""Work the engine skips or shares must not change a finding.

QL203 asks the model-flow analysis only for bodies that can call `.eval`/`.train`: the
switches it sees must be exactly those the full analysis records.
"""

from __future__ import annotations

import ast
import os

from qlint.analysis.context import FileContext
from qlint.analysis.flow.model_flow import module_flows
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.project import ProjectIndex
from qlint.optable import load_op_table
from qlint.source import LineIndex


def make_ctx(text: str, path: str = "snippet.py") -> FileContext:
    path = os.path.abspath(path)
    return FileContext(
        path=path,
        text=text,
        tree=ast.parse(text),
        lines=LineIndex(text),
        optable=load_op_table(),
        project=ProjectIndex(),
        module=module_name_for(path),
    )


SOURCE = """
import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e, convert_pt2e


def capture(model, x):
    return torch.export.export(model, (x,)).module()


def eval_exported(gm):
    gm.eval()
    return gm


def run(model, x, q):
    gm = capture(model, x)
    gm.eval()
    eval_exported(gm)
    prepared = prepare_pt2e(gm, q)
    prepared.train()
    return convert_pt2e(prepared)


class Runner:
    def export_only(self, model, x):
        return torch.export.export(model, (x,))

    def go(self, model, x):
        ep = self.export_only(model, x)
        m = ep.module()
        m.eval()
"""


def _switches(flows):
    return sorted(
        (s.call.lineno, s.call.col_offset, s.mode, tuple(sorted(o.kind for o in s.origins)), s.patched)
        for f in flows
        for s in f.switches
    )


def test_switch_only_flows_record_the_switches_of_the_full_analysis():
    full = module_flows(make_ctx(SOURCE))
    ctx = make_ctx(SOURCE)
    only = module_flows(ctx, switches_only=True)
    assert _switches(only) == _switches(full)
    assert len(_switches(full)) == 4


def test_switch_only_flows_skip_bodies_without_a_mode_call():
    ctx = make_ctx(SOURCE)
    names = {getattr(f.node, "name", "<module>") for f in module_flows(ctx, switches_only=True)}
    assert "capture" not in names and "export_only" not in names
    assert {"eval_exported", "run", "go"} <= names


def test_full_request_after_a_switch_only_one_analyses_everything():
    ctx = make_ctx(SOURCE)
    module_flows(ctx, switches_only=True)
    names = {getattr(f.node, "name", "<module>") for f in module_flows(ctx)}
    assert {"capture", "export_only", "eval_exported", "run", "go"} <= names
    assert module_flows(ctx, switches_only=True) is module_flows(ctx)


WALKED = """
match command:
    case {"op": op, **rest} if op in OPS:
        pass
    case [first, *others]:
        pass
value = f"{node.target!r:>{width}}" + (lambda n: n.target)(node)
found = {k: [t for t in v if t.op == "call_function"] for k, v in groups.items() if (n := len(v))}
async def run():
    async with lock as held, other:
        await gen.asend(x)
    return [y async for y in aiter() if await y]
try:
    pass
except* ValueError as exc:
    del a[1:2, ...], b.c
"""


def test_body_walk_keeps_ast_walk_order_without_token_nodes():
    from qlint.analysis.tree_walk import _TOKENS, walk

    trees = [ast.parse(WALKED)]
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for folder in ("qlint/rules", "qlint/analysis/flow"):
        for name in sorted(os.listdir(os.path.join(package, folder))):
            if name.endswith(".py"):
                with open(os.path.join(package, folder, name), encoding="utf-8") as fh:
                    trees.append(ast.parse(fh.read()))
    for tree in trees:
        expected = [n for n in ast.walk(tree) if not isinstance(n, _TOKENS)]
        assert walk(tree) == expected
    assert {ast.MatchMapping, ast.JoinedStr, ast.NamedExpr, ast.TryStar} <= {type(n) for n in walk(trees[0])}


def _reference_bodies(tree, scope):
    """The statement split as first written: every statement asked for bindings and children."""
    from qlint.analysis.names.functions import Body, _child_statements
    from qlint.analysis.names.scope import ClassScope, bind_local, parameters

    module = Body(tree, {}, None)
    out = [module]
    stack = [(s, module, None) for s in reversed(tree.body)]
    while stack:
        stmt, body, cls = stack.pop()
        body.stmts.append(stmt)
        if isinstance(stmt, ast.ClassDef):
            cls_scope = scope.classes.get(stmt.name) if body is module else ClassScope.build(stmt)
            inner = Body(stmt, {}, None)
            out.append(inner)
            stack.extend((s, inner, cls_scope) for s in reversed(stmt.body))
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            inner = Body(stmt, parameters(stmt), cls if isinstance(body.node, ast.ClassDef) else None)
            out.append(inner)
            stack.extend((s, inner, None) for s in reversed(stmt.body))
        else:
            if isinstance(body.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                bind_local(body.local, stmt)
            for child in _child_statements(stmt):
                stack.append((child, body, cls))
    return out


def test_body_split_matches_the_reference_split():
    from qlint.analysis.names.functions import bodies
    from qlint.analysis.names.scope import ModuleScope

    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    sources = [WALKED]
    for folder in ("qlint/rules", "qlint/analysis/flow", "tests"):
        for name in sorted(os.listdir(os.path.join(package, folder))):
            if name.endswith(".py"):
                with open(os.path.join(package, folder, name), encoding="utf-8") as fh:
                    sources.append(fh.read())
    for text in sources:
        tree = ast.parse(text)
        scope = ModuleScope.build(tree, None, "x.py")
        got, want = bodies(tree, scope), _reference_bodies(tree, scope)
        assert [(b.node, b.stmts, b.local, b.class_scope) for b in got] == [
            (b.node, b.stmts, b.local, b.class_scope) for b in want
        ]


CHAINS = """
import torch
import torch as t
from torch import ao

tq = torch.ao.quantization
alias_of_alias = tq


class Holder:
    api = torch.ao.quantization.quantize_pt2e

    def run(self, m, q):
        return self.api.prepare_pt2e(m, q)

    @classmethod
    def conv(cls, m):
        return cls.api.convert_pt2e(m)


def f(m, q):
    local = alias_of_alias
    prepared = local.quantize_pt2e.prepare_pt2e(m, q)
    other = (
        t.ao
        .quantization.quantize_pt2e.convert_pt2e(prepared)
    )
    return ao.quantization.move_exported_model_to_eval(other)


def g(m):
    def inner(x):
        return torch.ao.quantization.quantize_pt2e.prepare_pt2e(x, None)

    torch = None  # shadows the import in this body only
    return inner(m)
"""


def test_ql401_walks_only_rows_a_chain_can_be_on(monkeypatch):
    from qlint.analysis.context import FileContext
    from tests.conftest import lint

    pruned = lint(CHAINS, select=("QL401",))
    monkeypatch.setattr(FileContext, "lines_containing", lambda self, *needles: None)
    assert pruned == lint(CHAINS, select=("QL401",))
    assert len([d for d in pruned if d.code == "QL401"]) == 7
