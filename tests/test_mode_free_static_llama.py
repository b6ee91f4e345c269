"""QL201: the shape of ExecuTorch's Qualcomm static llama, and why its evaluation script stays
reported (issue 14, item 8; corpus row executorch-pre-9116df7e eval_llama_qnn.py:329).

The model as its classes build it is mode-free and qlint concludes so: norms and feed-forwards
from registries a decorator fills (`NORMS[k](...)`, `FEED_FORWARDS.get(k, Default)(cfg)`), its
decoder layers in a `ModuleList` comprehension, buffers a function of another module computes,
conv parts a method adds (`prepare_sha`), the model handed back in tuples by two helpers.

At that pin each of the following keeps the finding on its own, rightly: what qlint does not
read may hold anything.
- one of the registry's feed-forwards holds `transformers.activations.GELUActivation`; the
  repository pins transformers 4.56.1, which is neither installed on the corpus machine nor
  mirrored, so that class does not resolve (an installed library's class is read from its
  source: below, a mode-free one is quiet);
- `convert_linear_to_conv2d(model)`, a helper of another module that swaps the model's linears
  for a class of its own through `setattr` over `dir(module)`;
- `model = get_quant_embedding_transform(...)(model)`: a callable a factory of another module
  returns, one of two closures that swap the embedding for quantized ones;
- `apply_spinquant(model, ...)`, a function of an installed package that rewrites the model.

The loud cases below put a mode-dependent part where those steps put theirs: a refinement that
follows such steps must still report them.
"""

from __future__ import annotations

import pytest

from tests.conftest import check_file, package_repository, rows_of
from tests.test_ql201_registry_contents import REGISTRY as NORM_REGISTRY

