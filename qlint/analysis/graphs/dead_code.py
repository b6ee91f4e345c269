"""Code nothing in the project runs: a finding there breaks nothing (issue 14's dead rows).

Where every way to reach code is visible in the project, code nobody reaches is dead:

- a function or method of a test or test-support module (`test_collection`) that the runner
  does not call by itself (not `test*`, not a hook, not decorated: a fixture) and that no code
  of the project names (ao's `dynamic_quant`, ExecuTorch's
  `quantize_and_test_model_with_quantizer`; a module spelling the name only as its own
  function of that name does not name it, `own_namesakes`: ExecuTorch's vulkan
  `quantize_and_lower_module`); not in a program named like a test (a `__main__` block that
  does more than start a runner);
- a module-level function the project names only in calls that never run: after an
  unconditional `exit`/`sys.exit`/`raise`/`return` in the same block (edge's
  `static_quantize`, called after `exit(0)`), or in its own body (recursion);
- a script's module-level function whose only call its module comments out and that nothing
  else names (`unreached_api`: qtta's `do_pt2e`, beside the experiment its `__main__` runs);
- a whole script outside any package, among other modules, that none of them imports and
  that runs nothing at module level (imports, definitions and constant assignments only; no
  `__main__` guard): running it does nothing but its imports, and importing it is the only way
  in (diart's `old_or_unfinished.py`), unless a module of the project that loads modules from
  a path it computes names one of its definitions (`path_loaders`: LLM2FPGA's adapters, loaded
  by the path a flag names for the `export_program` the loader calls).

A public function of a library package that the project never names stays live: users call
it (quantized-training's `is_pooling`, AITemplate's `nchw2nhwc_pass`), unless its only call is
commented out (`unreached_api`: the Gaudi bridge's softmax replacement). So does a lone module (a
snippet, a one-file library: none of its users is in the project), anything in a module that
looks names up at run time, and anything a name search by word over every module under the
project's root (the package's; a script's repository or project directory) finds. Not seen:
a module run by `python -m` or by path from a README or a shell script (a dead script runs
nothing then but its imports), a computed `getattr` on this module from another module, a
function whose only callers are themselves dead functions (not followed), and callers in
another repository.
"""

from __future__ import annotations

import ast
import os
import re
from bisect import bisect_left

from qlint.analysis.context import FileContext
from qlint.analysis.graphs.named_texts import spelled_elsewhere
from qlint.analysis.graphs.never_called import DYNAMIC_LOOKUP, computed_getattr, enclosing_definitions, read_in
from qlint.analysis.graphs.path_loaders import loaded_by_path
from qlint.analysis.graphs.project_scan import scan_root
from qlint.analysis.graphs.project_texts import project_modules
from qlint.analysis.graphs.skipped_tests import always_skipped
from qlint.analysis.graphs.test_collection import called_by_runner, is_test_module, runner_base
from qlint.analysis.graphs.unreached_api import unreached_public, unreached_script_function
from qlint.analysis.names.package_map import project_root
from qlint.analysis.tree_walk import first_row, names_by_id, spans_rows, walk_kinds
from qlint.analysis.word_search import AnchoredPattern, ascii_word_count

# The rules whose findings describe what code does when it runs: in dead code they describe
# nothing. (QL401/QL402: an import of a removed API in a file nothing imports breaks nothing.)
DEAD_RULES = frozenset({"QL101", "QL102", "QL201", "QL202", "QL203", "QL204", "QL401", "QL402"})

_FUNCS = (ast.FunctionDef, ast.AsyncFunctionDef)
_EXITS = frozenset({"exit", "quit", "sys.exit", "os._exit"})
_MEMO = "dead_code.rows"
_RUNNER_ENTRIES = frozenset({"unittest.main", "pytest.main", "run_tests"})
_SELF_MODULE = AnchoredPattern(
    r"\bsys\.modules\b|\bimport_module\s*\(|\b__import__\s*\(", ("sys.modules", "import_module", "__import__")
)


def is_dead(ctx: FileContext, row: int) -> bool:
    """Whether the code at `row` is code nothing in the project runs."""
    chain = enclosing_definitions(ctx.tree, row)
    # The outermost function, or a module-level class's method: what the search decides on.
    target = chain[:2] if chain and isinstance(chain[0][1], ast.ClassDef) else chain[:1]
    memo = ctx.cache.setdefault(_MEMO, {})
    key = target[-1][1] if target else None
    if key not in memo:
        memo[key] = _dead(ctx, target)
    return memo[key]


