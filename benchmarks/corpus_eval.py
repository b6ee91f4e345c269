"""Precision and recall of qlint per rule on a labelled corpus of real repositories.

The corpus lives in `benchmarks/corpus/`: for each repository a `<slug>.toml` (URL, pinned
commit, where its package maps onto the tree) and a `<slug>.csv` of labelled sites
(`repository,commit,path,line,rule,label,reason`; label `bug` or `ok`). Nothing is fetched:
each repository is materialised at its commit from a local bare mirror, qlint runs from the
repository root as a user would (`qlint check --no-cache --exit-zero --output-format json .`),
and each finding is matched to the rows of its path and rule whose line it covers. Packages the
repository pins and qlint reads from their installed source (a library's pass, a model class)
are materialised from their mirrors too, into a site directory the run has on its path.
The qlint measured is the checkout holding this script (first on the run's PYTHONPATH), not
whichever is installed: `--checkout` names another, `--installed` runs the installed one.

    python benchmarks/corpus_eval.py                       # every repository, stable rules
    python benchmarks/corpus_eval.py --preview --repo nncf  # one repository, preview rules too
    python benchmarks/corpus_eval.py --mirrors /srv/mirrors --mirrors /work/.mirror
    python benchmarks/corpus_eval.py --checkout /tmp/before  # another checkout's qlint

A `bug` row with a finding is a true positive, without one a miss; an `ok` row with a finding
is a false alarm. A finding on a line with no row of its rule is *unlabelled*: it is listed,
never dropped, and `--strict` makes it an error (exit 1). Exit 2 when the corpus is malformed
or a repository cannot be materialised.

Forks, pins of one repository at other commits and copies of its code repeat its rows: a TOML's
`family` names the corpus repository it copies, and the report prints the same figures again
with each site of a family, (family, path, rule, label, line text), counted once, beside the
rows each family repeats and the sites its members label differently.
"""

from __future__ import annotations

import argparse
import csv
import json
import os
import subprocess
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass, field, replace
from pathlib import Path

try:
    import tomllib
except ImportError:  # Python 3.10: the backport qlint depends on there
    import tomli as tomllib

COLUMNS = ["repository", "commit", "path", "line", "rule", "label", "reason"]
LABELS = ("bug", "ok")
# A reason that starts with this marks a site broken on the torch qlint targets (2.13) but
# working on the older torch the repository pins: `--pinned` scores such rows as `ok`.
PINNED = "[pinned torch has it]"
# A reason that starts with this marks a QL001 row in a file only preview rules read: QL001
# covers the files the enabled rules read, so it is a `bug` with `--preview` and `ok` without.
PREVIEW_READS = "[only preview rules read it]"
HERE = Path(__file__).resolve().parent
CHECKOUT = HERE.parent  # the qlint checkout this script ships with: the one it measures
DEFAULT_MIRRORS = (Path("/work/.mirror"),)


class CorpusError(Exception):
    """A malformed corpus file or a repository that cannot be materialised (exit 2)."""


@dataclass(frozen=True)
class Row:
    path: str
    line: int
    rule: str
    label: str
    reason: str
    where: str  # `file.csv:12`, for messages


@dataclass
class Repo:
    slug: str
    url: str
    commit: str
    import_root: str
    rows: list[Row] = field(default_factory=list)
    # Files qlint would read that the mirror lacks (its largest blobs) and that no row is on:
    # accepted as absent by name in the TOML, so a lost notebook cannot hide a labelled site.
    absent_ok: tuple[str, ...] = ()
    # Packages the repository pins (its requirements), installed for the run as a user has them.
    installed: tuple[Installed, ...] = ()
    # The corpus repository this one is a fork, pin or copy of, followed to the one that names
    # none (its own slug when it names none): the family view counts a site its family already
    # has once, so a fork's copies of known rows do not weigh as new code.
    family: str = ""

    @property
    def owner_name(self) -> tuple[str, str]:
        return _owner_name(self.url)


@dataclass(frozen=True)
class Installed:
    """A dependency installed for a repository's run: the tree of `commit`, whose directory
    `source` (`src` for a src layout, `.` otherwise) holds the packages put on the path."""

    slug: str  # `<repo slug>: <name>`, for messages
    url: str
    commit: str
    source: str

    @property
    def owner_name(self) -> tuple[str, str]:
        return _owner_name(self.url)


