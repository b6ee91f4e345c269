"""The rule registry: built-in rules and plugins from the `qlint.rules` entry points, one
table every face asks; severities that reach every output the same way; preview rules."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

from qlint import registry, rule_origins, rule_plugins
from qlint.config import ConfigError, Overrides, load_settings
from qlint.diagnostic import Diagnostic, Range
from qlint.engine import check_source
from qlint.registry import Registry
from qlint.reporters import ReportOptions, render
from qlint.rule_origins import RegistryError
from qlint.rules import BUILTIN
from qlint.rules.base import EngineReport, FixAvailability, Rule, Severity
from qlint.settings import Settings
from tests.conftest import ROOT
from tests.plugin_support import rule_source, write_plugin


@pytest.fixture
def plugin_path(tmp_path, monkeypatch):
    """A directory on sys.path where tests write plugin distributions; their modules are
    forgotten afterwards, so the next test's module of the same name is imported afresh."""
    monkeypatch.syspath_prepend(str(tmp_path))
    yield tmp_path
    for name, module in list(sys.modules.items()):
        if str(getattr(module, "__file__", None) or "").startswith(str(tmp_path)):
            del sys.modules[name]


def test_builtin_rules_are_registered_in_code_order_with_typed_facts():
    rules = Registry(group=None).rules()
    assert list(rules) == sorted(rules)
    assert len(rules) == len(BUILTIN)
    for code, cls in rules.items():
        assert cls.code == code and rule_origins.CODE.match(code)
        assert isinstance(cls.severity, Severity) and isinstance(cls.fix_availability, FixAvailability)
        assert cls.page_path() is not None and cls.page_path().read_text().startswith(f"# {code} {cls.name}\n")
        if cls.engine_report is None:
            assert cls.runtime_check is not None and cls.runtime_check.startswith("qlint.runtime.checks.")
    assert rules["QL001"].severity is Severity.ERROR and rules["QL001"].engine_report is EngineReport.PARSE_ERROR
    assert rules["QL002"].engine_report is EngineReport.UNUSED_NOQA and rules["QL002"].unnecessary
    assert {c for c, cls in rules.items() if cls.runtime_models} == {"QL201", "QL202"}


def test_page_facts_agree_with_the_rule_class():
    """The page's `Fix is ... available.` line is the rule's fix availability."""
    for code, cls in Registry(group=None).rules().items():
        text = cls.page_path().read_text()
        match = re.search(r"^Fix is (always|sometimes|not) available\.$", text, flags=re.M)
        expected = {"always": "always", "sometimes": "sometimes", "none": "not"}[cls.fix_availability.value]
        assert match is not None and match.group(1) == expected, code


def test_readme_rules_table_matches_the_registry():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    rows = re.findall(r"^\| \[(\w+)\]\(rules/(\w+)\.md\) \| ([\w-]+) \| (.+) \|$", readme, flags=re.M)
    rules = Registry(group=None).rules()
    assert [r[0] for r in rows] == list(rules), "README rules table: one row per rule, in code order"
    for code, page, name, _finds in rows:
        assert page == code and name == rules[code].name


def test_lookup_by_code_in_any_case_and_by_name():
    assert registry.lookup("ql101").code == "QL101"
    assert registry.lookup("packet-matcher").code == "QL101"
    assert registry.lookup("QL999") is None and registry.lookup("no-such-rule") is None


def test_plugin_rules_join_the_table_with_their_package(plugin_path):
    write_plugin(plugin_path, "acme-qlint", "acme_rules", rule_source(), {"shout": "acme_rules:Shout"}, "2.0")
    reg = Registry()
    rules = reg.rules()
    assert list(rules)[-1] == "ACME101" and set(BUILTIN_CODES) < set(rules)
    origin = reg.origin("ACME101")
    assert (origin.package, origin.version, origin.builtin) == ("acme-qlint", "2.0", False)
    assert origin.entry_point == "shout = acme_rules:Shout"
    assert reg.origin("QL101").builtin and reg.origin("QL101").package == "qlint"
    assert reg.severity("ACME101") is Severity.INFO


def test_facts_given_as_their_enum_values_are_stored_as_the_enum(plugin_path):
    source = rule_source().replace("Severity.INFO", '"hint"')
    source = source.replace(
        '    triggers = ("SHOUT",)\n', '    triggers = ("SHOUT",)\n    fix_availability = "always"\n'
    )
    write_plugin(plugin_path, "acme-qlint", "acme_rules", source, {"shout": "acme_rules:Shout"})
    rule = Registry().rules()["ACME101"]
    assert rule.severity is Severity.HINT and rule.fix_availability is FixAvailability.ALWAYS


