"""The ONNX files people have, made small: transformers families from tiny configs with random weights, exported
with the TorchScript exporter (opset 17) and the dynamo exporter (opset 18), and ONNX Runtime's transformer
optimizer run on some of them. Shared by tests/analysis/test_exports_*.py and docs/make_conformance.py.

Tiny configs (2 layers, hidden 32, sequence 16) keep every export under a few seconds: the op patterns are what
matter, and they do not depend on the sizes. Each model is wrapped so that it takes its inputs positionally and
returns every output tensor (an output the wrapper dropped would be pruned from the ONNX graph but still counted
on the PyTorch side).
"""

from __future__ import annotations

import contextlib
import io
import warnings
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

SEQ = 16
VOCAB = 100
EXPORTERS = {"torchscript": 17, "dynamo": 18}


@dataclass(frozen=True)
class Case:
    family: str
    build: Callable[[], tuple[Any, tuple[Any, ...], list[str]]]  # -> (module, example inputs, input names)
    note: str = ""


class _Outputs:
    """nn.Module wrapper: positional inputs -> the tuple of every tensor output (cache off)."""

    def __new__(cls, model: Any, names: list[str], **fixed: Any) -> Any:
        import torch

        class Wrapper(torch.nn.Module):
            def __init__(self) -> None:
                super().__init__()
                self.model = model

            def forward(self, *args: Any) -> tuple[Any, ...]:
                out = self.model(**dict(zip(names, args, strict=True)), **fixed)
                values = out.to_tuple() if hasattr(out, "to_tuple") else tuple(out)
                return tuple(v for v in values if isinstance(v, torch.Tensor))

        return Wrapper().eval()


def _text(model: Any, mask: bool = True, **fixed: Any) -> tuple[Any, tuple[Any, ...], list[str]]:
    import torch

    torch.manual_seed(0)
    ids = torch.randint(3, VOCAB, (1, SEQ))
    names = ["input_ids", "attention_mask"] if mask else ["input_ids"]
    inputs = (ids, torch.ones(1, SEQ, dtype=torch.long)) if mask else (ids,)
    return _Outputs(model.eval(), names, **fixed), inputs, names


def _image(model: Any, shape: tuple[int, ...], name: str = "pixel_values") -> tuple[Any, tuple[Any, ...], list[str]]:
    import torch

    torch.manual_seed(0)
    return _Outputs(model.eval(), [name]), (torch.randn(*shape),), [name]


_SMALL = {"hidden_size": 32, "num_hidden_layers": 2, "num_attention_heads": 2, "intermediate_size": 64}


def bert(attention: str = "sdpa") -> tuple[Any, tuple[Any, ...], list[str]]:
    from transformers import BertConfig, BertModel

    config = BertConfig(vocab_size=VOCAB, max_position_embeddings=64, attn_implementation=attention, **_SMALL)
    return _text(BertModel(config))


def bert_eager() -> tuple[Any, tuple[Any, ...], list[str]]:
    """The issue's case: eager attention, whose TorchScript export hides every shape from onnx's inference."""
    return bert("eager")


def roberta() -> tuple[Any, tuple[Any, ...], list[str]]:
    from transformers import RobertaConfig, RobertaModel

    return _text(RobertaModel(RobertaConfig(vocab_size=VOCAB, max_position_embeddings=64, **_SMALL)))


def distilbert() -> tuple[Any, tuple[Any, ...], list[str]]:
    from transformers import DistilBertConfig, DistilBertModel

    config = DistilBertConfig(vocab_size=VOCAB, dim=32, n_layers=2, n_heads=2, hidden_dim=64,
                              max_position_embeddings=64)
    return _text(DistilBertModel(config))


def gpt2() -> tuple[Any, tuple[Any, ...], list[str]]:
    from transformers import GPT2Config, GPT2Model

    config = GPT2Config(vocab_size=VOCAB, n_embd=32, n_layer=2, n_head=2, n_positions=64,
                        bos_token_id=1, eos_token_id=2)
    return _text(GPT2Model(config), use_cache=False)


def llama() -> tuple[Any, tuple[Any, ...], list[str]]:
    """GQA (4 query heads share 2 KV heads) and rotary positions."""
    from transformers import LlamaConfig, LlamaModel

    config = LlamaConfig(vocab_size=VOCAB, hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                         num_attention_heads=4, num_key_value_heads=2, max_position_embeddings=64, bos_token_id=1,
                         eos_token_id=2)
    return _text(LlamaModel(config), use_cache=False)