def _owner_name(url: str) -> tuple[str, str]:
    parts = url.rstrip("/").removesuffix(".git").split("/")
    return parts[-2], parts[-1]


@dataclass(frozen=True)
class Finding:
    path: str
    rule: str
    row: int
    end_row: int
    message: str


@dataclass
class Score:
    """One rule's tally over the rows that rule was run for."""

    tp: int = 0
    fp: int = 0
    fn: int = 0
    tn: int = 0
    unlabelled: int = 0

    @property
    def precision(self) -> float | None:
        found = self.tp + self.fp
        return self.tp / found if found else None

    @property
    def recall(self) -> float | None:
        bugs = self.tp + self.fn
        return self.tp / bugs if bugs else None


@dataclass
class Outcome:
    scores: dict[str, Score] = field(default_factory=dict)
    misses: list[tuple[str, Row]] = field(default_factory=list)
    false_alarms: list[tuple[str, Row, Finding]] = field(default_factory=list)
    unlabelled: list[tuple[str, Finding]] = field(default_factory=list)
    # Each scored row with its tally (`tp`, `fp`, `fn`, `tn`), and the text of each scored
    # site's line (repository, path, line), which the family view keys on.
    scored: list[tuple[str, Row, str]] = field(default_factory=list)
    texts: dict[tuple[str, str, int], str] = field(default_factory=dict)

    def score(self, rule: str) -> Score:
        return self.scores.setdefault(rule, Score())


# -- reading the corpus -------------------------------------------------------------------


def load_corpus(directory: Path, only: set[str] | None = None) -> list[Repo]:
    repos = []
    parsed = {meta.stem: _read_toml(meta) for meta in sorted(directory.glob("*.toml"))}
    families = _families(directory, parsed)
    for meta in sorted(directory.glob("*.toml")):
        slug = meta.stem
        if only and slug not in only:
            continue
        data = parsed[slug]
        missing = [k for k in ("url", "commit") if not isinstance(data.get(k), str)]
        if missing:
            raise CorpusError(f"{meta}: missing {', '.join(missing)}")
        repo = Repo(slug, data["url"], data["commit"], data.get("import_root", ""))
        absent_ok = data.get("absent_ok", [])
        if not isinstance(absent_ok, list) or not all(isinstance(p, str) for p in absent_ok):
            raise CorpusError(f"{meta}: absent_ok must be a list of paths")
        repo.absent_ok = tuple(absent_ok)
        repo.installed = _installed(meta, slug, data.get("installed", []))
        repo.family = families[slug]
        table = meta.with_suffix(".csv")
        if not table.exists():
            raise CorpusError(f"{meta}: no rows file {table.name}")
        repo.rows = read_rows(table, repo)
        labelled = sorted({r.path for r in repo.rows} & set(repo.absent_ok))
        if labelled:
            raise CorpusError(f"{meta}: rows on {', '.join(labelled)}, which absent_ok leaves out")
        repos.append(repo)
    if only and only - {r.slug for r in repos}:
        raise CorpusError(f"no corpus entry for {', '.join(sorted(only - {r.slug for r in repos}))}")
    return repos


def _read_toml(meta: Path) -> dict:
    try:
        return tomllib.loads(meta.read_text())
    except tomllib.TOMLDecodeError as exc:
        raise CorpusError(f"{meta}: {exc}") from None


def _families(directory: Path, parsed: dict[str, dict]) -> dict[str, str]:
    """Each slug's family: the corpus repository its `family` names, followed through that
    one's own `family` to a repository that names none. Read for every TOML, not only the
    ones `--repo` selects, so a fork run alone still belongs to its family."""
    named = {}
    for slug, data in parsed.items():
        family = data.get("family")
        if family is None:
            continue
        if not isinstance(family, str) or family not in parsed:
            raise CorpusError(f"{directory / slug}.toml: family must name a repository of the corpus, got {family!r}")
        named[slug] = family
    found = {}
    for slug in parsed:
        chain = [slug]
        while chain[-1] in named:
            chain.append(named[chain[-1]])
            if chain[-1] in chain[:-1]:
                raise CorpusError(f"{directory / slug}.toml: family names a circle: {' -> '.join(chain)}")
        found[slug] = chain[-1]
    return found


