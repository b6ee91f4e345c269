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
  callers are unknown.
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
from qlint.analysis.graphs.project_scan import parsed_module, project_modules, scan_root, texts_spelling
from qlint.analysis.names.resolver import OpRef
from qlint.analysis.names.scope import parameter_args
from qlint.optable import OpInfo
from qlint.rules.packet_scan import OverloadSpelling, sites_spelling

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
# (who tells the packet from its overload, for the message; why, for its help)
Consumer = tuple[str, str]
# `scan_memo`'s question: a module that spells the name that follows, as a word.
_NAMES = "ql102-names:"
_OVERLOADS = "ql102-overloads:"  # ... that spells an overload of the op that follows
_INDUCTOR_PASSES = frozenset(
    {"post_grad_custom_pre_pass", "post_grad_custom_post_pass", "joint_custom_pre_pass", "joint_custom_post_pass"}
)
# `FileContext.cache` keys: the entry-point verdict per outermost definition, a module's
# `_TopNames`, the other modules parsed for the search.
_UNSEEN_KEY = "ql102.unseen-callers"
_TOP_NAMES_KEY = "ql102.top-names"
_PARSED_KEY = "ql102.parsed-users"
_NAMING_KEY = "ql102.naming"
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
        or _unseen_callers(ctx, chain)
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
    for path, text in _texts_naming(ctx, cls.name):
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
    runners = sorted({os.path.abspath(m.path) for m, _ in _users_elsewhere(ctx, outer)})
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


def _unseen_callers(ctx: FileContext, chain: list[ast.AST]) -> Consumer | None:
    """A function or class that runs the insertion is one nothing in the project runs: users
    call it with their graph and get it back. Followed from the definition holding the insertion
    through the module's own functions and classes that use it, and then through those of the
    other modules that use one of them: an entry point among them that no code uses (not the
    module's other code, not another module; an import or `__all__` naming it hands it on to
    users, which is no use) is where the graph comes from and goes back to. A pass the project
    runs only from code it runs itself hands the graph to the project's own pipeline."""
    if not chain:
        return (
            "the module's code edits a graph it does not show the consumers of",
            "the graph's consumers, and whether they key on overloads, are not in this module",
        )
    outer = getattr(chain[0], "name", "")
    memo = ctx.cache.setdefault(_UNSEEN_KEY, {})
    if outer not in memo:
        memo[outer] = None if _collected_test(ctx, chain[0]) else _first_entry(ctx, outer)
    return memo[outer]


def _collected_test(ctx: FileContext, outer: ast.AST) -> bool:
    """The definition holding the insertion is a test the runner collects from a test module
    (a `Test*` class or a `...TestCase` subclass, a `test*` function): nobody imports it from
    there to hand it a graph, so no user's matcher sees what it inserts. It runs on the graphs
    the test makes and hands them to the project's own code (coreai-torch's `TestRound`
    rewrites an exported `round` node to the packet to check that its converter lowers it).
    A helper of the module the runner does not collect is still judged by its callers."""
    from qlint.analysis.graphs.test_collection import called_by_runner, is_test_module
    from qlint.analysis.names.package_map import project_root

    root = scan_root(ctx.path) or project_root(ctx.path)
    if root is None or not is_test_module(ctx.path, root):
        return False
    if isinstance(outer, ast.ClassDef):
        return outer.name.startswith("Test") or any(_test_case_base(b) for b in outer.bases)
    return isinstance(outer, (ast.FunctionDef, ast.AsyncFunctionDef)) and called_by_runner(outer.name, False)


def _test_case_base(base: ast.expr) -> bool:
    """`unittest.TestCase`, or a base of the project's named so (`QuantizationTestCase`)."""
    name = base.attr if isinstance(base, ast.Attribute) else base.id if isinstance(base, ast.Name) else ""
    return name.endswith("TestCase")


def _first_entry(ctx: FileContext, outer: str) -> Consumer | None:
    if scan_root(ctx.path) is None:
        # Outside any package (or in a tree whose package qlint cannot map) no other module is
        # seen: the callers, and their matchers keyed on overloads, are unknown.
        return (
            f"`{outer}`'s callers are unknown",
            "qlint sees no package around this module, so its callers and the matchers keyed on overloads "
            "they hand the graph to are unknown",
        )
    here = _top_names(ctx)
    holders = here.holders(outer)
    # One read of the project for the names of every insertion's definitions in the module
    # (those asked later find theirs in the table): each read is of the whole project.
    _naming(ctx, holders.union(*(here.holders(o) for o in _inserting_outers(ctx))))
    for name in sorted(holders):
        users = _users_elsewhere(ctx, name)
        if any(_top_names(m).post_grad(name) for m in [ctx, *(m for m, _ in users)]):
            return (
                f"`{name}` is an Inductor post-grad pass",
                "Inductor's pattern matchers and lowerings after its post-grad passes are keyed on overloads",
            )
        if here.used(name, {name}):
            continue
        if not users:
            return _entry(name)
        for module, binding in users:
            names = _top_names(module)
            theirs = names.holders(*binding)
            _naming(ctx, theirs)
            entry = next((h for h in sorted(theirs) if _unused(ctx, module, names, h)), None)
            if entry is not None:
                return _entry(entry)
    return None


