"""QL201/QL202 reach (issue 14 items 5, 6, 16, 17): prepare through callbacks and helpers
handed the ExportedProgram, helpers in other modules (repository-root packages, namespace
packages), dead branches, and the QAT graph rebuilt only for conversion. Each construct has a
finding and quiet look-alikes."""

from __future__ import annotations

import textwrap

import pytest

from tests.conftest import lint

HEAD = """\
import functools

import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import convert_pt2e, prepare_pt2e, prepare_qat_pt2e
"""


def check(src: str, select=("QL201", "QL202")):
    return lint(HEAD + textwrap.dedent(src), select=select)


def row(src: str, text: str) -> int:
    """The line of the snippet (as checked, after HEAD) where `text` first appears."""
    lines = (HEAD + textwrap.dedent(src)).splitlines()
    return next(i for i, line in enumerate(lines, 1) if text in line)


# -- item 5: prepare reached through a callback ------------------------------------------------
PARTITION = """
def _partition(gm, tag, subgm_cb, ptn):
    for i, part in enumerate(ptn.propose_partitions()):
        nodes = [n for n in gm.graph.nodes if n.meta.get(tag) == i]
        subgm, inputs, outputs = fuse_as_graphmodule(gm, nodes, f"{tag}_{i}")
        gm = insert_subgm(gm, subgm_cb(subgm, f"{tag}_{i}"), inputs, outputs)
    return gm
"""


def test_prepare_in_a_nested_callback_passed_to_a_higher_order_helper():
    # The shape of ExecuTorch's Qualcomm `skip_annotation`.
    src = (
        PARTITION
        + """
def skip_annotation(nn_module, quantizer, x, ptn):
    def prepare_sub(subgm, name):
        return prepare_pt2e(subgm, quantizer)

    gm = torch.export.export(nn_module, (x,)).module()
    return _partition(gm=gm, tag="annotated", subgm_cb=prepare_sub, ptn=ptn)
"""
    )
    (d,) = check(src)
    assert d.code == "QL201" and d.range.start.row == row(src, "gm = torch.export.export")
    assert "as parameter `nn_module`, in whatever mode the caller left it" in d.message
    sink = d.related[0]
    assert sink.message == "the captured graph is prepared for PTQ"
    assert sink.range.start.row == row(src, "return prepare_pt2e(subgm")


def test_a_partial_of_a_module_function_as_the_callback():
    src = """
        def apply_to_graph(gm, fn):
            return fn(gm)

        def prepare_with(quantizer, gm):
            return prepare_pt2e(gm, quantizer)

        def main(quantizer, x):
            model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())
            gm = export(model, (x,)).module()
            apply_to_graph(gm, functools.partial(prepare_with, quantizer))
        """
    (d,) = check(src)
    assert "in train mode (built at line" in d.message and d.range.start.row == row(src, "gm = export")


def test_a_callback_parameter_handed_on_through_two_helpers():
    src = """
        def inner(graph, cb):
            return cb(graph)

        def outer(gm, cb):
            return inner(gm.graph_module if False else gm, cb)

        def prep(gm):
            return prepare_qat_pt2e(gm, Quantizer())

        def main(x):
            model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout()).eval()
            outer(export(model, (x,)).module(), prep)
        """
    (d,) = check(src)
    assert d.code == "QL202" and d.range.start.row == row(src, "outer(export")


def test_a_helper_handed_the_exported_program_calls_module_and_prepares():
    src = """
        def quantize(ep, quantizer):
            m = ep.module()
            return convert_pt2e(prepare_pt2e(m, quantizer))

        def main(quantizer, x):
            model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())
            ep = export(model, (x,))
            quantize(ep, quantizer)
        """
    (d,) = check(src)
    assert d.code == "QL201" and d.range.start.row == row(src, "ep = export")
    assert "built at line" in d.message


def test_a_helper_returning_the_module_of_the_program_it_was_handed():
    src = """
        def unlift(ep):
            return ep.run_decompositions({}).module()

        def main(quantizer, x):
            model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())
            prepare_pt2e(unlift(export(model, (x,))), quantizer)
        """
    (d,) = check(src)
    assert d.code == "QL201" and d.range.start.row == row(src, "prepare_pt2e(unlift")