def test_an_entry_point_may_name_a_list_of_rules(plugin_path):
    source = rule_source() + rule_source(cls="Whisper", code="ACME102", name="whisper", trigger="WHISPER")
    source += "\nRULES = [Shout, Whisper]\n"
    write_plugin(plugin_path, "acme-qlint", "acme_rules", source, {"all": "acme_rules:RULES"})
    assert {"ACME101", "ACME102"} <= set(Registry().rules())


def test_two_plugins_claiming_one_code_fail_naming_both_packages(plugin_path):
    write_plugin(plugin_path / "a", "acme-qlint", "acme_rules", rule_source(), {"shout": "acme_rules:Shout"})
    other = rule_source(cls="Loud", name="loud")
    write_plugin(plugin_path / "b", "loud-qlint", "loud_rules", other, {"loud": "loud_rules:Loud"})
    sys.path[:0] = [str(plugin_path / "a"), str(plugin_path / "b")]
    try:
        with pytest.raises(RegistryError) as err:
            Registry().rules()
    finally:
        del sys.path[:2]
    message = str(err.value)
    assert "code ACME101" in message and "acme-qlint 0.1" in message and "loud-qlint 0.1" in message


def test_a_plugin_claiming_a_builtin_code_fails_naming_it(plugin_path):
    source = rule_source(cls="Mine", code="QL101", name="my-matcher")
    write_plugin(plugin_path, "greedy-qlint", "greedy_rules", source, {"mine": "greedy_rules:Mine"})
    with pytest.raises(RegistryError, match=r"code QL101: .*PacketMatcher from package qlint .* greedy-qlint 0\.1"):
        Registry().rules()


def test_a_plugin_claiming_a_builtin_name_fails(plugin_path):
    source = rule_source(cls="Mine", code="ACME101", name="packet-matcher")
    write_plugin(plugin_path, "greedy-qlint", "greedy_rules", source, {"mine": "greedy_rules:Mine"})
    with pytest.raises(RegistryError, match="name 'packet-matcher'"):
        Registry().rules()


@pytest.mark.parametrize(
    ("source", "message"),
    [
        (rule_source(code="acme1"), "code 'acme1' is not upper-case letters followed by digits"),
        (rule_source(name="Not Kebab"), "name 'Not Kebab' is not a kebab-case name"),
        (rule_source().replace("Severity.INFO", '"fatal"'), "severity 'fatal' is not a qlint.rules.base.Severity"),
        ("import nonexistent_module_xyz\n", "cannot be loaded: ModuleNotFoundError"),
        ("Shout = 3\n", "names 3, which is not a subclass of qlint.rules.base.Rule"),
    ],
)
def test_malformed_plugins_fail_at_start_up(plugin_path, source, message):
    write_plugin(plugin_path, "bad-qlint", "bad_rules", source, {"bad": "bad_rules:Shout"})
    with pytest.raises(RegistryError, match=re.escape(message)) as err:
        Registry().rules()
    assert "bad-qlint" in str(err.value)


def test_plugins_are_loaded_once(plugin_path):
    write_plugin(plugin_path, "acme-qlint", "acme_rules", rule_source(), {"shout": "acme_rules:Shout"})
    reg = Registry()
    first = reg.rules()
    (plugin_path / "acme_qlint-0.1.dist-info" / "entry_points.txt").write_text("[qlint.rules]\n")
    assert reg.rules() is first and "ACME101" in first


# ------------------------------------------------------------------ selection and noqa on plugin codes


@pytest.fixture
def acme(monkeypatch, plugin_path):
    """The process-wide registry, with the ACME plugin installed."""
    write_plugin(plugin_path, "acme-qlint", "acme_rules", rule_source(), {"shout": "acme_rules:Shout"})
    monkeypatch.setattr(registry, "_REGISTRY", Registry())
    return registry.rules()["ACME101"]


