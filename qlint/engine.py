"""The per-file pipeline every face shares: decode → trigger prefilter → parse → rules → noqa.

`check_source` is the one in-memory entry point: the CLI feeds it file bytes, the language
server feeds it unsaved buffers under their real path, the fixer feeds it its own output.
"""

from __future__ import annotations

import ast
import os
import re
import sys
from collections.abc import Callable

from qlint.analysis.names.live_trees import LIVE
from qlint.analysis.names.live_trees import parse as live_parse
from qlint.analysis.names.modules import module_name_for
from qlint.analysis.names.piecewise_parse import parse_whole_or_in_pieces
from qlint.analysis.names.project import ProjectIndex
from qlint.analysis.names.tree_handover import HANDOVER
from qlint.diagnostic import Diagnostic, Range
from qlint.gc_pause import gc_paused
from qlint.lazy_patterns import lazy
from qlint.optable import OpTable, load_op_table
from qlint.registry import engine_rule, origin
from qlint.results import FileResult, content_hash, display_path  # noqa: F401  (older callers import them here)
from qlint.rules.base import EngineReport, FileContext, Rule, skips_by_name
from qlint.settings import Settings
from qlint.source import DecodeError, LineIndex, decode_source
from qlint.suppressions import Suppressions, parse_suppressions, unused_noqa
from qlint.value_classes import replace

# ast.parse recurses per nesting level; a generated file with thousands of nested
# brackets must become a QL001, not a crash of the whole run.
_PARSE_RECURSION_LIMIT = 20_000
# Found by regex, not tokenize: the file may be exactly what tokenize cannot read.
_FILE_NOQA_QL001 = lazy(r"#\s*qlint\s*:\s*noqa(?!\s*:)|#\s*qlint\s*:\s*noqa\s*:[^\n]*\bQL001\b", re.I)


def syntax_error(path: str, message: str, row: int = 1, col: int = 0, help: str | None = None) -> Diagnostic:
    rule = engine_rule(EngineReport.PARSE_ERROR)
    return Diagnostic(rule.code, rule.name, message, path, Range.of(row, col, row, col), noqa_row=row, help=help)


def reports_ql001(settings: Settings, path: str, text: str) -> bool:
    """In a file an enabled rule reads, QL001 is reported whatever `select`/`ignore` say of
    it (as ruff reports syntax errors): a file that could not be checked must never pass
    silently. Only an explicit per-file-ignore of QL001 or a file-level `# qlint: noqa`
    (bare or naming QL001) silences it."""
    if "QL001" in settings.explicit_per_file_ignores(path):
        return False
    return not mentions_noqa(text) or _FILE_NOQA_QL001.search(text) is None


def mentions_noqa(text: str) -> bool:
    """False when no `noqa` comment can be there, in a seventh of the time of any noqa regex
    (`re.IGNORECASE` cannot use a fast literal search). Exact: no character but N, O, Q and A
    matches those letters case-insensitively, in the regex engine or in `str.lower`.

    A text with other characters than ASCII is lowered as UTF-8 bytes: `str.lower` looks every
    character up in the Unicode tables (ExecuTorch's 380 such files, 7.7 M characters: twice
    the time of encoding and lowering the bytes). The same answer: no other character lowers
    to a text holding N, O, Q or A, and its bytes are all above 127, which `bytes.lower` leaves
    alone and no ASCII letter's byte is."""
    if text.isascii():
        return "noqa" in text.lower()
    return b"noqa" in text.encode("utf-8", "surrogatepass").lower()


def finds_noqa(pattern: re.Pattern[str], text: str) -> bool:
    """`pattern.search(text)` for a pattern that starts with the word `noqa`: tried only where
    the word is (an IGNORECASE search scans a 4,000-line module for ~4 ms, for its few noqa
    comments). Where lowering changes the text's length (`İ`), offsets differ: the whole search."""
    lowered = text.lower()
    if len(lowered) != len(text):
        return pattern.search(text) is not None
    at = lowered.find("noqa")
    while at != -1:
        if pattern.match(text, at) is not None:
            return True
        at = lowered.find("noqa", at + 1)
    return False