@pytest.mark.parametrize(
    "src",
    [
        # the callback leaves the graph alone (a lambda, a def)
        PARTITION
        + """
def main(model, x, ptn):
    gm = export(model, (x,)).module()
    gm = _partition(gm, "skipped", lambda subgm, _: subgm, ptn)
    keep = lambda g: g
    return _partition(gm, "kept", keep, ptn)
""",
        PARTITION
        + """
def identity(subgm, name):
    return subgm

def main(model, x, ptn):
    return _partition(export(model, (x,)).module(), "skipped", identity, ptn)
""",
        # the callback prepares, but the model was put in eval mode before the capture
        PARTITION
        + """
def skip_annotation(nn_module, quantizer, x, ptn):
    def prepare_sub(subgm, name):
        return prepare_pt2e(subgm, quantizer)

    nn_module.eval()
    gm = torch.export.export(nn_module, (x,)).module()
    return _partition(gm=gm, tag="annotated", subgm_cb=prepare_sub, ptn=ptn)
""",
        # the helper calls the callback with a graph of its own, not the one it was handed
        """
def run(gm, cb):
    other = torch.fx.symbolic_trace(torch.nn.Identity())
    return gm, cb(other)

def main(model, quantizer, x):
    run(export(model, (x,)).module(), lambda g: prepare_pt2e(g, quantizer))
    run(export(model, (x,)).module(), functools.partial(prepare_pt2e, quantizer=quantizer))
""",
        # the callback prepares for QAT and the model is in train mode
        """
def apply_to_graph(gm, fn):
    return fn(gm)

def prep(gm):
    return prepare_qat_pt2e(gm, Quantizer())

def main(x):
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())
    model.train()
    apply_to_graph(export(model, (x,)).module(), prep)
""",
        # a helper handed the program only saves it, or the model was evaluated first
        """
def save(ep, path):
    torch.export.save(ep, path)
    return ep.module()

def quantize(ep, quantizer):
    return prepare_pt2e(ep.module(), quantizer)

def main(quantizer, x):
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())
    save(export(model, (x,)), "m.pt2")
    model.eval()
    quantize(export(model, (x,)), quantizer)
""",
    ],
)
def test_callback_and_program_look_alikes_are_quiet(src):
    assert check(src) == []


# -- item 6: helpers in other modules of the repository ----------------------------------------
HELPERS = HEAD + textwrap.dedent(
    """
    def prepare_graph(gm, quantizer):
        return convert_pt2e(prepare_pt2e(gm, quantizer))

    def build():
        model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())
        model.eval()
        return model
    """
)


def _repo(path):
    (path / ".git").mkdir(parents=True)
    return path


def _caller(import_line: str, body: str) -> str:
    return HEAD + import_line + "\n" + textwrap.dedent(body)


CALLS_WITH_TRAIN_MODEL = """
def test_main(quantizer, x):
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())
    prepare_graph(export(model, (x,)).module(), quantizer)
"""
CALLS_WITH_EVAL_MODEL = """
def test_main(quantizer, x):
    prepare_pt2e(export(build(), (x,)).module(), quantizer)
"""


def _ql201(path):
    return lint(path.read_text(), path=str(path), select=("QL201",))


def test_a_package_mapped_onto_the_repository_root_by_pyproject(tmp_path):
    # ExecuTorch: `executorch = "src/executorch"`, `src/executorch/backends -> ../../backends`.
    repo = _repo(tmp_path)
    (repo / "pyproject.toml").write_text('[tool.setuptools.package-dir]\nexecutorch = "src/executorch"\n')
    (repo / "src" / "executorch").mkdir(parents=True)
    (repo / "src" / "executorch" / "backends").symlink_to("../../backends", target_is_directory=True)
    (repo / "backends" / "x" / "test").mkdir(parents=True)
    for d in ("backends", "backends/x"):
        (repo / d / "__init__.py").touch()
    (repo / "backends" / "x" / "utils.py").write_text(HELPERS)
    test = repo / "backends" / "x" / "test" / "test_q.py"  # no __init__.py here
    test.write_text(_caller("from executorch.backends.x.utils import build, prepare_graph", CALLS_WITH_TRAIN_MODEL))
    (d,) = _ql201(test)
    assert "in train mode" in d.message and d.related[0].path == str(repo / "backends" / "x" / "utils.py")
    test.write_text(_caller("from executorch.backends.x.utils import build, prepare_graph", CALLS_WITH_EVAL_MODEL))
    assert _ql201(test) == []
    # The helper's module is named as installed, so its own absolute imports resolve too.
    from qlint.analysis.names.modules import module_name_for

    assert module_name_for(str(test)) == "executorch.backends.x.test.test_q"


