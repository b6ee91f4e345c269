"""Config discovery, validation and command-line overrides (qlint.config)."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

import pytest

from qlint.config import ConfigError, Overrides, find_config, load_settings, split_codes
from qlint.rules import RULES
from qlint.rules.base import Rule
from qlint.settings import DEFAULT_EXCLUDE


class OptionRule(Rule):
    code = "QL901"
    name = "option-rule"
    summary = "test-only rule with one option of each type"
    options = {"fix-style": "overload", "depth": 3, "ratio": 0.5, "flag": False, "extra-sinks": ["x"], "any": None}
    option_choices = {"fix-style": ("overload", "both")}


@pytest.fixture
def option_rule(monkeypatch):
    monkeypatch.setitem(RULES, OptionRule.code, OptionRule)
    return OptionRule


def write(path: Path, text: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(textwrap.dedent(text))
    return path


def error_of(tmp_path: Path, body: str, name: str = "pyproject.toml") -> str:
    config = write(tmp_path / name, body)
    with pytest.raises(ConfigError) as info:
        load_settings([str(tmp_path)], config=config if name != "pyproject.toml" else None)
    return str(info.value)


def test_nearest_pyproject_with_a_qlint_table_wins(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.qlint]\nselect = ['QL1']\n")
    # A nearer pyproject.toml without a qlint table is skipped, as ruff does.
    write(tmp_path / "pkg" / "pyproject.toml", "[project]\nname = 'pkg'\n")
    target = write(tmp_path / "pkg" / "sub" / "mod.py", "x = 1\n")
    assert find_config(target) == tmp_path / "pyproject.toml"
    settings = load_settings([str(target)])
    assert settings.select == ("QL1",)
    assert settings.root == tmp_path.resolve()
    assert settings.config_path == (tmp_path / "pyproject.toml").resolve()


def test_qlint_toml_is_found_and_has_a_top_level_table(tmp_path):
    write(tmp_path / "qlint.toml", "ignore = ['QL002']\nunsafe-fixes = true\n")
    settings = load_settings([str(tmp_path)])
    assert settings.ignore == ("QL002",)
    assert settings.unsafe_fixes is True


def test_no_config_means_defaults_rooted_at_cwd(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    settings = load_settings([str(tmp_path)])
    assert settings.config_path is None
    assert settings.root == tmp_path.resolve()
    assert settings.exclude == DEFAULT_EXCLUDE
    assert "site-packages" not in settings.exclude


def test_every_key_is_read(tmp_path, option_rule):
    write(
        tmp_path / "pyproject.toml",
        """
        [tool.qlint]
        select = ["QL1", "QL901"]
        extend-select = ["QL002"]
        ignore = ["QL102"]
        exclude = ["generated"]
        extend-exclude = ["tests/fixtures"]
        unsafe-fixes = true
        respect-gitignore = false
        force-exclude = true
        cache-dir = "var/cache"

        [tool.qlint.per-file-ignores]
        "tests/*" = ["QL101"]

        [tool.qlint.QL901]
        fix-style = "both"
        depth = 5
        ratio = 2
        flag = true
        extra_sinks = ["a", "b"]
        any = {k = 1}
        """,
    )
    s = load_settings([str(tmp_path)])
    assert s.select == ("QL1", "QL901")
    assert s.extend_select == ("QL002",)
    assert s.ignore == ("QL102",)
    assert s.exclude == ("generated",)  # replaces the default list
    assert s.extend_exclude == ("tests/fixtures",)
    assert s.unsafe_fixes and s.force_exclude and not s.respect_gitignore
    assert s.cache_dir == (tmp_path / "var" / "cache").resolve()
    assert s.per_file_ignores == (("tests/*", ("QL101",)),)
    opts = s.options_for("QL901")
    assert opts == {
        "fix-style": "both",
        "depth": 5,
        "ratio": 2.0,
        "flag": True,
        "extra-sinks": ("a", "b"),  # snake_case accepted, lists become tuples
        "any": {"k": 1},
    }
    assert isinstance(opts["ratio"], float)
    assert s.enabled_codes == frozenset({"QL101", "QL901", "QL002"})
    hash(s.rule_options)  # Settings must stay hashable


def test_extend_exclude_keeps_the_defaults(tmp_path):
    write(tmp_path / "pyproject.toml", "[tool.qlint]\nextend-exclude = ['gen']\n")
    s = load_settings([str(tmp_path)])
    assert s.exclude == DEFAULT_EXCLUDE and s.extend_exclude == ("gen",)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            '[tool.qlint]\nselekt = ["QL1"]\n',
            'pyproject.toml: [tool.qlint] unknown key "selekt" (did you mean "select"?)',
        ),
        ('[tool.qlint]\nselect = ["QL999"]\n', 'pyproject.toml: [tool.qlint] "select": unknown rule selector "QL999"'),
        ('[tool.qlint]\nselect = "QL1"\n', 'pyproject.toml: [tool.qlint] "select": expected a list of strings'),
        (
            "[tool.qlint]\nunsafe-fixes = 1\n",
            'pyproject.toml: [tool.qlint] "unsafe-fixes": expected true or false, got 1',
        ),
        ("[tool.qlint]\nrespect-gitignore = 'no'\n", '[tool.qlint] "respect-gitignore": expected true or false'),
        ("[tool.qlint]\ncache-dir = 3\n", '[tool.qlint] "cache-dir": expected a path string'),
        ("[tool.qlint]\nexclude = [1]\n", '[tool.qlint] "exclude": expected a list of strings'),
        (
            '[tool.qlint.per-file-ignores]\n"a.py" = ["XX1"]\n',
            '[tool.qlint.per-file-ignores] "a.py": unknown rule selector "XX1"',
        ),
        ("[tool.qlint]\nper-file-ignores = ['a']\n", '"per-file-ignores": expected a table'),
        ("[tool.qlint.QL998]\nx = 1\n", '[tool.qlint.QL998] unknown rule code "QL998"'),
        ("[tool.qlint]\nQL101 = 1\n", '[tool.qlint] "QL101": expected a table of rule options'),
        ("[tool.qlint\nselect = []\n", "pyproject.toml: invalid TOML"),
    ],
)
def test_bad_config_names_the_file_and_the_key(tmp_path, body, expected):
    assert expected in error_of(tmp_path, body)


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        (
            "[tool.qlint.QL901]\nstyle = 'both'\n",
            '[tool.qlint.QL901] unknown option "style" (options of QL901: "fix-style"',
        ),
        (
            "[tool.qlint.QL901]\nfix-style = 'packet'\n",
            '[tool.qlint.QL901] "fix-style": "packet" is not one of "overload", "both"',
        ),
        ("[tool.qlint.QL901]\ndepth = true\n", '"depth": expected an integer, got true'),
        ("[tool.qlint.QL901]\ndepth = 1.5\n", '"depth": expected an integer, got 1.5'),
        ("[tool.qlint.QL901]\nratio = 'x'\n", '"ratio": expected a number'),
        ("[tool.qlint.QL901]\nflag = 'yes'\n", '"flag": expected true or false'),
        ("[tool.qlint.QL901]\nextra-sinks = 'a'\n", '"extra-sinks": expected a list'),
        ("[tool.qlint.QL901]\nextra-sinks = [1]\n", '"extra-sinks": expected a string, got 1'),
    ],
)
def test_bad_rule_options_are_rejected(tmp_path, option_rule, body, expected):
    assert expected in error_of(tmp_path, body)


def test_real_rule_options_validate_against_the_rule(tmp_path):
    """QL101 declares `fix-style` with choices; the config must enforce them."""
    assert "fix-style" in RULES["QL101"].options
    message = error_of(tmp_path, "[tool.qlint.QL101]\nfix-style = 'nope'\n")
    assert '"fix-style": "nope" is not one of' in message
    write(tmp_path / "pyproject.toml", "[tool.qlint.QL101]\nfix-style = 'both'\n")
    assert load_settings([str(tmp_path)]).options_for("QL101")["fix-style"] == "both"


def test_qlint_toml_messages_have_no_tool_prefix(tmp_path):
    message = error_of(tmp_path, "selekt = []\n", name="qlint.toml")
    assert message.endswith('qlint.toml: unknown key "selekt" (did you mean "select"?)')
    message = error_of(tmp_path, "[QL101]\nfix-style = 1\n", name="qlint.toml")
    assert 'qlint.toml: [QL101] "fix-style": expected a string, got 1' in message


def test_explicit_config_file_must_exist(tmp_path):
    with pytest.raises(ConfigError, match="config file not found"):
        load_settings([str(tmp_path)], config=tmp_path / "missing.toml")


def test_explicit_pyproject_config_and_relative_paths(tmp_path):
    config = write(tmp_path / "conf" / "pyproject.toml", "[tool.qlint]\ncache-dir = '.cache'\n")
    s = load_settings([str(tmp_path / "elsewhere")], config=config)
    assert s.root == (tmp_path / "conf").resolve()
    assert s.cache_dir == (tmp_path / "conf" / ".cache").resolve()


def test_invalid_utf8_config(tmp_path):
    (tmp_path / "qlint.toml").write_bytes(b"select = ['\xff']\n")
    with pytest.raises(ConfigError, match="not valid UTF-8"):
        load_settings([str(tmp_path)], config=tmp_path / "qlint.toml")


def test_command_line_overrides(tmp_path):
    write(
        tmp_path / "pyproject.toml", "[tool.qlint]\nselect = ['QL1']\nignore = ['QL101']\nextend-select = ['QL002']\n"
    )
    base = load_settings([str(tmp_path)])
    assert base.enabled_codes == frozenset({"QL102", "QL002"})
    # --select starts over (drops the file's ignore and extend-select), like ruff.
    s = load_settings([str(tmp_path)], overrides=Overrides(select=("QL101",)))
    assert s.enabled_codes == frozenset({"QL101"})
    s = load_settings([str(tmp_path)], overrides=Overrides(ignore=("QL102",), extend_select=("QL001",)))
    assert s.enabled_codes == frozenset({"QL002", "QL001"})
    s = load_settings([str(tmp_path)], overrides=Overrides(unsafe_fixes=True, force_exclude=True))
    assert s.unsafe_fixes and s.force_exclude
    with pytest.raises(ConfigError, match='--ignore: unknown rule selector "E501"'):
        load_settings([str(tmp_path)], overrides=Overrides(ignore=("E501",)))


def test_selectors():
    assert split_codes("QL101, QL102,,QL2 ") == ["QL101", "QL102", "QL2"]
    s = load_settings([], overrides=Overrides(select=("ALL",)))
    assert s.enabled_codes == frozenset(c for c in RULES if not RULES[c].preview)  # preview rules need --preview
    with pytest.raises(ConfigError, match='unknown rule selector "ql101"'):
        load_settings([], overrides=Overrides(select=("ql101",)))


def test_fingerprint_tracks_what_changes_findings(tmp_path):
    a = load_settings([str(tmp_path)], overrides=Overrides(select=("QL1",)))
    b = load_settings([str(tmp_path)], overrides=Overrides(select=("QL101",)))
    c = load_settings([str(tmp_path)], overrides=Overrides(select=("QL1",), force_exclude=True))
    assert a.fingerprint != b.fingerprint
    assert a.fingerprint == c.fingerprint  # discovery options do not change a file's findings


@pytest.mark.parametrize("entry", ["register_lowering_pattern", "f:", ":0", "f:0:1", "a b:0"])
def test_extra_sinks_need_callee_and_argument(tmp_path, entry):
    (tmp_path / "pyproject.toml").write_text(f'[tool.qlint.QL101]\nextra-sinks = ["{entry}"]\n')
    with pytest.raises(ConfigError) as info:
        load_settings([str(tmp_path)])
    message = str(info.value)
    assert "pyproject.toml" in message and '[tool.qlint.QL101] "extra-sinks"' in message
    assert '"callee:N" or "callee:keyword"' in message and json.dumps(entry) in message


def test_well_formed_extra_sinks_are_accepted(tmp_path):
    sinks = ["register_lowering_pattern:0", "*:expected_ops", "pkg.mod.check:2"]
    (tmp_path / "pyproject.toml").write_text(f"[tool.qlint.QL101]\nextra-sinks = {json.dumps(sinks)}\n")
    assert load_settings([str(tmp_path)]).options_for("QL101")["extra-sinks"] == tuple(sinks)
