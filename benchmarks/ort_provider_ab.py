"""ONNX Runtime's CUDA EP with ``use_tf32`` off against on, for fp16 sessions too, and where a slow ONNX Runtime
forward spends its time, op type by op type (issue 28, the seventeenth set).

Two questions from the seventeenth held-out set (BENCHMARKS.md):
* modelcost passes ``use_tf32=0`` to every ort-cuda session that is not tf32, fp16 ones included. Does that flag
  change an fp16 session's kernels (tensor-core conv engines left out), so that every ORT fp16 figure so far was
  measured slower than ONNX Runtime runs it by default? Each net here is timed A/B: the same fp16 (and fp32) file,
  two sessions that differ only in ``use_tf32``, interleaved in rounds.
* The Granite-speech encoder ran 7-18x slower under ort-cuda than under torch eager. ``--profile`` adds ONNX
  Runtime's own profile of one forward of the first session of each net: device time per op type (the node
  events ONNX Runtime writes), so the op that takes the time is named.

Each model is exported as the ort backends export it (``BenchModel.onnx_file``: modelcost's export cache) and its
fp16 copy made as they make it (``bench.backends.ort.fp16_copy``). Timing: inputs and outputs bound on the GPU
(I/O binding), 10 warm-up runs, then ``--rounds`` rounds of ``--runs`` forwards per session, each round's mean
taken between two synchronizes; the median round is reported with the rounds' spread. Kernel time is excluded
from nothing: the figure is a forward's wall time on a warm session, host issue included, no host-device copy.

    # on a CUDA machine with onnxruntime-gpu
    python3 benchmarks/ort_provider_ab.py [--nets a,b] [--profile] [--out FILE.json]
"""

from __future__ import annotations

import argparse
import collections
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

# name -> batch sizes of the A/B; each model's source and input spec are the validation's (predict_validate.MODELS)
NETS = {"granite_speech_encoder": (1,), "shufflenet_v1_g3_ish": (64,), "replknet31b_ish": (64,),
        "darknet53_ish": (64,), "efficientvit_b1_ish": (64,), "resnet50": (64,)}


def load(name: str, batch: int, cache_dir: Path):  # noqa: ANN201
    """(the ONNX export's path, the input name -> shape) as the ort backends see the model."""
    from modelcost.runs.model import RunOptions
    from modelcost.runs.model import load as load_model

    from predict_validate import MODELS

    source, spec = MODELS[name]
    model = load_model(source, RunOptions(batch_size=batch, input_shapes=(spec.replace("B", str(batch), 1),)))
    bench = model.bench_model()
    return bench.onnx_file(cache_dir), bench


def session(ort, path: Path, use_tf32: str, profile_prefix: str | None = None):  # noqa: ANN001, ANN201
    options = ort.SessionOptions()
    options.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    options.log_severity_level = 3
    if profile_prefix:
        options.enable_profiling = True
        options.profile_file_prefix = profile_prefix
    cuda = {"device_id": "0", "use_tf32": use_tf32}
    return ort.InferenceSession(str(path), sess_options=options, providers=[("CUDAExecutionProvider", cuda)])


def binder(sess, inputs: list):  # noqa: ANN001, ANN201
    """An I/O binding of the session's inputs, in order, to CUDA tensors; every output left on the device."""
    binding = sess.io_binding()
    for arg, t in zip(sess.get_inputs(), inputs, strict=True):
        binding.bind_input(arg.name, "cuda", 0, _np_type(t), list(t.shape), t.data_ptr())
    for out in sess.get_outputs():
        binding.bind_output(out.name, "cuda", 0)
    return binding


def _np_type(t):  # noqa: ANN001, ANN202
    import numpy as np

    return {"torch.float32": np.float32, "torch.float16": np.float16, "torch.int64": np.int64}[str(t.dtype)]


def timed_rounds(torch, sess, binding, runs: int) -> float:  # noqa: ANN001
    torch.cuda.synchronize()
    t0 = time.perf_counter()
    for _ in range(runs):
        sess.run_with_iobinding(binding)
    torch.cuda.synchronize()
    return (time.perf_counter() - t0) / runs * 1e3


def run_kernels(torch, sess, binding) -> list[tuple[str, float]]:  # noqa: ANN001
    """(name, device time in us) of the kernels one forward launches (torch's profiler, CUPTI)."""
    from torch.autograd import DeviceType

    with torch.profiler.profile(activities=[torch.profiler.ProfilerActivity.CUDA]) as prof:
        sess.run_with_iobinding(binding)
        torch.cuda.synchronize()
    return [(e.name, e.time_range.elapsed_us()) for e in prof.events() if e.device_type == DeviceType.CUDA]