def test_a_helper_module_in_a_directory_without_init(tmp_path):
    repo = _repo(tmp_path)
    (repo / "tests" / "quant").mkdir(parents=True)
    (repo / "tests" / "common").mkdir(parents=True)
    (repo / "tests" / "common" / "helpers.py").write_text(HELPERS)
    test = repo / "tests" / "quant" / "test_q.py"
    test.write_text(_caller("from tests.common.helpers import build", CALLS_WITH_EVAL_MODEL))
    assert _ql201(test) == []
    test.write_text(_caller("from tests.common.helpers import prepare_graph", CALLS_WITH_TRAIN_MODEL))
    (d,) = _ql201(test)
    assert "in train mode" in d.message


def test_a_cross_module_builder_decides_the_mode(tmp_path):
    repo = _repo(tmp_path)
    (repo / "tests" / "quant").mkdir(parents=True)
    (repo / "tests" / "common").mkdir(parents=True)
    (repo / "tests" / "common" / "models.py").write_text(
        HEAD + "\ndef build():\n    return torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())\n"
    )
    test = repo / "tests" / "quant" / "test_q.py"
    test.write_text(_caller("from tests.common.models import build", CALLS_WITH_EVAL_MODEL))
    (d,) = _ql201(test)
    assert "in train mode" in d.message
    # The same import where the module is not part of the repository resolves to nothing.
    (repo / "tests" / "common" / "models.py").unlink()
    assert _ql201(test) == []


def test_a_checkout_named_after_its_package(tmp_path):
    repo = _repo(tmp_path / "mypkg")
    (repo / "sub").mkdir()
    (repo / "sub" / "__init__.py").touch()
    (repo / "sub" / "models.py").write_text(
        HEAD + "\ndef build():\n    return torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())\n"
    )
    test = repo / "sub" / "run.py"
    test.write_text(_caller("from mypkg.sub.models import build", CALLS_WITH_EVAL_MODEL))
    (d,) = _ql201(test)
    assert "in train mode" in d.message


def test_mapped_names_stay_inside_the_repository(tmp_path):
    from qlint.analysis.names.package_map import mapped_module_name

    repo = _repo(tmp_path / "r")
    (repo / "pyproject.toml").write_text('[tool.setuptools.package-dir]\npkg = "../outside"\n')
    (tmp_path / "outside").mkdir()
    (repo / "a.py").write_text("")
    assert mapped_module_name(str(repo / "a.py")) is None
    broken = _repo(tmp_path / "b")
    (broken / "pyproject.toml").write_text("[tool.setuptools\n")  # not TOML: ignored
    assert mapped_module_name(str(broken / "a.py")) is None


# -- item 16: dead branches ---------------------------------------------------------------------
def test_a_constant_flag_picks_the_branch_that_runs():
    src = """
    def main(quantizer, x):
        model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())
        is_qat = {flag}
        if is_qat:
            prepared = prepare_qat_pt2e(export(model, (x,)).module(), quantizer)
        else:
            prepared = prepare_pt2e(export(model.eval(), (x,)).module(), quantizer)
    """
    assert check(src.format(flag="True")) == []  # the PTQ arm cannot run; QAT in train mode is right
    assert check(src.format(flag="False")) == []  # the QAT arm cannot run
    # `model.eval()` in the arm that cannot run does not count either.
    (d,) = check(
        """
        def main(quantizer, x):
            model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())
            calibrated = False
            if calibrated:
                model.eval()
            prepare_pt2e(export(model, (x,)).module(), quantizer)
        """
    )
    assert "in train mode (built at line" in d.message and "runs on some paths only" not in d.message


