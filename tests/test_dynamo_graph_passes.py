"""QL101/QL102 and passes that run on Dynamo's output graph before AOT autograd (TorchAir's
`replace_stream_event_pass`, run by its backend before `aot_module_simplified`; an Inductor
`pre_grad_custom_pass`): Dynamo records packets as packets (and creates some, such as
`torch.ops.streams.record_event`), and AOT re-traces an inserted packet to its overload.
Each quiet case has loud look-alikes whose graph is not Dynamo's, or not before AOT."""

from __future__ import annotations

import textwrap
from pathlib import Path

PASS = """
    import torch

    def rewrite_events(gm):
        for node in gm.graph.nodes:
            if node.target == torch.ops.streams.record_event:
                node.target = torch.ops.mine.tagged_record
        return gm
"""

BACKEND = """
    from torch._functorch.aot_autograd import aot_module_simplified

    from pkg.passes import rewrite_events


    def my_backend(gm, example_inputs):
        gm = rewrite_events(gm)
        return aot_module_simplified(gm, example_inputs)
"""


def _rows(root: Path, target: str, select=("QL101", "QL102")) -> list[int]:
    from qlint.engine import check_source
    from tests.conftest import settings_for

    path = root / target
    result = check_source(path.read_bytes(), str(path), settings_for(select))
    assert not result.errors, result.errors
    return [d.range.start.row for d in result.diagnostics]


def _project(tmp_path: Path, files: dict[str, str]) -> Path:
    (tmp_path / ".git").mkdir()
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(textwrap.dedent(text))
    return tmp_path


def _package(tmp_path: Path, **modules: str) -> Path:
    return _project(tmp_path, {"pkg/__init__.py": "", **{f"pkg/{k}.py": v for k, v in modules.items()}})


# -- quiet: the pass sees Dynamo's graph -------------------------------------------------------


def test_pass_run_by_a_backend_before_aot_is_quiet(tmp_path):
    root = _package(tmp_path, passes=PASS, backend=BACKEND)
    assert _rows(root, "pkg/passes.py") == []


def test_pass_before_an_aot_autograd_backend_is_quiet(tmp_path):
    backend = """
        from torch._dynamo.backends.common import aot_autograd

        from pkg.passes import rewrite_events


        def my_backend(gm, example_inputs, compiler):
            if compiler is not None:
                rewrite_events(gm)
            return aot_autograd(fw_compiler=compiler)(gm, example_inputs)
    """
    root = _package(tmp_path, passes=PASS, backend=backend)
    assert _rows(root, "pkg/passes.py") == []


def test_backend_taking_the_inputs_later_and_a_namespace_directory_is_quiet(tmp_path):
    # TorchAir's shape: the pass lives in a directory without `__init__.py`, and the function
    # that calls AOT takes the inputs as its third parameter.
    backend = """
        from torch._functorch.aot_autograd import aot_module_simplified

        from pkg.graph.passes import rewrite_events


        def compile_with_aot(gm, compiler, example_inputs, config=None):
            gm = rewrite_events(gm)
            return aot_module_simplified(gm, example_inputs, fw_compiler=compiler)
    """
    root = _project(tmp_path, {"pkg/__init__.py": "", "pkg/graph/passes.py": PASS, "pkg/backend.py": backend})
    assert _rows(root, "pkg/graph/passes.py") == []


def test_pre_grad_custom_pass_and_its_private_helper_are_quiet(tmp_path):
    legacy = """
        import torch

        def _replace(graph, node):
            with graph.inserting_after(node):
                graph.call_function(torch.ops.modern.update_, node.args)

        def rewrite_legacy(graph):
            for node in list(graph.nodes):
                if node.target == torch.ops.npu.legacy_update_:
                    _replace(graph, node)
            return graph
    """
    init = """
        def load_passes():
            from torch._inductor import config as inductor_config
            from .passes.legacy import rewrite_legacy

            if inductor_config.pre_grad_custom_pass is None:
                inductor_config.pre_grad_custom_pass = rewrite_legacy
    """
    root = _project(tmp_path, {"ext/__init__.py": init, "ext/passes/legacy.py": legacy})
    assert _rows(root, "ext/passes/legacy.py") == []