def _installed(meta: Path, slug: str, entries) -> tuple[Installed, ...]:
    """The TOML's `[[installed]]` tables: `url`, `commit` and `source` each."""
    if not isinstance(entries, list):
        raise CorpusError(f"{meta}: installed must be a list of tables")
    found = []
    for entry in entries:
        keys = ("url", "commit", "source")
        if not isinstance(entry, dict) or not all(isinstance(entry.get(k), str) for k in keys):
            raise CorpusError(f"{meta}: each installed table needs url, commit and source")
        name = f"{slug}: {_owner_name(entry['url'])[1]}"
        found.append(Installed(name, entry["url"], entry["commit"], entry["source"]))
    return tuple(found)


def read_rows(table: Path, repo: Repo) -> list[Row]:
    rows, seen = [], {}
    with table.open(newline="") as fh:
        reader = csv.DictReader(fh)
        if reader.fieldnames != COLUMNS:
            raise CorpusError(f"{table}: columns must be {','.join(COLUMNS)}, got {reader.fieldnames}")
        for record in reader:
            where = f"{table.name}:{reader.line_num}"
            if record["repository"] != repo.url or record["commit"] != repo.commit:
                raise CorpusError(f"{where}: repository/commit differ from {table.stem}.toml")
            if None in record:  # csv puts the fields past the columns there: the reason was cut
                raise CorpusError(f"{where}: more fields than columns: quote a reason that holds a comma")
            if record["label"] not in LABELS:
                raise CorpusError(f"{where}: label must be bug or ok, got {record['label']!r}")
            if not record["reason"].strip():
                raise CorpusError(f"{where}: the reason is empty")
            try:
                line = int(record["line"])
            except ValueError:
                raise CorpusError(f"{where}: line {record['line']!r} is not a number") from None
            key = (record["path"], line, record["rule"])
            if key in seen:
                raise CorpusError(f"{where}: the same site as {seen[key]}")
            seen[key] = where
            rows.append(Row(record["path"], line, record["rule"], record["label"], record["reason"], where))
    return rows


# -- materialising and running ------------------------------------------------------------


def find_mirror(repo: Repo | Installed, mirrors: list[Path]) -> Path:
    """The first bare git dir under `mirrors` named for the repository that holds its commit."""
    owner, name = repo.owner_name
    tried = []
    for base in mirrors:
        for candidate in (base / f"{owner}+{name}" / "repo", base / f"{owner}+{name}", base / f"{name}.git"):
            if not candidate.is_dir():
                continue
            tried.append(str(candidate))
            probe = _git(candidate, "cat-file", "-e", f"{repo.commit}^{{commit}}", check=False)
            if probe.returncode == 0:
                return candidate
    where = f" (looked in {', '.join(tried)})" if tried else f" under {', '.join(map(str, mirrors))}"
    raise CorpusError(f"{repo.slug}: no mirror holds {repo.commit}{where}")


def materialise(git_dir: Path, commit: str, into: Path, absent_ok: tuple[str, ...] = ()) -> list[str]:
    """Write the whole tree of `commit` into `into`, as a clone would have it; return the
    paths the mirror lacks the content of (mirrors may leave out their largest blobs).

    Through a throw-away index rather than `git archive`: an archive leaves out the paths a
    repository marks `export-ignore` (often its tests), which a user's checkout has. A file
    qlint would read (`.py`, `.pyi`, `.ipynb`) that the mirror lacks is an error, unless the
    corpus names it in `absent_ok`."""
    env = {**os.environ, "GIT_INDEX_FILE": str(into.parent / f".{into.name}.index")}
    try:
        _git(git_dir, "read-tree", commit, env=env)
        listing = _git(git_dir, "ls-files", "--stage", "-z", env=env).stdout.split("\0")
        blobs = {}  # path -> object id, files only (a submodule has no content here)
        for entry in filter(None, listing):
            meta, path = entry.split("\t", 1)
            mode, oid, _ = meta.split()
            if mode != "160000":
                blobs[path] = oid
        probe = subprocess.run(
            ["git", f"--git-dir={git_dir}", "cat-file", "--batch-check=%(objectname) %(objecttype)"],
            input="\n".join(dict.fromkeys(blobs.values())) + "\n",
            capture_output=True,
            text=True,
            check=True,
        )
        missing_ids = {line.split()[0] for line in probe.stdout.splitlines() if line.endswith(" missing")}
        absent = sorted(p for p, oid in blobs.items() if oid in missing_ids)
        lost = [p for p in absent if p.endswith((".py", ".pyi", ".ipynb")) and p not in absent_ok]
        if lost:
            raise CorpusError(f"the mirror {git_dir} lacks {len(lost)} file(s) qlint reads: {', '.join(lost[:5])}")
        present = "\0".join(p for p in blobs if p not in set(absent)) + "\0"
        subprocess.run(
            ["git", f"--git-dir={git_dir}", f"--work-tree={into}", "checkout-index", "--force", "-z", "--stdin"],
            input=present,
            capture_output=True,
            text=True,
            check=True,
            env=env,
        )
    except subprocess.CalledProcessError as exc:
        raise CorpusError(f"cannot materialise {commit} from {git_dir}: {exc.stderr.strip()}") from None
    finally:
        Path(env["GIT_INDEX_FILE"]).unlink(missing_ok=True)
    return absent