def _dead(ctx: FileContext, target: list[tuple[ast.AST, ast.AST]]) -> bool:
    package = scan_root(ctx.path)
    root = package or project_root(ctx.path)
    if root is None:
        return False
    test = is_test_module(ctx.path, root)
    # A script is no API when it is one program among the project's modules: a lone module
    # (a snippet, a one-file library) shows none of its users.
    if package is None and not test and _has_neighbours(ctx, root) and _dead_script(ctx, root):
        return True
    # A test every run skips (`skipped_tests`) is never called by the runner, whatever the
    # module looks up at run time: its code is dead as an uncalled helper's is.
    if test and _skipped_test(ctx, target) and not _program(ctx.tree):
        return True
    if DYNAMIC_LOOKUP.in_module(ctx):
        return False
    # `getattr(m, name)` with a computed name reaches a method of `m`; a module-level
    # function only through a module object, which this module gets by `sys.modules` or an
    # import by name (ao's test_quant_api looks up submodules of a model so).
    if (len(target) != 1 or _SELF_MODULE.in_module(ctx)) and computed_getattr(ctx):  # the walk last
        return False
    # A test module's helpers are judged by name; not those of a program named like a test
    # (torch_script's `test_jira_*.py`, run by its `__main__` block, not by a runner), nor a
    # script's: a program's helper nothing calls may be run by hand (autoware's
    # `run_validation`, which a comment only names); one whose only call is commented out
    # (qtta's `do_pt2e`) is switched off (`unreached_api`).
    judged_by_name = test and not _program(ctx.tree)
    if not target or not isinstance(target[-1][1], _FUNCS):
        return False  # module-level code, or a class body (it runs on import)
    func = target[-1][1]
    if func.decorator_list:
        return False  # a fixture, a registration: a decorator may call it
    if len(target) == 2:  # a method: reached by name unless a base may call it
        if not judged_by_name or not _uncalled_method(ctx, target[0][1], func):
            return False
        return not _read_in_module(ctx, func) and not _named_elsewhere(ctx, func.name, root)
    if judged_by_name and not called_by_runner(func.name, False) and not _read_in_module(ctx, func):
        return not _named_elsewhere(ctx, func.name, root)
    if _called_only_where_dead(ctx, func) and not _named_elsewhere(ctx, func.name, root):
        return True
    # A package's public function: API, unless its authors turned its only call off. A
    # script's function (a program's, named like a test or not) is no API: dead as well when
    # its only call is turned off, unless a runner collects it by its name from a module named
    # like a test (torch_script's `test_rn50_fp32`, commented out under `__main__`: pytest
    # still runs it).
    repo = project_root(ctx.path) or root
    if package is not None:
        return not test and unreached_public(ctx, func, repo)
    if judged_by_name or (test and called_by_runner(func.name, False)):
        return False
    return unreached_script_function(ctx, func, repo)


# What a runner calls in a skipped class: its tests and their set-up and tear-down (a helper
# method may be called from elsewhere: not followed).
_CLASS_SKIPPED = frozenset(
    {"setUp", "tearDown", "setUpClass", "tearDownClass", "setup_method", "teardown_method"}
    | {"setup_class", "teardown_class"}
)


def _skipped_test(ctx: FileContext, target: list[tuple[ast.AST, ast.AST]]) -> bool:
    """A `test*` function or method skipped on every run, or a test or set-up method of a
    class skipped so."""
    if not target or not isinstance(target[-1][1], _FUNCS):
        return False
    func = target[-1][1]
    if func.name.startswith("test") and always_skipped(ctx, func):
        return True
    if len(target) != 2:
        return False
    runs = func.name.startswith("test") or func.name in _CLASS_SKIPPED
    return runs and always_skipped(ctx, target[0][1])


def _uncalled_method(ctx: FileContext, cls: ast.ClassDef, method: ast.AST) -> bool:
    """A plain method of an undecorated module-level class whose bases call nothing by a name
    the module does not spell."""
    if cls.decorator_list or cls.keywords or called_by_runner(method.name, True):
        return False
    classes = {node.name: node for node in ctx.tree.body if isinstance(node, ast.ClassDef)}
    return _known_bases(cls, classes, ())


def _known_bases(cls: ast.ClassDef, classes: dict[str, ast.ClassDef], seen: tuple[str, ...]) -> bool:
    """Whether every base up the class's chain is `unittest.TestCase` or a class of the
    module (whose calls by name are in the module's text)."""
    for base in cls.bases:
        if isinstance(base, ast.Name) and base.id in classes and base.id not in seen:
            if not _known_bases(classes[base.id], classes, (*seen, base.id)):
                return False
        elif not runner_base(base):
            return False
    return True


