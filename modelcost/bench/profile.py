"""Measured time per layer, from each framework's own profiler, mapped back to layer names.

* PyTorch eager: every submodule's forward is wrapped in a ``torch.profiler.record_function`` range named
  after its qualified name (forward pre-/post-hooks), and ``torch.profiler`` records the run. On CUDA a
  module's time is the CUDA kernel time of the ops it launched (the profiler's ``device_time_total``); on the
  CPU it is CPU time. Times are exclusive: a module's own ops, without its child modules'. Ops called
  outside any submodule (in the top-level forward) form the row ``(top-level forward)``.
* ONNX Runtime: ``SessionOptions.enable_profiling``; each node's ``<name>_kernel_time`` events are summed
  over the timed runs (``model_run`` windows after the warm-up). With the CPU provider that is compute time.
  With the CUDA provider, ORT's node timings are host-side (kernel launches are asynchronous) unless ORT was
  built with CUDA profiling, whose ``Kernel`` events (GPU time) are then used instead; ``time_kind`` says
  which. ORT fuses and renames nodes (e.g. Conv+Relu); the optimised graph is saved once to map each fused
  node back to the original nodes it covers (``LayerTime.covers``).

Profiling adds overhead, so per-layer times are for *where* the time goes, not for the headline latency.
"""

from __future__ import annotations

import json
import tempfile
from collections import defaultdict
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from modelcost.bench.timing import WallClock
from modelcost.core.lazy import require
from modelcost.core.types import LayerProfile, LayerTime
from modelcost.loaders.binding import call_bound

PREFIX = "mc::"
TOP_LEVEL = "(top-level forward)"


# --------------------------------------------------------------------------------------------------
# PyTorch


def _annotate(torch: Any, module: Any) -> list[Any]:
    """Wrap every submodule's forward in a record_function range; returns the hook handles."""
    stack: list[Any] = []
    handles = []
    for name, sub in module.named_modules():
        if not name:
            continue

        def pre(_mod: Any, _args: Any, _name: str = name) -> None:
            rf = torch.profiler.record_function(PREFIX + _name)
            rf.__enter__()
            stack.append(rf)

        def post(_mod: Any, _args: Any, _out: Any) -> None:
            if stack:
                stack.pop().__exit__(None, None, None)

        handles.append(sub.register_forward_pre_hook(pre))
        handles.append(sub.register_forward_hook(post))
    return handles


def _inclusive_us(prof: Any, on_cuda: bool) -> tuple[dict[str, float], dict[str, int], float]:
    """Inclusive time per annotated module (us, summed over runs), call counts, and the total kernel time."""
    from torch.autograd import DeviceType

    inclusive: dict[str, float] = defaultdict(float)
    calls: dict[str, int] = defaultdict(int)
    kernels_us = 0.0
    for ev in prof.events():
        if ev.device_type != DeviceType.CPU or getattr(ev, "is_async", False):
            continue
        kernels_us += sum(k.duration for k in getattr(ev, "kernels", []))
        if ev.name.startswith(PREFIX):
            name = ev.name[len(PREFIX):]
            inclusive[name] += ev.device_time_total if on_cuda else ev.cpu_time_total
            calls[name] += 1
    return inclusive, calls, kernels_us


def _exclusive(inclusive: dict[str, float], total: float) -> dict[str, float]:
    """Each module's time without its direct child modules'; the top-level forward gets the remainder."""
    children: dict[str, float] = defaultdict(float)
    for name, t in inclusive.items():
        parent = name.rsplit(".", 1)[0] if "." in name else ""
        while parent and parent not in inclusive:  # a parent without a range (never happens with all hooked)
            parent = parent.rsplit(".", 1)[0] if "." in parent else ""
        children[parent] += t
    out = {name: max(t - children.get(name, 0.0), 0.0) for name, t in inclusive.items()}
    out[TOP_LEVEL] = max(total - children.get("", 0.0), 0.0)
    return out


