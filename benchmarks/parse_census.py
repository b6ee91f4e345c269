"""Why a cold run parses and reads each file: counts by asking site (issue 13).

    python benchmarks/parse_census.py [--top N] [--frames K] PATH...

Runs `qlint check --no-cache -j1 -q PATH...` in this process with `ast.parse` and file reads
counted, each under the innermost qlint frames that asked (`--frames`, 3 by default): the
checked file's own parse (`engine.parse_module`), a module summary, a caller search... The
wrapper index, made in a forked child by a run (`forked_call`), is made here, so its parses
count too. A module `piecewise_parse` parses in pieces counts as one whole parse. Prints
totals (parses, distinct files parsed, reads, distinct files read, files parsed more than
once; the characters parsed, and apart the line breaks that pad pieces and statements parsed
alone to their rows) and the asking sites, most parses first. Counts, not times: the same on
a busy machine.
"""

from __future__ import annotations

import argparse
import ast
import builtins
import collections
import io
import os
import sys


def _site(frames: int) -> str:
    """The rule that asked (`QL102 check`, `QL102 import trigger`; `run` outside any rule),
    then the innermost `frames` qlint functions on the stack, innermost first."""
    names = []
    rule = "run"
    frame = sys._getframe(2)
    while frame is not None:
        file = frame.f_code.co_filename
        # `live_trees.parse` and `piecewise_parse.parse_whole_or_in_pieces` only pass a parse
        # on: the reader that asked for it is the site.
        if f"{os.sep}qlint{os.sep}" in file and not file.endswith(
            ("parse_census.py", "live_trees.py", "piecewise_parse.py")
        ):
            if len(names) < frames:
                module = file.rpartition(f"{os.sep}qlint{os.sep}")[2].removesuffix(".py")
                names.append(f"{module}.{frame.f_code.co_name}")
            asker = _ASKING.get(frame.f_code.co_name)
            code = getattr(frame.f_locals.get("self"), "code", None) if asker else None
            if isinstance(code, str):
                rule = f"{code} {asker}"  # the outermost one wins
        frame = frame.f_back
    return f"[{rule}] " + " < ".join(names)


_ASKING = {"check": "check", "triggered_through_imports": "import trigger"}