def _ignored_rule_could_report(text: str, path: str, settings: Settings, judged: frozenset[str]) -> bool:
    """A rule the run enables, but a per-file-ignores entry turned off here, reads this file:
    worth parsing for QL001, which only an entry naming QL001 itself silences. Rules the run
    does not enable (not selected, or preview without `--preview`) are never asked: a rule
    that is off costs nothing, parses included. The `judged` rules (the ones enabled here)
    were just found not triggered: asking them again would only repeat it."""
    return any(
        r.code not in judged and r.triggered_by(text) and not r.skips_module(module_name_for(path))
        for r in settings.checking_rules
    )


def parse_module(text: str, path: str) -> ast.Module:
    """`ast.parse` with a deeper recursion budget; raises SyntaxError/ValueError/RecursionError.
    A large module is parsed in pieces (`parse_whole_or_in_pieces`: the same tree, or what the whole
    parse raises), without the parser's whole-module tree beside the one it returns: the check
    of ExecuTorch's qualcomm test_qnn_delegate.py (465 KB) raised its worker's peak by ~25 MiB."""
    old = sys.getrecursionlimit()
    sys.setrecursionlimit(max(old, _PARSE_RECURSION_LIMIT))
    try:
        return parse_whole_or_in_pieces(text, path)
    finally:
        sys.setrecursionlimit(old)


# Set by a command that checks one buffer and then ends (`qlint check -`): what the check
# built (the tree, the analyses, the project's modules) is left to the exit, which skips the
# teardown (`qlint.process_exit`), instead of being freed before the output: ~5% of the check
# of ao's 4,307-line test_quantize_pt2e.py.
_LEFT_FOR_EXIT: list[FileContext] | None = None


def leave_for_exit() -> None:
    """The process ends after this command's one check: nothing it builds needs freeing."""
    global _LEFT_FOR_EXIT
    if _LEFT_FOR_EXIT is None:
        _LEFT_FOR_EXIT = []


def _handed_tree(source: str | bytes, path: str) -> ast.Module | None:
    """The tree a module summary of this run parsed from these very bytes (`tree_handover`)."""
    if not isinstance(source, bytes) or not HANDOVER.expects(path := os.path.abspath(path)):
        return None
    return HANDOVER.take(path, source)


class CheckCancelled(Exception):
    """`check_source` stopped between two rules because its caller no longer wants the result."""


def check_source(
    source: str | bytes,
    path: str,
    settings: Settings,
    project: ProjectIndex | None = None,
    optable: OpTable | None = None,
    cancelled: Callable[[], bool] | None = None,
) -> FileResult:
    """`cancelled`: asked between rules; when it says True the check stops with
    `CheckCancelled` (the language server: the buffer changed again, its result would be
    dropped anyway). A rule's work is never interrupted halfway."""
    kept = sys.modules.get("qlint.analysis.graphs.kept_answers")
    if kept is not None:  # imported with a summary store: the answers asked now are this file's
        kept.checking(path)
    with gc_paused():
        result = _check_source(source, path, settings, project, optable, cancelled)
    if settings.rule_url:  # every face (reporters, LSP) reads `Diagnostic.url`
        result.diagnostics = [replace(d, url_template=settings.rule_url) for d in result.diagnostics]
    return result