def _git(git_dir: Path, *args: str, check: bool = True, env=None) -> subprocess.CompletedProcess:
    return subprocess.run(["git", f"--git-dir={git_dir}", *args], capture_output=True, text=True, check=check, env=env)


def install(repo: Repo, mirrors: list[Path], into: Path) -> Path | None:
    """The repository's pinned dependencies, each materialised from its mirror under `into`,
    and a directory `site-packages` there holding links to the packages of each `source`
    directory (None when it pins none): on the run's path, it is where qlint looks for
    installed source, as in a user's environment (never imported: the linter reads it)."""
    if not repo.installed:
        return None
    site = into / "site-packages"
    site.mkdir()
    for dep in repo.installed:
        tree = into / "installed" / dep.owner_name[1]
        tree.mkdir(parents=True)
        materialise(find_mirror(dep, mirrors), dep.commit, tree)
        source = (tree / dep.source).resolve()
        if not source.is_dir() or not source.is_relative_to(tree.resolve()):
            raise CorpusError(f"{dep.slug}: no directory {dep.source} in {dep.commit}")
        for entry in sorted(source.iterdir()):
            if (entry.is_dir() or entry.suffix == ".py") and not (site / entry.name).exists():
                (site / entry.name).symlink_to(entry)
    return site


def run_qlint(
    root: Path, qlint: list[str], preview: bool, site: Path | None = None, checkout: Path | None = None
) -> list[Finding]:
    cmd = [*qlint, "check", "--no-cache", "--exit-zero", "--output-format", "json", "."]
    if preview:
        cmd.append("--preview")
    done = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=run_env(site, checkout))
    if done.returncode != 0:
        raise CorpusError(f"qlint failed in {root} (exit {done.returncode}): {done.stderr.strip()[-2000:]}")
    return parse_findings(json.loads(done.stdout), root)


def run_env(site: Path | None, checkout: Path | None) -> dict[str, str]:
    """The run's environment: `checkout` (the qlint measured) and the pinned packages' `site`
    first on PYTHONPATH. Run from the repository's root, `python -m qlint` otherwise imports
    whichever qlint is installed. The checkout on the path does not change how the analysed
    code's imports resolve: qlint reads the sources, never imports them, and takes installed
    source only from path entries under a `site-packages` or `dist-packages` directory
    (`installed_classes`), which a checkout is not."""
    paths = [str(p) for p in (checkout, site, os.environ.get("PYTHONPATH")) if p]
    return {**os.environ, "PYTHONPATH": os.pathsep.join(paths)} if paths else dict(os.environ)


def parse_findings(records: list[dict], root: Path) -> list[Finding]:
    found = []
    for r in records:
        path = Path(r["filename"])
        path = path.resolve().relative_to(root.resolve()) if path.is_absolute() else path
        end = (r.get("end_location") or r["location"])["row"]
        found.append(Finding(path.as_posix(), r["code"], r["location"]["row"], end, r["message"]))
    return found


def preview_rules() -> set[str]:
    """Codes that run only with `--preview`: their rows are not scored without it."""
    from qlint import registry  # the corpus script ships with qlint; importing it costs no torch

    return {code for code, cls in registry.rules().items() if cls.preview}


# -- scoring ------------------------------------------------------------------------------


