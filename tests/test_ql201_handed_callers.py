"""QL201: a caller in another module that hands on its own parameter (`def run(model, ...):
quantize_module(model, ...)` in `scripts/b.py`) is followed up to its own callers in the
project, which decide as the helper's direct callers would (issue 14, item 7)."""

from __future__ import annotations

from tests.test_ql201_project_callers import BN_CALLER, EVAL_CALLER, HEAD, IMPORT, MODE_FREE_CALLER, _check, _repo

# scripts/b.py: hands its parameter on to the helper.
RUN = IMPORT + "\ndef run(model, quantizer, x):\n    return quantize_module(model, quantizer, x)\n"
# scripts/c.py, d.py: call `run` with an eval-mode, a mode-free or a train-mode batch-norm model.
RUN_IMPORT = "from scripts.b import run\n"


def _calling_run(caller: str) -> str:
    return caller.replace(IMPORT, RUN_IMPORT).replace("quantize_module(", "run(")


def _root(tmp_path, **scripts: str):
    root = _repo(tmp_path, **scripts)
    (root / "scripts" / "__init__.py").touch()
    return root


def test_callers_of_a_caller_that_hands_on_its_parameter_vouch_for_it(tmp_path):
    root = _root(tmp_path, a=EVAL_CALLER, b=RUN, c=_calling_run(EVAL_CALLER), d=_calling_run(MODE_FREE_CALLER))
    assert _check(root).diagnostics == []


def test_one_risky_caller_up_the_chain_keeps_the_finding(tmp_path):
    root = _root(tmp_path, b=RUN, c=_calling_run(EVAL_CALLER), d=_calling_run(BN_CALLER))
    assert len(_check(root).diagnostics) == 1
    loaded = RUN_IMPORT + "\ndef main(quantizer, x):\n    run(load_model(), quantizer, x)\n"
    assert len(_check(_root(tmp_path / "l", b=RUN, c=_calling_run(EVAL_CALLER), d=loaded)).diagnostics) == 1


def test_two_modules_up(tmp_path):
    # d -> c.prepare -> b.run -> the helper, each handing the model on.
    relay = RUN_IMPORT + "\ndef prepare(model, quantizer, x):\n    return run(model, quantizer, x)\n"
    top = EVAL_CALLER.replace(IMPORT, "from scripts.c import prepare\n").replace("quantize_module(", "prepare(")
    assert _check(_root(tmp_path, b=RUN, c=relay, d=top)).diagnostics == []
    risky = BN_CALLER.replace(IMPORT, "from scripts.c import prepare\n").replace("quantize_module(", "prepare(")
    assert len(_check(_root(tmp_path / "r", b=RUN, c=relay, d=top, e=risky)).diagnostics) == 1


def test_a_caller_handing_on_what_nobody_calls_keeps_the_finding(tmp_path):
    assert len(_check(_root(tmp_path, a=EVAL_CALLER, b=RUN)).diagnostics) == 1


def test_a_caller_named_again_in_its_own_module_keeps_the_finding(tmp_path):
    # Its own module calls it too, with a model it loads: a caller that cannot be classified.
    local = RUN + "\n\ndef main(quantizer, x):\n    run(load_model(), quantizer, x)\n"
    assert len(_check(_root(tmp_path, b=local, c=_calling_run(EVAL_CALLER))).diagnostics) == 1
    # Handed on as a callback.
    callback = RUN + "\n\nHOOKS = [run]\n"
    assert len(_check(_root(tmp_path / "h", b=callback, c=_calling_run(EVAL_CALLER))).diagnostics) == 1


def test_a_caller_that_changes_its_parameter_first_keeps_the_finding(tmp_path):
    trained = RUN.replace("    return", "    model.train()\n    return")
    assert len(_check(_root(tmp_path, b=trained, c=_calling_run(EVAL_CALLER))).diagnostics) == 1
    method = IMPORT + "\nclass Runner:\n    def run(self, model, q, x):\n        return quantize_module(model, q, x)\n"
    caller = "from scripts.b import Runner\n\ndef main(q, x, m):\n    Runner().run(m.eval(), q, x)\n"
    assert len(_check(_root(tmp_path / "m", b=method, c=caller)).diagnostics) == 1


def test_a_new_caller_up_the_chain_is_a_dependency(tmp_path):
    from qlint.analysis.names.project import ProjectIndex

    root = _root(tmp_path, b=RUN, c=_calling_run(EVAL_CALLER))
    project = ProjectIndex()
    result = _check(root, project)
    assert result.diagnostics == []
    assert str(root / "scripts" / "c.py") in result.dependencies
    # A module created later that names `run` may call it: the listing of the search for it.
    assert sum(dep.endswith('["run"]]') for dep in result.dependencies) == 1
    (root / "scripts" / "d.py").write_text(HEAD + _calling_run(BN_CALLER))
    assert len(_check(root, project).diagnostics) == 1


def test_a_caller_named_again_in_its_own_module_is_read_there(tmp_path):
    # `run` hands its parameter on, and its own module calls it too: those calls are read.
    eval_main = RUN + "\n\ndef main(quantizer, x):\n    return run(torchvision_model().eval(), quantizer, x)\n"
    assert _check(_root(tmp_path / "e", b=eval_main, c=_calling_run(EVAL_CALLER))).diagnostics == []
    script = RUN + "\n\nif __name__ == '__main__':\n    run(torchvision_model().eval(), None, None)\n"
    assert _check(_root(tmp_path / "s", b=script, c=_calling_run(EVAL_CALLER))).diagnostics == []
    # The look-alikes that keep the finding: a train-mode batch-norm model built there, and a
    # function there handing on a parameter that a caller elsewhere fills with one.
    bn = RUN + BN_CALLER.replace(IMPORT, "").replace("quantize_module(", "run(").replace("def main", "def main2")
    assert len(_check(_root(tmp_path / "b", b=bn, c=_calling_run(EVAL_CALLER))).diagnostics) == 1
    relay = RUN + "\n\ndef relay(model, quantizer, x):\n    return run(model, quantizer, x)\n"
    top = BN_CALLER.replace(IMPORT, "from scripts.b import relay\n").replace("quantize_module(", "relay(")
    assert len(_check(_root(tmp_path / "r", b=relay, c=top)).diagnostics) == 1
    fine = EVAL_CALLER.replace(IMPORT, "from scripts.b import relay\n").replace("quantize_module(", "relay(")
    assert _check(_root(tmp_path / "f", b=relay, c=fine)).diagnostics == []
