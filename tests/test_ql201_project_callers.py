"""QL201: a helper's callers in other modules of the project (issue 14, item 7).

A helper that captures its parameter without `eval()` is quiet only when every caller in the
project is found and passes an eval-mode model or one whose mode cannot change the graph; a
caller that passes a train-mode model with batch norm, or one that cannot be classified,
keeps the finding.
"""

from __future__ import annotations

import textwrap

from qlint.analysis.names.project import ProjectIndex
from tests.conftest import check_file

HEAD = """\
import torch
from torch import nn
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
"""
HELPER = (
    HEAD
    + """

def quantize_module(module, quantizer, x):
    captured = export(module, (x,)).module()
    return prepare_pt2e(captured, quantizer)
"""
)
IMPORT = "from pkg.utils.export_utils import quantize_module\n"


def _repo(tmp_path, **scripts: str):
    """A repository: the helper in `pkg/utils/export_utils.py`, callers in `scripts/`."""
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    (root / "pkg" / "utils").mkdir(parents=True)
    (root / "pkg" / "__init__.py").touch()
    (root / "pkg" / "utils" / "__init__.py").touch()
    (root / "pkg" / "utils" / "export_utils.py").write_text(HELPER)
    (root / "scripts").mkdir()
    for name, body in scripts.items():
        (root / "scripts" / f"{name}.py").write_text(HEAD + textwrap.dedent(body))
    return root


def _check(root, project: ProjectIndex | None = None):
    path = root / "pkg" / "utils" / "export_utils.py"
    return check_file(path, ("QL201",), project)


EVAL_CALLER = (
    IMPORT
    + """
def main(quantizer, x):
    model = torchvision_model().eval()
    quantize_module(model, quantizer, x)
"""
)
MODE_FREE_CALLER = (
    IMPORT
    + """
class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv = nn.Conv2d(3, 3, 3)

def main(quantizer, x):
    quantize_module(Net(), quantizer, x)
"""
)
BN_CALLER = MODE_FREE_CALLER.replace("nn.Conv2d(3, 3, 3)", "nn.BatchNorm2d(3)")


def test_no_caller_anywhere_keeps_the_finding(tmp_path):
    (d,) = _check(_repo(tmp_path)).diagnostics
    assert "as parameter `module`, in whatever mode the caller left it" in d.message


def test_callers_in_other_modules_passing_eval_or_mode_free_models_are_quiet(tmp_path):
    root = _repo(tmp_path, a=EVAL_CALLER, b=MODE_FREE_CALLER)
    assert _check(root).diagnostics == []


def test_a_caller_passing_a_train_mode_batch_norm_model_keeps_the_finding(tmp_path):
    root = _repo(tmp_path, a=EVAL_CALLER, b=BN_CALLER)
    assert len(_check(root).diagnostics) == 1


def test_a_caller_that_cannot_be_classified_keeps_the_finding(tmp_path):
    loaded = IMPORT + "\ndef main(quantizer, x):\n    quantize_module(load_model(), quantizer, x)\n"
    assert len(_check(_repo(tmp_path, a=EVAL_CALLER, b=loaded)).diagnostics) == 1
    # A caller that hands on its own parameter, which nothing calls: callers qlint cannot see.
    handed = IMPORT + "\ndef run(model, quantizer, x):\n    quantize_module(model, quantizer, x)\n"
    assert len(_check(_repo(tmp_path / "h", a=EVAL_CALLER, b=handed)).diagnostics) == 1


def test_a_use_that_is_not_a_call_keeps_the_finding(tmp_path):
    callback = IMPORT + "\ndef main(run):\n    run(quantize_module)\n"
    assert len(_check(_repo(tmp_path, a=EVAL_CALLER, b=callback)).diagnostics) == 1
    in_lambda = IMPORT + "\ndef main(q, x, m, hooks):\n    hooks.append(lambda: quantize_module(m.eval(), q, x))\n"
    assert len(_check(_repo(tmp_path / "l", a=EVAL_CALLER, b=in_lambda)).diagnostics) == 1
    # A lambda called by name runs its body there (`called_lambdas`): a call with an evaled model.
    called = IMPORT + "\ndef main(q, x, m):\n    f = lambda: quantize_module(m.eval(), q, x)\n    f()\n"
    assert _check(_repo(tmp_path / "c", a=EVAL_CALLER, b=called)).diagnostics == []


