"""The zoo: exact torchvision figures for the CNNs, hand-derived figures for the transformers, meta-only
building for the large ones, and real instantiation of the small ones."""

from __future__ import annotations

import resource

import pytest
import torch

from modelcost import api
from modelcost.loaders.base import LoadOptions
from modelcost.loaders.torch_loader import load_torch
from modelcost.loaders.zoo import ZOO
from modelcost.loaders.zoo.transformer import GPT2, GPT2Config
from tests.conftest import requires_cuda


def bottleneck_params(inp: int, p: int, downsample: bool) -> int:
    """1x1 inp->p, 3x3 p->p, 1x1 p->4p, each followed by a BN (2 params per channel); downsample 1x1 + BN."""
    convs = inp * p + p * p * 9 + p * 4 * p
    bns = 2 * p + 2 * p + 2 * 4 * p
    return convs + bns + ((inp * 4 * p + 2 * 4 * p) if downsample else 0)


def test_resnet50_exact():
    r = api.analyze_static("zoo:resnet50")
    # conv1 64*3*7*7 + bn1 128; layer1 (p 64, in 64) 1 block with downsample + 2 (in 256); layer2 (p 128) 1 + 3;
    # layer3 (p 256) 1 + 5; layer4 (p 512) 1 + 2; fc 2048*1000 + 1000
    params = (
        9_408 + 128
        + bottleneck_params(64, 64, True) + 2 * bottleneck_params(256, 64, False)  # 75,008 + 2 x 70,400
        + bottleneck_params(256, 128, True) + 3 * bottleneck_params(512, 128, False)  # 379,392 + 3 x 280,064
        + bottleneck_params(512, 256, True) + 5 * bottleneck_params(1024, 256, False)  # 1,512,448 + 5 x 1,117,184
        + bottleneck_params(1024, 512, True) + 2 * bottleneck_params(2048, 512, False)  # 6,039,552 + 2 x 4,462,592
        + 2_049_000
    )
    assert r.params.total == params == 25_557_032
    # MACs: conv1 112*112*64*3*49 = 118,013,952
    # layer1 at 56x56: first block 3136*(64*64 + 64*576 + 256*64 + 256*64) = 231,211,008,
    #   2 more 3136*(64*256 + 64*576 + 256*64) = 2 x 218,365,952 -> 667,942,912
    # layer2: first 3136*128*256 + 784*(128*1152 + 512*128 + 512*256) = 372,506,624, 3 x 218,365,952 -> 1,027,604,480
    # layer3: 372,506,624 + 5 x 218,365,952 = 1,464,336,384; layer4: 372,506,624 + 2 x 218,365,952 = 809,238,528
    # fc 2048*1000 = 2,048,000
    macs = 118_013_952 + 667_942_912 + 1_027_604_480 + 1_464_336_384 + 809_238_528 + 2_048_000
    assert r.compute.macs == macs == 4_089_184_256
    assert r.compute.uncounted_ops == {}
    assert r.params.buffers == 53_173  # BN running mean + var (2 x 26,560 channels) + 53 num_batches_tracked
    conv1 = next(layer for layer in r.layers if layer.name == "conv1")
    assert (conv1.op, conv1.macs, conv1.output_shapes) == ("Conv2d", 118_013_952, [(1, 64, 112, 112)])


def test_resnet18_exact():
    r = api.analyze_static("zoo:resnet18")
    # conv1 9,408 + bn 128; layer1: 4 convs 64*64*9 + 4 BN(64) = 147,968; layer2: 128*64*9 + 3 * 128*128*9
    # + ds 128*64 + 5 BN(128) = 525,568; layer3: 2,099,712; layer4: 8,393,728; fc 513,000
    assert r.params.total == 9_408 + 128 + 147_968 + 525_568 + 2_099_712 + 8_393_728 + 513_000 == 11_689_512
    # conv1 118,013,952; layer1 4 x 56*56*64*576 = 462,422,016; layers 2-4 each: first 3x3 (stride 2)
    # 57,802,752 + 3 x 115,605,504 + downsample 6,422,528 = 411,041,792; fc 512,000
    # (torchvision's documented 1.81 GFLOPS; fvcore gives conv 1,813,561,344 + linear 512,000)
    assert r.compute.macs == 118_013_952 + 462_422_016 + 3 * 411_041_792 + 512_000 == 1_814_073_344