@pytest.mark.parametrize("test", ["False", "0", "not True", "None"])
def test_if_false_blocks_report_nothing(test):
    src = f"""
    def main(quantizer, x):
        if {test}:
            model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())
            prepare_pt2e(export(model, (x,)).module(), quantizer)
    """
    assert check(src) == []
    assert len(check(src.replace(f"if {test}:", "if True:"))) == 1


@pytest.mark.parametrize(
    "setup",
    [
        "is_qat = True\n    is_qat = flag",  # bound twice
        "is_qat = flag",  # not a constant
        "is_qat = True\n    for is_qat in (True, False): pass",  # rebound by a loop
        "global is_qat",  # a module global other code may set
    ],
)
def test_flags_that_are_not_constant_keep_both_arms(setup):
    (d,) = check(
        f"""
def main(quantizer, x, flag):
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())
    {setup}
    if is_qat:
        prepare_qat_pt2e(export(model, (x,)).module(), quantizer)
    else:
        prepare_pt2e(export(model, (x,)).module(), quantizer)
"""
    )
    assert d.code == "QL201"


OVERWRITTEN_PARAMETER = """
def init(model, x, quantizer, is_qat=False):
    {setup}
    m = export(model, (x,)).module()
    if is_qat:
        return prepare_qat_pt2e(m, quantizer)
    return prepare_pt2e(m, quantizer)


def main(quantizer, x):
    init(torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout()), x, quantizer, is_qat=False)
"""


def test_a_parameter_overwritten_by_a_constant_first_picks_the_branch_that_runs():
    # TI edgeai-tensorlab `quant_func.init`: `is_qat = True` ("only the QAT flow is used")
    # ahead of `if is_qat: prepare_qat_pt2e(...) else: prepare_pt2e(...)`.
    assert check(OVERWRITTEN_PARAMETER.format(setup="is_qat = True")) == []


@pytest.mark.parametrize(
    "setup",
    [
        "is_qat = is_qat or False",  # not a constant
        "if x is None:\n        is_qat = True",  # only on some paths
        "print(is_qat)\n    is_qat = True",  # read before it is overwritten
        "is_qat = True\n    is_qat = bool(x)",  # bound again
        "pass",  # the caller's False
    ],
)
def test_a_parameter_not_overwritten_first_keeps_the_ptq_arm(setup):
    (d,) = check(OVERWRITTEN_PARAMETER.format(setup=setup))
    assert d.code == "QL201"


HELPER_BY_FLAG = """
def _prepare(exported, is_qat=False, mode="ptq"):
    if is_qat:
        return prepare_qat_pt2e(exported.module(), Quantizer())
    return prepare_pt2e(exported.module(), Quantizer())
"""


def test_a_helper_branch_the_call_rules_out_by_a_constant_argument():
    # ExecuTorch's NXP `_prepare_for_quantization(exported, is_qat=False)` shape.
    src = (
        HELPER_BY_FLAG
        + """
def main(x):
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())
    model.eval()
    ep = export(model, (x,))
    {call}
"""
    )
    assert check(src.format(call="_prepare(ep)")) == []  # the default keeps the QAT arm dead
    assert check(src.format(call="_prepare(ep, False)")) == []
    (d,) = check(src.format(call="_prepare(ep, is_qat=True)\n    train(model)"))
    assert d.code == "QL202"
    (d,) = check(src.format(call="_prepare(ep, is_qat=flag)"))  # not a constant: both arms
    assert d.code == "QL202"


def test_a_helper_that_rebinds_its_flag_is_not_ruled_out():
    src = """
    def _prepare(exported, is_qat=False):
        is_qat = is_qat or CONFIG.qat
        if is_qat:
            return prepare_qat_pt2e(exported.module(), Quantizer())
        return prepare_pt2e(exported.module(), Quantizer())

    def main(x):
        model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout()).eval()
        _prepare(export(model, (x,)))
    """
    (d,) = check(src)
    assert d.code == "QL202"


