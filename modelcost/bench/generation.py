"""Measured text generation: TTFT, TPOT (inter-token latency), end-to-end time, tokens/s and peak memory.

Every backend runs the same manual loop, so the figures mean the same thing: greedy decoding of exactly
``gen_len`` new tokens (EOS is never checked, so every run generates the same number), one prefill forward over
the (batch, prompt_len) prompt that yields token 1 (logits of the last position only when the model takes
``logits_to_keep``), then ``gen_len - 1`` single-token decode steps, each forward + argmax.

Timing: the one clock (``timing.clock_for``) taking marks: on CUDA an event is recorded before the prefill and
after each token's argmax (the GPU clock between them; host launch gaps the GPU waits through are included), one
synchronize at the end; on CPU perf_counter. Out of memory is told by ``lifecycle.is_out_of_memory``.
Python's garbage collector is paused (after a collection) during warm-up and timed generations, as ``timeit``
does. The GPU's SM clock and busy share during the timed runs are sampled (NVML) and given in the notes: a busy
share well under 100% marks a launch-bound decode, whose pace is the host CPU's. A point whose timed runs' median
TPOTs differ by more than 5% is marked ``unstable`` with the reason (``unstable_reason``).
Warm-up (untimed): at least ``warmup`` whole generations, then more until the median step time of two successive ones
agrees within 2% (``WARMUP_SETTLE``; at most ``WARMUP_MAX`` generations): the inference warm-up's rule
(``timing.WarmUpRule``) with windows of one generation: one warm-up generation left the first timed repeat of a
launch-bound eager decode slower than the second (BENCHMARKS.md, 'Figures that used to live in docstrings'). The process
is not pinned to one CPU here (unlike inference timing): pinned, the compiled decode step ran slower and eager repeats
spread further (BENCHMARKS.md, 'Figures that used to live in docstrings').
TTFT = prefill forward + argmax (the prompt already on the device; no tokenizer), TPOT = one decode step.
Each measured run starts from an empty cache.

Backends (by name, resolved at run time):

* ``hf-eager`` - the model in eager mode with a dynamic KV cache (transformers DynamicCache; the zoo's list);
* ``hf-static`` - a transformers StaticCache, eager (not in the default set: it separates the cache's effect);
* ``hf-static-compile`` - a transformers StaticCache (preallocated to prompt_len + gen_len) and the decode step
  compiled with ``torch.compile(fullgraph=True)`` with CUDA graphs (``triton.cudagraphs``, what mode "reduce-overhead"
  sets) and inductor's coordinate-descent tuning of its kernels' launch configs (faster than max-autotune's GEMM search
  on a batch-1 decode step (BENCHMARKS.md, 'What limits batch-1 decode')); prefill stays eager;
* ``vllm``, ``sglang``, ``tensorrt_llm`` - detected when installed; modelcost has no runner for them yet, so
  they are reported as unavailable with that reason (never estimated).
"""

from __future__ import annotations

import contextlib
import gc
import importlib.util
from collections.abc import Callable, Iterator, Sequence
from functools import partial
from typing import Any

from modelcost.bench import timing
from modelcost.bench.lifecycle import is_out_of_memory
from modelcost.bench.memory import long_lived_frozen
from modelcost.bench.stats import latency_stats, median
from modelcost.bench.timing import Clock, WarmUpRule, clock_for
from modelcost.core.llm import GenerationResult
from modelcost.core.text import first_line
from modelcost.loaders.llm_loader import DTYPES, CausalLM

BACKENDS = ("hf-eager", "hf-static-compile")
ENGINES = {"vllm": "vllm", "sglang": "sglang", "tensorrt_llm": "tensorrt_llm"}
TIMING = ("CUDA events around prefill+argmax (TTFT) and each decode step+argmax (TPOT), after warm-up generations "
          "until two agree within 2%; Python's garbage collector paused while generating; greedy, fixed new "
          "tokens, EOS ignored; no tokenizer, prompt already on the device")
WARMUP_SETTLE = 0.02
WARMUP_MAX = 8
# The timed runs' TPOT medians may differ by this much before the result is flagged unstable: a figure that the
# next run would not repeat within a few percent is reported, never passed off as settled.
UNSTABLE_SPREAD = 0.05