def test_mobilenet_v2_exact():
    r = api.analyze_static("zoo:mobilenet_v2")
    assert r.params.total == 3_504_872
    # features.0 112*112*32*27; each inverted residual: expand H*H*in*hid + depthwise Ho*Ho*hid*9 + project
    # Ho*Ho*hid*out (block by block below); features.18 7*7*320*1280; classifier 1280*1000
    blocks = [
        10_838_016, 10_035_200, 29_202_432, 25_740_288, 15_466_752, 10_988_544, 10_988_544, 7_564_032, 10_311_168,
        10_311_168, 10_311_168, 12_719_616, 22_692_096, 22_692_096, 15_607_872, 15_476_160, 15_476_160,
        23_002_560, 20_070_400, 1_280_000,
    ]
    assert blocks[2] == 112 * 112 * 16 * 96 + 56 * 56 * 96 * 9 + 56 * 56 * 96 * 24  # e.g. features.2
    assert r.compute.macs == sum(blocks) == 300_774_272


def test_bert_base():
    r = api.analyze_static("zoo:bert-base")
    assert r.params.total == 109_482_240  # derivation in modelcost/loaders/zoo/transformer.py
    assert r.params.buffers == 512  # position_ids
    # seq 128, per layer: q, k, v 3 * 128*768*768 + attention 12 heads * 128*128*(64+64) + out 128*768*768
    # + FFN 2 * 128*768*3072 = 931,135,488; x 12 + pooler 768*768
    per_layer = 3 * 128 * 768 * 768 + 12 * 128 * 128 * 128 + 128 * 768 * 768 + 2 * 128 * 768 * 3072
    assert r.compute.macs == 12 * per_layer + 768 * 768 == 11_174_215_680
    assert [o.shape for o in r.outputs] == [(1, 128, 768), (1, 768)]


def test_gpt2_tied_embeddings_counted_once():
    r = api.analyze_static("zoo:gpt2", input_shapes={"input_ids": (1, 16)})
    assert r.params.total == 124_439_808  # not 163,037,184: lm_head.weight is wte.weight
    assert r.params.shared == 50_257 * 768
    lm_head = next(layer for layer in r.layers if layer.name == "lm_head")
    assert lm_head.params == 50_257 * 768  # the layer's own (tied) weight
    # seq 16, per layer: c_attn 16*768*2304 + attention 12 * 16*16*128 + c_proj 16*768*768 + MLP 2 * 16*768*3072
    per_layer = 16 * 768 * 2304 + 12 * 16 * 16 * 128 + 16 * 768 * 768 + 2 * 16 * 768 * 3072
    assert r.compute.macs == 12 * per_layer + 16 * 768 * 50_257 == 1_981_231_104


def test_llama_7b_on_meta_costs_no_weight_memory():
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    r = api.analyze_static("zoo:llama-7b", input_shapes={"input_ids": (1, 8)})
    grown_kib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss - before
    assert grown_kib < 500 * 1024  # the fp32 weights would be 27 GB
    assert r.params.total == 6_738_415_616  # derivation in transformer.py
    # seq 8, per layer: q, k, v, o 4 * 8*4096*4096 + attention 32 * 8*8*(128+128) + MLP 3 * 8*4096*11008
    per_layer = 4 * 8 * 4096 * 4096 + 32 * 8 * 8 * 256 + 3 * 8 * 4096 * 11008
    assert r.compute.macs == 32 * per_layer + 8 * 4096 * 32000 == 52_873_396_224
    assert r.storage.bytes == 4 * 6_738_415_616 and r.storage.fp16_bytes == 2 * 6_738_415_616


