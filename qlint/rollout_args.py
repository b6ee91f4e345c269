"""The command-line flags of rollouts over several repositories (`qlint.rollout`).

Kept apart from `qlint.rollout` so that building the parser (every `qlint` call, also
`--version` and `server`) imports nothing but argparse.
"""

from __future__ import annotations

import argparse


def add_arguments(parser: argparse.ArgumentParser, command: str) -> None:
    """The rollout flags of `qlint check` (command "check") and `qlint fix` ("fix")."""
    group = parser.add_argument_group("several repositories (rollouts)")
    group.add_argument("--summary-json", metavar="FILE", help="write a per-repository summary as JSON ('-': stderr)")
    group.add_argument("--summary-dir", metavar="DIR", help="write <repo>.md per repository (pull-request text)")
    group.add_argument(
        "--repo-summary", action="store_true", help="print the per-repository summary (default with 2+ repositories)"
    )
    if command == "fix":
        group.add_argument("--patch-dir", metavar="DIR", help="write <repo>.patch per changed repository (git apply)")
        return
    group.add_argument("--add-noqa", action="store_true", help="add `# noqa: QLxxx` to every current finding")
    group.add_argument("--write-baseline", metavar="FILE", help="record today's findings in FILE")
    group.add_argument("--baseline", metavar="FILE", help="report only findings not recorded in FILE")