def engine_status() -> list[tuple[str, str]]:
    """(engine, reason it is not measured) for the other engines; never a figure."""
    out = []
    for name, module in ENGINES.items():
        if importlib.util.find_spec(module) is None:
            out.append((name, f"{module} is not installed"))
        else:
            out.append((name, f"{module} is installed but modelcost has no {name} runner yet; not measured"))
    return out


def _eager_runner(lm: CausalLM, model: Any, batch: int, prompt: int, gen: int, device: str) -> Callable:
    import torch

    def run(ids: Any, clock: Clock) -> Any:
        cache = lm.new_cache()
        clock.mark()
        tokens = [lm.forward(model, ids, cache, True)[:, -1].argmax(-1, keepdim=True)]
        clock.mark()
        for _ in range(gen - 1):
            tokens.append(lm.forward(model, tokens[-1], cache, True)[:, -1].argmax(-1, keepdim=True))
            clock.mark()
        return torch.cat(tokens, dim=1)

    return torch.no_grad()(run)


# CUDA graphs (mode "reduce-overhead" is exactly triton.cudagraphs) + coordinate-descent tuning; no graph break
COMPILE = {"fullgraph": True, "options": {"triton.cudagraphs": True, "coordinate_descent_tuning": True}}


def _static_runner(lm: CausalLM, model: Any, batch: int, prompt: int, gen: int, device: str,
                   compiled: bool = True, compile_kwargs: dict[str, Any] | None = None) -> Callable:
    import torch
    from transformers import StaticCache

    try:
        cache = StaticCache(config=model.config, max_cache_len=prompt + gen)
    except TypeError:  # transformers 4.x wants the batch, device and dtype up front
        cache = StaticCache(config=model.config, max_batch_size=batch, max_cache_len=prompt + gen,
                            device=device, dtype=next(model.parameters()).dtype)

    def step(tok: Any, position: Any) -> Any:
        logits = lm.forward(model, tok, cache, True, cache_position=position)  # the head on the last position
        return logits[:, -1].argmax(-1, keepdim=True)

    decode = torch.compile(step, **(compile_kwargs or COMPILE)) if compiled else step

    # made once on the device: each step's position is a device-side copy (offset 0), no host-to-device copy
    positions = torch.arange(prompt + gen, device=device)

    def run(ids: Any, clock: Clock) -> Any:
        cache.reset()
        clock.mark()
        tokens = [step(ids, positions[:prompt])]
        clock.mark()
        for i in range(gen - 1):
            if compiled:
                torch.compiler.cudagraph_mark_step_begin()
            tokens.append(decode(tokens[-1].clone(), positions[prompt + i:prompt + i + 1].clone()).clone())
            clock.mark()
        return torch.cat(tokens, dim=1)

    return torch.no_grad()(run)


RUNNERS = {"hf-eager": _eager_runner, "hf-static": partial(_static_runner, compiled=False),
           "hf-static-compile": _static_runner}


def _unavailable(backend: str, lm: CausalLM, device: str) -> str | None:
    if backend in ENGINES:
        return dict(engine_status())[backend]
    if backend not in RUNNERS:
        return f"unknown backend {backend!r} (choose from {', '.join((*BACKENDS, *ENGINES))})"
    if backend.startswith("hf-static"):
        if lm.family != "transformers" or lm.config is None:
            return "needs a transformers model with a config (StaticCache); this model keeps its own cache"
        if backend == "hf-static-compile" and not device.startswith("cuda"):
            return "needs CUDA (the compiled decode step replays a CUDA graph)"
    return None