def _read_in_module(ctx: FileContext, func: ast.AST) -> bool:
    """`read_in` over the whole module, without its walk when the text spells the name once
    (by its `def`): an editor asks on every keystroke. A text that is not ASCII may spell an
    identifier another way (identifiers are read NFKC-normalised), so it is walked."""
    if _spelled_once(ctx, func.name):
        return False
    return read_in(ctx.tree, func)


def _spelled_once(ctx: FileContext, name: str) -> bool:
    """Whether an ASCII text spells the name as a word at most once: a function's `def` alone,
    so no `Name` node of the module reads or binds it. A text that is not ASCII may spell an
    identifier another way (identifiers are read NFKC-normalised): never answered so."""
    text = ctx.text
    return text.isascii() and ascii_word_count(text, name, 2) <= 1


def _named_elsewhere(ctx: FileContext, name: str, root: str) -> bool:
    return spelled_elsewhere(ctx, name, root)


def _has_neighbours(ctx: FileContext, root: str) -> bool:
    own = os.path.abspath(ctx.path)
    return any(os.path.abspath(path) != own for path, _ in project_modules(ctx, (), root))


def _main_guards(tree: ast.Module) -> list[ast.If]:
    """The module's `if __name__ == "__main__":` blocks."""
    return [
        statement
        for statement in tree.body
        if isinstance(statement, ast.If)
        and isinstance(statement.test, ast.Compare)
        and "__name__" in ast.unparse(statement.test)
        and "__main__" in ast.unparse(statement.test)
    ]


def _program(tree: ast.Module) -> bool:
    """A `__main__` block that does more than hand the module to a test runner
    (`unittest.main()`, `run_tests()`, `pytest.main(...)`)."""
    for guard in _main_guards(tree):
        for statement in guard.body:
            call = statement.value if isinstance(statement, ast.Expr) else None
            spelled = ast.unparse(call.func) if isinstance(call, ast.Call) else ""
            if spelled not in _RUNNER_ENTRIES and not spelled.endswith(".run_tests"):
                return True
    return False


def _dead_script(ctx: FileContext, root: str) -> bool:
    """A script outside any package that runs nothing at module level and that no module
    under the repository imports (spells its module name)."""
    # A file of imports alone has no helpers to leave dead: its imports are what it does
    # when run (ECM-ATML's `quantize2pte.py`, cxfinal's `libraryImport.py`).
    defines = any(isinstance(statement, (*_FUNCS, ast.ClassDef)) for statement in ctx.tree.body)
    return defines and _definitions_only(ctx.tree) and _unimported(ctx, root) and not loaded_by_path(ctx, root)


def _definitions_only(tree: ast.Module) -> bool:
    """Whether the module runs nothing at import but imports, definitions and constants."""
    for statement in tree.body:
        if isinstance(statement, (ast.Import, ast.ImportFrom, *_FUNCS, ast.ClassDef)):
            continue
        if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant):
            continue  # a docstring
        if isinstance(statement, (ast.Assign, ast.AnnAssign)) and _constant(statement.value):
            continue
        return False
    return True


def _unimported(ctx: FileContext, root: str) -> bool:
    """Whether no module under the root spells the script's module name (an import), in a
    folder of programs."""
    stem = os.path.splitext(os.path.basename(ctx.path))[0]
    return stem.isidentifier() and _beside_programs(ctx, root) and not _named_elsewhere(ctx, stem, root)


def _beside_programs(ctx: FileContext, root: str) -> bool:
    """Whether another script of its folder runs code at module level: a folder of programs,
    where a module of definitions nobody imports is a leftover. A module of definitions
    beside a package or alone in its folder may be a flat library module or an entry point
    a packaging file names (`run:main`): its users are not in the project's Python text."""
    own = os.path.abspath(ctx.path)
    folder = os.path.dirname(own)
    for path, key in project_modules(ctx, (), root):
        path = os.path.abspath(path)
        if path == own or os.path.dirname(path) != folder or key is None:
            continue
        neighbour = ctx.project.text(path)
        if neighbour is not None and _runs_code(neighbour):
            return True
    return False