def test_a_model_given_parts_before_the_call_keeps_the_finding(tmp_path):
    changed = MODE_FREE_CALLER.replace(
        "    quantize_module(Net(), quantizer, x)",
        "    m = Net()\n    m.head = make_head()\n    quantize_module(m, quantizer, x)",
    )
    assert len(_check(_repo(tmp_path, a=changed)).diagnostics) == 1


def test_a_function_of_the_same_name_elsewhere_is_not_a_caller(tmp_path):
    other = "from otherpkg.tools import quantize_module\n\ndef main(q, x, m):\n    quantize_module(m, q, x)\n"
    assert _check(_repo(tmp_path, a=EVAL_CALLER, b=other)).diagnostics == []
    # Through a star re-export of the helper's own module: that caller hands on its parameter.
    (tmp_path / "s").mkdir()
    root = _repo(tmp_path / "s", a=EVAL_CALLER)
    (root / "pkg" / "reexport.py").write_text("from pkg.utils.export_utils import *  # noqa: F403\n")
    star = "from pkg.reexport import quantize_module\n\ndef main(q, x, m):\n    quantize_module(m, q, x)\n"
    (root / "scripts" / "b.py").write_text(HEAD + star)
    assert len(_check(root).diagnostics) == 1


def test_a_module_aliased_import_is_followed(tmp_path):
    aliased = "import pkg.utils.export_utils as eu\n\ndef main(q, x, m):\n    eu.quantize_module(m.eval(), q, x)\n"
    assert _check(_repo(tmp_path, a=aliased)).diagnostics == []
    renamed = "from pkg.utils.export_utils import quantize_module as qm\n\ndef main(q, x, m):\n    qm(m, q, x)\n"
    assert len(_check(_repo(tmp_path / "r", a=aliased, b=renamed)).diagnostics) == 1


def test_every_project_module_is_a_dependency_and_a_new_caller_is_seen(tmp_path):
    root = _repo(tmp_path, a=EVAL_CALLER)
    project = ProjectIndex()
    result = _check(root, project)
    assert result.diagnostics == []
    assert str(root / "scripts" / "a.py") in result.dependencies
    (root / "scripts" / "b.py").write_text(HEAD + BN_CALLER)
    assert len(_check(root, project).diagnostics) == 1


def test_a_module_found_not_to_name_the_helper_is_not_read_again_until_it_changes(tmp_path, monkeypatch):
    from qlint.analysis.names import content_keys

    unrelated = {f"u{i}": "def f():\n    return 1\n" for i in range(5)}
    root = _repo(tmp_path, a=EVAL_CALLER, **unrelated)
    reads: list[str] = []
    real = content_keys.content_bytes
    monkeypatch.setattr(
        content_keys,
        "content_bytes",
        lambda overlay, path, key, limit: reads.append(path) or real(overlay, path, key, limit),
    )
    project = ProjectIndex()
    assert _check(root, project).diagnostics == []
    assert any(p.endswith("u0.py") for p in reads)
    reads.clear()
    assert _check(root, project).diagnostics == []  # the next keystroke: only the callers are read
    assert not any(p.endswith(tuple(f"u{i}.py" for i in range(5))) for p in reads)
    # An unrelated module that becomes a caller (same size, new content) is read and judged.
    (root / "scripts" / "u3.py").write_text(HEAD + BN_CALLER)
    assert len(_check(root, project).diagnostics) == 1
    assert any(p.endswith("u3.py") for p in reads)


# -- a helper of a test module that nothing names ---------------------------------------------------
def _test_module(tmp_path, body: str, name: str = "test_quant.py", **scripts: str):
    root = _repo(tmp_path, **scripts)
    (root / "tests").mkdir()
    path = root / "tests" / name
    path.write_text(HELPER.replace("def quantize_module", "def dynamic_quant") + textwrap.dedent(body))
    return check_file(path, ("QL201",)).diagnostics


def test_a_test_module_helper_nothing_calls_is_dead_code(tmp_path):
    assert _test_module(tmp_path, "\ndef test_dynamic_quant_linear():\n    pass\n") == []