def test_plugin_codes_are_selected_by_default_and_by_prefix(acme, tmp_path):
    src = "SHOUT = 1\nQUIET = SHOUT\n"
    found = check_source(src, str(tmp_path / "m.py"), Settings(root=tmp_path)).diagnostics
    assert [(d.code, d.range.start.row) for d in found] == [("ACME101", 1), ("ACME101", 2)]
    assert "ACME101" not in Settings(select=("QL",)).enabled_codes
    assert "ACME101" in Settings(select=("QL", "ACME1")).enabled_codes
    assert "ACME101" not in Settings(ignore=("ACME",)).enabled_codes
    pfi = Settings(root=tmp_path, per_file_ignores=(("m.py", ("ACME101",)),))
    assert check_source(src, str(tmp_path / "m.py"), pfi).diagnostics == []


def test_a_plugin_finding_links_to_the_plugins_page_or_nowhere(acme, monkeypatch):
    d = _diag("ACME101", "shout")
    assert json.loads(render("json", [d], ReportOptions()))[0]["url"] is None  # not into qlint's repository
    [message] = [json.loads(x) for x in render("lintrunner", [d], ReportOptions()).splitlines()]
    assert message["description"] == "m"
    monkeypatch.setattr(acme, "url", "https://acme.example/ACME101")
    assert json.loads(render("json", [d], ReportOptions()))[0]["url"] == "https://acme.example/ACME101"
    [rule] = [
        r
        for r in json.loads(render("sarif", [], ReportOptions()))["runs"][0]["tool"]["driver"]["rules"]
        if r["id"] == "ACME101"
    ]
    assert rule["helpUri"] == "https://acme.example/ACME101" and rule["properties"]["package"] == "acme-qlint"
    assert json.loads(render("json", [_diag("QL101", "packet-matcher")], ReportOptions()))[0]["url"].endswith(
        "/QL101.md"
    )


def test_noqa_and_unused_noqa_work_on_plugin_codes(acme, tmp_path):
    src = "SHOUT = 1  # noqa: ACME101\nx = 2  # noqa: ACME101\n"
    found = check_source(src, str(tmp_path / "m.py"), Settings(root=tmp_path)).diagnostics
    assert [(d.code, d.range.start.row, d.message) for d in found] == [
        ("QL002", 2, "Unused `noqa` directive (unused: ACME101)")
    ]


def test_config_validates_plugin_selectors_and_options(acme, tmp_path):
    assert load_settings([], overrides=Overrides(select=("ACME",))).enabled_codes == {"ACME101"}
    with pytest.raises(ConfigError, match='unknown rule selector "ACME9"'):
        load_settings([], overrides=Overrides(select=("ACME9",)))


def test_a_crashing_plugin_rule_is_one_error_line_naming_the_plugin(monkeypatch, plugin_path, tmp_path):
    write_plugin(plugin_path, "crashy-qlint", "crashy", rule_source(crash=True), {"shout": "crashy:Shout"})
    monkeypatch.setattr(registry, "_REGISTRY", Registry())
    monkeypatch.delenv("QLINT_DEBUG", raising=False)
    src = "import torch\nSHOUT = 1\nok = n.target == torch.ops.aten.relu\n"
    result = check_source(src, str(tmp_path / "m.py"), Settings(root=tmp_path))
    assert [d.code for d in result.diagnostics] == ["QL101"]  # the other rules' findings stay
    [error] = result.errors
    assert "\n" not in error
    assert error.endswith("internal error in ACME101 shout (plugin crashy-qlint 0.1): RuntimeError: plugin bug")


# ------------------------------------------------------------------ preview


class PreviewRule(Rule):
    code = "QL990"
    name = "preview-thing"
    summary = "test-only preview rule"
    preview = True
    triggers = ("PREVIEW_ME",)

    def check(self, ctx):
        yield ctx.diagnostic(self, ctx.tree.body[0], "previewed")


def test_preview_rules_run_only_in_preview_mode(monkeypatch, tmp_path):
    monkeypatch.setitem(registry.rules(), PreviewRule.code, PreviewRule)
    src = "PREVIEW_ME = 1\n"
    assert check_source(src, str(tmp_path / "m.py"), Settings(root=tmp_path)).diagnostics == []
    assert "QL990" not in Settings(select=("QL990",)).enabled_codes
    found = check_source(src, str(tmp_path / "m.py"), Settings(root=tmp_path, preview=True)).diagnostics
    assert [d.code for d in found] == ["QL990"]
    (tmp_path / "pyproject.toml").write_text("[tool.qlint]\npreview = true\n")
    assert load_settings([str(tmp_path)]).preview is True
    assert load_settings([str(tmp_path)], overrides=Overrides(preview=True)).enabled_codes >= {"QL990"}


