"""The power test of issue 27: a model whose environment variable makes it really slower, under the same name.

    make_model / example_inputs   the factory a sweep plan names (benchmarks/aa_power.toml: aa_power.py:make_model)
    python3 benchmarks/aa_power.py flops                 the FLOPs the slowdown adds at batch 1 and 64, counted by
                                                         modelcost (static analysis) with and without it
    python3 benchmarks/aa_power.py db DB RUN_A RUN_B     the same from a sweep database: each config's flops column

The base model is an MLP: 12 layers of Linear(8192, 8192) + ReLU on a (batch, 8192) input, built so that every
config of the plan is GPU-bound: at batch 1 each layer is a matrix-vector product reading its 268 MB of fp32
weights (about 0.75 ms a forward on an H200, 24 kernels launched in about 0.2 ms), so the host's pace, which moves
a launch-bound figure by up to 50% between processes on these VMs, is hidden behind the GPU's work. (The first
version, 24 layers of 4096, ran in 0.6 ms with 48 launches: launch-bound, and at batch 1 its noise hid +15%.)
MODELCOST_AA_SLOWER=1 adds two kinds of work:
- per sample: Linear(8192, 2400) + ReLU + Linear(2400, 8192), 4 x 8192 x 2400 = 78.6 MFLOP a sample, 4.88% of
  the base's 12 x 2 x 8192^2 = 1,610.6 MFLOP a sample;
- per batch: a 9045 x 9045 parameter matrix times a 9045 parameter vector, 2 x 9045^2 = 163.6 MFLOP whatever the
  batch (10.16% of one sample's base FLOPs), added to the output as its mean x 1e-9 so it is part of the forward.
  A matrix-vector product, like the base's layers at batch 1: its time follows its FLOPs as theirs do.
Together: +15.0% FLOPs at batch 1 ((78.6 + 163.6) / 1,610.6) and +5.0% at batch 64 ((64 x 78.6 + 163.6) /
(64 x 1,610.6)), as the issue asks (bias and ReLU FLOPs move these by under 0.1%).
"""

from __future__ import annotations

import os
import sys

import torch

WIDTH, LAYERS, HIDDEN, SQUARE = 8192, 12, 2400, 9045
SLOWER = "MODELCOST_AA_SLOWER"


class PowerMLP(torch.nn.Module):
    def __init__(self, slower: bool) -> None:
        super().__init__()
        self.body = torch.nn.Sequential(*[m for _ in range(LAYERS) for m in (torch.nn.Linear(WIDTH, WIDTH),
                                                                               torch.nn.ReLU())])
        self.slower = slower
        if slower:
            self.extra = torch.nn.Sequential(torch.nn.Linear(WIDTH, HIDDEN), torch.nn.ReLU(),
                                             torch.nn.Linear(HIDDEN, WIDTH))
            self.p = torch.nn.Parameter(torch.randn(SQUARE, SQUARE) / SQUARE)
            self.q = torch.nn.Parameter(torch.randn(SQUARE) / SQUARE)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        y = self.body(x)
        if self.slower:
            y = self.extra(y) + (self.p @ self.q).mean() * 1e-9
        return y


def make_model() -> torch.nn.Module:
    torch.manual_seed(0)
    return PowerMLP(os.environ.get(SLOWER, "") == "1").eval()


def example_inputs(batch_size: int = 1) -> list[torch.Tensor]:
    return [torch.randn(batch_size, WIDTH)]


def _flops(slower: bool, batch: int) -> int:
    from modelcost import api

    os.environ[SLOWER] = "1" if slower else ""
    return int(api.analyze_static(f"{os.path.abspath(__file__)}:make_model", batch_size=batch).compute.flops)


def _print_flops() -> None:
    for batch in (1, 64):
        base, slow = _flops(False, batch), _flops(True, batch)
        print(f"batch {batch}: {base / 1e9:.3f} GFLOP -> {slow / 1e9:.3f} GFLOP with {SLOWER}=1: "
              f"+{(slow - base) / 1e6:.1f} MFLOP (+{(slow / base - 1) * 100:.1f}%)")


def _print_db(path: str, run_a: str, run_b: str) -> None:
    sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    from modelcost.sweep.db import ResultsDB

    db = ResultsDB(path, create=False)
    runs = [db.resolve_run(run_a), db.resolve_run(run_b)]
    flops: dict[tuple[str, str, int], list[int | None]] = {}
    for i, run in enumerate(runs):
        for r in db.results("WHERE run_id = ? AND model_name = 'aa_power'", (run,)):
            flops.setdefault((r["backend"], r["precision"], r["batch_size"]), [None, None])[i] = r["flops"]
    for (backend, precision, batch), (fa, fb) in sorted(flops.items()):
        added = f"+{(fb - fa) / 1e6:.1f} MFLOP (+{(fb / fa - 1) * 100:.1f}%)" if fa and fb else "not counted"
        print(f"{backend} {precision} b{batch}: run {runs[0]} {fa} FLOPs, run {runs[1]} {fb} FLOPs: {added}")


if __name__ == "__main__":
    if sys.argv[1:2] == ["flops"]:
        _print_flops()
    elif sys.argv[1:2] == ["db"] and len(sys.argv) == 5:
        _print_db(*sys.argv[2:5])
    else:
        sys.exit(__doc__)
