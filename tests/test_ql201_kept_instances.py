"""QL201: a stage method whose name too many modules spell, called on instances that stay in the
functions that build them (issue 14, item 2; `kept_instances`).

ExecuTorch's harness `Quantize.run(artifact, inputs)` captures what it is handed; 655 modules
spell `run`, past the caller search's limit, so its callers were unknown whatever they pass.
An instance is only where it was built: when every load of the class's name builds one that
is called on at once or bound to a local used only as a method's receiver, the modules naming
the class hold every call of the method, and those are read. Anything else (the class handed
on, subclassed, read as a module's attribute, renamed; an instance returned, stored or handed
to a function; `self` handed out by a method) keeps the callers unknown, and the finding.
"""

from __future__ import annotations

import pytest

from qlint.analysis import scan_memo
from qlint.analysis.flow import project_search
from tests.conftest import check_file, package_repository, rows_of
from tests.snippets import QUANTIZE_STAGE, QUANTIZE_STAGE_CAPTURE_ROW

STAGE = QUANTIZE_STAGE + "{extra}\n"
CAPTURE_ROW = QUANTIZE_STAGE_CAPTURE_ROW

# Modules that spell `run` for other things: with the limit lowered to 2, the name search gives up.
OTHERS = {
    "runner": "def run(job):\n    return job()\n",
    "jobs": "from pkg.runner import run\n\n\ndef go(job):\n    return run(job)\n",
    "loop": "class Loop:\n    def run(self):\n        return 1\n",
}

BOUND = """\
from pkg.stage import Net, Quantize


def test_quantize(q, x):
    model = Net()
    model.eval()
    stage = Quantize(q)
    stage.run(model, (x,))
"""
AT_ONCE = """\
from pkg.stage import Net, Quantize


def test_quantize(q, x):
    Quantize(q).run(Net().eval(), (x,))
"""


def _rows(tmp_path, monkeypatch, extra: str = "", limit: int = 2, **uses: str) -> list[int]:
    monkeypatch.setattr(project_search, "MAX_CANDIDATES", limit)
    modules = {"stage": STAGE.format(extra=extra), **OTHERS, **uses}
    root = package_repository(tmp_path / "repo", **modules)
    return rows_of(check_file(root / "pkg" / "stage.py", ("QL201",)).diagnostics)


@pytest.mark.parametrize("use", [BOUND, AT_ONCE], ids=["bound_to_a_local", "called_at_once"])
def test_eval_mode_callers_found_through_the_instances_vouch_for_the_stage(tmp_path, monkeypatch, use):
    assert _rows(tmp_path, monkeypatch, use=use) == []


@pytest.mark.parametrize("use", [BOUND, AT_ONCE], ids=["bound_to_a_local", "called_at_once"])
def test_the_name_search_alone_gives_up_on_the_same_project(tmp_path, monkeypatch, use):
    # The limit is what made it unknown: without the instances, the same callers are not read.
    monkeypatch.setattr("qlint.analysis.flow.project_callers._instance_holders", lambda *a: None)
    assert _rows(tmp_path, monkeypatch, use=use) == [CAPTURE_ROW]


def test_a_train_mode_caller_found_through_the_instances_is_reported(tmp_path, monkeypatch):
    train = BOUND.replace("    model.eval()\n", "")
    assert _rows(tmp_path, monkeypatch, use=BOUND, train=train) == [CAPTURE_ROW]


def test_two_modules_each_keeping_their_instances_vouch(tmp_path, monkeypatch):
    assert _rows(tmp_path, monkeypatch, use=BOUND, again=AT_ONCE) == []


