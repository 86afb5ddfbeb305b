"""The GEMM grid of a calibration (core/calibration.py, ``gemm_grid``): ``torch.mm`` of (M x K) @ (K x N) over
M in ``GRID_M`` and N, K in ``GRID_NK`` at each precision the GPU has a peak for, each timed inside a CUDA graph
(bench/calibrate.graph_time_us). A shape whose one call would take longer than ``MAX_CALL_MS`` at the dense peak
is left out (the predictor's interpolation drops that corner). The operands are contiguous views of one buffer
per operand, filled once, so the grid allocates three tensors per precision, not one per shape.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from modelcost.core.calibration import GRID_M, GRID_NK, GemmPoint
from modelcost.core.types import GpuSpec
from modelcost.hardware.tf32 import tf32_mode

GRID_TARGET_MS = 1.0  # one replay of each grid shape's graph: ~1 ms of calls (graph_time_us)


def gemm_grid(torch: Any, gpu: GpuSpec, progress: Callable[[str], None], dtypes: dict[str, Any],
              max_call_ms: float, time_us: Callable[..., float], device: str = "cuda") -> list[GemmPoint]:
    """The grid's measured points (module doc): ``dtypes`` precision -> torch dtype, ``time_us`` the graph timer
    (bench/calibrate.graph_time_us)."""
    points: list[GemmPoint] = []
    for precision, dtype in dtypes.items():
        if not gpu.peak_tflops.get(precision):
            continue
        peak = gpu.peak_tflops[precision] * 1e12
        progress(f"GEMM grid, {precision}")
        a_buf = torch.randn(GRID_M[-1] * GRID_NK[-1], device=device, dtype=dtype)
        b_buf = torch.randn(GRID_NK[-1] ** 2, device=device, dtype=dtype)
        c_buf = torch.empty(GRID_M[-1] * GRID_NK[-1], device=device, dtype=dtype)
        with tf32_mode(precision == "tf32"):
            for m in GRID_M:
                for n in GRID_NK:
                    for k in GRID_NK:
                        if 2 * m * n * k / peak * 1e3 > max_call_ms:
                            continue
                        a, b = a_buf[:m * k].view(m, k), b_buf[:k * n].view(k, n)
                        c = c_buf[:m * n].view(m, n)
                        t_us = time_us(torch, lambda a=a, b=b, c=c: torch.mm(a, b, out=c), target_ms=GRID_TARGET_MS)
                        points.append(GemmPoint(precision, m, n, k, round(t_us, 3)))
        del a_buf, b_buf, c_buf
        torch.cuda.empty_cache()
    return points