def _served() -> None:
    """What readers took instead of parsing: a held tree (`live_trees`), a tree handed between
    a summary and a check (`tree_handover`), a statement of a summary's tree (`recent_trees`).
    Counted by the qlint measured, which may predate some of them (`--against`-style runs)."""
    import importlib

    found = []
    for module, counts in (
        (
            "live_trees",
            (("LIVE", "served", "trees held by another reader"), ("LIVE", "statements", "statements of them")),
        ),
        (
            "tree_handover",
            (("HANDOVER", "handed", "trees handed to a check"), ("HANDOVER", "reused", "checked trees to a summary")),
        ),
        ("recent_trees", (("RECENT", "served", "statements of recent trees"),)),
    ):
        try:
            loaded = importlib.import_module(f"qlint.analysis.names.{module}")
        except ImportError:
            continue
        for name, attr, what in counts:
            value = getattr(getattr(loaded, name, None), attr, None)
            if value is not None:
                found.append(f"{value} {what}")
    print(f"served instead of parsed: {', '.join(found)}", file=sys.stderr)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+")
    parser.add_argument("--top", type=int, default=25)
    parser.add_argument("--frames", type=int, default=3)
    args = parser.parse_args(argv)

    parses: collections.Counter[str] = collections.Counter()
    parsed: collections.Counter[str] = collections.Counter()
    reads: collections.Counter[str] = collections.Counter()
    read: collections.Counter[str] = collections.Counter()
    sites: dict[str, list[str]] = collections.defaultdict(list)  # file -> the sites that parsed it whole
    real_parse, real_open = ast.parse, builtins.open

    # The characters parsed, without the line breaks that pad a piece or a statement parsed
    # alone to its own rows (read by the tokenizer one by one all the same: counted apart).
    size = {"text": 0, "padding": 0}
    pieces = [0]  # > 0 while `piecewise_parse` parses one module in pieces: one whole parse

    def parse(source, filename="<unknown>", *a, **k):
        # qlint's own parses only: not a test runner's, rewriting a module it imports (pytest
        # rewrites `qlint/analysis/graphs/test_collection.py` when a check first imports it).
        caller = sys._getframe(1).f_code.co_filename
        if filename not in ("<unknown>", "<string>") and f"{os.sep}qlint{os.sep}" in caller:
            if isinstance(source, str):
                text = source.lstrip("\n")
                size["text"] += len(text)
                size["padding"] += len(source) - len(text)
            if not pieces[0]:
                _whole(source, filename)
        return real_parse(source, filename, *a, **k)

    def _whole(source, filename) -> None:
        site = _site(args.frames)
        parses[site] += 1
        if "summary.statement" not in site:  # a statement parsed alone is no whole parse
            parsed[os.path.abspath(filename)] += 1
            sites[os.path.abspath(filename)].append(site.partition("] ")[2].partition(" < ")[0])

    from qlint.analysis.names import module_entries, piecewise_parse
    from qlint.rules import packet_scan

    real_pieces = piecewise_parse.parse_by_definitions

    def by_definitions(text, path):
        """A module parsed in pieces counts as one whole parse, at the site that asked for it."""
        if not pieces[0]:
            _whole(text, path)
        pieces[0] += 1
        try:
            return real_pieces(text, path)
        finally:
            pieces[0] -= 1

    readers = (piecewise_parse, module_entries, packet_scan)
    for reader in readers:
        reader.parse_by_definitions = by_definitions

    def open_(file, mode="r", *a, **k):
        handle = real_open(file, mode, *a, **k)
        if isinstance(file, (str, os.PathLike)) and "r" in mode and str(file).endswith(".py"):
            reads[_site(args.frames)] += 1
            read[os.path.abspath(file)] += 1
        return handle

    ast.parse, builtins.open, io.open = parse, open_, open_
    from qlint import cli, registry
    from qlint.analysis import forked_call

    # Per checked file: the rules that ran on its parse, and which of them reported.
    ran: dict[str, list[tuple[str, int]]] = collections.defaultdict(list)
    real_check = registry.DeferredRule.check

    def check(self, ctx):
        found = list(real_check(self, ctx))
        ran[ctx.path].append((self.code, len(found)))
        return found

    registry.DeferredRule.check = check

    real_call = forked_call.call

    def in_process(work, meanwhile=None):  # the child's parses are the run's too
        if meanwhile is not None:
            meanwhile()
        return work()

    forked_call.call = in_process
    code = 0
    try:
        cli.main(["check", "--no-cache", "-j1", "-q", "--exit-zero", *args.paths])
    except SystemExit as exc:
        code = exc.code or 0
    finally:
        ast.parse, builtins.open, io.open = real_parse, real_open, real_open
        for reader in readers:
            reader.parse_by_definitions = real_pieces
        registry.DeferredRule.check = real_check
        forked_call.call = real_call
    twice = sum(1 for n in parsed.values() if n > 1)
    print(
        f"parses {sum(parses.values())}, {sum(parsed.values())} of them whole modules, of {len(parsed)} files "
        f"({twice} parsed whole more than once); "
        f"reads {sum(reads.values())} of {len(read)} files",
        file=sys.stderr,
    )
    print(
        f"parsed {size['text'] / 2**20:.2f} MiB of text and {size['padding'] / 2**20:.2f} MiB of line breaks "
        "padding pieces and statements to their rows",
        file=sys.stderr,
    )
    _served()
    by_rules: collections.Counter[str] = collections.Counter()
    for runs in ran.values():
        codes = "+".join(code for code, _ in runs)
        reporting = [code for code, n in runs if n]
        by_rules[f"{codes}: {'reported by ' + '+'.join(reporting) if reporting else 'nothing reported'}"] += 1
    repeats = collections.Counter(" + ".join(found) for found in sites.values() if len(found) > 1)
    for title, counter in (
        ("checked files by rules run", by_rules),
        ("files parsed whole again", repeats),
        ("parses", parses),
        ("reads", reads),
    ):
        print(f"-- {title} by asking site", file=sys.stderr)
        for site, n in counter.most_common(args.top):
            print(f"{n:6d}  {site}", file=sys.stderr)
    return int(code)


if __name__ == "__main__":
    raise SystemExit(main())