# The norms' registry of `test_ql201_registry_contents` (RMS and layer norms, under three keys),
# and a feed-forward registry beside it.
REGISTRY = (
    NORM_REGISTRY
    + '''

from abc import ABC, abstractmethod


class FeedForwardBase(torch.nn.Module, ABC):
    @abstractmethod
    def forward(self, x):
        """Each registered feed-forward runs its own layers."""


FEED_FORWARDS: Dict[str, Type[FeedForwardBase]] = {}


def register_feed_forward(name):
    def decorator(cls):
        FEED_FORWARDS[name] = cls
        return cls

    return decorator


@register_feed_forward("gated")
class GatedFeedForward(FeedForwardBase):
    def __init__(self, cfg):
        super().__init__()
        self.up = torch.nn.Linear(cfg.dim, 2 * cfg.hidden)
        self.down = torch.nn.Linear(cfg.hidden, cfg.dim)

    def forward(self, x):
        gate, up = self.up(x).chunk(2, dim=-1)
        return self.down(torch.nn.functional.silu(gate) * up)
'''
)
# A feed-forward registered beside the others whose activation comes from a library, as the
# static llama's `CodegenFeedForward` holds transformers' `GELUActivation`.
LIBRARY_FEED_FORWARD = """
import torch

from {library}.activations import GeluActivation
from pkg.registry import FeedForwardBase, register_feed_forward


@register_feed_forward("codegen")
class CodegenFeedForward(FeedForwardBase):
    def __init__(self, cfg):
        super().__init__()
        self.fc_in = torch.nn.Linear(cfg.dim, cfg.hidden)
        self.fc_out = torch.nn.Linear(cfg.hidden, cfg.dim)
        self.act = GeluActivation(use_python=False)

    def forward(self, x):
        return self.fc_out(self.act(self.fc_in(x)))
"""
ROPE = """
import torch


def precompute_freqs(dim, length, base=10000.0):
    freqs = 1.0 / (base ** (torch.arange(0, dim, 2).float() / dim))
    angles = torch.outer(torch.arange(length).float(), freqs)
    return torch.cos(angles), torch.sin(angles)
"""
ARGS = """
from dataclasses import dataclass


@dataclass
class ModelArgs:
    dim: int = 64
    hidden: int = 128
    n_heads: int = 4
    n_layers: int = 2
    vocab: int = 100
    max_seq_len: int = 32
    eps: float = 1e-5
    norm: str = "rms"
    arch: str = "llama"
    qk_norm: bool = False
"""
MODEL = """
import torch
from torch import nn

from pkg.registry import FEED_FORWARDS, NORMS, FeedForwardBase
from pkg.rope import precompute_freqs


class FeedForward(FeedForwardBase):
    def __init__(self, cfg):
        super().__init__()
        self.w1 = nn.Linear(cfg.dim, cfg.hidden, bias=False)
        self.w2 = nn.Linear(cfg.hidden, cfg.dim, bias=False)

    def forward(self, x):
        return self.w2(torch.nn.functional.silu(self.w1(x)))


class Attention(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.dim = cfg.dim
        self.n_heads = cfg.n_heads
        self.wq = nn.Linear(cfg.dim, cfg.dim, bias=False)
        self.wo = nn.Linear(cfg.dim, cfg.dim, bias=False)
        if cfg.qk_norm:
            self.q_norm = nn.RMSNorm(cfg.dim // cfg.n_heads, eps=cfg.eps)
        self.softmax = nn.Softmax(dim=-1)

    def prepare_sha(self):
        self.wq_sha = nn.ModuleList([nn.Conv2d(self.dim, self.dim // self.n_heads, 1) for _ in range(self.n_heads)])

    def forward(self, x, mask):
        q = self.wq(x)
        scores = self.softmax(q @ q.transpose(-2, -1) + mask)
        return self.wo(scores @ q)


class DecoderLayer(nn.Module):
    def __init__(self, cfg):
        super().__init__()
        self.attention = Attention(cfg)
        self.feed_forward = FEED_FORWARDS.get(cfg.arch, FeedForward)(cfg)
        self.attention_norm = NORMS[cfg.norm](cfg.dim, eps=cfg.eps)
        self.ffn_norm = NORMS[cfg.norm](cfg.dim, eps=cfg.eps)

    def forward(self, x, mask):
        h = x + self.attention(self.attention_norm(x), mask)
        return h + self.feed_forward(self.ffn_norm(h))


class LlamaModel(nn.Module):
    def __init__(self, cfg, ar_len=1):
        super().__init__()
        self.ar_len = ar_len
        self.layers = nn.ModuleList([DecoderLayer(cfg) for _ in range(cfg.n_layers)])
        self.norm = NORMS[cfg.norm](cfg.dim, eps=cfg.eps)
        self.output = nn.Linear(cfg.dim, cfg.vocab, bias=False)
        self.tok_embeddings = nn.Embedding(cfg.vocab, cfg.dim)
        cos, sin = precompute_freqs(cfg.dim, cfg.max_seq_len)
        self.register_buffer("freqs_cos", cos, persistent=False)
        self.register_buffer("freqs_sin", sin, persistent=False)

    def forward(self, tokens, mask):
        h = self.tok_embeddings(tokens)
        for layer in self.layers:
            h = layer(h, mask)
        return self.output(self.norm(h))
"""
RUN = """
import json

import torch
from torchao.quantization.pt2e.quantize_pt2e import prepare_pt2e

from pkg.args import ModelArgs
from pkg.model import LlamaModel
{imports}

def prepare_model(args):
    with open(args.params) as f:
        cfg = ModelArgs(**json.load(f))
    model = LlamaModel(cfg, ar_len=args.ar_len)
    state_dict = torch.load(args.checkpoint, weights_only=True)
    model.load_state_dict(state_dict, strict=True, assign=True)
    return model, cfg


def prequant(model, cfg, args):
    for layer in model.layers:
        layer.attention.prepare_sha()
{transform}    return model, cfg


def evaluate(args, quantizer, inputs):
    model, cfg = prepare_model(args)
    model, cfg = prequant(model, cfg, args)
    with torch.no_grad():
        model = torch.export.export(model, inputs, strict=True).module()
        model = prepare_pt2e(model, quantizer)
    return model
"""
CAPTURE = "        model = torch.export.export(model, inputs, strict=True).module()"


