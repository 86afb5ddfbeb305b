"""Static analysis of a full-size BERT-base TorchScript ONNX export: time and memory of `modelcost analyze --static`.

BertModel(BertConfig(attn_implementation="eager")) with random weights (110 M parameters, 440 MB of inline
weights in the .onnx file) is exported with torch.onnx.export(dynamo=False, opset_version=17) at input_ids and
attention_mask [1, 128], returning last_hidden_state and pooler_output. Each run is a fresh
`python3 -m modelcost analyze FILE --static --json OUT` process (interpreter start and imports included), timed
from the parent; its peak RSS and CPU time come from os.wait4. The MACs must be the hand-derived figure and the
result complete.

    python3 benchmarks/bench_bert_onnx_static.py [--repeats 5] [--write]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import platform
import subprocess
import sys
import tempfile
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(Path(__file__).resolve().parent))
BENCH_MD = ROOT / "BENCHMARKS.md"
SECTION = "## Static analysis of a BERT-base TorchScript ONNX export"
TARGET_S, TARGET_MB = 1.5, 300
SEQ = 128


def expected_macs(layers: int = 12, hidden: int = 768, heads: int = 12, ffn: int = 3072, seq: int = SEQ) -> int:
    """Per layer: q, k, v, out projections 4 * S*h*h; attention heads * S*S*(d + d) (QK^T and AV, d = h / heads);
    FFN 2 * S*h*I. Plus the pooler's h*h on the first token."""
    per_layer = 4 * seq * hidden * hidden + heads * seq * seq * 2 * (hidden // heads) + 2 * seq * hidden * ffn
    return layers * per_layer + hidden * hidden


def export_bert(folder: Path) -> Path:
    import torch
    from transformers import BertConfig, BertModel

    torch.manual_seed(0)
    bert = BertModel(BertConfig(attn_implementation="eager")).eval()

    class Wrapper(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert

        def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> tuple[torch.Tensor, ...]:
            out = self.bert(input_ids=input_ids, attention_mask=attention_mask)
            return out.last_hidden_state, out.pooler_output

    ids = torch.randint(0, 30522, (1, SEQ))
    path = folder / "bert-base-torchscript.onnx"
    with warnings.catch_warnings(), contextlib.redirect_stderr(io.StringIO()):
        warnings.simplefilter("ignore")
        torch.onnx.export(Wrapper().eval(), (ids, torch.ones(1, SEQ, dtype=torch.long)), str(path), dynamo=False,
                          opset_version=17, input_names=["input_ids", "attention_mask"])
    return path


def run_child(path: Path, json_path: Path) -> dict[str, float]:
    """One `modelcost analyze --static` in a fresh process: wall time from the parent, CPU time and peak RSS
    of that process alone (os.wait4)."""
    env = dict(os.environ, PYTHONPATH=str(ROOT) + os.pathsep + os.environ.get("PYTHONPATH", ""))
    start = time.perf_counter()
    proc = subprocess.Popen([sys.executable, "-m", "modelcost", "analyze", str(path), "--static", "--top", "0",
                             "--json", str(json_path)], cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE)
    err = proc.stderr.read()  # type: ignore[union-attr]
    _, status, usage = os.wait4(proc.pid, 0)
    wall_s = time.perf_counter() - start
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"analysis failed (exit {proc.returncode}):\n{err.decode()}")
    # Linux: ru_maxrss in KiB
    return {"wall_s": wall_s, "cpu_s": usage.ru_utime + usage.ru_stime, "rss_mb": usage.ru_maxrss / 1024}


def _median(values: list[float]) -> float:
    values = sorted(values)
    mid = len(values) // 2
    return values[mid] if len(values) % 2 else (values[mid - 1] + values[mid]) / 2


def measure(repeats: int) -> dict[str, object]:
    with tempfile.TemporaryDirectory(prefix="modelcost-bert-") as tmp:
        # Exported in a child of its own: a child forked from a parent holding torch and the model would start
        # its peak-RSS accounting at the parent's size.
        subprocess.run([sys.executable, __file__, "--export-to", tmp], check=True, cwd=ROOT)
        path = Path(tmp) / "bert-base-torchscript.onnx"
        size = path.stat().st_size
        runs = [run_child(path, Path(tmp) / f"r{i}.json") for i in range(repeats)]
        doc = json.loads((Path(tmp) / "r0.json").read_text())
    compute = doc["cost"]["compute"] if "cost" in doc else doc["compute"]
    return {
        "runs": runs, "file_bytes": size, "rss_max_mb": max(r["rss_mb"] for r in runs), "macs": compute["macs"],
        "complete": compute["complete"], "expected_macs": expected_macs(),
        "params": (doc.get("cost") or doc)["params"]["total"],
        "wall_median_s": _median([r["wall_s"] for r in runs]), "wall_min_s": min(r["wall_s"] for r in runs),
        "cpu_median_s": _median([r["cpu_s"] for r in runs]), "load_avg_1min": os.getloadavg()[0],
    }


def render(r: dict[str, object], command: str) -> str:
    import onnx
    import onnxruntime
    import torch
    import transformers

    ok_time = r["wall_median_s"] < TARGET_S  # type: ignore[operator]
    ok_rss = r["rss_max_mb"] < TARGET_MB  # type: ignore[operator]
    exact = r["macs"] == r["expected_macs"] and r["complete"]
    verdict = "pass" if ok_time and ok_rss and exact else "FAIL"
    machine = (f"Machine: {platform.machine()}, {os.cpu_count()} CPU cores, Python {platform.python_version()}, "
               f"torch {torch.__version__}, transformers {transformers.__version__}, onnx {onnx.__version__}, "
               f"onnxruntime {onnxruntime.__version__}; {time.strftime('%Y-%m-%d')}.")
    setup = ("BertModel(BertConfig(attn_implementation=\"eager\")), random weights, exported with the TorchScript "
             f"exporter (opset 17) at input_ids / attention_mask 1x128: a {r['file_bytes']:,}-byte file with the "
             "weights inline. Each run is a fresh `python3 -m modelcost analyze FILE --static --json OUT` process "
             "(interpreter start and imports included); CPU time and peak RSS of that process (os.wait4; the model "
             f"is exported in another process first); {len(r['runs'])} runs.")
    load = (f"Load average (1 min) when the runs ended: {r['load_avg_1min']:.2f} on {os.cpu_count()} cores "
            "(other work on the machine stretches the wall time; the CPU time does not depend on it).")
    derivation = ("The hand derivation is `expected_macs` in the script: per layer 4·S·h² projections + "
                  "heads·S²·2d attention + 2·S·h·I FFN, times 12, plus the pooler's h².")
    return "\n".join([
        SECTION, "", f"Command: `{command}`", "", machine, "", setup, "",
        "| metric | result | target |", "|---|---:|---:|",
        f"| wall time per analysis, median (min) | {r['wall_median_s']:.2f} s ({r['wall_min_s']:.2f} s) "
        f"| < {TARGET_S} s |",
        f"| CPU time (user + system) per analysis, median | {r['cpu_median_s']:.2f} s | |",
        f"| peak RSS, max over runs | {r['rss_max_mb']:.0f} MB | < {TARGET_MB} MB |",
        f"| MACs (hand-derived {r['expected_macs']:,}) | {r['macs']:,} {'matches' if exact else 'DIFFERS'} | exact |",
        f"| compute.complete | {str(r['complete']).lower()} | true |",
        f"| parameters | {r['params']:,} | |", "",
        derivation, "", load, "", f"Result: **{verdict}**.", "",
    ])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--write", action="store_true", help="record the results in BENCHMARKS.md")
    parser.add_argument("--export-to", help=argparse.SUPPRESS)  # internal: export the model into this folder
    args = parser.parse_args(argv)
    if args.export_to:
        export_bert(Path(args.export_to))
        return 0
    res = measure(args.repeats)
    text = render(res, "python3 benchmarks/bench_bert_onnx_static.py --write")
    print(text)
    if args.write:
        from bench_md import write_section

        write_section(BENCH_MD, SECTION, text)
        print(f"written to {BENCH_MD}")
    return 1 if "**FAIL**" in text else 0


if __name__ == "__main__":
    raise SystemExit(main())
