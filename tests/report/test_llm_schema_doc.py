"""docs/REPORT_SCHEMA.md's `modelcost.llm/1` section cannot drift from the `llm` JSON: every documented path
exists in a real document (a CPU run of zoo:llama-tiny, measured with hf-eager, bounds and ratios against the
H100 SXM table entry; and a static run of a tiny DeepSeek-V2 config for the multi-head latent attention keys),
and every key of those documents is documented."""

from __future__ import annotations

import json
import re
from pathlib import Path

from modelcost import api
from modelcost.analysis.llm_bounds import place_measured
from modelcost.core.llm import ExpertReads, LayerKind, LlmPrediction, MoeSpec, RepeatedLayers, Routing
from modelcost.core.types import LatencyPrediction
from modelcost.core.assumptions import DataAssumption
from modelcost.hardware.specs import spec_from_table
from modelcost.report.llm import to_document

DOC = Path(__file__).resolve().parents[2] / "docs" / "REPORT_SCHEMA.md"
ROW = re.compile(r"^\| (llm[\w.\[\]]*) \| (.*?[^\\]) \|")  # the type column may hold an escaped \|
LEAF_TYPES = ("map", "stats", "list[string]", "latency prediction")


def _documented() -> dict[str, str]:
    text = DOC.read_text()
    section = text[text.index("## Generation (`modelcost llm`)"):]
    return {m.group(1): m.group(2).strip() for line in section.splitlines() if (m := ROW.match(line))}


def _real() -> dict:
    gpu = spec_from_table("H100 SXM")
    report = api.llm("zoo:llama-tiny", prompt_lens=[16], gen_lens=[5], batch_sizes=[1], dtype="fp32",
                     target_gpu=gpu, measure=True, backends=["hf-eager", "vllm"], runs=1, device="cpu")
    for r in report.benchmarks:
        place_measured(r, report.points[0], report, gpu)  # what a GPU run fills (ratios), here from the table
    report.uncounted["aten.example"] = 1  # a real run has none: fill the map so its path resolves
    # a dense model has no routed experts: fill the MoE objects so that their paths resolve
    report.moe = MoeSpec(1, 4, 2, 10, 20, 40, 80, Routing("file", None, "shares.json", [[0.25] * 4]), "grouped_mm")
    for point in report.points:
        point.prefill.experts_read = ExpertReads(16, 4.0, 80)
        point.decode.experts_read = ExpertReads(1, 2.0, 40)
    if report.repeated_layers is None:  # fill the object (llama-tiny repeats its layer 0 for layer 1 today)
        report.repeated_layers = RepeatedLayers(2, 2, 1, [LayerKind("LlamaDecoderLayer", 0, 2)])
    report.assumptions.append(DataAssumption("aten._local_scalar_dense", "m.py:1 (forward)", "example_inputs",
                                             ["input input_ids"], "True"))  # llama-tiny asks none: fill the list
    report.predictions.append(LlmPrediction(16, 5, *(LatencyPrediction("H100 SXM", "hf-eager", "fp32", 1, 1.0, 1.0,
                                                                       0.0, 10, "H100 SXM") for _ in range(2))))
    return json.loads(json.dumps(to_document(report)))


def _real_mla(tmp_path: Path) -> dict:
    config = {"model_type": "deepseek_v2", "hidden_size": 32, "intermediate_size": 48, "num_hidden_layers": 1,
              "num_attention_heads": 2, "num_key_value_heads": 2, "q_lora_rank": None, "kv_lora_rank": 8,
              "qk_nope_head_dim": 4, "qk_rope_head_dim": 2, "v_head_dim": 4, "vocab_size": 64,
              "max_position_embeddings": 64, "tie_word_embeddings": False, "first_k_dense_replace": 1,
              "n_routed_experts": 2, "moe_intermediate_size": 16}
    (tmp_path / "config.json").write_text(json.dumps(config))
    report = api.llm(str(tmp_path / "config.json"), prompt_lens=[4], gen_lens=[3], batch_sizes=[1], dtype="fp32")
    return json.loads(json.dumps(to_document(report)))


def _paths(obj, prefix: str, rows: dict[str, str]):
    if not prefix.endswith("[]"):
        yield prefix
    if rows.get(prefix, "").startswith(LEAF_TYPES) or prefix == "llm.points":
        return
    if isinstance(obj, dict):
        for k, v in obj.items():
            yield from _paths(v, f"{prefix}.{k}", rows)
    elif isinstance(obj, list) and obj and isinstance(obj[0], dict):
        for item in obj:
            yield from _paths(item, prefix + "[]", rows)


def test_llm_schema_doc_matches_a_real_document(tmp_path) -> None:
    rows = _documented()
    doc, mla = _real(), _real_mla(tmp_path)
    assert doc["schema"] == mla["schema"] == "modelcost.llm/1"
    assert doc["llm"]["mla"] is None and mla["llm"]["mla"] is not None
    real = (set(_paths(doc["llm"], "llm", rows)) | set(_paths(mla["llm"], "llm", rows))) - {"llm"}
    undocumented = sorted(real - set(rows))
    missing = sorted(set(rows) - real)
    assert not undocumented, f"keys in the JSON but not in docs/REPORT_SCHEMA.md: {undocumented}"
    assert not missing, f"documented keys absent from a real document: {missing}"
    point_keys = {"batch_size", "prompt_len", "gen_len", "kv_cache", "prefill", "decode",
                  "predicted_peak_memory_bytes", "bounds", "decode_absorbed"}
    assert all(set(p) == point_keys for p in doc["llm"]["points"] + mla["llm"]["points"])
    assert point_keys <= set(doc["llm"])
