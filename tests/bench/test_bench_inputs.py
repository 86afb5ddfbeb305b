"""Benchmark inputs are realistic (never zeros) and the same for every backend."""

from __future__ import annotations

import numpy as np
import onnx
import torch
from onnx import TensorProto, helper

from modelcost.bench.inputs import make_host_inputs, onnx_int_ranges, torch_int_ranges
from modelcost.core.types import TensorSpec


def test_floats_are_normal_and_seeded() -> None:
    specs = [TensorSpec("x", (4, 3, 8, 8), "float32"), TensorSpec("h", (2, 5), "float16")]
    a, notes = make_host_inputs(specs, seed=3)
    b, _ = make_host_inputs(specs, seed=3)
    assert a[0].dtype == np.float32 and a[1].dtype == np.float16 and a[0].shape == (4, 3, 8, 8)
    assert np.array_equal(a[0], b[0]) and np.count_nonzero(a[0]) == a[0].size
    assert abs(float(a[0].mean())) < 0.2 and 0.8 < float(a[0].std()) < 1.2  # 768 N(0,1) draws
    assert notes == []


def test_token_ids_mask_and_segments() -> None:
    specs = [TensorSpec("input_ids", (8, 128), "int64"), TensorSpec("attention_mask", (8, 128), "int64"),
             TensorSpec("token_type_ids", (8, 128), "int64"), TensorSpec("position_ids", (8, 128), "int64")]
    ids, mask, seg, pos = make_host_inputs(specs, int_high={"input_ids": 30522}, seed=0)[0]
    assert ids.min() >= 0 and ids.max() < 30522 and len(np.unique(ids)) > 500  # uniform over the vocab
    assert (mask == 1).all()
    assert set(np.unique(seg)) == {0, 1}
    assert (pos[3] == np.arange(128)).all()


def test_unknown_vocab_gives_zero_or_one_and_a_note() -> None:
    arrays, notes = make_host_inputs([TensorSpec("ids", (2, 16), "int32")], seed=0)
    assert set(np.unique(arrays[0])) <= {0, 1} and arrays[0].dtype == np.int32
    assert "unknown" in notes[0]


def test_onnx_gather_reveals_the_table_size() -> None:
    # ids -> Cast -> Gather(data=emb[1000, 16]); pos -> Gather(data=pos_emb[64, 16])
    emb = helper.make_tensor("emb", TensorProto.FLOAT, [1000, 16], [0.0] * 16000)
    pemb = helper.make_tensor("pemb", TensorProto.FLOAT, [64, 16], [0.0] * 1024)
    nodes = [helper.make_node("Cast", ["ids"], ["ids32"], to=TensorProto.INT32),
             helper.make_node("Gather", ["emb", "ids32"], ["e"]),
             helper.make_node("Gather", ["pemb", "pos"], ["p"]),
             helper.make_node("Add", ["e", "p"], ["y"])]
    graph = helper.make_graph(
        nodes, "g",
        [helper.make_tensor_value_info("ids", TensorProto.INT64, ["b", 8]),
         helper.make_tensor_value_info("pos", TensorProto.INT64, ["b", 8])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["b", 8, 16])], [emb, pemb])
    assert onnx_int_ranges(helper.make_model(graph)) == {"ids": 1000, "pos": 64}
    assert onnx.checker.check_model(helper.make_model(graph)) is None


def test_torch_probe_finds_the_embedding_an_input_feeds() -> None:
    class Enc(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.words = torch.nn.Embedding(777, 8)
            self.types = torch.nn.Embedding(2, 8)

        def forward(self, ids: torch.Tensor, types: torch.Tensor) -> torch.Tensor:
            return self.words(ids) + self.types(types)

    specs = [TensorSpec("ids", (1, 4), "int64"), TensorSpec("types", (1, 4), "int64")]
    assert torch_int_ranges(Enc(), specs) == {"ids": 777, "types": 2}
    assert torch_int_ranges(torch.nn.Linear(4, 2), [TensorSpec("x", (1, 4), "float32")]) == {}
