"""docs/REPORT_SCHEMA.md's `modelcost.llm/1` section cannot drift from the `llm` JSON: every documented path
exists in a real document (a CPU run of zoo:llama-tiny, measured with hf-eager, bounds and ratios against the
H100 SXM table entry), and every key of that document is documented."""

from __future__ import annotations

import json
import re
from pathlib import Path

from modelcost import api
from modelcost.analysis.llm_bounds import place_measured
from modelcost.core.assumptions import DataAssumption
from modelcost.hardware.specs import spec_from_table
from modelcost.report.llm import to_document

DOC = Path(__file__).resolve().parents[1] / "docs" / "REPORT_SCHEMA.md"
ROW = re.compile(r"^\| (llm[\w.\[\]]*) \| (.*?[^\\]) \|")  # the type column may hold an escaped \|
LEAF_TYPES = ("map", "stats", "list[string]")


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
    report.assumptions.append(DataAssumption("aten._local_scalar_dense", "m.py:1 (forward)", "example_inputs",
                                             ["input input_ids"], "True"))  # llama-tiny asks none: fill the list
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


def test_llm_schema_doc_matches_a_real_document() -> None:
    rows = _documented()
    doc = _real()
    assert doc["schema"] == "modelcost.llm/1"
    real = set(_paths(doc["llm"], "llm", rows)) - {"llm"}
    undocumented = sorted(real - set(rows))
    missing = sorted(set(rows) - real)
    assert not undocumented, f"keys in the JSON but not in docs/REPORT_SCHEMA.md: {undocumented}"
    assert not missing, f"documented keys absent from a real document: {missing}"
    point_keys = {"batch_size", "prompt_len", "gen_len", "kv_cache", "prefill", "decode",
                  "predicted_peak_memory_bytes", "bounds"}
    assert all(set(p) == point_keys for p in doc["llm"]["points"])
    assert point_keys <= set(doc["llm"])
