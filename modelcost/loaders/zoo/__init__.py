"""The built-in model zoo, addressed as ``zoo:NAME``: architectures written here (torchvision-identical for
the CNNs), so that the figures are reproducible without torchvision or downloaded weights.

Each ``ZooEntry`` holds a factory (random init; the loader calls it under ``torch.device("meta")``), its
input specs with a symbolic ``batch`` dim (bound to ``--batch-size``, default 1) and, for transformers, a
``seq`` dim (images: ``height`` and ``width``) with a default (``--input-shape input_ids=1x512`` or
``x=1x3x64x64`` overrides it), the exclusive upper bound of
integer inputs (the vocabulary: realistic token ids), and the hand-derived parameter count.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from functools import partial

from modelcost.core.types import TensorSpec


@dataclass(frozen=True)
class ZooEntry:
    name: str
    factory: Callable[[], object]  # -> torch.nn.Module
    inputs: tuple[TensorSpec, ...]
    description: str
    dims: dict[str, int] = field(default_factory=dict)  # defaults of symbolic dims other than batch
    input_high: dict[str, int] = field(default_factory=dict)  # integer inputs take values in [0, high)
    params: int | None = None  # hand-derived parameter count (see the architecture's module docstring)

    def input_specs(self, batch_size: int = 1) -> list[TensorSpec]:
        """The default inputs with every symbolic dim bound (batch -> batch_size, others -> ``dims``)."""
        sizes = {"batch": batch_size, **self.dims}
        return [TensorSpec(s.name, tuple(sizes[d] if isinstance(d, str) else d for d in s.shape), s.dtype)
                for s in self.inputs]


def _image() -> tuple[TensorSpec, ...]:
    return (TensorSpec("x", ("batch", 3, "height", "width"), "float32"),)


_224 = {"height": 224, "width": 224}


def _tokens() -> tuple[TensorSpec, ...]:
    return (TensorSpec("input_ids", ("batch", "seq"), "int64"),)


def _resnet(name: str) -> Callable[[], object]:
    def build() -> object:
        from modelcost.loaders.zoo import resnet

        return getattr(resnet, name)()

    return build


def _mobilenet() -> object:
    from modelcost.loaders.zoo.mobilenet import mobilenet_v2

    return mobilenet_v2()


def _bert(**config: int) -> object:
    from modelcost.loaders.zoo.transformer import Bert, BertConfig

    return Bert(BertConfig(**config))


def _gpt2(**config: int) -> object:
    from modelcost.loaders.zoo.transformer import GPT2, GPT2Config

    return GPT2(GPT2Config(**config))


def _llama(preset: str) -> object:
    from modelcost.loaders.zoo.transformer import llama

    return llama(preset)


_ENTRIES = [
    ZooEntry("resnet18", _resnet("resnet18"), _image(), "ResNet-18 (torchvision layout), ImageNet head", _224,
             params=11_689_512),
    ZooEntry("resnet50", _resnet("resnet50"), _image(), "ResNet-50 v1.5 (torchvision layout), ImageNet head", _224,
             params=25_557_032),
    ZooEntry("mobilenet_v2", _mobilenet, _image(), "MobileNetV2 1.0 (torchvision layout), ImageNet head", _224,
             params=3_504_872),
    ZooEntry("bert-base", partial(_bert), _tokens(), "BERT-base-style encoder + pooler, 12 layers, hidden 768",
             {"seq": 128}, {"input_ids": 30522}, params=109_482_240),
    ZooEntry("bert-tiny", partial(_bert, hidden=128, layers=2, heads=2, intermediate=512), _tokens(),
             "BERT-style encoder, 2 layers, hidden 128 (fast tests)", {"seq": 128}, {"input_ids": 30522},
             params=4_385_920),
    ZooEntry("gpt2", partial(_gpt2), _tokens(), "GPT-2-small-style decoder, LM head tied to the embedding",
             {"seq": 1024}, {"input_ids": 50257}, params=124_439_808),
    ZooEntry("llama-7b", partial(_llama, "llama-7b"), _tokens(), "Llama-style decoder, 7B shape (MHA, SwiGLU, RMSNorm)",
             {"seq": 2048}, {"input_ids": 32000}, params=6_738_415_616),
    ZooEntry("llama-70b", partial(_llama, "llama-70b"), _tokens(),
             "Llama-style decoder, 70B shape (GQA 64/8 heads, SwiGLU, RMSNorm)", {"seq": 2048}, {"input_ids": 32000},
             params=68_976_648_192),
    ZooEntry("llama-tiny", partial(_llama, "llama-tiny"), _tokens(),
             "Llama-style decoder, 2 layers, hidden 128, GQA 4/2 heads (fast tests)", {"seq": 64},
             {"input_ids": 1000}, params=619_136),
]

ZOO: dict[str, ZooEntry] = {e.name: e for e in _ENTRIES}