def test_pass_before_inductor_compile_fx_is_quiet(tmp_path):
    # `compile_fx(gm, example_inputs)` on Dynamo's graph runs AOT autograd, which re-traces it.
    backend = """
        from torch._inductor.compile_fx import compile_fx

        from pkg.passes import rewrite_events


        def my_backend(gm, example_inputs):
            rewrite_events(gm)
            return compile_fx(gm, example_inputs)
    """
    root = _package(tmp_path, passes=PASS, backend=backend)
    assert _rows(root, "pkg/passes.py") == []


# A hardware backend rewriting Dynamo's graph itself before Inductor (ECE298A-TPU's
# `torch_backend.py`): its own op goes in as a packet, which AOT autograd re-traces.
OWN_REWRITE = """
    import torch
    from torch._dynamo import register_backend
    from torch._inductor.compile_fx import compile_fx


    def make_backend(device):
        @register_backend(name="tpu")
        def _backend(gm, example_inputs):
            graph = gm.graph
            for node in list(graph.nodes):
                if node.target == torch.ops.aten.linear.default:
                    with graph.inserting_before(node):
                        new = graph.call_function(torch.ops.tpu.matmul, node.args)
                    node.replace_all_uses_with(new)
            gm.recompile()
            return compile_fx(gm, example_inputs)

        return _backend


    def aot_backend(gm, example_inputs):
        for node in list(gm.graph.nodes):
            gm.graph.call_function(torch.ops.tpu.matmul, node.args)
        return aot_module_simplified(gm, example_inputs)


    from torch._functorch.aot_autograd import aot_module_simplified
"""


def test_backend_inserting_into_its_own_graph_before_aot_is_quiet(tmp_path):
    root = _project(tmp_path, {"scripts/tpu_backend.py": OWN_REWRITE})
    assert _rows(root, "scripts/tpu_backend.py", select=("QL102",)) == []


# -- loud: not Dynamo's graph, or not before AOT ----------------------------------------------


def test_pass_run_after_the_aot_call_is_reported(tmp_path):
    backend = """
        from torch._functorch.aot_autograd import aot_module_simplified

        from pkg.passes import rewrite_events


        def my_backend(gm, example_inputs):
            compiled = aot_module_simplified(gm, example_inputs)
            rewrite_events(gm)
            return compiled
    """
    root = _package(tmp_path, passes=PASS, backend=backend)
    assert _rows(root, "pkg/passes.py") == [6, 7]


def test_pass_after_a_retrace_is_reported(tmp_path):
    backend = """
        from torch._functorch.aot_autograd import aot_module_simplified
        from torch.fx.experimental.proxy_tensor import make_fx

        from pkg.passes import rewrite_events


        def my_backend(gm, example_inputs):
            gm = make_fx(gm)(*example_inputs)
            gm = rewrite_events(gm)
            return aot_module_simplified(gm, example_inputs)
    """
    root = _package(tmp_path, passes=PASS, backend=backend)
    assert _rows(root, "pkg/passes.py") == [6, 7]


def test_pass_on_another_graph_is_reported(tmp_path):
    backend = """
        from torch._functorch.aot_autograd import aot_module_simplified

        from pkg.passes import rewrite_events


        def my_backend(gm, example_inputs, exported):
            rewrite_events(exported)
            return aot_module_simplified(gm, example_inputs)
    """
    root = _package(tmp_path, passes=PASS, backend=backend)
    assert _rows(root, "pkg/passes.py") == [6, 7]


def test_aot_call_on_a_graph_that_is_not_the_parameter_is_reported(tmp_path):
    backend = """
        from torch._functorch.aot_autograd import aot_module_simplified

        from pkg.passes import rewrite_events


        def lower(program, example_inputs):
            gm = program.module()
            rewrite_events(gm)
            return aot_module_simplified(gm, example_inputs)
    """
    root = _package(tmp_path, passes=PASS, backend=backend)
    assert _rows(root, "pkg/passes.py") == [6, 7]