def measure_generation(
    lm: CausalLM, *, backends: Sequence[str] = BACKENDS, batch_sizes: Sequence[int] = (1,),
    prompt_len: int = 512, gen_len: int = 128, precision: str = "bf16", device: str | None = None,
    runs: int = 3, warmup: int = 1, seed: int = 0, repeats: int = 1,
) -> list[GenerationResult]:
    """Measure every backend x batch size; unavailable and failed ones come back with their reason.
    ``repeats`` > 1 measures each point again (a new warm-up and new runs, the same model and compiled step),
    one result per repeat: how well the figure repeats."""
    import torch

    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtype = getattr(torch, DTYPES[precision])
    timing = TIMING if device.startswith("cuda") else TIMING.replace("CUDA events", "perf_counter")
    results: list[GenerationResult] = []
    model = None
    with long_lived_frozen():  # gc_paused's collection before each timed block scans only what this made
        for backend in backends:
            for batch in batch_sizes[:1] if backend in ENGINES else batch_sizes:  # an absent engine: said once
                blank = GenerationResult(backend, precision, batch, prompt_len, gen_len, "unavailable", timing=timing)
                reason = _unavailable(backend, lm, device)
                if reason:
                    blank.reason = reason
                    results.append(blank)
                    continue
                if model is None:
                    torch.manual_seed(seed)
                    model = lm.build(device, dtype)
                results += _measure_point(blank, lm, model, device, runs, warmup, seed, repeats)
    return results


def _fresh_device(cuda: bool) -> None:
    """Free what the previous point left (compiled graphs and their memory pools) before this one."""
    import gc

    import torch

    if cuda:
        torch._dynamo.reset()
        gc.collect()
        torch.cuda.empty_cache()


def _measure_point(blank: GenerationResult, lm: CausalLM, model: Any, device: str, runs: int, warmup: int,
                   seed: int, repeats: int) -> list[GenerationResult]:
    import dataclasses

    import torch

    b, p, g = blank.batch_size, blank.prompt_len, blank.gen_len
    ids = torch.randint(1, lm.vocab_size or 32000, (b, p), generator=torch.Generator().manual_seed(seed)).to(device)
    cuda = device.startswith("cuda")
    out: list[GenerationResult] = []
    try:
        _fresh_device(cuda)
        run = RUNNERS[blank.backend](lm, model, b, p, g, device)
        for i in range(repeats):
            result = dataclasses.replace(blank, notes=[f"repeat {i + 1} of {repeats}"] if repeats > 1 else [])
            out.append(result)
            _timed_block(result, run, ids, device, runs, warmup)
    except Exception as exc:  # noqa: BLE001 - one backend failing must not lose the others
        result = out[-1] if out else dataclasses.replace(blank)
        if is_out_of_memory(exc):
            result.status, result.reason = "oom", f"out of memory: {first_line(exc, 200, with_type=False)}"
        else:
            result.status, result.reason = "failed", f"{exc.__class__.__name__}: {' '.join(str(exc).split())[:300]}"
    if not out:
        out.append(result)
    if cuda:
        torch.cuda.empty_cache()
    return out


def _one_run(run: Callable, ids: Any, device: str) -> list[float]:
    """One whole generation: its step times in ms (TTFT, then each decode step)."""
    clock = clock_for(device)
    run(ids, clock)
    return clock.intervals_ms()


def warm_up(generate: Callable[[], list[float]], minimum: int, settle: float = WARMUP_SETTLE,
            most: int = WARMUP_MAX) -> int:
    """The one warm-up rule (``timing.WarmUpRule``) with windows of one whole generation (``generate`` returns
    its step times; a window's figure is its median decode step): until two successive generations agree within
    ``settle``, at least ``minimum`` and 2 of them, at most ``most`` (or ``minimum``, if larger). ``minimum`` 0: no
    warm-up. Returns how many ran."""
    if minimum <= 0:
        return 0

    def one() -> float:
        steps = generate()
        return median(steps[1:] or steps)

    rule = WarmUpRule(window=1, tolerance=settle, min_calls=minimum, max_calls=max(minimum, most))
    return timing.settle(one, rule).calls


@contextlib.contextmanager
def gc_paused() -> Iterator[None]:
    """Python's garbage collector off (after one collection) while the block runs, as ``timeit`` does: a
    launch-bound decode loop allocates thousands of objects per token, and a collection landing inside a step
    is a host pause the step's time would carry."""
    gc.collect()
    was_on = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_on:
            gc.enable()