ESCAPES = {
    "handed_to_a_function": "def test_it(q, x, drive):\n    drive(Quantize(q))\n",
    "returned": "def make(q):\n    return Quantize(q)\n",
    "bound_and_returned": "def make(q):\n    stage = Quantize(q)\n    return stage\n",
    "bound_and_handed_on": "def test_it(q, x, drive):\n    stage = Quantize(q)\n    drive(stage)\n",
    "stored_in_an_attribute": "class Holder:\n    def __init__(self, q):\n        self.stage = Quantize(q)\n",
    "module_level_instance": "STAGE = Quantize(None)\n",
    "in_a_registry": "STAGES = {'quantize': Quantize}\n",
    "subclassed": "class Mine(Quantize):\n    pass\n",
    "isinstance_test": "def is_stage(s):\n    return isinstance(s, Quantize)\n",
    "in_a_list": "def stages(q):\n    return [Quantize(q)]\n",
    "bound_method_handed_on": "def test_it(q, hooks):\n    stage = Quantize(q)\n    hooks.append(stage.run)\n",
    "with_statement": "def test_it(q, x):\n    with Quantize(q) as s:\n        s.run(Net().eval(), (x,))\n",
}


@pytest.mark.parametrize("name", sorted(ESCAPES))
def test_an_instance_or_the_class_escaping_keeps_the_finding(tmp_path, monkeypatch, name):
    escape = "from pkg.stage import Net, Quantize\n\n\n" + ESCAPES[name]
    assert _rows(tmp_path, monkeypatch, use=BOUND, escape=escape) == [CAPTURE_ROW]


# Each passes an eval-mode model: only the spelling keeps the callers unknown.
NAMED_OTHERWISE = {
    "module_attribute": "from pkg import stage\n\n\ndef test_it(q, x):\n"
    "    stage.Quantize(q).run(stage.Net().eval(), (x,))\n",
    "renamed_import": "from pkg.stage import Net, Quantize as Q\n\n\ndef test_it(q, x):\n"
    "    Q(q).run(Net().eval(), (x,))\n",
    "looked_up_by_string": "from pkg import stage\n\n\ndef test_it(q, x):\n"
    "    getattr(stage, 'Quantize')(q).run(stage.Net().eval(), (x,))\n",
}


@pytest.mark.parametrize("name", sorted(NAMED_OTHERWISE))
def test_the_class_reached_under_another_spelling_keeps_the_finding(tmp_path, monkeypatch, name):
    assert _rows(tmp_path, monkeypatch, use=BOUND, other=NAMED_OTHERWISE[name]) == [CAPTURE_ROW]


SELF_ESCAPES = {
    "returns_self": "\n    def configured(self):\n        return self\n",
    "hands_self_on": "\n    def register(self, registry):\n        registry.append(self)\n",
    "builds_another_of_its_class": "\n    def copy(self):\n        return self.__class__(self.quantizer)\n",
    "hands_its_bound_method_on": "\n    def register(self, hooks):\n        hooks.append(self.run)\n",
}


@pytest.mark.parametrize("name", sorted(SELF_ESCAPES))
def test_a_method_handing_out_an_instance_keeps_the_finding(tmp_path, monkeypatch, name):
    assert _rows(tmp_path, monkeypatch, extra=SELF_ESCAPES[name], use=BOUND) == [CAPTURE_ROW]


def test_an_instance_escaping_in_the_stage_module_itself_keeps_the_finding(tmp_path, monkeypatch):
    extra = "\n\ndef default_stage(q):\n    return Quantize(q)\n"
    assert _rows(tmp_path, monkeypatch, extra=extra, use=BOUND) == [CAPTURE_ROW]


def test_too_many_modules_naming_the_class_keeps_the_finding(tmp_path, monkeypatch):
    # Two modules name the class, past a limit of one: neither search can read them all.
    assert _rows(tmp_path, monkeypatch, limit=1, use=BOUND, again=AT_ONCE) == [CAPTURE_ROW]


def test_a_string_naming_the_class_in_a_module_an_earlier_run_found_never_loads_it_keeps_the_finding(
    tmp_path, monkeypatch
):
    # An earlier run (the results cache keeps `scan_memo`) found that the module's code never
    # loads the name, so the search leaves it out; its string still hands the class out.
    registry = "from pkg import stage\n\nSTAGE_CLASS = getattr(stage, 'Quantize')\n"
    noted = lambda path, question, key: path.endswith("registry.py") and "Quantize" in question  # noqa: E731
    monkeypatch.setattr(scan_memo, "known_miss", noted)
    assert _rows(tmp_path, monkeypatch, use=BOUND, registry=registry) == [CAPTURE_ROW]
