"""Merge the JSON files of several ips_sweep.py runs of one model into one "fastest first" table per batch.

    python3 benchmarks/merge_ips.py "ResNet-50" out/ips/ips_resnet50_eager.json out/r/ips_resnet50_custom.json
"""

from __future__ import annotations

import json
import sys


def fmt(value: float | None, spec: str) -> str:
    return "-" if value is None else format(value, spec)


def table(title: str, files: list[str]) -> str:
    rows = []
    for name in files:
        with open(name) as fh:
            rows += [b for b in json.load(fh)["benchmarks"] if b["status"] == "ok"]
    out = [f"### {title}\n"]
    for batch in sorted({r["batch_size"] for r in rows}):
        ranked = sorted((r for r in rows if r["batch_size"] == batch), key=lambda r: -r["throughput_ips"])
        out += [f"**batch {batch}** (fastest first)\n",
                "| # | backend | precision | IPS | p50 ms | p99 ms | e2e p50 ms | peak GPU MiB | power W "
                "| cosine vs fp32 eager |",
                "|---|---|---|---:|---:|---:|---:|---:|---:|---:|"]
        for i, r in enumerate(ranked, 1):
            lat, e2e, acc = r["latency_ms"], r["e2e_latency_ms"] or {}, r.get("accuracy") or {}
            mem = r.get("gpu_memory_peak_bytes")
            ref = r["backend"] == "torch-eager" and r["precision"] == "fp32"
            mem_mib = None if mem is None else mem / 2**20
            cosine = "reference" if ref else fmt(acc.get("cosine"), ".6f")
            out.append(f"| {i} | {r['backend']} | {r['precision']} | {r['throughput_ips']:,.1f} | {lat['p50']:.3f} | "
                       f"{lat['p99']:.3f} | {fmt(e2e.get('p50'), '.3f')} | {fmt(mem_mib, ',.0f')} | "
                       f"{fmt(r.get('power_w_mean'), '.0f')} | {cosine} |")
        out.append("")
    return "\n".join(out)


if __name__ == "__main__":
    print(table(sys.argv[1], sys.argv[2:]))
