"""The walk up a helper's callers for a ruled-out branch, one caller module at a time, kept
between runs.

`ruled_out_branches.branch_ruled_out` (QL201 for "ptq", QL202 for "qat") asks whether every call
of a helper, module by module of the project, either rules out by its arguments the branch that
reaches the prepare call or passes a harmless model (`call_paths.vouched_on_every_path`). It
kept nothing: the edited check of torchao's torchao/testing/pt2e/utils.py parsed and analysed
test/quantization/pt2e/test_quantize_pt2e.py again for QL202's walk of `_test_quantizer`'s 15
calls there (~40 ms of its ~0.24 s CPU) although the edit changed nothing they read.

A caller module whose every call is decided at the call (its arguments rule the branch out,
or it passes a harmless model) is kept as such, with the discipline of QL201's verdicts
(`kept_caller_verdicts.Verdicts`: the trail of every file read, the caller module first; the
checked module's text outside the bodies not taken and the text of each body taken; refused
whenever anything unnameable was read). Keyed, besides the helper and the caller module, on
the rule's flow, the model's parameter and the branch conditions on the helper's parameters
the calls must contradict: another capture of the same helper asks another question.

Not kept: a module where some call hands the question on to its own callers (`is_qat=is_qat`,
the caller's own model): the walk then reads that caller's callers, a search of the project's
words that a kept answer cannot name.
"""

from __future__ import annotations

from qlint.analysis.flow.kept_caller_verdicts import Verdicts, branch_conditions
from qlint.analysis.graphs import kept_answers

# (checked module, helper, ("paths", flow, parameter, conditions), name searched, kind, caller module)
#   -> (calls read, shape, trail)
_KEPT: dict[tuple, tuple] = {}
_NAME = "call-paths-1"
# Written by whole-tree runs too, as QL201's verdicts: the first edited check after one takes them.
kept_answers.register(_NAME, _KEPT, lambda key, entry: entry[:-1], small=True)


def path_verdicts(ctx, flow: str, model: int | None, needsets: tuple) -> Verdicts | None:
    """The kept answers of the callers of one helper, for the walk of `flow`'s capture of the
    model passed for parameter `model` (None: the model is not the helper's parameter, only
    the flags decide) on paths the branch conditions `needsets` describe (`call_paths`: a
    tuple of sets of `Need`, each on the helper's parameters, read in the checked module).
    None without a store (`--no-cache`): nothing is taken or written, and the walk is as before."""
    if not kept_answers.writing(_NAME):
        return None
    return Verdicts(ctx, ("paths", flow, model, branch_conditions(needsets)), (_NAME, _KEPT))


__all__ = ["path_verdicts"]