def test_backend_own_insertion_not_into_dynamo_graph_before_aot_is_reported(tmp_path):
    # Each insertion misses one condition: after the AOT call, after a re-trace, into another
    # parameter's graph, before `compile_fx_inner` (which compiles AOT's graphs, re-tracing
    # nothing), and as a target assignment (whose node's graph is not read).
    backend = """
        import torch
        from torch._functorch.aot_autograd import aot_module_simplified
        from torch._inductor.compile_fx import compile_fx, compile_fx_inner
        from torch.fx.experimental.proxy_tensor import make_fx


        def after(gm, example_inputs):
            compiled = compile_fx(gm, example_inputs)
            gm.graph.call_function(torch.ops.tpu.matmul, ())
            return compiled


        def retraced(gm, example_inputs):
            gm = make_fx(gm)(*example_inputs)
            gm.graph.call_function(torch.ops.tpu.matmul, ())
            return aot_module_simplified(gm, example_inputs)


        def other(gm, example_inputs, exported):
            exported.graph.call_function(torch.ops.tpu.matmul, ())
            return compile_fx(gm, example_inputs)


        def inner(gm, example_inputs):
            gm.graph.call_function(torch.ops.tpu.matmul, ())
            return compile_fx_inner(gm, example_inputs)


        def assigned(gm, example_inputs):
            for node in gm.graph.nodes:
                node.target = torch.ops.tpu.matmul
            return compile_fx(gm, example_inputs)
    """
    root = _project(tmp_path, {"scripts/tpu_backend.py": backend})
    assert _rows(root, "scripts/tpu_backend.py", select=("QL102",)) == [10, 16, 21, 26, 32]


def test_post_grad_pass_is_reported(tmp_path):
    init = """
        import torch._inductor.config as inductor_config

        from pkg.passes import rewrite_events

        inductor_config.post_grad_custom_post_pass = rewrite_events
    """
    root = _project(tmp_path, {"pkg/__init__.py": init, "pkg/passes.py": PASS})
    assert _rows(root, "pkg/passes.py") == [6, 7]


def test_helper_also_called_elsewhere_is_reported(tmp_path):
    legacy = """
        import torch

        def _replace(graph, node):
            graph.call_function(torch.ops.modern.update_, node.args)

        def replace_public(graph, node):
            graph.call_function(torch.ops.modern.other_, node.args)

        def rewrite_legacy(graph):
            for node in list(graph.nodes):
                _replace(graph, node)
                replace_public(graph, node)
            return graph

        def after_export(ep):
            for node in ep.graph.nodes:
                _replace(ep.graph, node)
    """
    init = """
        import torch._inductor.config as inductor_config

        from pkg.legacy import rewrite_legacy

        inductor_config.pre_grad_custom_pass = rewrite_legacy
    """
    root = _project(tmp_path, {"pkg/__init__.py": init, "pkg/legacy.py": legacy})
    # `_replace` also runs from `after_export`, which nothing in the project runs: its users'
    # graphs. `replace_public` is public, but the project runs it only as the pre-grad pass,
    # whose Dynamo graph AOT traces again: no consumer tells its packet apart (packet_distinguishers).
    assert _rows(root, "pkg/legacy.py", select=("QL102",)) == [5]


def test_a_backend_module_that_names_no_pass_of_the_file_is_not_parsed(tmp_path, monkeypatch):
    """A backend names what it runs: the module of one that spells neither the pass nor its
    class is not parsed for the check (a fresh one-file check of torch's observer.py parsed ten
    of torch's backend modules), and the one that does still answers."""
    from qlint.analysis.graphs import dynamo_graph_passes

    other = BACKEND.replace("rewrite_events", "other_pass").replace("pkg.passes", "pkg.others")
    others = PASS.replace("rewrite_events", "other_pass")
    root = _package(tmp_path, passes=PASS, backend=BACKEND, unrelated=other, others=others)
    parsed = []
    real = dynamo_graph_passes.parsed_module
    monkeypatch.setattr(
        dynamo_graph_passes, "parsed_module", lambda ctx, path, text: parsed.append(path) or real(ctx, path, text)
    )
    dynamo_graph_passes._FACTS.clear()
    assert _rows(root, "pkg/passes.py") == []
    assert [Path(p).name for p in parsed] == ["backend.py"]


