"""QL201: an exporter that evals the model, then moves or casts it (`model.float()`, `model =
model.to(self.device).half()`) before storing it in `self.model` (issue 14, items 2 and 7;
Ultralytics' exporter: `model.eval()`, `model.float()`, `model = model.fuse()`, ...,
`self.model = model`).

torch's `nn.Module.to`/`cpu`/`cuda`/`float`/`half`/`double`/`bfloat16`/`requires_grad_` (and
`share_memory`/`type`/`to_empty`, `model_torch_nn.MODE_KEEPING_METHODS`) return
the module itself and never touch `training`, so the store holds the model in the mode the
switch before them set. Anything else between the switch and the store that names the model
(a project method such as `fuse`, a cast whose argument calls anything but `torch.device`, a
rebinding to another object) still leaves the mode unknown.
"""

from __future__ import annotations

from tests.test_ql201_later_stored_attributes import CAPTURE_ROW, EXPORTER, _cross, _same

SWITCH = "        model.MODE()\n        self.model = model\n"
assert SWITCH in EXPORTER

E, F, H = "        model.MODE()\n", "        model.float()\n", "        self.model = model\n"
SPELLINGS = {
    "cast after the switch": E + F + H,
    "moved and rebound": E + "        model = model.to(self.device).half()\n" + H,
    "rebound by the switch": "        model = model.MODE()\n        self.model = model\n",
    "cast in the store": "        model.MODE()\n        self.model = model.half()\n",
    "switch and cast in the store": "        self.model = model.MODE().to(self.device)\n",
    "cast before the switch": "        model.float().MODE()\n        model.requires_grad_(False)\n" + H,
    # `share_memory`, `type` and `to_empty` move or cast through `_apply` as `to` does.
    "shared and cast by type": E + "        model.share_memory()\n        model = model.type(torch.float32)\n" + H,
    # `torch.device(...)` builds a device and runs nothing of the project's.
    "moved to a built device": E + '        self.model = model.to(torch.device("cpu"))\n',
    "a built device by keyword": E + "        model.to(device=torch.device(self.kind, 0))\n" + H,
}


def _exporter(spelling: str, mode: str) -> str:
    return "import torch\n" + EXPORTER.replace(SWITCH, SPELLINGS[spelling]).replace("MODE", mode)


def test_eval_then_casts_is_quiet_across_modules_and_in_one(tmp_path):
    for i, spelling in enumerate(SPELLINGS):
        assert _cross(tmp_path / f"c{i}", _exporter(spelling, "eval")) == [], spelling
        assert _same(tmp_path / f"s{i}", _exporter(spelling, "eval")) == [], spelling


def test_train_then_casts_is_reported_across_modules_and_in_one(tmp_path):
    for i, spelling in enumerate(SPELLINGS):
        assert _cross(tmp_path / f"c{i}", _exporter(spelling, "train")) == [CAPTURE_ROW], spelling
        assert _same(tmp_path / f"s{i}", _exporter(spelling, "train")) == [CAPTURE_ROW], spelling


# Between the eval and the store, something that may hand back another module or switch it:
# the mode is not known, and the caller in another module is not harmless (as on main).
V = "        model.eval()\n"
NOT_KEPT = {
    "trained after the cast": V + F + "        model.train()\n" + H,
    "a project method's result": "        model.eval()\n        model = model.fuse()\n        self.model = model\n",
    "a cast whose argument calls": "        model.eval()\n        model.to(pick(model))\n        self.model = model\n",
    # A function of the project may reach the model through whatever else holds it.
    "a project's device": V + "        self.model = model.to(make_device())\n",
    "a built device from a call": V + "        self.model = model.to(torch.device(pick()))\n",
    "rebound to another module": "        model.eval()\n        model = other.half()\n        self.model = model\n",
    "cast, then handed on": V + "        model.half()\n        tune(model)\n" + H,
    "cast, then trained in the store": "        model.eval()\n        self.model = model.half().train()\n",
}


def test_look_alikes_between_switch_and_store_stay_reported(tmp_path):
    for i, (what, spelling) in enumerate(NOT_KEPT.items()):
        assert _cross(tmp_path / str(i), EXPORTER.replace(SWITCH, spelling)) == [CAPTURE_ROW], what
