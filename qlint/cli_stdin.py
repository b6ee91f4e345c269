"""`qlint check -` and `qlint fix -`: the buffer on standard input checked, or fixed (the fixed
text on standard output, the report on standard error), as the file it stands for.
"""

from __future__ import annotations

import sys
from typing import TYPE_CHECKING

from qlint.cli_inputs import UsageError
from qlint.cli_output import EXIT_CLEAN, EXIT_ERROR, EXIT_FINDINGS, emit, print_errors

if TYPE_CHECKING:
    import argparse


def stdin_command(args: argparse.Namespace, settings, mode: str) -> int:
    """`-`: check or fix standard input; `fix -` prints the fixed text, the report on stderr."""
    from qlint import stdin
    from qlint.reporters import ReportOptions, render
    from qlint.reporters.snippet import use_color

    if getattr(args, "runtime", False) or getattr(args, "verify", False):
        raise UsageError("the runtime checker does not read standard input: name the file")
    data = stdin.read()
    from qlint.analysis import run_roots
    from qlint.process_exit import ending

    # The buffer stands in for the file, and so does its run: `qlint check FILE`'s directories
    # and layout (`run_layout`), hence its cache key. Without them an editor's check read none
    # of the summaries a run over the tree kept, and parsed every module it imports again.
    run_roots.use([stdin.buffer_path(args.stdin_filename)])
    from qlint.summary_cache import summary_store

    if ending():
        # One buffer, then the process ends: the cyclic collector would only scan the check's
        # garbage before the output (5 ms after ExecuTorch's 1,111-line vulkan/test/utils.py,
        # 14 ms after ao's 4,307-line test_quantize_pt2e.py). The check keeps it off then.
        import gc

        gc.disable()
        # Nor is what the check built freed (the tree, the analyses): the exit skips that.
        from qlint.engine import leave_for_exit

        leave_for_exit()

    with summary_store(settings, not getattr(args, "no_cache", False), answers=True):
        if mode == "check":
            outcome = stdin.check(data, args.stdin_filename, settings)
        else:
            outcome = stdin.fix(data, args.stdin_filename, settings, settings.unsafe_fixes, mode == "diff")
    options = ReportOptions(
        unsafe_fixes=settings.unsafe_fixes,
        statistics=getattr(args, "statistics", False),
        quiet=args.quiet,
        mode="check" if mode == "check" else "fix",
        fixed=outcome.applied,
        settings=settings,
        errors=len(outcome.errors),
        sources=outcome.sources,
        color=False if getattr(args, "output_file", None) else use_color(sys.stdout if mode == "check" else sys.stderr),
    )
    if mode == "check":
        emit(render(args.output_format, outcome.diagnostics, options), args.output_file)
    elif mode == "diff":
        emit(outcome.diff or "", None)
    else:
        sys.stdout.flush()
        sys.stdout.buffer.write(outcome.output or b"")
        sys.stdout.flush()
        if outcome.diagnostics or not args.quiet:
            sys.stderr.write(render(args.output_format, outcome.diagnostics, options))
    print_errors(outcome.errors)
    if outcome.errors:
        return EXIT_ERROR
    if mode == "diff":
        return EXIT_FINDINGS if outcome.diff else EXIT_CLEAN
    return EXIT_FINDINGS if outcome.diagnostics and not args.exit_zero else EXIT_CLEAN