def test_preview_flag_on_the_command_line(monkeypatch, tmp_path, capsys):
    from qlint.cli import main

    monkeypatch.setitem(registry.rules(), PreviewRule.code, PreviewRule)
    monkeypatch.chdir(tmp_path)
    (tmp_path / "m.py").write_text("PREVIEW_ME = 1\n")
    assert main(["check", "--no-cache", "m.py"]) == 0
    assert main(["check", "--no-cache", "--preview", "m.py"]) == 1
    assert "m.py:1:1: QL990 previewed" in capsys.readouterr().out
    rules = main(["rules"])
    assert rules == 0 and "test-only preview rule (preview)" in capsys.readouterr().out


# ------------------------------------------------------------------ severities in every output


class InfoRule(Rule):
    code = "QL991"
    name = "info-thing"
    summary = "test-only info rule"
    severity = Severity.INFO

    def check(self, ctx):
        return iter(())


def _diag(code: str, name: str) -> Diagnostic:
    return Diagnostic(code, name, "m", "/tmp/m.py", Range.of(1, 0, 1, 1), noqa_row=1)


@pytest.mark.parametrize(
    ("fmt", "read", "expected"),
    [
        ("json", lambda out: [o["severity"] for o in json.loads(out)], ["error", "warning", "info"]),
        ("json-lines", lambda out: [json.loads(x)["severity"] for x in out.splitlines()], ["error", "warning", "info"]),
        (
            "sarif",
            lambda out: [r["level"] for r in json.loads(out)["runs"][0]["results"]],
            ["error", "warning", "note"],
        ),
        (
            "lintrunner",
            lambda out: [json.loads(x)["severity"] for x in out.splitlines()],
            ["error", "warning", "advice"],
        ),
        ("github", lambda out: [x.split(" ", 1)[0] for x in out.splitlines()], ["::error", "::warning", "::notice"]),
    ],
)
def test_each_output_carries_the_rules_severity(monkeypatch, fmt, read, expected):
    monkeypatch.setitem(registry.rules(), InfoRule.code, InfoRule)
    ds = [_diag("QL001", "syntax-error"), _diag("QL101", "packet-matcher"), _diag("QL991", "info-thing")]
    assert read(render(fmt, ds, ReportOptions())) == expected


def test_sarif_rule_metadata_carries_severity_fix_availability_and_package():
    rules = json.loads(render("sarif", [], ReportOptions()))["runs"][0]["tool"]["driver"]["rules"]
    by_id = {r["id"]: r for r in rules}
    assert by_id["QL001"]["defaultConfiguration"]["level"] == "error"
    assert by_id["QL101"]["defaultConfiguration"]["level"] == "warning"
    assert by_id["QL002"]["properties"] == {"fixAvailability": "always", "package": "qlint"}


def test_lsp_severity_and_tags_come_from_the_rule(monkeypatch):
    pytest.importorskip("lsprotocol")
    from lsprotocol import types

    from qlint.lsp.convert import severity_of, tags_of

    monkeypatch.setitem(registry.rules(), InfoRule.code, InfoRule)
    assert severity_of("QL001") == types.DiagnosticSeverity.Error
    assert severity_of("QL101") == types.DiagnosticSeverity.Warning
    assert severity_of("QL991") == types.DiagnosticSeverity.Information
    assert tags_of("QL002") == [types.DiagnosticTag.Unnecessary] and tags_of("QL101") is None


BUILTIN_CODES = [spec.split(":")[0].rsplit(".", 1)[1][:5].upper() for spec in BUILTIN]


# ------------------------------------------------------------------ the docs stay true


def test_contributing_walkthrough_rule_and_tests_work(monkeypatch):
    """CONTRIBUTING.md's rule module and its tests, run as written."""
    text = (ROOT / "CONTRIBUTING.md").read_text(encoding="utf-8")
    rule_block, _register, test_block = re.findall(r"```python\n(.*?)```", text, flags=re.S)[:3]
    namespace: dict = {}
    exec(compile(rule_block, "ql501_print_in_quantizer", "exec"), namespace)
    rule = namespace["PrintInQuantizer"]
    assert rule.preview and rule_origins.CODE.match(rule.code)
    monkeypatch.setitem(registry.rules(), rule.code, rule)
    tests: dict = {}
    exec(compile(test_block, "test_ql501", "exec"), tests)
    tests["test_print_in_annotate"]()
    tests["test_print_elsewhere_is_quiet"]()
    assert f'"qlint.rules.ql501_print_in_quantizer:{rule.__name__}"' in _register


