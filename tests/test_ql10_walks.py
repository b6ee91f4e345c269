"""The shared "own nodes" walk and the row narrowing QL101/QL102 use to do work only where
there is something: same nodes, same findings, including code split across rows."""

from __future__ import annotations

import ast
import os

import pytest

from qlint.analysis.statement_walk import own_statements
from qlint.analysis.tree_walk import _TOKENS, SCOPES, own_nodes
from tests.conftest import codes, lint

NESTED = '''
def outer(gm, model=make()):
    """doc"""
    f = lambda n: n.target == OP
    class Inner:
        x = call_inside_class()
    def inner():
        return call_inside_def()
    async def waiter():
        async with lock:
            await thing()
    for n in gm.graph.nodes:
        if n.target in {a: b for a, b in pairs if (c := a)}:
            gm.graph.call_function(OP, (n,))
    match n:
        case {"op": op, **rest} if op in OPS:
            pass
    try:
        pass
    except* ValueError as exc:
        del a[1:2, ...], b.c
    return [y for y in f"{n!r:>{w}}"]
'''


def _reference(owner, scopes=True, lambdas=False, rows=None):
    """The definition, spelled out: pre-order over `ast.iter_child_nodes`, tokens left out."""
    closed = SCOPES if not lambdas else (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
    out = []

    def visit(node):
        if isinstance(node, _TOKENS):
            return
        if rows is not None and hasattr(node, "lineno") and not any(node.lineno <= r <= node.end_lineno for r in rows):
            return
        if isinstance(node, closed):
            if scopes:
                out.append(node)
            return
        out.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    roots = owner if isinstance(owner, list) else [owner.body] if isinstance(owner, ast.Lambda) else owner.body
    for root in roots:
        visit(root)
    return out


def _trees():
    yield ast.parse(NESTED)
    package = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    for folder in ("qlint/rules", "qlint/analysis/flow", "qlint/analysis/graphs"):
        for name in sorted(os.listdir(os.path.join(package, folder))):
            if name.endswith(".py"):
                with open(os.path.join(package, folder, name), encoding="utf-8") as fh:
                    yield ast.parse(fh.read())


@pytest.mark.parametrize("scopes,lambdas", [(True, False), (False, False), (False, True)])
def test_own_nodes_is_the_pre_order_walk_of_a_body_without_nested_scopes(scopes, lambdas):
    for tree in _trees():
        owners = [tree] + [n for n in ast.walk(tree) if isinstance(n, SCOPES)]
        for owner in owners:
            assert own_nodes(owner, scopes=scopes, lambdas=lambdas) == _reference(owner, scopes, lambdas)


def test_own_statements_are_the_statements_of_own_nodes():
    for tree in _trees():
        for owner in [tree] + [n for n in ast.walk(tree) if isinstance(n, (ast.FunctionDef, ast.ClassDef))]:
            walked = own_statements(owner.body)
            assert sorted(map(id, walked)) == sorted(id(n) for n in own_nodes(owner) if isinstance(n, ast.stmt))


def test_own_statements_go_into_blocks_not_into_nested_scopes():
    body = ast.parse(NESTED).body[0].body
    walked = [type(s).__name__ for s in own_statements(body)]
    assert walked == [
        *("Expr", "Assign", "ClassDef", "FunctionDef", "AsyncFunctionDef"),
        *("For", "If", "Expr", "Match", "Pass", "TryStar", "Pass", "Delete", "Return"),
    ]
    tried = ast.parse("try:\n    a\nexcept E:\n    b\nelse:\n    c\nfinally:\n    d\n").body
    assert [ast.unparse(s) for s in list(own_statements(tried))[1:]] == ["a", "c", "d", "b"]


def test_own_nodes_of_a_function_holds_its_body_only():
    func = ast.parse(NESTED).body[0]
    walked = own_nodes(func)
    names = {n.id for n in walked if isinstance(n, ast.Name)}
    calls = {n.func.id for n in walked if isinstance(n, ast.Call) and isinstance(n.func, ast.Name)}
    assert "make" not in calls  # a default is evaluated where the function is defined
    assert not {"call_inside_class", "call_inside_def", "thing"} & calls
    assert {"pairs", "gm", "OP", "rest", "exc"} <= names | {"rest", "exc"}
    kinds = {type(n) for n in walked}
    assert {ast.Lambda, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef} <= kinds
    assert ast.Compare in {type(n) for n in own_nodes(func, lambdas=True)}
    assert not any(isinstance(n, SCOPES) for n in own_nodes(func, scopes=False))


def test_own_nodes_with_rows_leaves_out_what_spans_none():
    func = ast.parse(NESTED).body[0]
    for rows in ([13], [13, 14], [2, 19], []):
        assert own_nodes(func, scopes=False, rows=rows) == _reference(func, False, False, rows)
    calls = [n for n in own_nodes(func, rows=[14]) if isinstance(n, ast.Call)]
    assert [ast.unparse(c.func) for c in calls] == ["gm.graph.call_function"]


@pytest.mark.parametrize(
    "call",
    [
        "gm.graph.call_function(torch.ops.torchao.quantize_affine, node.args)",
        "gm.graph.call_function(\n        torch.ops.torchao.quantize_affine, node.args)",
        'gm.graph.create_node(\n        "call_function", torch.ops.torchao.quantize_affine, node.args)',
    ],
)
def test_insertions_split_across_rows_are_found(call):
    src = f"""
        import torch

        def rewrite(gm, node):
            if node.op == "call_function":
                new = {call}
        """
    assert codes(lint(src, select=("QL102",))) == ["QL102"]


def test_rows_that_only_name_call_function_insert_nothing():
    src = """
        import torch

        def rewrite(gm, node):
            if node.op == "call_function" and node.target == "call_function":
                OPS = [torch.ops.torchao.quantize_affine]
                return OPS
        """
    assert lint(src, select=("QL102",)) == []


def test_caller_that_re_exports_is_found_when_the_name_sits_on_a_row_of_its_own():
    # Callers are looked for only in functions spanning a row that holds the name.
    src = """
        import torch
        from torch.export import export
        from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e

        def count(gm):
            return sum(n.target == torch.ops.torchao.quantize_affine for n in gm.graph.nodes)

        def run(self, m, args):
            m = convert_pt2e(m)
            ep = export(m, args)
            return (
                self.
                count
            )(ep.module())
        """
    assert [d.range.start.row for d in lint(src, select=("QL101",))] == [7]
    fresh = src.replace("(ep.module())", "(m)")
    assert lint(fresh, select=("QL101",)) == []


QL103_HEAD = """\
import torch

Q = torch.ops.quantized_decomposed.quantize_per_channel.default
"""


@pytest.mark.parametrize(
    "body, named",
    [
        # Several weight tests: the last in the source is named.
        (
            'if node.target == Q and node.args[0].op == "get_attr":\n'
            '            if node.target == Q and node.args[1].op == "get_attr":\n'
            "                pass",
            'node.args[1].op == "get_attr"',
        ),
        # A weight test inside another: the outer one.
        (
            "if node.target == Q and is_param(ep, get_param(ep, node)):\n            pass",
            "is_param(ep, get_param(ep, node))",
        ),
        # A weight test in a lambda counts as the function's own.
        (
            'if node.target == Q and all(map(lambda a: a.op == "get_attr", node.args)):\n            pass',
            'a.op == "get_attr"',
        ),
    ],
)
def test_ql103_names_the_same_weight_test(tmp_path, monkeypatch, body, named):
    monkeypatch.chdir(tmp_path)  # no convert_pt2e call of another file in the snippet's project
    src = QL103_HEAD + f"\n\ndef weights(gm, ep):\n    for node in gm.graph.nodes:\n        {body}\n"
    (d,) = [d for d in lint(src, select=("QL103",), preview=True) if d.code == "QL103"]
    assert d.evidence["weight_test"] == named


def test_wrapper_that_inserts_what_it_is_given_is_found_beside_call_function_strings():
    src = """
        import torch

        def insert(graph, kind, op, args):
            if kind == "call_function":
                return graph.call_function(
                    op, args)
            return graph.create_node(kind, op, args)

        def rewrite(gm, node):
            if node.op == "call_function":
                insert(gm.graph, "call_function", torch.ops.torchao.quantize_affine, (node,))
        """
    assert [(d.code, d.range.start.row) for d in lint(src, select=("QL102",))] == [("QL102", 12)]


@pytest.mark.parametrize(
    "imports, flagged",
    [
        ("from torch.fx import symbolic_trace", False),  # legacy FX graph mode: packets are right
        ("from torch.fx import symbolic_trace\nfrom torch.export import export", True),  # both: not legacy-only
        ("import torch.fx\nimport torch.export", True),  # names written in code decide: export is modern
        ("import torch.fx", False),
    ],
)
def test_graph_context_from_imports_and_from_names_in_code(imports, flagged):
    body = (
        "torch.fx.symbolic_trace(m)" if "torch.fx\n" in imports or imports == "import torch.fx" else "symbolic_trace(m)"
    )
    src = f"import torch\n{imports}\n\n\ndef count(m):\n    gm = {body}\n"
    src += "    return sum(n.target == torch.ops.aten.relu for n in gm.graph.nodes)\n"
    if "torch.export" in imports and imports.startswith("import"):
        src += "\n\ndef other(m, args):\n    return torch.export.export(m, args)\n"
    assert bool(lint(src, select=("QL101",))) is flagged


CHAINS = """
x = torch.ops.aten.add.Tensor
y = f(a).b.c[g(h).i == j.k.l](m.n)
z = {p.q: [r(s).t.u for s in v.w], **x.y.z}
"""


@pytest.mark.parametrize(
    "kinds",
    [
        frozenset({ast.Compare, ast.Subscript, ast.Call, ast.Match}),
        frozenset({ast.Call}),
        frozenset({ast.Attribute, ast.Name}),
        frozenset({ast.Name}),
    ],
    ids=["matcher", "calls", "attributes", "names"],
)
def test_walk_kinds_is_walk_filtered(kinds):
    from qlint.analysis.tree_walk import walk, walk_kinds

    for source in (NESTED, CHAINS):
        for node in ast.walk(ast.parse(source)):
            assert walk_kinds(node, kinds) == [n for n in walk(node) if type(n) in kinds]


def test_body_nodes_of_kinds_are_the_same_nodes_in_the_same_order():
    from qlint.analysis.names.functions import bodies
    from qlint.analysis.names.scope import ModuleScope

    tree = ast.parse(NESTED + CHAINS)
    kinds = frozenset({ast.Compare, ast.Call, ast.If})
    for body in bodies(tree, ModuleScope.build(tree, None, "m.py")):
        for rows in (None, frozenset({14, 17, 30}), frozenset()):
            assert list(body.nodes(rows, kinds)) == [n for n in body.nodes(rows) if type(n) in kinds]


BODIES = (
    NESTED
    + """
class Outer(Base):
    x: int = 1
    class Inner:
        def method(self, a, *args, b=2, **kw):
            with open(a) as fh, lock:
                y = fh.read()
            for i in range(3):
                y += i
            while y:
                try:
                    z = y.pop()
                except KeyError:
                    z = None
                else:
                    w = z
                finally:
                    done = True
            match y:
                case [first, *rest]:
                    v = first
            return (q := v)
    async def run(self):
        async for item in self.items():
            async with item as it:
                r = it
"""
)


def _reference_bodies(tree):
    """Bodies as the isinstance-based split built them: pre-order statements, locals in order."""
    from qlint.analysis.names.scope import bind_local, parameters

    funcs = (ast.FunctionDef, ast.AsyncFunctionDef)
    out = []

    def visit(owner, local, stmts):
        entry = (owner, local, [])
        out.append(entry)
        for stmt in stmts:
            add(stmt, entry)

    def add(stmt, entry):
        owner, local, listed = entry
        listed.append(stmt)
        if isinstance(stmt, ast.ClassDef):
            visit(stmt, {}, stmt.body)
        elif isinstance(stmt, funcs):
            visit(stmt, parameters(stmt), stmt.body)
        else:
            if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign, ast.For, ast.AsyncFor, ast.With,
                                 ast.AsyncWith)) and isinstance(owner, funcs):  # fmt: skip
                bind_local(local, stmt)
            for name in ("body", "orelse", "finalbody"):
                for child in getattr(stmt, name, ()) or ():
                    add(child, entry)
            for handler in getattr(stmt, "handlers", ()) or ():
                for child in handler.body:
                    add(child, entry)
            for case in getattr(stmt, "cases", ()) or ():
                for child in case.body:
                    add(child, entry)

    visit(tree, {}, tree.body)
    return out


def test_bodies_split_by_node_type_is_the_same_split():
    from qlint.analysis.names.functions import bodies
    from qlint.analysis.names.scope import ModuleScope

    tree = ast.parse(BODIES)
    found = bodies(tree, ModuleScope.build(tree, None, "m.py"))
    expected = _reference_bodies(tree)
    assert sorted((id(b.node), [id(s) for s in b.stmts], b.local) for b in found) == sorted(
        (id(node), [id(s) for s in stmts], local) for node, local, stmts in expected
    )


def test_walk_is_ast_walk_without_tokens():
    # `walk` tells tokens by their types (a set) rather than by isinstance over their bases.
    from qlint.analysis.tree_walk import walk

    for tree in _trees():
        assert walk(tree) == [n for n in ast.walk(tree) if not isinstance(n, _TOKENS)]