def profile_torch(
    module: Any, inputs: Any, *, runs: int = 10, warmup: int = 3, autocast_dtype: Any = None
) -> LayerProfile:
    """Per-module time of ``module(*inputs)`` (eager), averaged over ``runs`` profiled runs.

    ``inputs``: a tensor, a tuple/list of tensors (positional) or a dict (keyword), already on the module's
    device. ``autocast_dtype`` (torch.float16 / torch.bfloat16) runs under ``torch.autocast``."""
    torch = require("torch")
    param = next(iter(module.parameters()), None)
    device = param.device if param is not None else torch.device("cpu")
    on_cuda = device.type == "cuda"
    activities = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if on_cuda else [])
    sync = torch.cuda.synchronize if on_cuda else (lambda: None)
    autocast = (lambda: torch.autocast(device.type, dtype=autocast_dtype)) if autocast_dtype is not None else None
    handles: list[Any] = []
    walls = []
    with torch.inference_mode():
        for _ in range(warmup):
            _run_once(module, inputs, autocast)
        sync()
        handles = _annotate(torch, module)
        try:
            with torch.profiler.profile(activities=activities) as prof:
                clock = WallClock(sync)  # host wall time, the GPU's work included
                for _ in range(runs):
                    walls.append(clock.time_ms(lambda: _run_once(module, inputs, autocast)))
        finally:
            for h in handles:
                h.remove()
    inclusive, calls, kernels_us = _inclusive_us(prof, on_cuda)
    total_us = kernels_us if on_cuda else sum(walls) * 1e3
    exclusive = _exclusive(inclusive, total_us)
    kinds = {name: type(sub).__name__ for name, sub in module.named_modules() if name}
    layers = [LayerTime(name=n, op=kinds.get(n, "ops"), time_ms=t / runs / 1e3,
                        calls=max(calls.get(n, runs) // runs, 1))
              for n, t in exclusive.items() if t > 0]
    layers.sort(key=lambda lt: lt.time_ms, reverse=True)
    wall_ms = sum(walls) / len(walls)
    notes = [f"{runs} profiled runs after {warmup} warm-up; times exclusive of child modules"]
    if on_cuda:
        notes.append(f"GPU busy {total_us / runs / 1e3:.3f} ms of {wall_ms:.3f} ms wall per inference while "
                     "profiling; the rest is launch gaps and host work (profiler overhead included)")
    return LayerProfile(
        source="torch.profiler", time_kind="CUDA kernel time" if on_cuda else "CPU time", runs=runs,
        total_ms=total_us / runs / 1e3, wall_ms=wall_ms, layers=layers, notes=notes,
    )


def _run_once(module: Any, inputs: Any, autocast: Any) -> Any:
    if autocast is None:
        return call_bound(module, inputs)
    with autocast():
        return call_bound(module, inputs)


# --------------------------------------------------------------------------------------------------
# ONNX Runtime


def parse_ort_profile(events: Sequence[dict[str, Any]], runs: int) -> tuple[dict[str, float], dict[str, str], bool]:
    """Per-node time (us, summed over the last ``runs`` model_run windows), node -> op type, and whether
    the times are GPU kernel times (ORT built with CUDA profiling emits ``Kernel`` events)."""
    windows = sorted((e["ts"], e["ts"] + e["dur"]) for e in events
                     if e.get("cat") == "Session" and e.get("name") == "model_run")
    windows = windows[-runs:] if runs else windows

    def in_window(ts: float) -> bool:
        return any(a <= ts <= b for a, b in windows)

    host: dict[str, float] = defaultdict(float)
    gpu: dict[str, float] = defaultdict(float)
    ops: dict[str, str] = {}
    current: str | None = None
    current_kept = False
    for e in events:
        if e.get("cat") == "Node" and str(e.get("name", "")).endswith("_kernel_time"):
            current = e["name"][: -len("_kernel_time")]
            current_kept = in_window(e["ts"])
            ops[current] = (e.get("args") or {}).get("op_name", "")
            if current_kept:
                host[current] += e["dur"]
        elif e.get("cat") == "Kernel" and current is not None and current_kept:
            gpu[current] += e["dur"]
    return (dict(gpu), ops, True) if gpu else (dict(host), ops, False)


def fused_coverage(original: Any, optimized: Any) -> dict[str, list[str]]:
    """For each node of the optimised graph, the original nodes it covers.

    An original node is owned by the optimised node of the same name, else by the one producing one of its
    outputs (ORT's layout pass names a fused node after the output it makes, plus ``_nchwc``, and renames the
    tensor; compute nodes win over the layout reorders that re-create the original tensor names). A node
    fused away is followed downstream to the first consumer that is owned."""
    names = {n.name for n in optimized.graph.node}
    producer: dict[str, str] = {n.name.removesuffix("_nchwc"): n.name for n in optimized.graph.node
                                if n.name.endswith("_nchwc")}
    for n in optimized.graph.node:
        for o in n.output:
            if o:
                producer.setdefault(o, n.name)
    consumers: dict[str, list[Any]] = defaultdict(list)
    for n in original.graph.node:
        for i in n.input:
            consumers[i].append(n)
    cover: dict[str, list[str]] = defaultdict(list)
    for n in original.graph.node:
        seen: set[str] = set()
        frontier, owner = [n], None
        while frontier and owner is None:
            node = frontier.pop(0)
            if node.name in seen:
                continue
            seen.add(node.name)
            if node.name in names:
                owner = node.name
            else:
                owner = next((producer[o] for o in node.output if o in producer), None)
            for o in node.output:
                frontier.extend(consumers.get(o, []))
        if owner is not None:
            cover[owner].append(n.name)
    return dict(cover)


def profile_onnx(
    model_path: str | Path, feeds: Mapping[str, Any], *, providers: Sequence[Any] | None = None,
    runs: int = 10, warmup: int = 3, map_fused: bool = True, max_map_bytes: int = 2 << 30,
) -> LayerProfile:
    """Per-node time of an ONNX model under ONNX Runtime's own profiler, averaged over ``runs`` runs.

    ``feeds`` are the inputs (numpy arrays); ``providers`` as for ``InferenceSession`` (default: CPU)."""
    ort = require("onnxruntime")
    providers = list(providers or ["CPUExecutionProvider"])
    model_path = Path(model_path)
    with tempfile.TemporaryDirectory(prefix="modelcost-ortprof-") as tmp:
        so = ort.SessionOptions()
        so.enable_profiling = True
        so.profile_file_prefix = str(Path(tmp) / "ort")
        optimized = Path(tmp) / "optimized.onnx"
        small = model_path.stat().st_size <= max_map_bytes
        if map_fused and small:
            so.optimized_model_filepath = str(optimized)
        from modelcost.bench.backends.ort import quiet_ort_logs

        quiet_ort_logs(ort)
        try:
            sess = ort.InferenceSession(str(model_path), so, providers=providers)
        except Exception:  # noqa: BLE001 - some providers cannot save the optimised graph: profile without it
            so.optimized_model_filepath = ""
            sess = ort.InferenceSession(str(model_path), so, providers=providers)
        walls, clock = [], WallClock()
        for i in range(warmup + runs):
            ms = clock.time_ms(lambda: sess.run(None, dict(feeds)))
            if i >= warmup:
                walls.append(ms)
        events = json.loads(Path(sess.end_profiling()).read_text())
        used = sess.get_providers()
        cover = _coverage(model_path, optimized) if (map_fused and small and optimized.exists()) else {}
    per_node, ops, gpu_times = parse_ort_profile(events, runs)
    layers = [LayerTime(name=n, op=ops.get(n, ""), time_ms=t / runs / 1e3, calls=1, covers=cover.get(n, []))
              for n, t in per_node.items()]
    layers.sort(key=lambda lt: lt.time_ms, reverse=True)
    cuda = any(p in ("CUDAExecutionProvider", "TensorrtExecutionProvider") for p in used)
    kind = "GPU kernel time (ORT CUDA profiling)" if gpu_times else (
        "host time per node (CUDA launches are asynchronous: not GPU time)" if cuda else "CPU time")
    notes = [f"{runs} profiled runs after {warmup} warm-up; providers {', '.join(used)}"]
    if cuda and not gpu_times:
        notes.append("this ONNX Runtime build has no CUDA profiling: per-node times are host-side launch times")
    if map_fused and not small:
        notes.append("model over 2 GiB: fused ORT nodes not mapped back to original nodes")
    return LayerProfile(source="onnxruntime", time_kind=kind, runs=runs, total_ms=sum(per_node.values()) / runs / 1e3,
                        wall_ms=sum(walls) / len(walls) if walls else None, layers=layers, notes=notes)


def _coverage(model_path: Path, optimized: Path) -> dict[str, list[str]]:
    try:
        onnx = require("onnx")
        original = onnx.load(str(model_path), load_external_data=False)
        opt = onnx.load(str(optimized), load_external_data=False)
        return fused_coverage(original, opt)
    except Exception:  # noqa: BLE001 - mapping is a nicety; exact names still match
        return {}


# --------------------------------------------------------------------------------------------------
# A BenchModel, as the benchmarks ran it


def profile_model(model: Any, *, framework: str = "torch", device: str = "cuda", precision: str = "fp32",
                  batch_size: int = 1, runs: int = 10, warmup: int = 3, config: Any = None) -> LayerProfile:
    """Time per module (``framework="torch"``, eager; fp16/bf16 = the model cast, channels_last for conv nets)
    or per ONNX node (``"onnx"``, ONNX Runtime on ``device``) of a ``bench.model.BenchModel``, on the same
    seeded inputs the benchmarks used."""
    from modelcost.bench.base import BenchConfig

    config = config or BenchConfig()
    arrays, _ = model.host_inputs(batch_size)
    if framework == "onnx":
        path = model.onnx_file(config.cache_dir)
        providers = ["CUDAExecutionProvider", "CPUExecutionProvider"] if device == "cuda" else ["CPUExecutionProvider"]
        feeds = {spec.name: a for spec, a in zip(model.specs(batch_size), arrays, strict=True)}
        return profile_onnx(path, feeds, providers=providers, runs=runs, warmup=warmup)
    return _profile_bench_torch(model, arrays, device, precision, runs, warmup)


def _profile_bench_torch(model: Any, arrays: Any, device: str, precision: str, runs: int, warmup: int) -> LayerProfile:
    import contextlib

    torch = require("torch")
    from modelcost.bench.model import to_channels_last
    from modelcost.hardware.tf32 import tf32_mode

    dtype = {"fp16": "float16", "bf16": "bfloat16"}.get(precision, "float32")
    channels_last = dtype != "float32" and model.is_conv_net()
    module = model.device_module(device, dtype, channels_last)
    inputs = []
    for a in arrays:
        t = torch.from_numpy(a.copy())
        t = (t.to(getattr(torch, dtype)) if t.is_floating_point() else t).to(device)
        inputs.append(to_channels_last(t) if channels_last else t)
    with tf32_mode(precision == "tf32") if device == "cuda" else contextlib.nullcontext():
        return profile_torch(module, model.call_args(inputs), runs=runs, warmup=warmup)  # a dict: by keyword