def score(repo: str, rows: list[Row], findings: list[Finding], skipped: set[str], out: Outcome) -> None:
    """Match findings to rows (same path and rule, the row's line within the finding's lines)."""
    index: dict[tuple[str, str], list[Row]] = {}
    for row in rows:
        index.setdefault((row.path, row.rule), []).append(row)
    hit: dict[Row, Finding] = {}
    for f in findings:
        matched = [r for r in index.get((f.path, f.rule), ()) if f.row <= r.line <= f.end_row]
        for r in matched:
            hit.setdefault(r, f)
        if not matched:
            out.score(f.rule).unlabelled += 1
            out.unlabelled.append((repo, f))
    for row in rows:
        if row.rule in skipped:
            continue
        tally, finding = out.score(row.rule), hit.get(row)
        if row.label == "bug" and finding:
            kind = "tp"
        elif row.label == "bug":
            kind = "fn"
            out.misses.append((repo, row))
        elif finding:
            kind = "fp"
            out.false_alarms.append((repo, row, finding))
        else:
            kind = "tn"
        setattr(tally, kind, getattr(tally, kind) + 1)
        out.scored.append((repo, row, kind))


def check_sites(root: Path, rows: list[Row]) -> dict[tuple[str, int], str]:
    """Every row names a line that exists in the materialised tree; the text of each."""
    texts = line_texts(root, {(row.path, row.line) for row in rows})
    for row in rows:
        if (row.path, row.line) not in texts:
            raise CorpusError(f"{row.where}: {row.path}:{row.line} is not a line of the tree")
    return texts


def line_texts(root: Path, sites: set[tuple[str, int]]) -> dict[tuple[str, int], str]:
    """The text of each (path, line) of the tree that exists, without the whitespace around
    it: a copy that re-indents a line is the same line to the family view."""
    files: dict[str, list[bytes] | None] = {}
    texts = {}
    for path, line in sites:
        if path not in files:
            file = root / path
            # An empty file still has a first line: where a finding on the whole file sits.
            files[path] = (file.read_bytes().splitlines() or [b""]) if file.is_file() else None
        lines = files[path]
        if lines is not None and 1 <= line <= len(lines):
            texts[path, line] = lines[line - 1].decode("utf-8", "replace").strip()
    return texts


def as_pinned(rows: list[Row]) -> list[Row]:
    """The rows as judged against each repository's own torch pin instead of torch 2.13."""
    return [replace(r, label="ok") if r.label == "bug" and r.reason.startswith(PINNED) else r for r in rows]


def without_preview(rows: list[Row]) -> list[Row]:
    """The rows as judged by a run without `--preview`: a file only preview rules read is not
    parsed, so nothing in it is reported."""
    return [replace(r, label="ok") if r.label == "bug" and r.reason.startswith(PREVIEW_READS) else r for r in rows]


def evaluate(
    repos: list[Repo], mirrors: list[Path], qlint: list[str], preview: bool, checkout: Path | None = CHECKOUT
) -> Outcome:
    skipped = set() if preview else preview_rules()
    out = Outcome()
    for repo in repos:
        git_dir = find_mirror(repo, mirrors)
        with tempfile.TemporaryDirectory(prefix=f"corpus-{repo.slug}-") as tmp:
            root = Path(tmp) / repo.owner_name[1]
            root.mkdir()
            absent = materialise(git_dir, repo.commit, root, repo.absent_ok)
            if absent:
                print(
                    f"{repo.slug}: the mirror lacks {len(absent)} non-Python file(s), e.g. {absent[0]}", file=sys.stderr
                )
            texts = check_sites(root, repo.rows)
            site = install(repo, mirrors, Path(tmp))
            rows = repo.rows if preview else without_preview(repo.rows)
            unlabelled = len(out.unlabelled)
            score(repo.slug, rows, run_qlint(root, qlint, preview, site, checkout), skipped, out)
            texts |= line_texts(root, {(f.path, f.row) for _, f in out.unlabelled[unlabelled:]})
            out.texts.update({(repo.slug, path, line): text for (path, line), text in texts.items()})
    return out


# -- the family view ----------------------------------------------------------------------