def test_a_test_module_helper_that_is_called_or_named_is_judged(tmp_path):
    called = "\ndef test_it(q, x):\n    dynamic_quant(torch.nn.Dropout(), q, x)\n"
    assert len(_test_module(tmp_path, called)) == 1
    named = "\nHELPERS = [dynamic_quant]\n"
    assert len(_test_module(tmp_path / "n", named)) == 1
    elsewhere = "from tests.test_quant import dynamic_quant\n\ndef main(q, x, m):\n    dynamic_quant(m, q, x)\n"
    assert len(_test_module(tmp_path / "e", "", b=elsewhere)) == 1


def test_an_uncalled_helper_of_a_library_module_stays_reported(tmp_path):
    # A module under `tests/` is a test-support module (dead_code): the library's is in a package.
    root = _repo(tmp_path)
    (root / "lib").mkdir()
    (root / "lib" / "__init__.py").write_text("")
    path = root / "lib" / "quant_utils.py"
    path.write_text(HELPER.replace("def quantize_module", "def dynamic_quant"))
    assert len(check_file(path, ("QL201",)).diagnostics) == 1


def test_an_uncalled_helper_of_a_test_support_module_is_dead_code(tmp_path):
    assert _test_module(tmp_path, "", name="quant_utils.py") == []


# -- names a caller takes from `from <project module> import *` ------------------------------------
MODELS = """\
import torch
from torch import nn


class SimpleModel(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)
        self.eval()
"""
STAR_CALLER = (
    IMPORT
    + "from pkg.models import *  # noqa: F403\n"
    + """
def main(quantizer, x):
    quantize_module(SimpleModel(), quantizer, x)
"""
)


def _star_repo(tmp_path, models: str, caller: str = STAR_CALLER):
    root = _repo(tmp_path, a=caller)
    (root / "pkg" / "models.py").write_text(models)
    return root


def test_a_class_from_a_star_import_whose_init_calls_eval_is_quiet(tmp_path):
    # ExecuTorch's test_qnn_delegate.py: `from ...tests.models import *`, then `SimpleModel()`.
    assert _check(_star_repo(tmp_path, MODELS)).diagnostics == []


def test_a_train_mode_batch_norm_class_from_a_star_import_keeps_the_finding(tmp_path):
    assert len(_check(_star_repo(tmp_path, MODELS.replace("        self.eval()\n", ""))).diagnostics) == 1


def test_a_star_import_binds_only_what_all_exports(tmp_path):
    # `__all__` leaves SimpleModel out: the caller's SimpleModel is not that class.
    hidden = MODELS + '\n__all__ = ["Other"]\n'
    assert len(_check(_star_repo(tmp_path, hidden)).diagnostics) == 1
    listed = MODELS + '\n__all__ = ["SimpleModel"]\n'
    assert _check(_star_repo(tmp_path / "l", listed)).diagnostics == []
    # A later definition in the caller's own module wins over the star import.
    shadowed = STAR_CALLER + "\nclass SimpleModel(nn.Module):\n    def __init__(self):\n"
    shadowed += "        super().__init__()\n        self.bn = nn.BatchNorm2d(3)\n"
    assert len(_check(_star_repo(tmp_path / "s", MODELS, shadowed)).diagnostics) == 1


def test_a_helper_re_exported_through_a_star_import_is_followed(tmp_path):
    # ExecuTorch's scripts import build_executorch_binary from examples/qualcomm/utils.py,
    # which star-imports it from backends/qualcomm/export_utils.py.
    root = _repo(tmp_path)
    (root / "pkg" / "reexport.py").write_text("from pkg.utils.export_utils import *  # noqa: F403\n")
    body = "from pkg.reexport import quantize_module\n\ndef main(q, x, m):\n    quantize_module(m.eval(), q, x)\n"
    (root / "scripts" / "b.py").write_text(HEAD + body)
    assert _check(root).diagnostics == []
    (root / "scripts" / "c.py").write_text(HEAD + body.replace("m.eval()", "torch.nn.BatchNorm2d(3)"))
    assert len(_check(root).diagnostics) == 1


