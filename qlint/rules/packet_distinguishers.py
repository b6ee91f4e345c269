"""Which consumer tells an inserted packet from its overload (QL102).

A packet node runs like its overload wherever PyTorch executes it: the insertion is a bug only
where something downstream keys on the form. QL102 reports an insertion when it finds such a
consumer, and its message names it:

- a matcher of the same package keyed on the overload graphs carry alone (another module of
  the inserting module's directory: torchao's reference representation rewrite, keyed on
  `quantize_affine.default`, next to the observer that inserts the packet). The inserting
  module's own matchers are not counted: its author wrote them for the nodes it makes (XLA's
  exporter removes only no-op `slice.Tensor` nodes, never the slice it inserts), and a matcher
  of another package (TensorRT's dynamo converters) runs in another pipeline;
- an exported program's verifier: the insertion is in an ExecuTorch `ExportPass` that the
  project constructs in a function given an `ExportedProgram` (Arm's backend pipeline), or in
  a helper of that function's module it calls, whose edge-dialect verifier rejects a packet as
  a node target. A pass constructed only on graph modules (QNN's annotation transforms, run
  before `prepare_pt2e`) is not one. Asked first of an insertion the project's own
  packet-keyed code consumes (`exported_program_pass`): the verifier sees the node too;
- the graph `convert_pt2e` returns: an observer's `convert(model, node)` (its class defines
  `calculate_qparams`) is what PT2E's convert calls on the exported graph it hands to users,
  who export and lower it next (torch's and torchao's affine observers);
- the forward graph of an AOT autograd partition function (`joint_module`,
  `num_fwd_outputs`): every other node there is a core-ATen overload, and the graph goes on
  to the forward compiler, a backend keyed on overloads (pytorch-pfn-extras' splitter);
- the project's own consumer keyed on the packet, which a function of the project runs only
  after exporting or lowering the graph again: by then the node is `.default`;
- Inductor's post-grad passes: the function is set as one of its post-grad custom passes,
  which run on AOT's graph of overloads before Inductor's own matchers and lowerings;
- callers outside the project: the function or class holding the insertion, or one running it
  (through its module's definitions, then one module further), is an entry point nothing in
  the project uses, so the graph goes back to its users, whose matchers are keyed on the
  overloads exported graphs carry; and a module outside any package qlint can map, whose
  callers are unknown (`unseen_callers`).
- a matcher beside a module that runs the pass: the project runs it and hands the graph on
  to that module's own package (QNN's quantizer runs `DecomposeSilu` in
  `transform_for_annotation`, then looks nodes up in a table its neighbouring module keys on
  `mul.Tensor` and `mul.Scalar` alone).

Where the project itself runs the pass and none of these is found, the graph goes on to the
project's own code, which does not tell the forms apart (a lowering table without the op,
passes that read op names or strip overloads, a re-export): QL102 stays quiet.
"""

from __future__ import annotations

import ast
import os
from itertools import pairwise

from qlint.analysis import scan_memo
from qlint.analysis.context import FileContext
from qlint.analysis.graphs.never_called import enclosing_definitions
from qlint.analysis.graphs.project_texts import parsed_module, project_modules
from qlint.analysis.names.op_refs import OpRef
from qlint.analysis.names.scope import parameter_args
from qlint.optable import OpInfo
from qlint.rules.op_spellings import OverloadSpelling
from qlint.rules.packet_scan import sites_spelling
from qlint.rules.unseen_callers import Consumer, texts_naming, unseen_callers, users_elsewhere

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# `scan_memo`'s question: a module that spells an overload of the op that follows.
_OVERLOADS = "ql102-overloads:"
_PROGRAM_NAMES = frozenset({"exported_program", "edge_program", "exported_programs"})


def distinguishing_consumer(
    ctx: FileContext, ref: OpRef, node: ast.expr, info: OpInfo | None, refs: list[OpRef], rows: list[int]
) -> Consumer | None:
    """What downstream of the insertion at `node` keys on the form of `ref` (who, for the
    message, and why, for its help), or None when nothing the project shows does. `refs`: every packet the module
    inserts; `rows`: the lines it inserts `ref` on (`packet_consumers` reads them)."""
    chain = [d for _, d in enclosing_definitions(ctx.tree, node.lineno)]
    return (
        _package_matcher(ctx, ref, info)
        or _observer_convert(chain)
        or _aot_partition(chain)
        or _exported_program_pass(ctx, chain)
        or _reexported_consumer(ctx, ref, refs, rows)
        or unseen_callers(ctx, chain)
        or _runner_matcher(ctx, ref, info, chain)
    )