@dataclass
class FamilyView:
    """The figures with each site a family holds counted once. A site is (family, path,
    rule, line text, which occurrence of that text in that path it is): two equal lines of
    one file stay two sites, and the same line in a fork and in the repository it copies is
    one. A copy labelled or scored differently is counted again, as its own evidence."""

    scores: dict[str, Score] = field(default_factory=dict)
    members: dict[str, list[str]] = field(default_factory=dict)  # family -> slugs, its root first
    rows: Counter = field(default_factory=Counter)  # family -> scored rows
    repeats: Counter = field(default_factory=Counter)  # family -> rows a member already had
    # Sites whose copies carry different labels: [(family, path, rule, text, [(slug, line, label)])].
    conflicts: list[tuple[str, str, str, str, list[tuple[str, int, str]]]] = field(default_factory=list)


def family_view(out: Outcome, families: dict[str, str]) -> FamilyView:
    view = FamilyView()
    for repo in sorted({r for r, _, _ in out.scored} | {r for r, _ in out.unlabelled}):
        view.members.setdefault(families.get(repo, repo), []).append(repo)
    for family, members in view.members.items():
        members.sort(key=lambda slug: (slug != family, slug))  # the repository the others copy first

    def sites(entries):
        """(entry, site key) for each entry, the occurrence counted in line order."""
        nth: Counter = Counter()
        for entry, repo, path, rule, line in sorted(entries, key=lambda e: (e[1], e[2], e[4])):
            text = out.texts.get((repo, path, line))
            # Without its text (a row scored outside `evaluate`) a line is only itself.
            spelled = text if text is not None else f"{repo}:{line}"
            yield entry, (families.get(repo, repo), path, rule, spelled, nth[repo, path, rule, spelled])
            nth[repo, path, rule, spelled] += 1

    seen, labels = set(), {}
    for (repo, row, kind), site in sites([(e, e[0], e[1].path, e[1].rule, e[1].line) for e in out.scored]):
        family = site[0]
        view.rows[family] += 1
        labels.setdefault(site, []).append((repo, row.line, row.label))
        if (site, row.label, kind) in seen:
            view.repeats[family] += 1
            continue
        seen.add((site, row.label, kind))
        tally = view.scores.setdefault(row.rule, Score())
        setattr(tally, kind, getattr(tally, kind) + 1)
    for (_, finding), site in sites([(e, e[0], e[1].path, e[1].rule, e[1].row) for e in out.unlabelled]):
        if (site, None, "unlabelled") not in seen:
            seen.add((site, None, "unlabelled"))
            view.scores.setdefault(finding.rule, Score()).unlabelled += 1
    for site, copies in labels.items():
        if len({label for _, _, label in copies}) > 1:
            view.conflicts.append((site[0], site[1], site[2], site[3], copies))
    return view


# -- report -------------------------------------------------------------------------------


def _ratio(value: float | None) -> str:
    return "-" if value is None else f"{value:.2f}"


def report(out: Outcome, repos: list[Repo], stream=None) -> None:
    stream = stream or sys.stdout
    sizes = Counter((r.slug, row.rule, row.label) for r in repos for row in r.rows)
    print("rows per repository and rule (bug/ok):", file=stream)
    for repo in repos:
        rules = sorted({row.rule for row in repo.rows})
        cells = ", ".join(f"{rule} {sizes[repo.slug, rule, 'bug']}/{sizes[repo.slug, rule, 'ok']}" for rule in rules)
        print(f"  {repo.slug} @ {repo.commit[:10]}: {len(repo.rows)} rows; {cells}", file=stream)
    print(file=stream)
    _table(out.scores, stream)
    view = family_view(out, {r.slug: r.family or r.slug for r in repos})
    print("\nthe same, each site of a family counted once (family, path, rule, label, line text):", file=stream)
    _table(view.scores, stream)
    for family, members in view.members.items():
        if len(members) > 1:
            print(
                f"  family {family} ({', '.join(members)}): {view.rows[family]} rows,"
                f" {view.repeats[family]} repeat a site of the family",
                file=stream,
            )
    if view.conflicts:
        print(
            f"\none line labelled differently in a family (does the code around it differ?): {len(view.conflicts)}",
            file=stream,
        )
        for family, path, rule, text, copies in view.conflicts:
            where = ", ".join(f"{repo}:{line} {label}" for repo, line, label in copies)
            print(f"  {family} {path} {rule} `{text}`: {where}", file=stream)
    for title, items in (
        ("missed (bug rows without a finding)", [(repo, row, None) for repo, row in out.misses]),
        ("false alarms (ok rows with a finding)", out.false_alarms),
    ):
        print(f"\n{title}: {len(items)}", file=stream)
        for repo, row, finding in items:
            print(f"  {repo} {row.path}:{row.line} {row.rule}: {row.reason}", file=stream)
            if finding:
                print(f"      qlint: {finding.message}", file=stream)
    print(f"\nunlabelled findings (label them): {len(out.unlabelled)}", file=stream)
    for repo, f in out.unlabelled:
        print(f"  {repo} {f.path}:{f.row} {f.rule}: {f.message}", file=stream)