def test_a_named_mode_free_model_handed_over_in_a_loop_is_quiet(tmp_path):
    # ExecuTorch's tests/rework/src/utils.py: `module = _UtilsModel()`, then the helper is called
    # with it once per case. The call that hands the model over is the capture being judged,
    # not a change to the model.
    looped = MODE_FREE_CALLER.replace(
        "    quantize_module(Net(), quantizer, x)",
        "    m = Net()\n    for _ in range(2):\n        quantize_module(m, quantizer, x)",
    )
    assert _check(_repo(tmp_path, a=looped)).diagnostics == []
    assert len(_check(_repo(tmp_path / "b", a=looped.replace("nn.Conv2d(3, 3, 3)", "nn.Dropout()"))).diagnostics) == 1


def test_a_caller_unpacking_an_eval_model_from_its_own_helper_is_quiet(tmp_path):
    # ExecuTorch's mobilebert_fine_tune.py: `model, data, labels = get_fine_tuned_mobilebert(...)`,
    # which returns `model.eval(), ...`.
    unpacked = (
        IMPORT
        + """
def fine_tuned(path):
    model = nn.Sequential(nn.Conv2d(3, 3, 3), nn.BatchNorm2d(3))
    model.load_state_dict(torch.load(path))
    return model.eval(), torch.randn(1, 3, 8, 8)


def main(quantizer, path):
    model, x = fine_tuned(path)
    quantize_module(model, quantizer, x)
"""
    )
    assert _check(_repo(tmp_path, a=unpacked)).diagnostics == []
    left = unpacked.replace("return model.eval(), torch", "return model, torch")
    assert len(_check(_repo(tmp_path / "t", a=left)).diagnostics) == 1


def test_caller_modules_are_kept_for_the_checks_of_one_file(tmp_path):
    from qlint.analysis.flow import caller_modules

    root = _repo(tmp_path, a=EVAL_CALLER, b=BN_CALLER)
    project = ProjectIndex()  # an editor's: every caller module of the file checked is kept
    assert len(_check(root, project).diagnostics) == 1
    helper = str(root / "pkg" / "utils" / "export_utils.py")
    kept = [k for k in caller_modules._MODULES if k[2] == helper]
    assert len(kept) == 2  # both callers, parsed for this check
    # Checking another file that reads callers drops them; the first file, checked again,
    # parses them again with the same answer.
    other = tmp_path / "other"
    assert _check(_repo(other, a=EVAL_CALLER, b=MODE_FREE_CALLER), ProjectIndex()).diagnostics == []
    assert not [k for k in caller_modules._MODULES if k[2] == helper]
    built = caller_modules.BUILT[0]
    assert len(_check(root, project).diagnostics) == 1
    assert caller_modules.BUILT[0] == built + 2
    # An edit of the checked file that adds a line is no edit of one body: they are analysed again.
    path = root / "pkg" / "utils" / "export_utils.py"
    path.write_text(HELPER + "\n# edited\n")
    assert len(_check(root, project).diagnostics) == 1
    assert caller_modules.BUILT[0] == built + 4


def _run_index() -> ProjectIndex:
    return ProjectIndex(track_dependents=False)  # a command-line run's


def test_a_check_keeps_every_caller_module_it_asked_with_the_same_answers(tmp_path):
    from qlint.analysis.flow import caller_modules

    callers = {f"c{i}": EVAL_CALLER for i in range(4)}
    root = _repo(tmp_path, **callers)
    helper = str(root / "pkg" / "utils" / "export_utils.py")
    assert _check(root, _run_index()).diagnostics == []  # every caller read, all eval-mode
    assert len([k for k in caller_modules._MODULES if k[2] == helper]) == len(callers)
    risky = _repo(tmp_path / "risky", **callers, z=BN_CALLER)  # the last caller read decides
    assert len(_check(risky, _run_index()).diagnostics) == 1
    assert not [k for k in caller_modules._MODULES if k[2] == helper]  # another check's: gone


def test_a_file_checked_once_leaves_no_caller_module_behind(tmp_path):
    from qlint.analysis.flow import caller_modules
    from qlint.engine import checked_once

    root = _repo(tmp_path, a=EVAL_CALLER, b=BN_CALLER)
    helper = str(root / "pkg" / "utils" / "export_utils.py")
    other = _repo(tmp_path / "other", a=EVAL_CALLER)
    _check(other, _run_index())
    assert len(_check(root, _run_index()).diagnostics) == 1
    assert len([k for k in caller_modules._MODULES if k[2] == helper]) == 2
    checked_once(helper)
    assert not [k for k in caller_modules._MODULES if k[2] == helper]