def _check(tmp_path, imports: str = "", transform: str = "", **modules: str):
    run = RUN.format(imports=imports, transform=transform)
    sources = {"registry": REGISTRY, "rope": ROPE, "args": ARGS, "model": MODEL, "run": run, **modules}
    root = package_repository(tmp_path / "repo", **sources)
    found = check_file(root / "pkg" / "run.py", ("QL201",)).diagnostics
    return found, run.splitlines().index(CAPTURE) + 1


def _reported(tmp_path, **kwargs) -> str:
    """The one finding's message, on the capture's line."""
    found, row = _check(tmp_path, **kwargs)
    assert rows_of(found) == [row], [d.message for d in found]
    return found[0].message


# -- quiet: the model as its classes build it -------------------------------------------------
def test_the_static_llama_as_built_is_quiet(tmp_path):
    assert _check(tmp_path)[0] == []


# -- loud: a mode-dependent part where the real model has a mode-free one ----------------------
@pytest.mark.parametrize(
    ("module", "old", "new"),
    [
        # A registered feed-forward: `.get(arch, FeedForward)` may build any of them.
        (
            "registry",
            "        self.down = torch.nn.Linear(cfg.hidden, cfg.dim)\n",
            "        self.down = torch.nn.Dropout(0.1)\n",
        ),
        # The default of that lookup.
        ("model", "        self.w2 = nn.Linear(cfg.hidden, cfg.dim, bias=False)", "        self.w2 = nn.Dropout(0.1)"),
        # A part the method the script calls on each layer adds.
        ("model", "nn.Conv2d(self.dim, self.dim // self.n_heads, 1)", "nn.Dropout(0.1)"),
        # A part a config flag adds.
        ("model", "            self.q_norm = nn.RMSNorm(", "            self.q_norm = nn.BatchNorm1d("),
        # Code reading the flag in the attention.
        ("model", "        q = self.wq(x)\n", "        q = self.wq(x) if self.training else x\n"),
    ],
)
def test_a_mode_dependent_part_of_the_static_llama_is_reported_and_named(tmp_path, module, old, new):
    sources = {"registry": REGISTRY, "model": MODEL}
    assert old in sources[module]
    message = _reported(tmp_path, **{module: sources[module].replace(old, new)})
    assert "in `LlamaModel`, the mode changes" in message, message


# -- a registered part from a library: read where it is installed -------------------------------
GELU = """
import torch


class GeluActivation(torch.nn.Module):
    def __init__(self, use_python=False):
        super().__init__()
        self.act = torch.nn.functional.gelu
{extra}
    def forward(self, x):
        return self.act(x)
"""


def _installed(tmp_path, monkeypatch, package: str, module: str, text: str) -> None:
    """`package.module`, of source `text`, in the one site directory the check reads."""
    from qlint.analysis.flow import installed_classes

    site = tmp_path / "site-packages"
    (site / package).mkdir(parents=True)
    (site / package / "__init__.py").touch()
    (site / package / f"{module}.py").write_text(text)
    monkeypatch.setattr(installed_classes, "site_dirs", lambda: (str(site),))


def test_a_registered_part_of_a_library_that_is_not_installed_keeps_the_report_without_a_content_note(tmp_path):
    codegen = LIBRARY_FEED_FORWARD.format(library="absentactivations")
    message = _reported(tmp_path, codegen=codegen)
    assert "; in `" not in message and "no batch norm" not in message, message


def test_a_registered_part_of_an_installed_library_holding_nothing_mode_dependent_is_quiet(tmp_path, monkeypatch):
    # The library's own package name: the installed sources other tests read stay apart.
    _installed(tmp_path, monkeypatch, "freeactivations", "activations", GELU.format(extra=""))
    assert _check(tmp_path, codegen=LIBRARY_FEED_FORWARD.format(library="freeactivations"))[0] == []