def test_readme_configuration_example_is_valid(tmp_path):
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    [block] = [b for b in re.findall(r"```toml\n(.*?)```", readme, flags=re.S) if "[tool.qlint]" in b]
    (tmp_path / "pyproject.toml").write_text(block)
    settings = load_settings([str(tmp_path)])
    assert settings.select == ("QL",) and settings.preview is False and settings.ignore == ("QL202",)


def test_without_plugins_start_up_skips_importlib_metadata(tmp_path):
    """Reading entry_points.txt as text tells that no package declares the group; the full
    scan (which imports `email` and parses every package's metadata) is for when one does."""
    code = (
        "import sys; from qlint.settings import Settings; Settings().enabled_codes; "
        "assert 'importlib.metadata' not in sys.modules, 'full scan without a plugin'"
    )
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)
    write_plugin(tmp_path, "acme-qlint", "acme_rules", rule_source(), {"shout": "acme_rules:Shout"})
    code = "import sys; from qlint import registry; assert 'ACME101' in registry.rules()"
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(tmp_path)])}
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT, env=env)


def test_a_zip_on_sys_path_gets_the_full_scan(tmp_path, monkeypatch):
    archive = tmp_path / "plugins.zip"
    archive.write_bytes(b"PK\x05\x06" + b"\0" * 18)  # an empty zip archive
    monkeypatch.setattr(sys, "path", [str(archive)])
    assert rule_plugins.may_declare("qlint.rules")
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    assert not rule_plugins.may_declare("qlint.rules")


def test_the_quick_scan_reads_entry_points_as_a_text_mode_read_would(tmp_path, monkeypatch):
    """`rule_plugins.may_declare` reads each distribution's entry_points.txt as bytes: the header anywhere
    (past the first read's 64 KB too) declares the group, a file that is not UTF-8 is passed
    over as the text-mode read that raised UnicodeDecodeError did, and so is a directory in
    its place or a distribution without the file."""
    monkeypatch.setattr(sys, "path", [str(tmp_path)])
    (tmp_path / "plain-1.0.dist-info").mkdir()
    (tmp_path / "odd-1.0.dist-info" / "entry_points.txt").mkdir(parents=True)
    (tmp_path / "stray").mkdir()
    (tmp_path / "stray" / "entry_points.txt").write_text("[qlint.rules]\n")  # not a distribution
    assert not rule_plugins.may_declare("qlint.rules")
    points = tmp_path / "other-2.0.dist-info" / "entry_points.txt"
    points.parent.mkdir()
    points.write_bytes(b"[console_scripts]\nx = y:z\n" + b"#" * 70_000 + b"\n[qlint.rules]\na = b:C\n")
    assert rule_plugins.may_declare("qlint.rules")
    assert not rule_plugins.may_declare("qlint.other")
    points.write_bytes(b"[qlint.rules]\na = b:C\n# \xff\n")  # not UTF-8: `open(encoding="utf-8")` refused it
    assert not rule_plugins.may_declare("qlint.rules")
    egg = tmp_path / "legacy.egg-info" / "entry_points.txt"
    egg.parent.mkdir()
    egg.write_text("\ufeff[qlint.rules]\r\na = b:C\r\n", encoding="utf-8")
    assert rule_plugins.may_declare("qlint.rules")


def test_the_engine_rules_are_looked_up_once_not_per_file(monkeypatch):
    """The engine asks for QL001's and QL002's classes for every file it checks: rebuilding
    the facts of every rule each time cost 0.4 s of a run over ExecuTorch."""
    from qlint.registry import Registry
    from qlint.rules.base import EngineReport

    reg = Registry(group=None)
    calls = []
    real = Registry.facts
    monkeypatch.setattr(Registry, "facts", lambda self: calls.append(1) or real(self))
    first = reg.engine_rule(EngineReport.PARSE_ERROR)
    assert [reg.engine_rule(EngineReport.PARSE_ERROR) for _ in range(5)] == [first] * 5
    assert reg.engine_rule(EngineReport.UNUSED_NOQA).code == "QL002"
    assert first.code == "QL001" and len(calls) == 2