# -- a helper re-exported under another name (issue 14: `from .x import f as qm`) --------------------
RENAMED = "from .utils.export_utils import quantize_module as qm\n"
EVAL_QM = "\ndef main(q, x, model):\n    {f}(model.eval(), q, x)\n"
BN_QM = "\ndef main(q, x):\n    {f}(torch.nn.BatchNorm2d(3), q, x)\n"


def _renamed_repo(tmp_path, reexport: str = RENAMED, where: str = "api.py", **scripts: str):
    root = _repo(tmp_path, **scripts)
    (root / "pkg" / where).write_text(reexport)
    return root


def test_a_train_mode_caller_of_a_renamed_re_export_keeps_the_finding(tmp_path):
    # The direct caller vouches; the one calling `qm` from `pkg.api` passes a train-mode model.
    bn = "from pkg.api import qm\n" + BN_QM.format(f="qm")
    assert len(_check(_renamed_repo(tmp_path, a=EVAL_CALLER, c=bn)).diagnostics) == 1
    # Through a package `__init__` and through a second renaming.
    init = "from pkg import qm\n" + BN_QM.format(f="qm")
    assert len(_check(_renamed_repo(tmp_path / "i", where="__init__.py", a=EVAL_CALLER, c=init)).diagnostics) == 1
    root = _renamed_repo(tmp_path / "t", a=EVAL_CALLER, c="from pkg.api2 import qq\n" + BN_QM.format(f="qq"))
    (root / "pkg" / "api2.py").write_text("from .api import qm as qq\n")
    assert len(_check(root).diagnostics) == 1
    # As an attribute of the re-exporting module.
    attr = "import pkg.api as api\n" + BN_QM.format(f="api.qm")
    assert len(_check(_renamed_repo(tmp_path / "m", a=EVAL_CALLER, c=attr)).diagnostics) == 1


def test_eval_mode_callers_of_a_renamed_re_export_vouch(tmp_path):
    named = "from pkg.api import qm\n" + EVAL_QM.format(f="qm")
    assert _check(_renamed_repo(tmp_path, a=named)).diagnostics == []
    attr = "from pkg import api\n" + EVAL_QM.format(f="api.qm")
    assert _check(_renamed_repo(tmp_path / "m", a=attr, b=EVAL_CALLER)).diagnostics == []
    # `from pkg import f as g` of a package re-exporting it under its own name.
    init = "from pkg import quantize_module as g\n" + EVAL_QM.format(f="g")
    reexport = "from .utils.export_utils import quantize_module\n"
    assert _check(_renamed_repo(tmp_path / "i", reexport, "__init__.py", a=init)).diagnostics == []


def test_look_alikes_of_a_renamed_re_export_are_not_its_callers(tmp_path):
    cases = {
        # A local and a parameter of the re-exported name.
        "local": "from pkg.api import qm\n\ndef main(q, x):\n    qm = make()\n    qm(torch.nn.BatchNorm2d(3), q, x)\n",
        "param": "from pkg.api import qm\n\ndef main(q, x, qm):\n    qm(torch.nn.BatchNorm2d(3), q, x)\n",
        # A function of that name of the module's own, another package's, an object's method.
        "own": "\ndef qm(*a):\n    pass\n" + BN_QM.format(f="qm"),
        "other": "from otherpkg import qm\n" + BN_QM.format(f="qm"),
        "method": "\ndef main(q, x, obj):\n    obj.qm(torch.nn.BatchNorm2d(3), q, x)\n",
        # The name only in a string.
        "string": "NAME = 'qm'\n\ndef main(q, x):\n    print(NAME, torch.nn.BatchNorm2d(3))\n",
    }
    for label, body in cases.items():
        assert _check(_renamed_repo(tmp_path / label, a=EVAL_CALLER, c=body)).diagnostics == [], label
    # The re-exporter binds `qm` to another package's function: its callers are not the helper's.
    other = RENAMED.replace("quantize_module as qm", "quantize_module") + "from otherpkg import quantize_module as qm\n"
    bn = "from pkg.api import qm\n" + BN_QM.format(f="qm")
    assert _check(_renamed_repo(tmp_path / "o", other, a=EVAL_CALLER, c=bn)).diagnostics == []