def _check_source(
    source: str | bytes,
    path: str,
    settings: Settings,
    project: ProjectIndex | None,
    optable: OpTable | None,
    cancelled: Callable[[], bool] | None = None,
) -> FileResult:
    result = FileResult(path=path)
    parse_error = engine_rule(EngineReport.PARSE_ERROR).code
    if isinstance(source, bytes):
        try:
            text = decode_source(source)
        except DecodeError as exc:
            if reports_ql001(settings, path, source.decode("latin-1")):
                help_ = "declare the file's encoding with a PEP 263 coding comment, or save it as UTF-8"
                result.diagnostics.append(syntax_error(path, f"SyntaxError: {exc}", exc.row, exc.col, help_))
            return result
    else:
        text = source

    rules = settings.rules_for(path)
    codes = frozenset(r.code for r in rules)
    checking = [r for r in rules if r.engine_report is None]
    triggered = [r for r in checking if r.triggered_by(text)]
    # Naming the module costs a stat per package level: only files a rule may check need it.
    module = module_name_for(path) if triggered else None
    active = [r for r in triggered if not r.skips_module(module)]
    if "import" in text and len(active) < len(checking):
        # A rule whose finding can come from what the file imports (QL102: the project's own
        # insertion wrapper) asks the project about the files its triggers turned away.
        # Asked before `skips_module`, which would import the rule's module for every file.
        late = [r for r in checking if r.import_trigger and r not in triggered]
        if any(r.skipped_modules for r in late):
            # Not in the modules a rule declares it never checks (QL102: torch's compilers):
            # its import trigger's answer would be dropped by `skips_module` below.
            module = module_name_for(path)
            late = [r for r in late if not skips_by_name(r.skipped_modules, module)]
        if late:
            project = project or ProjectIndex.for_path(path)
            project.begin_check()
            late = [r for r in late if r.triggered_through_imports(text, path, project)]
        if late:
            module = module_name_for(path)
            also = {id(r) for r in late if not r.skips_module(module)}
            active = [r for r in checking if r in active or id(r) in also]
    # `--select QL001` alone asks for every file to be parsed, trigger or not.
    parse_anyway = not active and codes == {parse_error}
    unused_noqa_rule = engine_rule(EngineReport.UNUSED_NOQA)
    wants_noqa_check = (
        unused_noqa_rule.code in codes and mentions_noqa(text) and finds_noqa(settings.noqa_pattern, text)
    )
    # QL001 covers the files the run's enabled rules read: a file a per-file-ignores entry
    # turned those rules away from is still parsed, to see whether it parses at all (a file
    # qlint could not check must not pass as clean). Without per-file-ignores (the usual
    # case) every enabled rule was just asked here: "no rule triggered" already answers it.
    parse_only = (
        not active
        and len(codes) < len(settings.enabled_codes)
        and _ignored_rule_could_report(text, path, settings, codes)
        and reports_ql001(settings, path, text)
    )
    if not active and not parse_anyway and not wants_noqa_check and not parse_only:
        if project is not None:
            # What an import-triggered rule read to turn the file away decides its result too.
            result.dependencies = project.dependencies_of(path)
        return result

    # Only rules and noqa findings need row/column maps; a file parsed for QL001 alone does not.
    lines = LineIndex(text) if active or wants_noqa_check else None
    diagnostics: list[Diagnostic] = []
    failed: set[str] = set()  # rules that crashed: their noqa comments cannot be judged
    handed = None
    if active or parse_anyway or parse_only:
        try:
            tree = handed = _handed_tree(source, path)
            previous = getattr(project, "previous_trees", None) if project is not None else None
            if tree is None and previous is not None:
                # An editor's index: a keystroke in one function parses that function only.
                tree = previous.parse_edit(os.path.abspath(path), text)
            if tree is None:
                # Another reader's tree of this very text, while it holds it (`live_trees`): not
                # for an editor's index, which grafts the last check's statements into its tree.
                tree = parse_module(text, path) if previous is not None else live_parse(text, path, parse_module)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            # ValueError: NUL bytes (older Pythons); RecursionError/MemoryError: absurd nesting.
            if reports_ql001(settings, path, text):
                # Imported here: its nine patterns and a dataclass cost every check's start-up
                # (`qlint check -` after an edit) for files that do not parse, a rare case.
                from qlint.parse_failure import describe as describe_parse_failure

                failure = describe_parse_failure(exc, text, lines or LineIndex(text))
                result.diagnostics.append(syntax_error(path, failure.message, failure.row, failure.col, failure.help))
            return result
        result.parsed = True
    if active:
        project = project or ProjectIndex.for_path(path)
        previous = getattr(project, "previous_trees", None)
        if previous is not None and handed is None:
            previous.reuse(os.path.abspath(path), text, tree)
        # The statements a summary's scope asks of this module while the check holds its tree
        # are taken from it (`live_trees`), not parsed again.
        LIVE.add(path, text, tree)
        project.begin_check(path, text, tree)
        assert lines is not None
        ctx = FileContext(
            path=path,
            text=text,
            tree=tree,
            lines=lines,
            optable=optable or load_op_table(),
            project=project,
            module=module,
        )
        completed = False
        try:
            for rule in active:
                if cancelled is not None and cancelled():
                    project.dependencies_of(path)  # what it read so far is no dependency of anything
                    raise CheckCancelled(path)
                try:
                    diagnostics.extend(rule.check(ctx))
                except RecursionError:
                    failed.add(rule.code)
                    result.errors.append(f"{path}: {rule.code} gave up: expression too deeply nested")
                except Exception as exc:  # a rule bug must not lose the other files' findings
                    failed.add(rule.code)
                    result.errors.append(internal_error(path, rule, exc))
            if diagnostics:  # findings in code nothing runs describe nothing (issue 14)
                from qlint.analysis.graphs.dead_code import drop_dead

                diagnostics = drop_dead(ctx, diagnostics)
            completed = True
        finally:
            project.end_check()
            if previous is not None:
                if completed and not failed:
                    previous.keep(os.path.abspath(path), text, tree, ctx.__dict__.get("scope"))
                else:  # what a cut-short or failed check kept is no base for the next one
                    previous.drop(os.path.abspath(path))
            if _LEFT_FOR_EXIT is None:
                ctx.release()
            else:
                _LEFT_FOR_EXIT.append(ctx)
        result.dependencies = project.dependencies_of(path)

    # Tokenizing for comments is the slowest step on big files: only when it can matter.
    sup = (
        parse_suppressions(text, tree if result.parsed else None) if diagnostics or wants_noqa_check else Suppressions()
    )
    kept = sorted({d for d in diagnostics if not sup.suppresses(d)}, key=Diagnostic.sort_key)
    if wants_noqa_check:
        # Every enabled rule counts as judged: one whose triggers are absent has no findings.
        judged = codes - failed
        kept += unused_noqa(path, sup, judged, unused_noqa_rule, lines or LineIndex(text))
    result.diagnostics.extend(kept)
    if result.parsed and isinstance(source, bytes):
        HANDOVER.checked_tree(os.path.abspath(path), source, tree)  # a summary may want it soon
    return result


