"""Model flows of other modules' helpers kept across checks (`qlint.analysis.flow.shared_flows`).

A helper called from several files is analysed once per process; each check gets the findings
a fresh analysis would give: an edit of any module the helper's analysis read, a class index
that answers otherwise from the file checked, or an analysis that depended on the order it met
bodies in (recursion through two modules) means the helper is analysed again.
"""

from __future__ import annotations

import collections
import textwrap

import pytest

from qlint.analysis.flow import model_interp
from qlint.analysis.names.project import ProjectIndex
from qlint.engine import check_source
from tests.conftest import check_file, rows_of, settings_for

HEAD = """\
import torch
from torch.export import export
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e
"""

BUILD = """\
from lib.nets import Net


def build():
    return Net()
"""

NETS_TRAIN = """\
from torch import nn


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = nn.BatchNorm2d(3)
"""

NETS_EVAL = NETS_TRAIN + "        self.eval()\n"

SCRIPT = (
    HEAD
    + """from lib.helpers import build


def main(quantizer, x):
    model = build()
    ep = export(model, (x,))
    return prepare_pt2e(ep.module(), quantizer)
"""
)


@pytest.fixture
def analysed(monkeypatch):
    """(path, line) -> how many times the interpreter analysed that body."""
    runs: collections.Counter = collections.Counter()
    run = model_interp.Interpreter.run

    def counted(self):
        runs[(self.owner.scope.path.rsplit("/", 1)[-1], getattr(self.func, "lineno", 0))] += 1
        return run(self)

    monkeypatch.setattr(model_interp.Interpreter, "run", counted)
    return runs


def _repo(tmp_path, files: dict[str, str]):
    root = tmp_path / "repo"
    (root / ".git").mkdir(parents=True)
    for name, text in files.items():
        path = root / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    return root


def _rows(root, name: str, project: ProjectIndex) -> list[int]:
    path = root / name
    return rows_of(check_file(path, ("QL201",), project).diagnostics)


def _library(tmp_path, nets: str = NETS_TRAIN, **scripts: str):
    files = {"lib/__init__.py": "", "lib/helpers.py": BUILD, "lib/nets.py": nets}
    files.update({f"scripts/{name}.py": text for name, text in scripts.items()})
    return _repo(tmp_path, files)


def test_a_helper_is_analysed_once_for_every_file_that_calls_it(tmp_path, analysed):
    root = _library(tmp_path, a=SCRIPT, b=SCRIPT)
    project = ProjectIndex()
    assert _rows(root, "scripts/a.py", project) == [9]
    assert _rows(root, "scripts/b.py", project) == [9]
    assert analysed[("helpers.py", 4)] == 1
    # Each check's own bodies are its own.
    assert analysed[("a.py", 7)] == analysed[("b.py", 7)] == 1


def test_the_second_file_gets_what_a_fresh_analysis_gives(tmp_path):
    root = _library(tmp_path, a=SCRIPT, b=SCRIPT.replace("model = build()", "model = build().eval()"))
    project = ProjectIndex()
    assert _rows(root, "scripts/a.py", project) == [9]
    assert _rows(root, "scripts/b.py", project) == []  # quiet: eval() after the shared helper
    assert _rows(root, "scripts/b.py", ProjectIndex()) == []


def test_an_edit_of_a_module_the_helper_read_is_seen(tmp_path, analysed):
    # The helper's flow depends on `lib/nets.py` (whether `Net()` starts in eval mode):
    # editing that module, not the helper's, must refresh it.
    root = _library(tmp_path, a=SCRIPT, b=SCRIPT)
    project = ProjectIndex()
    assert _rows(root, "scripts/a.py", project) == [9]
    project.update(str(root / "lib" / "nets.py"), NETS_EVAL)
    assert _rows(root, "scripts/b.py", project) == []
    assert analysed[("helpers.py", 4)] == 2
    project.update(str(root / "lib" / "nets.py"), None)  # the buffer closed: the file counts again
    assert _rows(root, "scripts/a.py", project) == [9]


def test_an_edit_of_the_helper_itself_is_seen(tmp_path):
    root = _library(tmp_path, a=SCRIPT, b=SCRIPT)
    project = ProjectIndex()
    assert _rows(root, "scripts/a.py", project) == [9]
    project.update(str(root / "lib" / "helpers.py"), BUILD.replace("return Net()", "return Net().eval()"))
    assert _rows(root, "scripts/b.py", project) == []