def _timed_block(result: GenerationResult, run: Callable, ids: Any, device: str, runs: int, warmup: int) -> None:
    """Warm-up generations (untimed; module doc), then ``runs`` timed ones; fills ``result``."""
    import torch

    cuda = device.startswith("cuda")
    with gc_paused():
        ran = warm_up(lambda: _one_run(run, ids, device), warmup)
    if ran:
        result.notes.append(f"{ran} warm-up generations")
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    ttfts, tpots, e2es, run_tpots = [], [], [], []
    with _gpu_sampling(device) as gpu, gc_paused():
        for _ in range(runs):
            steps = _one_run(run, ids, device)
            ttfts.append(steps[0])
            tpots.extend(steps[1:])
            e2es.append(sum(steps))
            if steps[1:]:
                run_tpots.append(median(steps[1:]))
    clock_note = _clock_note(gpu)
    if clock_note:
        result.notes.append(clock_note)
    result.unstable = unstable_reason(run_tpots, getattr(gpu, "summary", None))
    result.status, result.runs = "ok", runs
    result.ttft_stats, result.e2e_ms = latency_stats(ttfts), latency_stats(e2es)
    result.tpot_stats = latency_stats(tpots) if tpots else None
    result.ttft_ms, result.tpot_ms = median(ttfts), (median(tpots) if tpots else None)
    result.tokens_per_second = result.batch_size * result.gen_len / (median(e2es) / 1e3)
    if cuda:
        result.peak_memory_bytes = torch.cuda.max_memory_allocated()


def unstable_reason(run_tpots_ms: Sequence[float], gpu: Any = None, limit: float = UNSTABLE_SPREAD) -> str | None:
    """Why a measurement does not repeat, or None: the timed runs' median TPOTs differ by more than ``limit``.
    With the GPU mostly idle (NVML busy share under 50%) the decode is launch-bound, and the reason says so: its pace is
    the host CPU's, which moves from one generation to the next (BENCHMARKS.md, 'Why hf-eager's TPOT does not
    repeat')."""
    if len(run_tpots_ms) < 2:
        return None
    low, high = min(run_tpots_ms), max(run_tpots_ms)
    spread = high / low - 1
    if spread <= limit:
        return None
    why = (f"the {len(run_tpots_ms)} timed runs' TPOT medians range {low:.3f}-{high:.3f} ms ({spread:.0%} apart, "
           f"over the {limit:.0%} this tool accepts)")
    busy = getattr(gpu, "gpu_util_mean", None)
    if busy is not None and busy < 50:
        why += (f"; the GPU was busy {busy:.0f}% of the time, so the decode is launch-bound and runs at the pace of "
                "the host CPU, which varied")
    return why


def _gpu_sampling(device: str) -> Any:
    """NVML sampling of the GPU that generates (its clocks and busy share) while the timed runs go; nothing off
    CUDA or without NVML."""
    if not device.startswith("cuda"):
        return contextlib.nullcontext(None)
    import torch

    from modelcost.hardware.nvml_sampler import sampling

    index = torch.device(device).index
    return sampling(torch.cuda.current_device() if index is None else index, interval_s=0.02)


def _clock_note(gpu: Any) -> str | None:
    """What the GPU did during the timed runs: its SM clock (a drop would slow every step) and busy share (well
    under 100%: the decode is launch-bound and waits on the host)."""
    summary = getattr(gpu, "summary", None)
    if summary is None or not summary.samples or summary.sm_clock_mhz_mean is None:
        return None
    util = f", busy {summary.gpu_util_mean:.0f}%" if summary.gpu_util_mean is not None else ""
    return (f"GPU during the timed runs: SM clock mean {summary.sm_clock_mhz_mean:,.0f} MHz "
            f"(min {summary.sm_clock_mhz_min:,.0f}){util}")


def generate(lm: CausalLM, model: Any, backend: str, input_ids: Any, gen_len: int) -> tuple[Any, list[float]]:
    """One untimed-warm-up-free generation of ``gen_len`` tokens: (tokens (batch, gen_len), step times in ms:
    TTFT then each decode step). For tests and for checking that backends generate the same tokens."""
    device = str(input_ids.device)
    b, p = input_ids.shape
    clock = clock_for(device)
    tokens = RUNNERS[backend](lm, model, b, p, gen_len, device)(input_ids, clock)
    return tokens, clock.intervals_ms()