def test_a_method_pass_run_through_its_class_is_quiet(tmp_path):
    """A backend reaches a method through its class's name (`Rewriter.rewrite_events(gm)`): the
    modules read for it are those spelling the class."""
    method = "class Rewriter:\n    @staticmethod\n" + textwrap.indent(
        textwrap.dedent(PASS).replace("import torch\n", ""), "    "
    )
    passes = "import torch\n\n" + method
    backend = BACKEND.replace("import rewrite_events", "import Rewriter").replace(
        "gm = rewrite_events(gm)", "gm = Rewriter.rewrite_events(gm)"
    )
    root = _package(tmp_path, passes=passes, backend=backend)
    assert _rows(root, "pkg/passes.py") == []
    (tmp_path / "loud").mkdir()
    loud = _package(tmp_path / "loud", passes=passes, backend=backend.replace("Rewriter.rewrite_events(gm)", "gm"))
    assert len(_rows(loud, "pkg/passes.py")) == 2


def test_the_pattern_runs_only_on_texts_that_spell_an_entry_point(tmp_path, monkeypatch):
    """The checked module's own text is searched for an AOT call or a pre-grad assignment only
    when it spells one of them (a substring test): the pattern's search of torch's observer.py,
    which spells neither, was 18 M instructions of its one-file check. A module that spells one
    is still searched, and its backend still answers."""
    from qlint.analysis.graphs import dynamo_graph_passes

    searched = []

    class Spy:
        def search(self, text, *args):
            searched.append(text)
            return real.search(text, *args)

    real = dynamo_graph_passes._WRITES
    monkeypatch.setattr(dynamo_graph_passes, "_WRITES", Spy())
    dynamo_graph_passes._FACTS.clear()
    lone = _package(tmp_path, passes=PASS)
    assert _rows(lone, "pkg/passes.py") == [6, 7]  # no backend anywhere: both packets are reported
    assert searched == []
    (tmp_path / "backed").mkdir()
    backed = _package(tmp_path / "backed", passes=PASS, backend=BACKEND)
    assert _rows(backed, "pkg/backend.py") == []
    assert _rows(backed, "pkg/passes.py") == []
    assert searched and all("aot_module_simplified" in text for text in searched)


def test_an_editor_lists_the_backends_once_while_the_project_holds_still(tmp_path, monkeypatch):
    """Between an editor's keystrokes in a watched project, the project's content keys are the
    same (`module_keys.project_keys`), and so are the modules that spell an entry point: they
    are listed once (torch's ~2,300 were asked at each keystroke of observer.py), and read
    again when a check asks. A backend created later (its watcher event) is listed anew."""
    import os

    from qlint.analysis import scan_memo
    from qlint.analysis.graphs import dynamo_graph_passes
    from qlint.analysis.names.project import ProjectIndex
    from qlint.analysis.names.watched_files import CREATED
    from qlint.engine import check_source
    from tests.conftest import settings_for

    asked = []
    real = scan_memo.known_sets

    def known_sets(keys, questions):
        asked.extend(q for q in questions if q.startswith("dynamo"))
        return real(keys, questions)

    monkeypatch.setattr(scan_memo, "known_sets", known_sets)
    dynamo_graph_passes._FACTS.clear()
    root = _package(tmp_path, passes=PASS)
    path = root / "pkg" / "passes.py"
    project = ProjectIndex()
    project.watch([str(root)])

    def rows(text: str) -> list[int]:
        result = check_source(text.encode(), str(path), settings_for(("QL102",)), project)
        return [d.range.start.row for d in result.diagnostics]

    text = textwrap.dedent(PASS)
    assert rows(text) == [7]
    assert rows(text.replace("return gm", "return gm; edited = 1")) == [7]
    assert len(asked) == 1
    (root / "pkg" / "backend.py").write_text(textwrap.dedent(BACKEND))
    project.files_changed([(os.path.join(str(root), "pkg", "backend.py"), CREATED)])
    assert rows(text.replace("return gm", "return gm; edited = 2")) == []