def test_a_class_found_elsewhere_from_another_file_is_not_taken_from_the_first(tmp_path, analysed):
    # `from models import Net` in the helper names `models` as the file checked finds it: each
    # script's directory has its own `models.py`, one whose `Net` starts in eval mode.
    helper = "from models import Net\n\n\ndef build():\n    return Net()\n"
    root = _repo(
        tmp_path,
        {
            "lib/__init__.py": "",
            "lib/helpers.py": helper,
            "one/models.py": NETS_TRAIN,
            "one/a.py": SCRIPT,
            "two/models.py": NETS_EVAL,
            "two/b.py": SCRIPT,
        },
    )
    project = ProjectIndex()
    assert _rows(root, "one/a.py", project) == [9]
    assert _rows(root, "two/b.py", project) == []
    assert analysed[("helpers.py", 4)] == 2  # answered otherwise: analysed again
    assert _rows(root, "two/b.py", ProjectIndex()) == []


def _two_dirs(tmp_path, **scripts: str):
    """`lib/helpers.py` builds `models.Net`, which each directory has its own of: `one/`'s
    starts in train mode, `two/`'s in eval mode (the class index answers per file checked)."""
    helper = "from models import Net\n\n\ndef build():\n    return Net()\n"
    files = {"lib/__init__.py": "", "lib/helpers.py": helper, "one/models.py": NETS_TRAIN, "two/models.py": NETS_EVAL}
    files.update({name: SCRIPT for name in scripts})
    return _repo(tmp_path, files)


def test_a_helper_keeps_one_flow_per_set_of_answers(tmp_path, analysed):
    # Checks alternating between the directories reuse the flow made for theirs (ExecuTorch's
    # qualcomm scripts beside examples/qualcomm/utils.py and the others: one kept flow was
    # analysed again at each turn).
    names = ("one/a.py", "two/b.py", "one/c.py", "two/d.py", "one/e.py")
    root = _two_dirs(tmp_path, **dict.fromkeys(names, ""))
    project = ProjectIndex()
    assert [_rows(root, name, project) for name in names] == [[9], [], [9], [], [9]]
    assert analysed[("helpers.py", 4)] == 2
    assert [_rows(root, name, ProjectIndex()) for name in names] == [[9], [], [9], [], [9]]


def test_an_older_flow_is_not_reused_once_what_it_read_changed(tmp_path, analysed):
    # `one/`'s flow is kept behind `two/`'s; `one/models.py` edited, it no longer holds.
    root = _two_dirs(tmp_path, **dict.fromkeys(("one/a.py", "two/b.py", "one/c.py"), ""))
    project = ProjectIndex()
    assert _rows(root, "one/a.py", project) == [9]
    assert _rows(root, "two/b.py", project) == []
    project.update(str(root / "one" / "models.py"), NETS_EVAL)
    assert _rows(root, "one/c.py", project) == []
    assert analysed[("helpers.py", 4)] == 3
    project.update(str(root / "one" / "models.py"), None)  # the buffer closed: the file counts again
    assert _rows(root, "one/a.py", project) == [9]
    assert _rows(root, "two/b.py", project) == []


def test_bodies_met_in_progress_are_analysed_again(tmp_path, analysed):
    # `ping` and `pong` call each other across two modules: what each sees of the other
    # depends on which was met first, so neither flow is kept.
    ping = "from lib.pong import pong\n\n\ndef ping(model, n):\n    return pong(model, n) if n else model\n"
    pong = "from lib.ping import ping\n\n\ndef pong(model, n):\n    return ping(model, n - 1)\n"
    script = HEAD + textwrap.dedent(
        """\
            from lib.ping import ping


            def main(model, quantizer, x):
                model = ping(model.train(), 3)
                ep = export(model, (x,))
                return prepare_pt2e(ep.module(), quantizer)
            """
    )
    root = _repo(
        tmp_path, {"lib/__init__.py": "", "lib/ping.py": ping, "lib/pong.py": pong, "a.py": script, "b.py": script}
    )
    project = ProjectIndex()
    first = _rows(root, "a.py", project)
    assert _rows(root, "b.py", project) == first == _rows(root, "b.py", ProjectIndex())
    assert analysed[("ping.py", 4)] == 3 and analysed[("pong.py", 4)] == 3


def test_an_edit_of_a_helper_the_helper_calls_is_seen(tmp_path, analysed):
    # `build` is kept with `lib/helpers.py`'s scope, which the edit of `lib/makers.py` leaves
    # alone: what `build`'s analysis read of `makers` is compared before it is reused.
    makers = NETS_TRAIN + "\n\ndef make():\n    return Net()\n"
    helper = "from lib.makers import make\n\n\ndef build():\n    return make()\n"
    root = _repo(tmp_path, {"lib/__init__.py": "", "lib/helpers.py": helper, "lib/makers.py": makers, "a.py": SCRIPT})
    project = ProjectIndex()
    assert _rows(root, "a.py", project) == [9]
    assert _rows(root, "a.py", project) == [9]
    assert analysed[("helpers.py", 4)] == 1
    project.update(str(root / "lib" / "makers.py"), makers.replace("return Net()", "return Net().eval()"))
    assert _rows(root, "a.py", project) == []
    assert analysed[("helpers.py", 4)] == 2