def exported_program_pass(ctx: FileContext, node: ast.expr) -> Consumer | None:
    """The verifier of an exported program the project runs the inserting `ExportPass` on
    (`_exported_program_pass`): it rejects the packet whatever else consumes the node, so the
    project's own packet-keyed consumers (`packet_consumers`) do not make the insertion right."""
    return _exported_program_pass(ctx, [d for _, d in enclosing_definitions(ctx.tree, node.lineno)])


def _reexported_consumer(ctx: FileContext, ref: OpRef, refs: list[OpRef], rows: list[int]) -> Consumer | None:
    """The project's own consumer keyed on the packet, reached after a re-export that turned the
    node into `.default` (`packet_consumers`)."""
    from qlint.rules.packet_consumers import reexported_before_own_consumer

    consumer = reexported_before_own_consumer(ctx, ref, refs, rows)
    if consumer is None:
        return None
    return (
        f"`{os.path.basename(consumer.path)}` meets it as `.default`",
        "that module keys on the packet, but the project exports the graph again before it runs, which "
        "turns the node into `.default`",
    )


def _observer_convert(chain: list[ast.AST]) -> Consumer | None:
    """The insertion is in an observer's `convert(self, model, node)`, which PT2E's convert
    calls (`activation_post_process.convert(model, node)`) on the graph it returns."""
    for outer, inner in pairwise(chain):
        if (
            isinstance(outer, ast.ClassDef)
            and isinstance(inner, _FUNCS)
            and inner.name == "convert"
            and len(inner.args.args) == 3
            and _defines(outer, "calculate_qparams")
        ):
            return (
                f"`{outer.name}.convert` hands it to `convert_pt2e`'s users",
                "it is an observer's convert, which `convert_pt2e` runs on the graph it returns to users, who "
                "export and lower it next (matchers and verifiers keyed on overloads)",
            )
    return None


def _aot_partition(chain: list[ast.AST]) -> Consumer | None:
    """The insertion is in an AOT autograd partition function (its joint graph is AOT's trace,
    core-ATen overloads throughout), building the graph the forward compiler gets."""
    for func in chain:
        if isinstance(func, _FUNCS) and {"joint_module", "num_fwd_outputs"} <= _parameters(func):
            return (
                f"`{func.name}` hands it to a forward compiler keyed on overloads",
                "it partitions AOT autograd's joint graph (overloads throughout) for the forward compiler",
            )
    return None


def _exported_program_pass(ctx: FileContext, chain: list[ast.AST]) -> Consumer | None:
    """The insertion is in an `ExportPass` the project constructs in a function given an
    exported program (a parameter annotated `ExportedProgram`, or named for one): the pass
    edits that program's graph, which its verifier checks."""
    cls = next((d for d in chain if isinstance(d, ast.ClassDef) and _derives_export_pass(d)), None)
    if cls is None:
        return None
    own = os.path.abspath(ctx.path)
    modules = [ctx]
    for path, text in texts_naming(ctx, cls.name):
        if os.path.abspath(path) != own and (module := parsed_module(ctx, path, text)) is not None:
            modules.append(module)
    for module in modules:
        funcs = [f for f in ast.walk(module.tree) if isinstance(f, _FUNCS)]
        for func in funcs:
            if not _constructs(func, cls.name):
                continue
            # The function given the program, or one of the module's that is and calls it (a
            # pipeline handing `exported_program.graph_module` to the helper running the passes).
            callers = (f for f in funcs if _takes_program(f) and _calls(f, func.name))
            given = func if _takes_program(func) else next(callers, None)
            if given is not None:
                # The pass is named in the help: with it, the message outgrew one short line.
                return (
                    f"`{given.name}` runs this pass on an exported program",
                    f"`{given.name}` ({os.path.basename(module.path)}) runs `{cls.name}` on an exported program, "
                    "whose verifier rejects a packet as a node target",
                )
    return None


def _package_matcher(ctx: FileContext, ref: OpRef, info: OpInfo | None) -> Consumer | None:
    """Another module of the inserting module's directory keys nodes on an overload of the op
    that graphs carry, and not on its packet at that site: it misses the packet node."""
    found = _directory_matcher(ctx, ref, info, os.path.dirname(os.path.abspath(ctx.path)))
    if found is None:
        return None
    path, overload = found
    return (
        f"`{os.path.basename(path)}` matches `.{overload}` alone",
        f"that module keys on `{ref.namespace}.{ref.op}.{overload}` alone, and misses this node",
    )