def test_a_renamed_re_export_used_as_a_value_keeps_the_finding(tmp_path):
    callback = "from pkg.api import qm\n\ndef main(run):\n    run(qm)\n"
    assert len(_check(_renamed_repo(tmp_path, a=EVAL_CALLER, c=callback)).diagnostics) == 1


def test_a_pure_re_exporter_is_searched_again_by_the_next_check(tmp_path):
    # Its code never loads the name, yet it is not remembered as a module without callers.
    root = _renamed_repo(tmp_path, a=EVAL_CALLER, c="from pkg.api import qm\n" + BN_QM.format(f="qm"))
    project = ProjectIndex()
    assert len(_check(root, project).diagnostics) == 1
    assert len(_check(root, project).diagnostics) == 1


# -- an installed package whose directories lack `__init__.py` (issue 14: the ExecuTorch wheel) -----
def _installed(tmp_path, **scripts: str):
    """`site-packages/fakewheel/`: no `__init__.py` at its top nor in `examples/`, as the
    ExecuTorch wheel ships `executorch/` and `examples/qualcomm/oss_scripts/*`."""
    top = tmp_path / "lib" / "site-packages" / "fakewheel"
    (top / "backends").mkdir(parents=True)
    (top / "backends" / "__init__.py").touch()
    (top / "backends" / "export_utils.py").write_text(HELPER)
    (top / "examples" / "oss").mkdir(parents=True)
    for name, body in scripts.items():
        (top / "examples" / "oss" / f"{name}.py").write_text(HEAD + textwrap.dedent(body))
    return top


def _check_installed(top):
    path = top / "backends" / "export_utils.py"
    return check_file(path, ("QL201",)).diagnostics


WHEEL_IMPORT = "from fakewheel.backends.export_utils import quantize_module\n"


def test_installed_modules_are_named_from_the_install_directory(tmp_path):
    from qlint.analysis.names.modules import module_name_for

    top = _installed(tmp_path, a="")
    assert module_name_for(str(top / "backends" / "export_utils.py")) == "fakewheel.backends.export_utils"
    assert module_name_for(str(top / "examples" / "oss" / "a.py")) == "fakewheel.examples.oss.a"
    # A checkout's directory without `__init__.py` keeps its own name.
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    (tmp_path / "repo" / "scripts").mkdir()
    assert module_name_for(str(tmp_path / "repo" / "scripts" / "a.py")) == "a"


def test_callers_in_namespace_directories_of_an_installed_package_are_read(tmp_path):
    evals = WHEEL_IMPORT + "\ndef main(q, x, model):\n    quantize_module(model.eval(), q, x)\n"
    assert _check_installed(_installed(tmp_path, a=evals)) == []
    bn = WHEEL_IMPORT + "\ndef main(q, x):\n    quantize_module(torch.nn.BatchNorm2d(3), q, x)\n"
    assert len(_check_installed(_installed(tmp_path / "b", a=evals, b=bn))) == 1
    # Another package's function of the same name is no caller.
    other = "from otherwheel.backends.export_utils import quantize_module\n" + bn.split("\n", 1)[1]
    assert _check_installed(_installed(tmp_path / "o", a=evals, b=other)) == []


# -- a caller handing the helper a graph (`ep.module()`) ------------------------------------------
def test_a_graph_handed_over_is_harmless_wherever_the_helper_is_also_called_from(tmp_path):
    # ExecuTorch's aot_arm_compiler: `main` captures an eval model and hands `ep.module()` on;
    # the helper captures that graph again. Its mode was fixed by the first capture.
    root = _repo(tmp_path, a=EVAL_CALLER)
    path = root / "pkg" / "utils" / "export_utils.py"
    graph = "\n\ndef main(model, quantizer, x):\n    ep = export(model.eval(), (x,))\n"
    graph += "    return quantize_module(ep.module(), quantizer, x)\n"
    path.write_text(HELPER + graph)
    assert _check(root).diagnostics == []
    # An in-module caller passing its own unknown model still keeps it.
    path.write_text(HELPER + graph.replace("quantize_module(ep.module()", "quantize_module(load()"))
    assert len(_check(root).diagnostics) == 1
