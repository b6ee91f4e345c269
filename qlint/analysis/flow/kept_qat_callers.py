"""QL202's search of a helper's callers, one caller module at a time, kept between runs.

QL202 asks whether some call of a helper that captures its parameter for QAT hands it an
eval-mode model on a path that takes the QAT branch (`call_paths.handed_on_some_path`), module
by module of the project (`project_callers`). Stop 47 kept QL201's verdicts on those modules
(`kept_caller_verdicts`), but not QL202's: the edited check of ExecuTorch's
backends/qualcomm/export_utils.py still parsed and analysed its 44 caller modules for QL202
(~1.3 s of its ~1.5 s CPU) after QL201 had taken its own verdicts on them.

A caller module where no call hands over an eval-mode model (every one passes a model in
another mode, its caller's own parameter followed up the callers in that module, or takes no
QAT branch) adds nothing to QL202's answer, and is kept as such, with the same discipline as
QL201's verdicts (`Verdicts`: the trail of every file read, the caller module first; the
checked module's text outside the bodies not taken and the text of each body taken; refused
whenever anything unnameable was read). Keyed, besides the helper and the caller module, on
the model's parameter and the branch conditions on the helper's parameters the calls must
not contradict: another capture of the same helper asks another question.

Not kept: a module where some call hands over an eval-mode model (whether or not it turns out
harmless: what a construction holds is read across the project, and `changed_after_build`
reads the caller module's bodies analysed so far).

QL201 reads the same caller modules first in the same check, and QL202 reuses their analyses:
what those read is taken from the record QL201's recordings left on the module
(`caller_modules.Kept.recorded`), kept only while every reading of the module since it was
built was recorded (a module asked for where no recording watches loses it), so a tree run
keeps QL202's answers too. Without that record the module's answer is not kept, as for QL201.
"""

from __future__ import annotations

from qlint.analysis.flow.kept_caller_verdicts import Verdicts, branch_conditions
from qlint.analysis.graphs import kept_answers

# (checked module, helper, ("qat", parameter, conditions), name searched, kind, caller module)
#   -> (calls read, shape, trail)
_KEPT: dict[tuple, tuple] = {}
_NAME = "qat-callers-1"
# Written by whole-tree runs too, as QL201's: the first edited check after one takes them.
kept_answers.register(_NAME, _KEPT, lambda key, entry: entry[:-1], small=True)


def handovers(ctx, model: int, needsets: tuple) -> Verdicts | None:
    """The kept answers of the callers of one helper, for QL202's search of a model passed
    for parameter `model` on a path the branch conditions `needsets` describe (`call_paths`:
    a tuple of sets of `Need`, each on the helper's parameters, read in the checked module).
    The consumer taints the module read when a call there passes an eval-mode model. None
    without a store (`--no-cache`): nothing is taken or written, and the search is as before."""
    if not kept_answers.writing(_NAME):
        return None
    return Verdicts(ctx, ("qat", model, branch_conditions(needsets)), (_NAME, _KEPT))


__all__ = ["handovers"]
