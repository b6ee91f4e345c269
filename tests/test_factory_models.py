"""QL201/QL202 read what library factories build from `qlint/data/factory_models.json`
(issue 14: timm and torchvision models).

A train-mode capture of `timm.create_model("vit_base_patch16_224")` is quiet (every drop rate
of timm's ViT is 0: no part of it reads the mode in a way that matters); a factory model
holding batch norm is reported naming it; a call the table does not cover (a dynamic name,
`**kwargs`, a keyword no build probed, a non-zero drop rate) keeps the report.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from qlint.analysis.flow import factory_models
from tests.conftest import ROOT
from tests.test_model_sources import check, ql201_message

GENERATOR = ROOT / "scripts" / "generate_factory_models.py"


def _script(build: str, imports: str = "import timm\n", capture: str = "model") -> str:
    return f"""
        {imports.strip()}

        def quantize(quantizer, x):
            model = {build}
            prepare_pt2e(export({capture}, (x,)).module(), quantizer)
    """


# -- quiet: the table says no part depends on the mode ------------------------------------------
@pytest.mark.parametrize(
    "build",
    [
        'timm.create_model("vit_base_patch16_224")',
        'timm.create_model("vit_base_patch16_224", pretrained=True)',
        'timm.create_model("vit_base_patch16_224", True, num_classes=10)',
        'timm.create_model(model_name="vit_base_patch14_dinov2.lvd142m", pretrained=False)',
        'timm.create_model("vit_base_patch16_224", num_classes=n)',
        'timm.create_model("vit_base_patch16_224", drop_rate=None, cache_dir=path)',
    ],
)
def test_timm_vit_built_in_train_mode_is_quiet(build):
    assert check(_script(build)) == []


def test_timm_model_named_by_a_constant_is_quiet():
    named = 'import timm\n\n        MODEL = "vit_base_patch16_224"'
    src = _script("timm.create_model(MODEL)").replace("import timm", named)
    assert check(src) == []


@pytest.mark.parametrize(
    "imports, build",
    [
        ("import torchvision", "torchvision.models.vit_b_16()"),
        ("import torchvision.models as models", "models.vit_b_16(weights=None, progress=False)"),
        ("from torchvision.models import vit_b_16", "vit_b_16(num_classes=10, dropout=0.0)"),
        ("from torchvision.models.vision_transformer import vit_b_16", "vit_b_16()"),
        ("from torchvision.models import get_model", 'get_model("vit_b_16", weights=None)'),
    ],
)
def test_torchvision_vit_built_in_train_mode_is_quiet(imports, build):
    assert check(_script(build, imports + "\n")) == []


def test_qat_capture_in_eval_mode_of_a_timm_vit_is_quiet():
    src = """
        import timm

        def quantize(quantizer, x):
            model = timm.create_model("vit_base_patch16_224").eval()
            prepare_qat_pt2e(export(model, (x,)).module(), quantizer)
    """
    assert check(src) == []
    (d,) = check(src.replace("vit_base_patch16_224", "resnet50"))
    assert d.code == "QL202" and d.message.endswith("; in `resnet50`, the mode changes BatchNorm2d")


def test_a_class_holding_a_timm_vit_is_quiet():
    src = """
        import timm

        class Wrapper(nn.Module):
            def __init__(self):
                super().__init__()
                self.backbone = timm.create_model("vit_base_patch16_224", pretrained=True)
                self.head = nn.Linear(768, 2)

        def quantize(quantizer, x):
            model = Wrapper()
            prepare_pt2e(export(model, (x,)).module(), quantizer)
    """
    assert check(src) == []
    message = ql201_message(src.replace("vit_base_patch16_224", "resnet50"))
    assert message.endswith("; in `Wrapper`, the mode changes BatchNorm2d")


# -- reported: parts the table names, or a call it does not cover --------------------------------
def test_timm_resnet_is_reported_naming_batch_norm():
    message = ql201_message(_script('timm.create_model("resnet50", pretrained=True)'))
    assert message.endswith("; in `resnet50`, the mode changes BatchNorm2d")


def test_torchvision_resnet_is_reported_naming_batch_norm():
    message = ql201_message(_script("torchvision.models.resnet18(weights=None)", "import torchvision\n"))
    assert message.endswith("; in `resnet18`, the mode changes BatchNorm2d")


def test_torchvision_vit_with_dropout_is_reported_naming_it():
    message = ql201_message(_script("torchvision.models.vit_b_16(dropout=0.1)", "import torchvision\n"))
    assert message.endswith("; in `vit_b_16`, the mode changes Dropout")
    message = ql201_message(_script("torchvision.models.vit_b_16(attention_dropout=0.1)", "import torchvision\n"))
    assert message.endswith("; in `vit_b_16`, the mode changes MultiheadAttention")
    # A rate we cannot read is not covered.
    message = ql201_message(_script("torchvision.models.vit_b_16(dropout=rate)", "import torchvision\n"))
    assert "the mode changes" not in message


def test_a_timm_vit_with_drop_path_is_reported_naming_it():
    # Every rate of the default ViT is 0: `drop_path_rate` puts DropPath in its blocks, which
    # drops residual branches in train mode.
    message = ql201_message(_script('timm.create_model("vit_base_patch16_224", drop_path_rate=0.1)'))
    assert message.endswith("; in `vit_base_patch16_224`, the mode changes DropPath")
    # A zero rate builds the default model: still quiet.
    assert check(_script('timm.create_model("vit_base_patch16_224", drop_path_rate=0.0)')) == []
    assert check(_script('timm.create_model("vit_base_patch16_224", drop_path_rate=0)')) == []


@pytest.mark.parametrize(
    ("keyword", "parts"),
    [
        # a Dropout before the head
        ("drop_rate", "Dropout"),
        # Dropouts inside the attention blocks, and the attention's own fused dropout
        ("attn_drop_rate", "Attention and Dropout"),
        ("proj_drop_rate", "Dropout"),
    ],
)
def test_a_timm_vit_with_another_drop_rate_is_reported_naming_it(keyword, parts):
    message = ql201_message(_script(f'timm.create_model("vit_base_patch16_224", {keyword}=0.1)'))
    assert message.endswith(f"; in `vit_base_patch16_224`, the mode changes {parts}")
    # At zero (each alone, or all of them) the default model is built: quiet.
    assert check(_script(f'timm.create_model("vit_base_patch16_224", {keyword}=0.0)')) == []
    every = ", ".join(f"{k}=0" for k in ("drop_rate", "attn_drop_rate", "proj_drop_rate", "drop_path_rate"))
    assert check(_script(f'timm.create_model("vit_base_patch16_224", {every})')) == []


@pytest.mark.parametrize(
    "build",
    [
        "timm.create_model(name)",  # a dynamic name
        'timm.create_model("vit_base_patch16_224", **kwargs)',
        "timm.create_model(*args)",
        # timm's rarer drop rates are not probed: unknown, not quiet.
        'timm.create_model("vit_base_patch16_224", pos_drop_rate=0.0)',
        'timm.create_model("vit_base_patch16_224", drop_path_rate=rate)',  # a rate we cannot read
        'timm.create_model("vit_base_patch16_224", img_size=384)',  # a keyword no build probed
        'timm.create_model("vit_base_patch16_224", patch_drop_rate=0.1)',
        'timm.create_model("vit_base_patch16_224", pretrained_cfg=cfg)',
        'timm.create_model("hf-hub:timm/vit_base_patch16_224.augreg_in21k")',
        'timm.create_model("vit_base_patch16_224.no_such_tag_judged", features_only=True)',
        'timm.create_model("not_a_timm_model")',
    ],
)
def test_timm_calls_the_table_does_not_cover_keep_the_report_without_a_note(build):
    message = ql201_message(_script(build))
    assert "the mode changes" not in message and "was found" not in message


@pytest.mark.parametrize(
    "build",
    [
        "torchvision.models.vit_b_16(**config)",
        "torchvision.models.vit_b_16(image_size=384)",
        "torchvision.models.VisionTransformer(224, 16, 12, 12, 768, 3072)",  # a class, no builder
        "torchvision.models.get_model(name)",
    ],
)
def test_torchvision_calls_the_table_does_not_cover_keep_the_report(build):
    message = ql201_message(_script(build, "import torchvision\n"))
    assert "the mode changes" not in message


def test_a_timm_vit_given_a_dropout_after_its_build_is_reported():
    src = """
        import timm

        def quantize(quantizer, x):
            model = timm.create_model("vit_base_patch16_224")
            model.head = nn.Dropout(0.5)
            prepare_pt2e(export(model, (x,)).module(), quantizer)
    """
    assert [d.code for d in check(src)] == ["QL201"]


def test_a_timm_vit_passed_by_callers_is_quiet_and_a_resnet_caller_is_named():
    """The corpus shape (dgcnz/edge): a helper captures what module-level code builds."""
    src = """
        import timm

        def export_and_quantize(model, example):
            m = export(model, args=example).module()
            return prepare_pt2e(m, None)

        vit = timm.create_model(model_name="vit_base_patch16_224", pretrained=False)
        dinov2 = timm.create_model(model_name="vit_base_patch14_dinov2.lvd142m", pretrained=False)
        export_and_quantize(vit, (torch.randn(1, 3, 224, 224),))
        export_and_quantize(dinov2, (torch.randn(1, 3, 518, 518),))
    """
    assert check(src) == []
    message = ql201_message(src.replace('"vit_base_patch16_224"', '"resnet50"'))
    assert "resnet50" in message and "BatchNorm2d" in message


# -- the table ------------------------------------------------------------------------------------
def test_the_table_shape():
    text = factory_models.TABLE.read_text()
    assert len(text.encode()) < 100_000
    data = json.loads(text)
    assert data["format"] == 1 and set(data["versions"]) == set(data["registered"]) == {"timm", "torchvision"}
    seen_timm: set[str] = set()
    seen_tv: set[str] = set()
    for group in data["groups"]:
        assert group.get("timm") or group.get("torchvision"), group
        assert set(group) <= {"parts", "with", "zero", "tags", "timm", "torchvision"}
        names = group.get("timm", [])
        assert not seen_timm & set(names)
        seen_timm.update(names)
        for name, paths in group.get("torchvision", {}).items():
            assert name not in seen_tv and paths
            assert all(p.startswith("torchvision.models.") for p in paths)
            seen_tv.add(name)
        parts = group["parts"]
        if parts is None:  # unknown: nothing else can be said of it
            assert set(group) <= {"parts", "timm", "torchvision"}
            continue
        assert parts == sorted(set(parts))
        for keyword, probed in group.get("with", {}).items():
            assert probed == sorted(set(probed)) and set(parts) <= set(probed), (keyword, group)
        assert set(group.get("zero", ())) <= set(group.get("with", {}))
    registered = data["registered"]
    # Every registered model (a merge of unfinished shards would hold fewer).
    assert len(seen_tv) == registered["torchvision"] and len(seen_timm) == registered["timm"]


def test_the_table_is_read_only_when_a_factory_call_is_met():
    """Start-up and checks of files without factory calls do not pay for reading it."""
    code = """