def t5() -> tuple[Any, tuple[Any, ...], list[str]]:
    """Encoder-decoder: input_ids, attention_mask, decoder_input_ids (relative position buckets). Eager attention:
    with SDPA, torch.export (the dynamo exporter's first step) fails on T5's reshape of the attention output."""
    import torch
    from transformers import T5Config, T5Model

    config = T5Config(vocab_size=VOCAB, d_model=32, d_kv=16, d_ff=64, num_layers=2, num_heads=2,
                      decoder_start_token_id=0, attn_implementation="eager")
    model, (ids, mask), names = _text(T5Model(config), use_cache=False)
    names = [*names, "decoder_input_ids"]
    model = _Outputs(model.model, names, use_cache=False)
    return model, (ids, mask, torch.randint(3, VOCAB, (1, SEQ // 2))), names


def vit() -> tuple[Any, tuple[Any, ...], list[str]]:
    from transformers import ViTConfig, ViTModel

    return _image(ViTModel(ViTConfig(image_size=32, patch_size=8, **_SMALL)), (1, 3, 32, 32))


def whisper_encoder() -> tuple[Any, tuple[Any, ...], list[str]]:
    """Whisper's encoder: two Conv1d over the log-mel frames, then the transformer (3000 frames become 2 x
    max_source_positions = 32 here)."""
    from transformers import WhisperConfig
    from transformers.models.whisper.modeling_whisper import WhisperEncoder

    config = WhisperConfig(d_model=32, encoder_layers=2, encoder_attention_heads=2, encoder_ffn_dim=64,
                           num_mel_bins=16, max_source_positions=16, vocab_size=VOCAB)
    return _image(WhisperEncoder(config), (1, 16, 32), "input_features")


def clip_text() -> tuple[Any, tuple[Any, ...], list[str]]:
    from transformers import CLIPTextConfig, CLIPTextModel

    config = CLIPTextConfig(vocab_size=VOCAB, max_position_embeddings=SEQ, eos_token_id=2, **_SMALL)
    return _text(CLIPTextModel(config))


def clip_vision() -> tuple[Any, tuple[Any, ...], list[str]]:
    from transformers import CLIPVisionConfig, CLIPVisionModel

    return _image(CLIPVisionModel(CLIPVisionConfig(image_size=32, patch_size=8, **_SMALL)), (1, 3, 32, 32))


CASES = {c.family: c for c in [
    Case("bert", bert), Case("bert-eager", bert_eager, "eager attention"), Case("roberta", roberta),
    Case("distilbert", distilbert), Case("gpt2", gpt2),
    Case("llama", llama, "GQA 4/2 heads, rotary"), Case("t5", t5, "encoder-decoder, eager attention"), Case("vit", vit),
    Case("whisper-encoder", whisper_encoder), Case("clip-text", clip_text), Case("clip-vision", clip_vision),
]}


_REGISTRIES: dict[Any, Any] = {}


@contextlib.contextmanager
def _torchlib_registry_built_once() -> Any:
    """The dynamo exporter builds its table of ATen -> ONNX functions (``ONNXRegistry.from_torchlib``) anew on every
    export: onnxscript re-parses the source of ~500 torchlib functions, 0.55 s of CPU each time. The table is the
    same for every export of a process, so it is built once per opset; each export gets its own copy of it (an
    export with ``custom_translation_table`` adds to its copy). Where torch's private API differs, nothing changes."""
    from torch.onnx._internal.exporter import _registration

    registry = getattr(_registration, "ONNXRegistry", None)
    real = getattr(registry, "from_torchlib", None)
    if real is None or "from_torchlib" not in vars(registry) or not hasattr(registry(), "functions"):
        yield
        return

    def once(opset_version: Any = None) -> Any:
        key = opset_version
        if key not in _REGISTRIES:
            _REGISTRIES[key] = real() if opset_version is None else real(opset_version=opset_version)
        copy = registry()
        copy.__dict__.update(_REGISTRIES[key].__dict__)
        copy.functions = {op: list(metas) for op, metas in _REGISTRIES[key].functions.items()}
        return copy

    descriptor = vars(registry)["from_torchlib"]
    registry.from_torchlib = staticmethod(once)
    try:
        yield
    finally:
        registry.from_torchlib = descriptor


def export(module: Any, inputs: tuple[Any, ...], names: list[str], path: Path, exporter: str) -> Path:
    """torch.onnx.export with ``exporter`` ('torchscript': opset 17, 'dynamo': opset 18), quietly."""
    import torch

    with (
        warnings.catch_warnings(),
        contextlib.redirect_stdout(io.StringIO()),
        contextlib.redirect_stderr(io.StringIO()),
        _torchlib_registry_built_once() if exporter == "dynamo" else contextlib.nullcontext(),
    ):
        warnings.simplefilter("ignore")
        torch.onnx.export(module, inputs, str(path), dynamo=exporter == "dynamo", opset_version=EXPORTERS[exporter],
                          input_names=names)
    return path


def torch_macs(module: Any, inputs: tuple[Any, ...]) -> int:
    """The PyTorch counter's MACs of the same module at the same inputs: the reference."""
    from modelcost.analysis.torch_counter import analyze_module

    return analyze_module(module, list(inputs)).compute.macs


_FOLDER: list[Path] = []


def _folder() -> Path:
    """One temporary folder per process for the exports (removed at exit)."""
    if not _FOLDER:
        import atexit
        import shutil
        import tempfile

        _FOLDER.append(Path(tempfile.mkdtemp(prefix="modelcost-exports-")))
        atexit.register(shutil.rmtree, _FOLDER[0], True)
    return _FOLDER[0]


_BUILT: dict[str, tuple[Any, tuple[Any, ...], list[str], int]] = {}
_EXPORTED: dict[tuple[str, str], Path] = {}


def built(family: str) -> tuple[Any, tuple[Any, ...], list[str], int]:
    """(module, inputs, input names, PyTorch MACs) of a family, built once per process."""
    if family not in _BUILT:
        module, inputs, names = CASES[family].build()
        _BUILT[family] = (module, inputs, names, torch_macs(module, inputs))
    return _BUILT[family]


def exported(family: str, exporter: str) -> Path:
    """The family's ONNX file from ``exporter``, exported once per process."""
    key = (family, exporter)
    if key not in _EXPORTED:
        module, inputs, names, _ = built(family)
        _EXPORTED[key] = export(module, inputs, names, _folder() / f"{family}-{exporter}.onnx", exporter)
    return _EXPORTED[key]


# family -> (optimizer model_type, num_heads): ONNX Runtime's transformer optimizer on the TorchScript export
OPTIMIZED = {"bert": ("bert", 2), "distilbert": ("bert", 2), "gpt2": ("gpt2", 2), "vit": ("vit", 2),
             "clip-text": ("clip", 2), "t5": ("t5", 2), "llama": ("gpt2", 4)}


def optimized(family: str, opt_level: int = 1, exporter: str = "torchscript") -> Path:
    """``onnxruntime.transformers.optimizer.optimize_model`` output (fused com.microsoft ops) of an export."""
    key = (family, f"{exporter}-ort-opt{opt_level}")
    if key not in _EXPORTED:
        from onnxruntime.transformers.optimizer import optimize_model

        model_type, heads = OPTIMIZED[family]
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            opt = optimize_model(str(exported(family, exporter)), model_type=model_type, num_heads=heads,
                                 hidden_size=32, opt_level=opt_level, use_gpu=False)
        path = _folder() / f"{family}-{key[1]}.onnx"
        opt.save_model_to_file(str(path))
        _EXPORTED[key] = path
    return _EXPORTED[key]


def int4_weights(family: str, exporter: str = "torchscript") -> Path:
    """The export with its MatMul weights quantized to 4 bits (com.microsoft MatMulNBits), as ONNX Runtime's
    ``MatMulNBitsQuantizer`` writes them for LLM deployment."""
    key = (family, f"{exporter}-int4")
    if key not in _EXPORTED:
        import logging

        import onnx
        from onnxruntime.quantization.matmul_nbits_quantizer import MatMulNBitsQuantizer

        logging.getLogger("onnxruntime.quantization.matmul_nbits_quantizer").setLevel(logging.WARNING)

        quant = MatMulNBitsQuantizer(onnx.load(str(exported(family, exporter))), block_size=16, is_symmetric=True)
        with contextlib.redirect_stdout(io.StringIO()), contextlib.redirect_stderr(io.StringIO()):
            quant.process()
        path = _folder() / f"{family}-{key[1]}.onnx"
        quant.model.save_model_to_file(str(path), use_external_data_format=False)
        _EXPORTED[key] = path
    return _EXPORTED[key]


# --- mixtures of experts --------------------------------------------------------------------------------------
# A sparse top-k MoE block at tiny sizes: hidden 64, SwiGLU experts of width 128, 4 experts, top-2, 8 tokens.
# The rows each routed expert gets depend on the routing, so the reference is a real run on CPU tensors with random
# weights (torch.utils.flop_counter sees the matrix products at the routed sizes), not the counter on meta tensors.
MOE = {"hidden": 64, "ffn": 128, "experts": 4, "top_k": 2, "tokens": 8}


def sparse_moe(
    experts_run: int | None = None, threshold: float | None = None, tokens: int = MOE["tokens"], equal: bool = False
) -> Any:
    """(module, (x,), ["x"]): Mixtral's sparse block written out (router, softmax, top-k, then a loop over the
    experts: ``torch.where(expert_mask[e])``, gather, SwiGLU expert, ``index_add_``). ``experts_run`` < experts
    leaves the last experts out of the loop; ``threshold`` routes to every expert whose probability passes it
    (no top-k: a data-dependent number of experts per token); ``equal`` finds expert e's tokens with
    ``torch.where(top_k_indices == e)`` instead of the one-hot mask."""
    import torch
    from torch import nn
    from torch.nn import functional as F

    d, f, e, k = MOE["hidden"], MOE["ffn"], MOE["experts"], MOE["top_k"]

    class Expert(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.w1, self.w3 = nn.Linear(d, f, bias=False), nn.Linear(d, f, bias=False)
            self.w2 = nn.Linear(f, d, bias=False)

        def forward(self, x: Any) -> Any:
            return self.w2(F.silu(self.w1(x)) * self.w3(x))

    class SparseMoe(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.gate = nn.Linear(d, e, bias=False)
            self.experts = nn.ModuleList(Expert() for _ in range(e))

        def forward(self, x: Any) -> Any:
            h = x.reshape(-1, d)
            probs = F.softmax(self.gate(h), dim=1, dtype=torch.float)
            if threshold is None:
                weights, chosen = torch.topk(probs, k, dim=-1)
                weights = weights / weights.sum(dim=-1, keepdim=True)
                mask = F.one_hot(chosen, num_classes=e).permute(2, 1, 0)  # [experts, k, tokens]
            else:
                mask = (probs > threshold).T[:, None, :]  # [experts, 1, tokens]
            out = torch.zeros_like(h)
            for i in range(experts_run or e):
                slot, token = torch.where(mask[i]) if not equal else reversed(torch.where(chosen == i))
                scale = weights[token, slot, None] if threshold is None else probs[token, i, None]
                y = self.experts[i](h[None, token].reshape(-1, d)) * scale
                out.index_add_(0, token, y.to(h.dtype))
            return out.reshape(x.shape)

    torch.manual_seed(0)
    return SparseMoe().eval(), (torch.randn(1, tokens, d),), ["x"]


def mixtral_block(experts_implementation: str = "eager") -> Any:
    """(module, (x,), ["x"]): transformers' MixtralSparseMoeBlock at the same sizes, with random weights."""
    import torch
    from transformers import MixtralConfig
    from transformers.models.mixtral.modeling_mixtral import MixtralSparseMoeBlock

    config = MixtralConfig(hidden_size=MOE["hidden"], intermediate_size=MOE["ffn"],
                           num_local_experts=MOE["experts"], num_experts_per_tok=MOE["top_k"])
    config._experts_implementation = experts_implementation
    torch.manual_seed(0)
    block = MixtralSparseMoeBlock(config).eval()
    for p in block.parameters():
        torch.nn.init.normal_(p, std=0.02)  # the experts' weights are made with torch.empty
    return block, (torch.randn(1, MOE["tokens"], MOE["hidden"]),), ["x"]


def real_macs(module: Any, inputs: tuple[Any, ...]) -> int:
    """MACs of the matrix products of one real CPU run of ``module`` (FLOPs / 2 of torch's flop counter)."""
    import torch
    from torch.utils.flop_counter import FlopCounterMode

    counter = FlopCounterMode(display=False)
    with torch.no_grad(), counter:
        module(*inputs)
    return counter.get_total_flops() // 2


# name -> builder, and the exporters that can export it (dynamo: torch.export refuses the data-dependent loop of
# transformers' eager experts; grouped_mm: aten::histc / grouped_mm have no ONNX conversion in either exporter)
MOE_CASES = {
    "sparse-moe": (sparse_moe, ("torchscript", "dynamo")),
    "sparse-moe (indices == e)": (lambda: sparse_moe(equal=True), ("torchscript", "dynamo")),
    "mixtral-block (eager experts)": (lambda: mixtral_block("eager"), ("torchscript",)),
    "mixtral-block (batched_mm experts)": (lambda: mixtral_block("batched_mm"), ("torchscript", "dynamo")),
    "mixtral-block (grouped_mm experts)": (lambda: mixtral_block("grouped_mm"), ()),
}