def test_a_reused_helper_leaves_the_check_its_dependencies(tmp_path):
    # The class index's lookups are asked again of the second check: `lib/nets.py` (where the
    # helper's `Net` lives) is a dependency of both results, so the results cache drops them.
    root = _library(tmp_path, a=SCRIPT, b=SCRIPT)
    project = ProjectIndex()
    nets = str(root / "lib" / "nets.py")
    for name in ("scripts/a.py", "scripts/b.py"):
        path = root / name
        result = check_source(path.read_text(), str(path), settings_for(("QL201",)), project)
        assert [d.range.start.row for d in result.diagnostics] == [9]
        assert nets in result.dependencies, name


def test_what_a_kept_construction_holds_is_read_for_the_check_that_reuses_it(tmp_path):
    # The message says what `Net` holds, read through `lib/blocks.py`: the second check, which
    # reuses `build`'s flow, reads it again (with its own class index), so it depends on it too.
    nets = "from torch import nn\nfrom lib.blocks import Block\n\n\nclass Net(nn.Module):\n"
    nets += "    def __init__(self):\n        super().__init__()\n        self.block = Block()\n"
    root = _library(tmp_path, nets, a=SCRIPT, b=SCRIPT)
    (root / "lib" / "blocks.py").write_text(NETS_TRAIN.replace("class Net", "class Block"))
    project = ProjectIndex()
    blocks = str(root / "lib" / "blocks.py")
    for name in ("scripts/a.py", "scripts/b.py"):
        path = root / name
        result = check_source(path.read_text(), str(path), settings_for(("QL201",)), project)
        assert ["BatchNorm2d" in d.message for d in result.diagnostics] == [True]
        assert blocks in result.dependencies, name


def _factory_chain(tmp_path, length: int, entry: int):
    """`lib/m1.py` .. `lib/m<length>.py`: `f<i>()` returns `f<i+1>()`, the last builds a
    BatchNorm model; `scripts/deep.py` captures `f1()`, `scripts/shallow.py` `f<entry>()`."""
    files = {"lib/__init__.py": "", f"lib/m{length}.py": NETS_TRAIN + f"\n\ndef f{length}():\n    return Net()\n"}
    for i in range(1, length):
        files[f"lib/m{i}.py"] = f"from lib.m{i + 1} import f{i + 1}\n\n\ndef f{i}():\n    return f{i + 1}()\n"
    for name, first in (("deep", 1), ("shallow", entry)):
        script = SCRIPT.replace("lib.helpers import build", f"lib.m{first} import f{first}")
        files[f"scripts/{name}.py"] = script.replace("build()", f"f{first}()")
    return _repo(tmp_path, files)


@pytest.mark.parametrize("length", [6, 12])
def test_a_helper_met_shallow_first_gives_the_deep_check_what_a_fresh_one_gives(tmp_path, length):
    # `f3` analysed from `shallow.py` (its module one away) was kept and reused from
    # `deep.py` (three away), where a limit on module depth had cut the fresh analysis off
    # before `Net`: `deep.py` was reported only after `shallow.py` in the same process (-j,
    # the file order, `qlint check deep.py` alone disagreed).
    root = _factory_chain(tmp_path, length, 3)
    fresh = _rows(root, "scripts/deep.py", ProjectIndex())
    project = ProjectIndex()
    assert _rows(root, "scripts/shallow.py", project) == [9]
    assert _rows(root, "scripts/deep.py", project) == fresh == [9]


FOLLOWED_HELPER = """\
class Ready:
    def apply(self, model):
        model.eval()
        return model


def quantize_module(module, quantizer, x):
    captured = export(module, (x,)).module()
    return prepare_pt2e(captured, quantizer)
"""

# A third module's helper that calls a method of a class of `pkg/helper.py`: read where it is
# used, in a caller search of `pkg/helper.py` and in any other check alike.
THROUGH_CLASS = """\
from pkg.helper import Ready


def ready(model):
    Ready().apply(model)
    return model
"""

BN_NET = """
class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.bn = torch.nn.BatchNorm2d(3)
"""