def test_llama_70b_builds_on_meta():
    loaded = load_torch("zoo:llama-70b", LoadOptions())
    tensors = [*loaded.module.parameters(), *loaded.module.buffers()]
    assert all(t.device.type == "meta" for t in tensors)
    # per layer q 8192^2 + k, v 2 * 8192*1024 + o 8192^2 + MLP 3 * 8192*28672 + norms 2 * 8192 = 855,654,400
    assert sum(p.numel() for p in loaded.module.parameters()) == 80 * 855_654_400 + 2 * 32000 * 8192 + 8192
    assert ZOO["llama-70b"].params == 68_976_648_192
    assert loaded.inputs[0].shape == (1, 2048)


def test_llama_tiny_gqa():
    r = api.analyze_static("zoo:llama-tiny")
    # per layer q 128*128 + k, v 2 * 128*64 + o 128*128 + MLP 3 * 128*344 + norms 256 = 181,504;
    # 2 layers + embed 1000*128 + lm_head 128*1000 + norm 128
    assert r.params.total == 2 * 181_504 + 2 * 128_000 + 128 == ZOO["llama-tiny"].params
    # seq 64: q 64*128*128, k, v 2 * 64*128*64, o 64*128*128, attention 4 heads * 64*64*(32+32), MLP 3 * 64*128*344
    per_layer = 2 * 64 * 128 * 128 + 2 * 64 * 128 * 64 + 4 * 64 * 64 * 64 + 3 * 64 * 128 * 344
    assert r.compute.macs == 2 * per_layer + 64 * 128 * 1000
    assert r.compute.uncounted_ops == {}


@pytest.mark.parametrize("name", sorted(ZOO))
def test_every_entry_builds_on_meta_with_its_documented_params(name):
    loaded = load_torch(f"zoo:{name}", LoadOptions(batch_size=2))
    assert loaded.inputs[0].shape[0] == 2
    assert sum(p.numel() for p in set(loaded.module.parameters())) == ZOO[name].params


@pytest.mark.parametrize(("name", "shapes"), [("resnet18", {"x": (2, 3, 64, 64)}), ("bert-tiny", None),
                                              ("llama-tiny", None), ("mobilenet_v2", {"x": (1, 3, 64, 64)})])
def test_small_entries_run_for_real(name, shapes):
    loaded = load_torch(f"zoo:{name}", LoadOptions(input_shapes=shapes or {}))
    model = loaded.instantiate("cpu")
    inputs = loaded.make_inputs(2)
    assert all(p.device.type == "cpu" for p in model.parameters()) and not model.training
    with torch.no_grad():
        out = model(*inputs)
    first = out[0] if isinstance(out, tuple) else out
    assert first.shape[0] == 2 and torch.isfinite(first).all()
    for t, spec in zip(inputs, loaded.input_specs(2), strict=True):
        assert tuple(t.shape) == spec.shape
        if not t.is_floating_point():
            assert 0 < int(t.min()) and int(t.max()) < loaded.input_high["input_ids"]  # real token ids, not zeros


def test_tied_weights_survive_real_instantiation():
    model = GPT2(GPT2Config(vocab_size=100, hidden=32, layers=1, heads=2, max_positions=16))
    assert model.lm_head.weight is model.transformer.wte.weight


def test_entry_default_input_specs_are_concrete():
    assert [(s.name, s.shape) for s in ZOO["resnet50"].input_specs()] == [("x", (1, 3, 224, 224))]
    assert ZOO["gpt2"].input_specs(4)[0].shape == (4, 1024)


@pytest.mark.gpu
@requires_cuda
@pytest.mark.parametrize("name", ["resnet18", "bert-tiny", "llama-tiny"])
def test_small_entries_run_on_cuda_in_half_precision(name):
    loaded = load_torch(f"zoo:{name}", LoadOptions())
    model = loaded.instantiate("cuda", dtype=torch.float16)
    inputs = loaded.make_inputs(2, device="cuda", dtype=torch.float16)
    with torch.no_grad():
        out = model(*inputs)
    first = out[0] if isinstance(out, tuple) else out
    assert first.device.type == "cuda" and first.dtype == torch.float16 and torch.isfinite(first).all()