def test_a_registered_part_of_an_installed_library_holding_dropout_is_reported_and_named(tmp_path, monkeypatch):
    dropout = GELU.format(extra="        self.drop = torch.nn.Dropout(0.1)\n")
    _installed(tmp_path, monkeypatch, "dropactivations", "activations", dropout)
    message = _reported(tmp_path, codegen=LIBRARY_FEED_FORWARD.format(library="dropactivations"))
    assert "in `LlamaModel`, the mode changes Dropout" in message, message


# -- loud: steps after the build that give the model parts qlint does not read ------------------
SWAPS = """
import torch


def convert_linear_to_conv2d(module):
    class Conv2D(torch.nn.Module):
        def __init__(self, weight):
            super().__init__()
            self.conv = torch.nn.Conv2d(weight.shape[1], weight.shape[0], 1)
{inner}
        def forward(self, x):
            return self.conv(x.unsqueeze(-1)).squeeze(-1)

    def replace_linear(module):
        for name in dir(module):
            part = getattr(module, name)
            if isinstance(part, torch.nn.Linear):
                setattr(module, name, Conv2D(part.weight))
        for _, child in module.named_children():
            replace_linear(child)
        return module

    return replace_linear(module)


def get_embedding_transform(kind):
    if kind == "wrapped":
        return lambda model: Embedded(model)

    def quantize_embedding(model):
        model.tok_embeddings = QuantizedEmbedding(model.tok_embeddings.weight)
        return model

    return quantize_embedding


class QuantizedEmbedding(torch.nn.Module):
    def __init__(self, weight):
        super().__init__()
        self.register_buffer("weight", weight.to(torch.int8))
{extra}
    def forward(self, tokens):
        return torch.nn.functional.embedding(tokens, self.weight.float())


class Embedded(torch.nn.Module):
    def __init__(self, model):
        super().__init__()
        self.model = model
{extra}
    def forward(self, tokens, mask):
        return self.model(tokens, mask)
"""
SPIN = """
import torch


def apply_rotation(model, use_r1=False):
    for layer in model.layers:
        layer.attention.wv = torch.nn.Linear(layer.attention.dim, layer.attention.dim)
{extra}"""
TRANSFORMS = [
    ("from pkg.swaps import convert_linear_to_conv2d\n", "    model = convert_linear_to_conv2d(model)\n"),
    # On some paths only, as in the script: a model the step returns on every path is one of
    # unknown mode, not reported (`reasons`).
    (
        "from pkg.swaps import get_embedding_transform\n",
        "    if args.embedding:\n        model = get_embedding_transform(args.kind)(model)\n",
    ),
    ("from rotations.spin import apply_rotation\n", "    apply_rotation(model, use_r1=True)\n"),
]


@pytest.mark.parametrize(("imports", "transform"), TRANSFORMS)
@pytest.mark.parametrize("dependent", [False, True])
def test_a_model_given_parts_by_a_step_after_its_build_keeps_the_report(
    tmp_path, monkeypatch, imports, transform, dependent
):
    """Not read, so loud whatever the step puts in (`dependent`: a dropout in each part it
    puts in, as a refinement reading such steps must find)."""
    inner = "            self.drop = torch.nn.Dropout(0.1)\n" if dependent else ""
    extra = "        self.drop = torch.nn.Dropout(0.1)\n" if dependent else ""
    spin_extra = "        layer.attention.drop = torch.nn.Dropout(0.1)\n" if dependent else ""
    _installed(tmp_path, monkeypatch, "rotations", "spin", SPIN.format(extra=spin_extra))
    swaps = SWAPS.format(inner=inner, extra=extra)
    _reported(tmp_path, imports=imports, transform=transform, swaps=swaps)
