"""What a `qlint` command line asks for, read: the settings of standard input, the repositories
its PATH arguments belong to (`@FILE` lists expanded), the command line's overrides of their
configs, the progress display and the runtime checker; bad input is a `UsageError`.

Apart from `cli` (which dispatches the commands) because the check, the fix and the standard
input commands all read their input so; heavy modules are imported where a command needs them.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import argparse


class UsageError(Exception):
    """Bad command-line input or config: one message, exit code 2."""


def reads_stdin(args: argparse.Namespace) -> bool:
    if "-" not in args.paths and args.stdin_filename is None:
        return False  # the usual run: the standard input module is not imported at all
    from qlint import stdin

    try:
        return stdin.requested(args.paths, args.stdin_filename)
    except stdin.StdinUsageError as exc:
        raise UsageError(str(exc)) from None


def stdin_settings(args: argparse.Namespace):
    """Settings for standard input: those `qlint check FILE` uses for `--stdin-filename` (the
    config search stops at the file's repository, whose top anchors a run without one), so an
    editor's or pre-commit's buffer reads the summaries the tree's runs wrote."""
    from qlint import stdin
    from qlint.config import ConfigError, apply_overrides, load_settings
    from qlint.file_settings import settings_for_path

    try:
        if args.stdin_filename and args.config is None:
            return apply_overrides(settings_for_path(args.stdin_filename), command_overrides(args))
        paths = stdin.config_paths(args.stdin_filename)
        return load_settings(paths, config=args.config, overrides=command_overrides(args))
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def repositories(args: argparse.Namespace):
    """The repositories the PATH arguments (with `@FILE` lists expanded) belong to, each with
    its own settings and the command line on top (`qlint.repos`)."""
    from qlint.argfiles import ArgfileError, expand, expanded_to_nothing
    from qlint.config_messages import ConfigError
    from qlint.repos import group_paths

    overrides = command_overrides(args)
    try:
        paths = expand(args.paths)
    except ArgfileError as exc:
        raise UsageError(str(exc)) from None
    if expanded_to_nothing(args.paths, paths):
        return []
    args.paths = paths
    try:
        return group_paths(paths, config=args.config, overrides=overrides)
    except ConfigError as exc:
        raise UsageError(str(exc)) from None


def command_overrides(args: argparse.Namespace):
    from qlint import registry
    from qlint.config import Overrides, split_codes

    registry.facts()  # a broken or conflicting plugin stops the run here, before any file is read

    def codes(values: list[str] | None) -> tuple[str, ...] | None:
        if values is None:
            return None
        return tuple(c for v in values for c in split_codes(v))

    overrides = Overrides(
        select=codes(args.select),
        extend_select=codes(args.extend_select) or (),
        ignore=codes(args.ignore) or (),
        unsafe_fixes=args.unsafe_fixes,
        preview=args.preview,
        force_exclude=args.force_exclude,
        cache_dir=args.cache_dir,
    )
    return overrides


def progress(args: argparse.Namespace):
    from qlint.progress import Progress, wanted

    return Progress(wanted(args.quiet))


def runtime_checker():
    """`qlint.runtime.attach_verdicts`, imported only for `--runtime` (it is not torch-free
    to *run*: it starts a worker that imports torch)."""
    try:
        runtime = importlib.import_module("qlint.runtime")
    except ModuleNotFoundError as exc:
        if exc.name and exc.name.startswith("qlint.runtime"):
            raise UsageError("runtime checker not available in this build of qlint") from None
        raise
    attach = getattr(runtime, "attach_verdicts", None)
    if attach is None:
        raise UsageError("runtime checker not available in this build of qlint")
    return attach
