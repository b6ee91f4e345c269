"""A comprehension read as the loop it stands for (issue 14, item 7; ExecuTorch's Qualcomm
multi-graph test).

    edge_progs = [
        capture_program(self.get_qdq_module(module, sample_input), sample_input)
        for module, sample_input in zip(modules, sample_inputs)
    ]

runs what

    for module, sample_input in zip(modules, sample_inputs):
        capture_program(self.get_qdq_module(module, sample_input), sample_input)

runs, each condition (`if c`) guarding what follows it, each further generator a loop inside
the one before. The walk (`loop_walk.comprehension`) reads a comprehension as that loop: the calls in it
are calls the walk follows (a helper's caller there is a caller it can judge), and its targets
are bound as a loop's are (`loop_items`: an item of a container written here, else a value it
cannot follow). The targets are the comprehension's own: the names of the function keep their
values after it. What the comprehension builds (the list) is still no value the walk follows.

The loop is made once per comprehension and kept on its node: its statements are new nodes
(placed at the comprehension), its expressions the comprehension's own.
"""

from __future__ import annotations

import ast

from qlint.analysis.node_memo import kept_on_node

COMPREHENSIONS = (ast.ListComp, ast.SetComp, ast.DictComp, ast.GeneratorExp)
_LOOP = "_qlint_comprehension_loop"
_TARGETS = "_qlint_comprehension_targets"


def as_loop(comp: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> ast.For | ast.AsyncFor:
    """The loop `comp` stands for (kept on its node)."""
    return kept_on_node(comp, _LOOP, _loop)


def targets(comp: ast.ListComp | ast.SetComp | ast.DictComp | ast.GeneratorExp) -> frozenset[str]:
    """The names the comprehension's generators bind (its own scope's)."""
    return kept_on_node(comp, _TARGETS, _targets)


def _loop(comp) -> ast.For | ast.AsyncFor:
    parts = [comp.key, comp.value] if isinstance(comp, ast.DictComp) else [comp.elt]
    body: list[ast.stmt] = [_placed(ast.Expr(value=p), comp) for p in parts]
    for gen in reversed(comp.generators):
        for cond in reversed(gen.ifs):
            body = [_placed(ast.If(test=cond, body=body, orelse=[]), comp)]
        kind = ast.AsyncFor if gen.is_async else ast.For
        body = [_placed(kind(target=gen.target, iter=gen.iter, body=body, orelse=[], type_comment=None), comp)]
    return body[0]


def _placed(stmt: ast.stmt, comp: ast.expr) -> ast.stmt:
    return ast.copy_location(stmt, comp)


def _targets(comp) -> frozenset[str]:
    return frozenset(n.id for gen in comp.generators for n in ast.walk(gen.target) if isinstance(n, ast.Name))


__all__ = ["COMPREHENSIONS", "as_loop", "targets"]