def checked_once(path: str) -> None:
    """A command-line run has checked (or fixed) `path` and will not check it again: what
    the analyses keep for a re-check of the same file goes before the next file's check
    allocates on top of it (a worker's memory is its highest point over the run)."""
    HANDOVER.checked(os.path.abspath(path))
    ProjectIndex.shared_checked_once(path)
    callers = sys.modules.get("qlint.analysis.flow.project_callers")
    if callers is not None:  # imported by the rules that ask about callers only
        callers.checked_once(path)
    consumers = sys.modules.get("qlint.rules.packet_scan")
    if consumers is not None:  # imported by QL102's consumer search only
        consumers.checked_once(path)


def internal_error(path: str, rule: Rule, exc: BaseException) -> str:
    """One line naming the rule and the package it comes from (a plugin's bug is reported to
    its authors, not to qlint's); the traceback follows when QLINT_DEBUG is set."""
    source = origin(rule.code)
    first_line = next(iter(str(exc).splitlines()), "")
    shipped_by = f"qlint {source.version}" if source.builtin else f"plugin {source}"
    message = f"{path}: internal error in {rule.code} {rule.name} ({shipped_by}): {type(exc).__name__}: {first_line}"
    if os.environ.get("QLINT_DEBUG"):
        import traceback  # with `textwrap` and `linecache`: ~4 ms of every start, for a rule's crash

        message += "\n" + traceback.format_exc(limit=-3)
    return message