from qlint.analysis.flow import factory_models
from tests.conftest import lint
head = 'import torch, timm\\nfrom torch.export import export\\n'
head += 'from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e\\n'
head += 'class Net(torch.nn.Module):\\n    pass\\n'
capture = 'def f(q, x):\\n    prepare_pt2e(export(MODEL, (x,)).module(), q)\\n'
lint(head + capture.replace('MODEL', 'Net()'), select=('QL201',))
print(factory_models.table.cache_info().currsize)
lint(head + capture.replace('MODEL', 'timm.create_model(\"resnet50\")'), select=('QL201',))
print(factory_models.table.cache_info().currsize)
"""
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["0", "1"]


def _importable(*modules: str) -> bool:
    import importlib.util

    return all(importlib.util.find_spec(m) is not None for m in modules)


# .ci/run installs the libraries the table was generated from and sets this, so that there the
# test fails instead of skipping when they do not import.
_LIBS_REQUIRED = os.environ.get("QLINT_REQUIRE_FACTORY_LIBS") == "1"


@pytest.mark.skipif(
    not _LIBS_REQUIRED and not _importable("torch", "timm", "torchvision"), reason="needs timm and torchvision"
)
def test_the_table_matches_the_installed_libraries():
    """A sample of models rebuilt (the whole table takes many minutes): each must be judged
    as the bundled table says. `python scripts/generate_factory_models.py --check` checks all."""
    sample = ["vit_base_patch16_224", "vit_base_patch14_dinov2", "resnet50", "resnet18", "vit_b_16", "convnext_tiny"]
    args = [sys.executable, str(GENERATOR), "--check", "--only", *sample]
    done = subprocess.run(args, capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-2000:]


_JUDGED = """
import importlib.util, json, sys
import torch
from torch import nn
import torch.nn.functional as F