def _runner_matcher(ctx: FileContext, ref: OpRef, info: OpInfo | None, chain: list[ast.AST]) -> Consumer | None:
    """A module of the directory of a module that runs the pass (uses the outermost definition
    holding the insertion) keys nodes on an overload alone, as `_package_matcher` reads one:
    the pass's runner hands the graph to its own package. ExecuTorch's QNN quantizer runs
    `DecomposeSilu` in `transform_for_annotation` and then looks each node up in its annotator
    table, which at mid-2024 registered `mul.Tensor` and `mul.Scalar` alone."""
    outer = getattr(chain[0], "name", None) if chain else None
    if outer is None:
        return None
    own = os.path.dirname(os.path.abspath(ctx.path))
    runners = sorted({os.path.abspath(m.path) for m, _ in users_elsewhere(ctx, outer)})
    for runner in runners:
        here = os.path.dirname(runner)
        # A runner in the inserting module's own directory: `_package_matcher` read it already.
        found = None if here == own else _directory_matcher(ctx, ref, info, here)
        if found is not None:
            path, overload = found
            return (
                f"`{os.path.basename(path)}` matches `.{overload}` alone",
                f"`{os.path.basename(runner)}` runs this pass, and `{os.path.basename(path)}` beside it keys on "
                f"`{ref.namespace}.{ref.op}.{overload}` alone, and misses this node",
            )
    return None


def _directory_matcher(ctx: FileContext, ref: OpRef, info: OpInfo | None, here: str) -> tuple[str, str] | None:
    """(path, overload) of a module of directory `here` (not the checked one) keying nodes on an
    overload of the op graphs carry, and not on its packet at that site."""
    cache_key = ("ql102.package-matcher", ref.key, here)
    if cache_key in ctx.cache:
        return ctx.cache[cache_key]
    found = None
    own = os.path.abspath(ctx.path)
    question = _OVERLOADS + f"{ref.namespace}.{ref.op}"
    # The project's paths are under its absolute root: one outside the directory's prefix is in
    # another directory, and is passed over without normalising it (ExecuTorch: ~4,600 a call).
    modules = [
        (p, k)
        for p, k in project_modules(ctx, (ref.op,))
        if k is not None
        and p.startswith(here)
        and os.path.abspath(p) != own
        and os.path.dirname(os.path.abspath(p)) == here
    ]
    carried = set(info.carried) if info is not None and info.carried else None
    overload = OverloadSpelling(ref)
    for path, key, (known,) in scan_memo.unanswered(modules, [question]):
        if known is False:
            continue
        sites = sites_spelling(ctx, path, key, overload, ref.op)
        scan_memo.note(path, question, key, sites is not None)
        for site in sites or ():
            same = [r for r in site if r.key == ref.key]
            keyed = sorted(r.overload for r in same if r.overload and (carried is None or r.overload in carried))
            if keyed and not any(r.is_packet for r in same):
                found = (path, keyed[0])
                break
        if found:
            break
    ctx.cache[cache_key] = found
    return found


def _defines(cls: ast.ClassDef, name: str) -> bool:
    return any(isinstance(s, _FUNCS) and s.name == name for s in cls.body)


def _parameters(func: ast.AST) -> set[str]:
    return {a.arg for a in parameter_args(func, star=False)}


def _derives_export_pass(cls: ast.ClassDef) -> bool:
    return any(_last(b) == "ExportPass" for b in cls.bases)


def _takes_program(func: ast.AST) -> bool:
    for a in parameter_args(func, star=False):
        if a.arg in _PROGRAM_NAMES:
            return True
        if a.annotation is not None and _last(a.annotation) == "ExportedProgram":
            return True
    return False


def _constructs(func: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Call) and _last(n.func) == name for n in ast.walk(func))


def _calls(func: ast.AST, name: str) -> bool:
    return func.name != name and _constructs(func, name)


def _last(expr: ast.AST) -> str | None:
    if isinstance(expr, ast.Subscript):
        expr = expr.value
    if isinstance(expr, ast.Attribute):
        return expr.attr
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return expr.value.rpartition(".")[2]
    return None
