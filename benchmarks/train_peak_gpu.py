"""The predicted training peak of a TransformerEncoder against a measured GPU step, with and without dropout in
the attention and the feed-forward (issue 25: which part a GPU keeps that the simulation does not). Each variant
is a factory file written to a temporary folder and measured by ``api.train`` as ``modelcost train`` does.

    PYTHONPATH=. python3 benchmarks/train_peak_gpu.py
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from modelcost import api  # noqa: E402
from modelcost.bench.base import BenchConfig  # noqa: E402

FACTORY = '''import torch


def make_model():
    layer = torch.nn.TransformerEncoderLayer(512, 8, 2048, dropout={ffn}, batch_first=True)
    layer.self_attn.dropout = {attn}
    return torch.nn.TransformerEncoder(layer, 4, enable_nested_tensor=False)


def example_inputs(batch_size=1):
    return [torch.randn(batch_size, 256, 512)]
'''


def main() -> None:
    with tempfile.TemporaryDirectory() as tmp:
        for ffn, attn in ((0.1, 0.1), (0.1, 0.0), (0.0, 0.0)):
            path = Path(tmp) / f"enc_{int(ffn * 10)}_{int(attn * 10)}.py"
            path.write_text(FACTORY.format(ffn=ffn, attn=attn))
            for precision in ("fp32", "amp_bf16"):
                report = api.train(f"{path}:make_model", batch_sizes=[16], precisions=[precision], device="cuda",
                                   bench_config=BenchConfig(min_time_s=0.2, min_iters=5, max_time_s=3.0, warmup=2))
                (r,) = report.benchmarks
                print(f"encoder ffn dropout {ffn} attention dropout {attn} {precision}: predicted "
                      f"{r.predicted_peak_bytes:,} B, measured {r.peak_memory_bytes:,} B "
                      f"({r.predicted_peak_bytes / r.peak_memory_bytes - 1:+.1%})", flush=True)


if __name__ == "__main__":
    main()