# -- item 17: QAT rebuilt only to convert ---------------------------------------------------------
@pytest.mark.parametrize(
    "after",
    [
        "prepared = prepare_qat_pt2e(gm, quantizer)\n    move_exported_model_to_eval(prepared)\n"
        "    prepared.load_state_dict(state)\n    return convert_pt2e(prepared)",
        "prepared = prepare_qat_pt2e(gm, quantizer)\n    prepared = move_exported_model_to_eval(prepared)",
        "return convert_pt2e(prepare_qat_pt2e(gm, quantizer))",
        "prepared = prepare_qat_pt2e(gm, quantizer)\n    converted = convert_pt2e(prepared)",
    ],
)
def test_a_qat_graph_rebuilt_for_conversion_in_eval_mode_is_quiet(after):
    src = f"""
from torchao.quantization.pt2e import move_exported_model_to_eval

def rebuild(model, quantizer, x, state):
    model.eval()
    gm = export(model, (x,)).module()
    {after}
"""
    assert check(src) == []


@pytest.mark.parametrize(
    "after",
    [
        # trained between prepare and the move to eval
        "prepared = prepare_qat_pt2e(gm, quantizer)\n    train(prepared)\n    move_exported_model_to_eval(prepared)",
        # moved to eval only much later
        "prepared = prepare_qat_pt2e(gm, quantizer)\n    for batch in data:\n        prepared(batch)\n"
        "    move_exported_model_to_eval(prepared)\n    convert_pt2e(prepared)",
        # a different graph is moved to eval
        "prepared = prepare_qat_pt2e(gm, quantizer)\n    move_exported_model_to_eval(gm)",
    ],
)
def test_a_qat_graph_trained_after_an_eval_mode_capture_is_still_reported(after):
    src = f"""
from torchao.quantization.pt2e import move_exported_model_to_eval

def rebuild(model, quantizer, x, data):
    model.eval()
    gm = export(model, (x,)).module()
    {after}
"""
    (d,) = check(src)
    assert d.code == "QL202"


def test_a_helper_prepared_graph_converted_right_away_and_one_retrained():
    src = (
        HELPER_BY_FLAG
        + """
from torchao.quantization.pt2e import move_exported_model_to_train

def same_graph_as_ptq(x):
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())
    model.eval()
    ep = export(model, (x,))
    converted = convert_pt2e(_prepare(ep, is_qat=True))

def retrained(x):
    model = torch.nn.Sequential(torch.nn.Linear(2, 2), torch.nn.Dropout())
    model.eval()
    ep = export(model, (x,))
    prepared = _prepare(ep, is_qat=True)
    prepared = move_exported_model_to_train(prepared)
    train(prepared)
"""
    )
    assert check(src) == []


def test_an_installed_tree_inside_a_checkout_does_not_reach_the_standard_library(tmp_path):
    # pyenv is a git clone: site-packages sits inside a repository with the standard library.
    repo = _repo(tmp_path)
    lib = repo / "lib" / "python3.11"
    (lib / "site-packages" / "pkg").mkdir(parents=True)
    (lib / "site-packages" / "pkg" / "__init__.py").touch()
    (lib / "helpers.py").write_text(HELPERS)
    test = lib / "site-packages" / "pkg" / "run.py"
    test.write_text(_caller("from helpers import prepare_graph", CALLS_WITH_TRAIN_MODEL))
    assert _ql201(test) == []
    (lib / "site-packages" / "helpers.py").write_text(HELPERS)  # beside the package: imported
    assert len(_ql201(test)) == 1


def test_a_tree_without_git_maps_from_its_pyproject(tmp_path):
    # An unpacked archive, or the corpus script's materialised checkout: no `.git` directory.
    root = tmp_path / "et"
    (root / "src" / "executorch").mkdir(parents=True)
    (root / "pyproject.toml").write_text('[tool.setuptools.package-dir]\nexecutorch = "src/executorch"\n')
    (root / "src" / "executorch" / "examples").symlink_to("../../examples", target_is_directory=True)
    (root / "examples" / "demo").mkdir(parents=True)
    (root / "examples" / "demo" / "helpers.py").write_text(HELPERS)
    script = root / "examples" / "demo" / "run.py"
    script.write_text(_caller("from executorch.examples.demo.helpers import prepare_graph", CALLS_WITH_TRAIN_MODEL))
    (d,) = _ql201(script)
    assert "in train mode" in d.message