spec = importlib.util.spec_from_file_location("generator", sys.argv[1])
generator = importlib.util.module_from_spec(spec)
spec.loader.exec_module(generator)


class DropoutCall(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.p = p

    def forward(self, x):
        return F.dropout(x, self.p, self.training)


class Branch(nn.Module):
    def forward(self, x):
        if self.training:
            x = x * 2
        return x


class Guarded(nn.Module):
    def __init__(self, rate):
        super().__init__()
        self.rate = rate

    def forward(self, x):
        if self.training and self.rate > 0:
            x = x * 2
        return x


class Picked(nn.Module):
    def __init__(self, p):
        super().__init__()
        self.drop = nn.Dropout(p)

    def forward(self, x):
        return F.scaled_dot_product_attention(x, x, x, dropout_p=self.drop.p if self.training else 0.0)


class Handed(nn.Module):
    def forward(self, x):
        return torch.where(torch.tensor(self.training), x, -x)


class Kept(nn.Module):
    def forward(self, x):
        flag = self.training
        return x if flag else -x


def parts(model):
    try:
        return generator.Judge().parts(model)
    except generator.Unknown:
        return None


cases = {
    "linear": nn.Sequential(nn.Linear(2, 2), nn.ReLU()),
    "bn": nn.Sequential(nn.BatchNorm2d(2)),
    "bn untracked": nn.BatchNorm2d(2, track_running_stats=False),
    "instance norm": nn.InstanceNorm2d(2),
    "dropout 0": nn.Dropout(0.0),
    "dropout": nn.Dropout(0.1),
    "dropout call 0": DropoutCall(0.0),
    "dropout call": DropoutCall(0.2),
    "branch": Branch(),
    "guarded 0": Guarded(0.0),
    "guarded": Guarded(0.5),
    "picked 0": Picked(0.0),
    "picked": Picked(0.1),
    "handed": Handed(),
    "kept": Kept(),
    "mha 0": nn.MultiheadAttention(4, 2),
    "mha": nn.MultiheadAttention(4, 2, dropout=0.1),
}
print(json.dumps({name: parts(model) for name, model in cases.items()}))
"""


@pytest.mark.skipif(not _importable("torch"), reason="needs torch")
def test_the_generator_judges_modules_by_what_their_training_reads_do(tmp_path):
    """The generator's judgement on small torch modules (no timm needed): a read settled
    the same in both modes is mode-free, one that differs names the class, one it cannot
    evaluate leaves the model unknown."""
    script = tmp_path / "judged.py"
    script.write_text(_JUDGED)
    done = subprocess.run([sys.executable, str(script), str(GENERATOR)], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr[-2000:]
    assert json.loads(done.stdout) == {
        "linear": [],
        "bn": ["BatchNorm2d"],
        "bn untracked": [],
        "instance norm": [],
        "dropout 0": [],
        "dropout": ["Dropout"],
        "dropout call 0": [],
        "dropout call": ["DropoutCall"],
        "branch": ["Branch"],
        "guarded 0": [],
        "guarded": ["Guarded"],
        "picked 0": [],
        "picked": ["Dropout", "Picked"],
        "handed": ["Handed"],
        "kept": None,
        "mha 0": [],
        "mha": ["MultiheadAttention"],
    }