def _followed_repo(root):
    caller = HEAD + "from pkg.helper import quantize_module\nfrom lib.mid import ready\n" + BN_NET
    caller += "\n\ndef main(quantizer, x):\n    quantize_module(ready(Net()), quantizer, x)\n"
    script = HEAD + "from lib.mid import ready\n" + BN_NET + "\n\ndef main(quantizer, x):\n"
    script += "    ep = export(ready(Net()), (x,))\n    return prepare_pt2e(ep.module(), quantizer)\n"
    files = {
        "pkg/__init__.py": "",
        "pkg/helper.py": HEAD + FOLLOWED_HELPER,
        "lib/__init__.py": "",
        "lib/mid.py": THROUGH_CLASS,
    }
    files.update({"scripts/caller.py": caller, "scripts/script.py": script})
    return _repo(root, files)


@pytest.mark.parametrize("order", [("pkg/helper.py", "scripts/script.py"), ("scripts/script.py", "pkg/helper.py")])
def test_a_method_of_another_modules_class_is_read_by_a_caller_search_and_a_plain_check_alike(tmp_path, order):
    # `ready` reads `Ready.apply` (eval) wherever it is analysed: the script is quiet too.
    fresh = {}
    for name in order:  # each alone, in a repository of its own (caller modules are kept per path)
        fresh[name] = _rows(_followed_repo(tmp_path / "alone" / name.replace("/", "_")), name, ProjectIndex())
    assert fresh == {"pkg/helper.py": [], "scripts/script.py": []}
    root = _followed_repo(tmp_path / "together")
    project = ProjectIndex()
    assert {name: _rows(root, name, project) for name in order} == fresh


# The followed module under a library's name (a checkout of torchao): its helpers are read
# where they are used only while its callers are searched (`helper_callees._followed`).
LIBRARY_HELPER = """\
def apply_eval(model):
    model.eval()
    return model


def quantize_module(module, quantizer, x):
    captured = export(module, (x,)).module()
    return prepare_pt2e(captured, quantizer)
"""

THROUGH_LIBRARY_NAME = """\
import torchao.helper


def ready(model):
    torchao.helper.apply_eval(model)
    return model
"""


def _library_named_repo(root):
    caller = HEAD + "from torchao.helper import quantize_module\nfrom lib.mid import ready\n" + BN_NET
    caller += "\n\ndef main(quantizer, x):\n    quantize_module(ready(Net()), quantizer, x)\n"
    script = HEAD + "from lib.mid import ready\n" + BN_NET + "\n\ndef main(quantizer, x):\n"
    script += "    ep = export(ready(Net()), (x,))\n    return prepare_pt2e(ep.module(), quantizer)\n"
    files = {
        "torchao/__init__.py": "",
        "torchao/helper.py": HEAD + LIBRARY_HELPER,
        "lib/__init__.py": "",
        "lib/mid.py": THROUGH_LIBRARY_NAME,
    }
    files.update({"scripts/caller.py": caller, "scripts/script.py": script})
    return _repo(root, files)


@pytest.mark.parametrize(
    "order", [("torchao/helper.py", "scripts/script.py"), ("scripts/script.py", "torchao/helper.py")]
)
def test_a_flow_of_a_caller_search_and_one_of_another_check_are_not_taken_for_each_other(tmp_path, order):
    # `ready` analysed while `torchao/helper.py`'s callers are searched reads `apply_eval`
    # (eval); a check of `scripts/script.py` does not. Whichever was kept first was reused by
    # the other: the helper was reported, or the script quiet, only after the other file's check.
    fresh = {}
    for name in order:  # each alone, in a repository of its own (caller modules are kept per path)
        fresh[name] = _rows(_library_named_repo(tmp_path / "alone" / name.replace("/", "_")), name, ProjectIndex())
    assert fresh == {"torchao/helper.py": [], "scripts/script.py": [13]}
    root = _library_named_repo(tmp_path / "together")
    project = ProjectIndex()
    assert {name: _rows(root, name, project) for name in order} == fresh


def test_a_flow_that_asks_nothing_of_the_followed_module_serves_both(tmp_path, analysed):
    # `ready` switches the model itself: the caller search of `pkg/helper.py` and the script's
    # check analyse it once between them, in either order.
    for order in (("pkg/helper.py", "scripts/script.py"), ("scripts/script.py", "pkg/helper.py")):
        root = _followed_repo(tmp_path / order[0].replace("/", "_"))
        (root / "lib" / "mid.py").write_text("def ready(model):\n    model.eval()\n    return model\n")
        project = ProjectIndex()
        assert {name: _rows(root, name, project) for name in order} == {"pkg/helper.py": [], "scripts/script.py": []}
    assert analysed[("mid.py", 1)] == 2