def op_profile(path: str) -> list[tuple[str, int, float]]:
    """(op type, nodes run, total ms) from ONNX Runtime's profile file: its node events ("cat": "Node",
    "kernel_time" names), summed by op type, dearest first. Under the CUDA EP a node's time is the host's (its
    launches, and any wait it makes), not its kernels' device time."""
    events = json.loads(Path(path).read_text())
    total: dict[str, float] = collections.defaultdict(float)
    count: dict[str, int] = collections.defaultdict(int)
    for e in events:
        if e.get("cat") == "Node" and e.get("name", "").endswith("_kernel_time"):
            op = e.get("args", {}).get("op_name", "?")
            total[op] += e.get("dur", 0) / 1e3
            count[op] += 1
    return sorted(((op, count[op], ms) for op, ms in total.items()), key=lambda r: -r[2])


def show_profile(torch, sess, binding, row: dict, label: str) -> None:  # noqa: ANN001
    """ONNX Runtime's host time per op type over the warm-up, and the kernels of one forward by name."""
    ops = op_profile(sess.end_profiling())
    row["ops"] = ops[:15]
    print(f"   {label} profile, host time per op type over the warm-up (op, nodes, ms):", flush=True)
    for op, n, ms in ops[:10]:
        print(f"      {ms:9.2f} ms  x{n:<5} {op}", flush=True)
    found = run_kernels(torch, sess, binding)
    by_name: dict[str, list[float]] = collections.defaultdict(list)
    for kernel, us in found:
        by_name[kernel[:90]].append(us)
    top = sorted(by_name.items(), key=lambda kv: -sum(kv[1]))[:10]
    row["kernels"] = [(k, len(v), round(sum(v) / 1e3, 3)) for k, v in top]
    print(f"   {label}: {len(found)} kernels, {sum(us for _, us in found) / 1e3:.2f} ms of kernel time in one forward",
          flush=True)
    for k, v in top[:8]:
        print(f"      {sum(v) / 1e3:9.3f} ms  x{len(v):<5} {k}", flush=True)


def ab(torch, ort, model: Path, feeds: list, args: argparse.Namespace, prefix: str) -> dict:  # noqa: ANN001
    """One file's A/B: a session per ``use_tf32`` value, warmed, then timed in interleaved rounds."""
    row: dict[str, object] = {}
    sessions = {}
    for flag in ("0", "1"):
        profiled = args.profile and flag == "0"
        t1 = time.perf_counter()
        s = session(ort, model, flag, prefix if profiled else None)
        b = binder(s, feeds)
        for _ in range(10):
            s.run_with_iobinding(b)
        torch.cuda.synchronize()
        row[f"setup_s_{flag}"] = round(time.perf_counter() - t1, 1)
        if profiled:
            show_profile(torch, s, b, row, "use_tf32=0")
        sessions[flag] = (s, b)
    rounds: dict[str, list[float]] = {"0": [], "1": []}
    for _ in range(args.rounds):
        for flag, (s, b) in sessions.items():
            rounds[flag].append(timed_rounds(torch, s, b, args.runs))
    for flag, xs in rounds.items():
        row[f"ms_use_tf32_{flag}"] = round(statistics.median(xs), 4)
        row[f"rounds_use_tf32_{flag}"] = [round(x, 4) for x in xs]
    row["on_over_off"] = round(row["ms_use_tf32_1"] / row["ms_use_tf32_0"], 4)
    return row


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--nets", default="granite_speech_encoder,shufflenet_v1_g3_ish,darknet53_ish")
    p.add_argument("--precisions", default="fp16,fp32")
    p.add_argument("--rounds", type=int, default=5)
    p.add_argument("--runs", type=int, default=20)
    p.add_argument("--profile", action="store_true")
    p.add_argument("--out", type=Path)
    args = p.parse_args()
    import onnxruntime as ort
    import torch

    from modelcost.bench.backends.ort import fp16_copy, quiet_ort_logs

    if not torch.cuda.is_available():
        sys.exit("ort_provider_ab: needs a CUDA GPU")
    quiet_ort_logs(ort)
    out: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as tmp:
        cache = Path(tmp)
        for name in args.nets.split(","):
            for batch in NETS[name]:
                t0 = time.perf_counter()
                path, bench = load(name, batch, cache)
                print(f"== {name} b{batch}: exported in {time.perf_counter() - t0:.0f} s", flush=True)
                feeds = [torch.from_numpy(a).cuda() for a in bench.host_inputs(batch)[0]]
                for precision in args.precisions.split(","):
                    model = fp16_copy(path, cache, name) if precision == "fp16" else path
                    row = ab(torch, ort, model, feeds, args, str(cache / f"{name}-{precision}"))
                    print(f"   {precision}: use_tf32=0 {row['ms_use_tf32_0']:.3f} ms, use_tf32=1 "
                          f"{row['ms_use_tf32_1']:.3f} ms: on/off {row['on_over_off']:.3f} (rounds "
                          f"{row['rounds_use_tf32_0']} / {row['rounds_use_tf32_1']})", flush=True)
                    out[f"{name} b{batch} {precision}"] = row
                    if args.out:
                        args.out.parent.mkdir(parents=True, exist_ok=True)
                        args.out.write_text(json.dumps(out, indent=1) + "\n")


if __name__ == "__main__":
    main()