def _runs_code(text: str) -> bool:
    """Whether a module is a program: it calls, loops or has a `__main__` block at module
    level. Assignments alone are not enough: a flat library module binds `DQ = torch.ops...`
    or a logger, and its neighbours are its users' modules, not leftovers."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError, RecursionError):
        return False
    return bool(_main_guards(tree)) or any(
        isinstance(statement, (ast.For, ast.While, ast.With))
        or (isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call))
        for statement in tree.body
    )


def _constant(value: ast.expr | None) -> bool:
    return value is None or all(
        isinstance(node, (ast.Constant, ast.Tuple, ast.List, ast.Set, ast.Dict, ast.Load, ast.UnaryOp, ast.USub))
        for node in ast.walk(value)
    )


def _called_only_where_dead(ctx: FileContext, func: ast.AST) -> bool:
    """Whether the module names the function, and only in calls that never run: after an
    unconditional exit in the same block, or inside the function itself."""
    name = func.name
    # Spelled once, by its `def`: no name of it anywhere, found without the module's walk (an
    # editor asks on every keystroke: the walk of a 2,000-line module is ~65 M instructions).
    if _spelled_once(ctx, name):
        return False
    own = set(map(id, ast.walk(func)))
    # The module's names of it: none at all, or one outside the function on a live row, settles
    # it without walking the module for this function.
    named = [n for n in _module_names(ctx, name) if id(n) not in own]
    if not named:
        return False
    dead = _dead_statements(ctx, sorted({n.lineno for n in named}))
    if any(not any(first <= n.lineno <= last for first, last in dead) for n in named):
        return False
    word = re.compile(rf"\b{re.escape(name)}\b")
    calls = 0
    for node in ast.walk(ctx.tree):
        if id(node) in own:
            continue
        if isinstance(node, ast.Name) and node.id == name:
            if not any(first <= node.lineno <= last for first, last in dead):
                return False
            calls += 1
        elif _spells(node, name, word):
            return False
    return calls > 0


_NAME_KINDS = frozenset({ast.Name})


def _module_names(ctx: FileContext, name: str) -> list[ast.Name]:
    """The module's `Name` nodes of `name` (in no set order). In an ASCII text each sits on a
    row spelling the name, inside the top-level statement spanning that row (a definition from
    its first decorator): only those statements are walked, not the whole module as the index
    of every name (`names_by_id`) walks it, once per keystroke in an editor. A text that is not
    ASCII may spell an identifier another way: the index answers."""
    if not ctx.text.isascii():
        return names_by_id(ctx.tree).get(name, [])
    rows = sorted(ctx.lines_containing(name))
    found: list[ast.Name] = []
    for stmt in ctx.tree.body:
        i = bisect_left(rows, first_row(stmt))
        if i < len(rows) and rows[i] <= (stmt.end_lineno or stmt.lineno):
            found.extend(n for n in walk_kinds(stmt, _NAME_KINDS) if n.id == name)
    return found


def _spells(node: ast.AST, name: str, word: re.Pattern[str]) -> bool:
    """Whether `node` names the function otherwise than as a plain name: an attribute, an
    import, a second definition, a string holding it as a word (`getattr`, `__all__`)."""
    if isinstance(node, ast.Attribute):
        return node.attr == name
    if isinstance(node, ast.alias):
        return name in (node.name.rpartition(".")[2], node.asname)
    if isinstance(node, (*_FUNCS, ast.ClassDef)):
        return node.name == name
    return isinstance(node, ast.Constant) and isinstance(node.value, str) and bool(word.search(node.value))


def _dead_statements(ctx: FileContext, rows: list[int]) -> list[tuple[int, int]]:
    """Line spans of the statements that follow an unconditional exit in their block, among
    the blocks whose owner spans one of `rows` (sorted): the spans holding those rows are all
    there. Only statements (and their handlers and cases) hold blocks, and a block's owner
    spans its statements, so the search goes down the statements spanning a row alone, not
    over every node of the module (one walk per keystroke in an editor)."""
    spans: list[tuple[int, int]] = []
    owners: list[ast.AST] = [ctx.tree]
    while owners:
        node = owners.pop()
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)
            if not isinstance(block, list):
                continue
            owners.extend(s for s in block if spans_rows(s, rows))
            if field in ("handlers", "cases"):
                continue
            stop = next((i for i, s in enumerate(block) if isinstance(s, ast.stmt) and _exits(s)), None)
            if stop is not None:
                spans.extend((s.lineno, s.end_lineno or s.lineno) for s in block[stop + 1 :])
    return spans


def _exits(statement: ast.stmt) -> bool:
    """A statement after which its block never goes on."""
    if isinstance(statement, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    if isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Call):
        func = statement.value.func
        spelled = ast.unparse(func) if isinstance(func, (ast.Name, ast.Attribute)) else ""
        return spelled in _EXITS
    return False


def drop_dead(ctx: FileContext, diagnostics: list) -> list:
    """The findings, less those of the rules in `DEAD_RULES` that sit in dead code."""
    if not any(d.code in DEAD_RULES for d in diagnostics):
        return diagnostics
    return [d for d in diagnostics if d.code not in DEAD_RULES or not is_dead(ctx, d.range.start.row)]