def _inserting_outers(ctx: FileContext) -> set[str]:
    """The outermost definitions holding the module's insertions."""
    from qlint.rules.module_insertions import insertions

    outers = set()
    for _, node in insertions(ctx):
        chain = enclosing_definitions(ctx.tree, node.lineno)
        if chain:
            outers.add(getattr(chain[0][1], "name", ""))
    return outers


def _entry(name: str) -> Consumer:
    return (
        f"nothing in the project runs `{name}`",
        "the graph goes back to its users, whose matchers are keyed on the overloads exported graphs carry",
    )


class _TopNames:
    """Per top-level statement of a module: the names it binds (a function's, a class's, an
    assignment's) and the names it reads (a name, an attribute); one walk of the module serves
    every question the entry-point search asks of it."""

    def __init__(self, tree: ast.Module):
        self.rows: list[tuple[frozenset[str], frozenset[str], ast.stmt]] = []
        for stmt in tree.body:
            read = frozenset(
                n.id if isinstance(n, ast.Name) else n.attr
                for n in ast.walk(stmt)
                if isinstance(n, (ast.Name, ast.Attribute))
            )
            self.rows.append((frozenset(_bound(stmt)), read, stmt))

    def _statements(self, skip: set[str]):
        """The statements other than those binding `skip`, and `__all__`'s (it hands names on)."""
        return ((b, r, s) for b, r, s in self.rows if not (b & skip) and "__all__" not in b)

    def holders(self, *names: str) -> set[str]:
        """`names` and what the statements that read one bind, transitively."""
        holders = set(names)
        grew = True
        while grew:
            more = {n for b, r, _ in self._statements(holders) if r & holders for n in b} - holders
            holders |= more
            grew = bool(more)
        return holders

    def used(self, name: str, skip: set[str]) -> bool:
        """A statement other than those binding `skip` reads `name`."""
        return any(name in r for _, r, _ in self._statements(skip))

    def binding(self, name: str) -> list[str]:
        """What the statements reading `name` bind (none: module-level code, run on import)."""
        return sorted(n for b, r, _ in self._statements(set()) if name in r for n in b)

    def post_grad(self, name: str) -> bool:
        """A statement sets one of Inductor's post-grad (or joint) custom passes to `name`
        (`inductor_config.post_grad_custom_post_pass = rewrite`): it runs on AOT's graph of
        overloads, before Inductor's own passes."""
        return any(
            isinstance(s, ast.Assign)
            and name in r
            and any(isinstance(t, ast.Attribute) and t.attr in _INDUCTOR_PASSES for t in s.targets)
            for _, r, s in self.rows
        )


def _top_names(module: FileContext) -> _TopNames:
    found = module.cache.get(_TOP_NAMES_KEY)
    if found is None:
        found = module.cache[_TOP_NAMES_KEY] = _TopNames(module.tree)
    return found


def _bound(stmt: ast.stmt) -> set[str]:
    """The names a top-level statement defines: a function's, a class's, an assignment's."""
    if isinstance(stmt, (*_FUNCS, ast.ClassDef)):
        return {stmt.name}
    if isinstance(stmt, (ast.Assign, ast.AnnAssign)):
        targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
        return {t.id for t in targets if isinstance(t, ast.Name)}
    return set()


def _users_elsewhere(ctx: FileContext, name: str) -> list[tuple[FileContext, list[str]]]:
    """The other modules of the project that use `name`, each with what its top-level
    statements that do bind (none: its module-level code calls it, which runs on import)."""
    parsed = ctx.cache.setdefault(_PARSED_KEY, {})
    found = []
    for path, text in _texts_naming(ctx, name):
        if path not in parsed:
            parsed[path] = parsed_module(ctx, path, text)
        module = parsed[path]
        if module is not None and _top_names(module).used(name, set()):
            found.append((module, _top_names(module).binding(name)))
    return found


def _unused(ctx: FileContext, module: FileContext, names: _TopNames, name: str) -> bool:
    """Nothing in `module` but its own definition uses `name`, and no other module of the
    project spells it."""
    if names.used(name, {name}):
        return False
    elsewhere = os.path.abspath(module.path)
    return all(os.path.abspath(p) == elsewhere for p, _ in _texts_naming(ctx, name))


def _texts_naming(ctx: FileContext, name: str) -> list[tuple[str, str]]:
    """(path, text) of each other module of the project spelling `name` as a word."""
    _naming(ctx, {name})
    return ctx.cache[_NAMING_KEY][name]


def _naming(ctx: FileContext, names: set[str]) -> None:
    """Finds the other modules spelling each of `names` not yet asked in this check, reading
    each module once for all of them; what each module answered is kept between runs
    (`scan_memo`), so a later run reads only those that spell one."""
    table = ctx.cache.setdefault(_NAMING_KEY, {})
    pending = tuple(sorted(n for n in names if n not in table))
    if not pending:
        return
    for name in pending:
        table[name] = []
    for path, text, spelled in texts_spelling(ctx, pending, question=_NAMES):
        for name in spelled:
            table[name].append((path, text))


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
