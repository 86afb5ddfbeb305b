"""Benchmark (GPU): text generation of a Llama-3.2-1B-shaped decoder, measured against its counted bounds.

    python3 benchmarks/llm_gpu.py                       # batch 1, 8, 32; prompt 512; 128 new tokens
    python3 benchmarks/llm_gpu.py --batch-sizes 1 --runs 2   # a quick look

The model is built from a transformers LlamaConfig with the shapes of Llama-3.2-1B (16 layers, hidden 2048,
32 query / 8 KV heads of 64, SwiGLU 8192, vocab 128256, tied embeddings) with random weights in bf16: no
download. Each backend (transformers eager + DynamicCache; StaticCache + torch.compile reduce-overhead, i.e.
CUDA graphs, for the decode step) generates exactly 128 tokens greedily (EOS ignored) per run; TTFT and TPOT
come from CUDA events (``modelcost.bench.generation``). Every point is placed against the bounds counted on
the meta device for the GPU it ran on (TTFT and TPOT ratios, decode bandwidth utilisation, prefill MFU,
peak memory measured vs predicted). Repeatability: every point is measured twice (a new warm-up and new runs,
the same model and compiled step); the TPOT of the two is compared.

Prints a compact table; writes JSON to --json, or to $OUT/llm_gpu.json when OUT is set.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

LLAMA_32_1B = {  # the shapes of meta-llama/Llama-3.2-1B's config.json (no weights)
    "model_type": "llama", "architectures": ["LlamaForCausalLM"], "hidden_size": 2048, "intermediate_size": 8192,
    "num_hidden_layers": 16, "num_attention_heads": 32, "num_key_value_heads": 8, "head_dim": 64,
    "vocab_size": 128256, "max_position_embeddings": 131072, "rms_norm_eps": 1e-5, "rope_theta": 500000.0,
    "rope_scaling": {"factor": 32.0, "high_freq_factor": 4.0, "low_freq_factor": 1.0,
                     "original_max_position_embeddings": 8192, "rope_type": "llama3"},
    "tie_word_embeddings": True, "hidden_act": "silu", "attention_bias": False, "mlp_bias": False,
    "bos_token_id": 128000, "eos_token_id": 128001, "torch_dtype": "bfloat16",
}

TINY = {"hidden_size": 128, "intermediate_size": 256, "num_hidden_layers": 2, "num_attention_heads": 4,
        "num_key_value_heads": 2, "head_dim": 32, "vocab_size": 1000, "bos_token_id": 1, "eos_token_id": 2}


def _ratio(x: float | None, pct: bool = False) -> str:
    return "-" if x is None else (f"{100 * x:.0f}%" if pct else f"{x:.2f}")


def _table(report) -> list[str]:
    rows = [("backend            B  TTFT ms (bound, x)     TPOT p50 ms (bound, x)  p90/p99 ms     tok/s  BW util  "
             "MFU  peak GiB meas/pred (x)  status")]
    points = {(p.batch_size, p.prompt_len, p.gen_len): p for p in report.points}
    for r in report.benchmarks:
        if r.status != "ok":
            rows.append(f"{r.backend:<18} {r.batch_size:>2}  {r.status}: {r.reason}")
            continue
        pt = points[(r.batch_size, r.prompt_len, r.gen_len)]
        tb = r.ttft_ms / r.ttft_bound_ratio if r.ttft_bound_ratio else float("nan")
        pb = r.tpot_ms / r.tpot_bound_ratio if r.tpot_bound_ratio else float("nan")
        mem = (f"{r.peak_memory_bytes / 2**30:.2f}/{pt.predicted_peak_memory_bytes / 2**30:.2f} "
               f"({r.peak_memory_bytes / pt.predicted_peak_memory_bytes:.2f})") if r.peak_memory_bytes else "-"
        rows.append(
            f"{r.backend:<18} {r.batch_size:>2}  {r.ttft_ms:8.2f} ({tb:6.2f}, {_ratio(r.ttft_bound_ratio):>5})  "
            f"{r.tpot_ms:7.3f} ({pb:6.3f}, {_ratio(r.tpot_bound_ratio):>5})  "
            f"{r.tpot_stats.p90:6.3f}/{r.tpot_stats.p99:6.3f}  {r.tokens_per_second:7.0f}  "
            f"{_ratio(r.bandwidth_utilization, True):>6}  {_ratio(r.mfu, True):>4}  {mem:<22}  "
            f"{'unstable: ' + r.unstable if r.unstable else 'ok'}"
            + (f"  [{'; '.join(r.notes)}]" if r.notes else ""))
    return rows


def _repeatability(report) -> list[str]:
    """TPOT of the two measurements of each (backend, batch): how far apart, against the 2% target."""
    pairs: dict[tuple[str, int], list[float]] = {}
    for r in report.benchmarks:
        if r.status == "ok" and r.tpot_ms:
            pairs.setdefault((r.backend, r.batch_size), []).append(r.tpot_ms)
    return [f"repeatability {b} B={bs}: TPOT {t[0]:.3f} vs {t[1]:.3f} ms, {100 * abs(t[1] - t[0]) / t[0]:.2f}% apart "
            "(target < 2%)" for (b, bs), t in pairs.items() if len(t) == 2]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[1])
    ap.add_argument("--batch-sizes", default="1,8,32")
    ap.add_argument("--prompt-len", type=int, default=512)
    ap.add_argument("--gen-len", type=int, default=128)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--backends", default="hf-eager,hf-static-compile,vllm,sglang,tensorrt_llm")
    ap.add_argument("--json", default=None)
    ap.add_argument("--device", default="cuda", help="cpu: a smoke test of this script (with --tiny)")
    ap.add_argument("--tiny", action="store_true", help="2 layers, hidden 128: a smoke test, not a figure")
    args = ap.parse_args(argv)
    import torch

    from modelcost import api
    from modelcost.report.llm import to_document

    if args.device == "cuda" and not torch.cuda.is_available():
        print("no CUDA GPU: this benchmark measures on a GPU (modelcost llm --static works without one)")
        return 1
    start = time.perf_counter()
    folder = Path(tempfile.mkdtemp(prefix="llama-3.2-1b-shape-"))
    config = dict(LLAMA_32_1B, **(TINY if args.tiny else {}))
    (folder / "config.json").write_text(json.dumps(config))
    path = args.json or (os.path.join(os.environ["OUT"], "llm_gpu.json") if os.environ.get("OUT") else None)
    gpu = torch.cuda.get_device_name(0) if args.device == "cuda" else "cpu (smoke test)"
    backends = args.backends.split(",")
    report = None
    for batch in [int(b) for b in args.batch_sizes.split(",")]:  # one batch at a time: JSON written after each
        part = api.llm(str(folder), prompt_lens=[args.prompt_len], gen_lens=[args.gen_len], batch_sizes=[batch],
                       dtype="bf16", measure=True, backends=backends, runs=args.runs, repeats=2,
                       device=args.device)
        backends = [b for b in backends if b.startswith("hf-")]  # absent engines: reported once
        if report is None:
            report = part
        else:
            report.points += part.points
            report.benchmarks += part.benchmarks
        elapsed = time.perf_counter() - start
        print(f"batch {batch} done at {elapsed:.0f} s", file=sys.stderr, flush=True)
        doc = to_document(report, command="benchmarks/llm_gpu.py " + " ".join(sys.argv[1:]))
        doc.update({"gpu_name": gpu, "torch": torch.__version__, "elapsed_s": elapsed,
                    "repeatability": _repeatability(report)})
        if path:
            Path(path).write_text(json.dumps(doc, indent=2) + "\n")
    print(f"{gpu}; torch {torch.__version__}; Llama-3.2-1B shape, bf16, random weights; P={args.prompt_len}, "
          f"G={args.gen_len}, runs={args.runs} per measurement, each point measured twice; "
          f"{time.perf_counter() - start:.0f} s")
    print("\n".join(_table(report)))
    print("\n".join(_repeatability(report)))
    if path:
        print(f"JSON: {path}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