def _table(scores: dict[str, Score], stream) -> None:
    print(f"{'rule':<7}{'TP':>5}{'FP':>5}{'FN':>5}{'TN':>5}{'unlab':>7}{'prec':>7}{'recall':>8}", file=stream)
    total = Score()
    for rule in sorted(scores):
        s = scores[rule]
        for name in ("tp", "fp", "fn", "tn", "unlabelled"):
            setattr(total, name, getattr(total, name) + getattr(s, name))
        print(_line(rule, s), file=stream)
    print(_line("all", total), file=stream)


def _line(rule: str, s: Score) -> str:
    return (
        f"{rule:<7}{s.tp:>5}{s.fp:>5}{s.fn:>5}{s.tn:>5}{s.unlabelled:>7}{_ratio(s.precision):>7}{_ratio(s.recall):>8}"
    )


def as_json(out: Outcome, repos: list[Repo] = ()) -> dict:
    view = family_view(out, {r.slug: r.family or r.slug for r in repos})
    return {
        "rules": _rules_json(out.scores),
        "families": {
            "rules": _rules_json(view.scores),
            "members": view.members,
            "rows": dict(view.rows),
            "repeats": dict(view.repeats),
            "conflicts": [
                {"family": family, "path": path, "rule": rule, "text": text, "copies": [list(c) for c in copies]}
                for family, path, rule, text, copies in view.conflicts
            ],
        },
        "missed": [{"repository": repo, "path": r.path, "line": r.line, "rule": r.rule} for repo, r in out.misses],
        "false_alarms": [
            {"repository": repo, "path": r.path, "line": r.line, "rule": r.rule} for repo, r, _ in out.false_alarms
        ],
        "unlabelled": [
            {"repository": repo, "path": f.path, "line": f.row, "rule": f.rule, "message": f.message}
            for repo, f in out.unlabelled
        ],
    }


def _rules_json(scores: dict[str, Score]) -> dict:
    return {rule: {**vars(s), "precision": s.precision, "recall": s.recall} for rule, s in sorted(scores.items())}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--corpus", type=Path, default=HERE / "corpus", help="directory of <slug>.toml/.csv")
    parser.add_argument("--mirrors", type=Path, action="append", help="directory of bare mirrors (repeatable)")
    parser.add_argument("--repo", action="append", help="only this corpus slug (repeatable)")
    parser.add_argument("--preview", action="store_true", help="run preview rules too and score their rows")
    parser.add_argument("--qlint", default=f"{sys.executable} -m qlint", help="the qlint command to run")
    which = parser.add_mutually_exclusive_group()
    which.add_argument(
        "--checkout",
        type=Path,
        default=CHECKOUT,
        help=f"the qlint checkout measured, first on the run's PYTHONPATH (default: this script's, {CHECKOUT})",
    )
    which.add_argument(
        "--installed",
        action="store_true",
        help="measure the qlint the environment imports (no checkout put on PYTHONPATH)",
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON")
    parser.add_argument("--strict", action="store_true", help="exit 1 when a finding has no row")
    parser.add_argument("--pinned", action="store_true", help=f"score rows whose reason starts {PINNED} as ok")
    args = parser.parse_args(argv)
    try:
        repos = load_corpus(args.corpus, set(args.repo) if args.repo else None)
        if args.pinned:
            for repo in repos:
                repo.rows = as_pinned(repo.rows)
        out = evaluate(
            repos,
            args.mirrors or list(DEFAULT_MIRRORS),
            args.qlint.split(),
            args.preview,
            None if args.installed else args.checkout.resolve(),
        )
    except CorpusError as exc:
        print(f"corpus_eval: {exc}", file=sys.stderr)
        return 2
    if args.json:
        json.dump(as_json(out, repos), sys.stdout, indent=1)
        print()
    else:
        report(out, repos)
    return 1 if args.strict and out.unlabelled else 0


if __name__ == "__main__":
    sys.exit(main())
