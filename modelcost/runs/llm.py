"""``llm``: what generating text with a causal LM costs: loaders.llm_loader -> analysis.llm (counted on meta,
bounded against a GPU) -> bench.generation (measured), each measured run placed against its bound."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from modelcost.core.types import GpuSpec

ENGINES = ("vllm", "sglang", "tensorrt_llm")  # serving engines: measured when installed, else reported absent


def llm(
    source: str, *, prompt_lens: Sequence[int] = (512,), gen_lens: Sequence[int] = (128,),
    batch_sizes: Sequence[int] = (1,), dtype: str = "bf16", kv_dtype: str | None = None,
    target_gpu: str | GpuSpec | None = None, measure: bool = False, backends: Sequence[str] | None = None,
    runs: int = 3, warmup: int = 1, device: str | None = None, repeats: int = 1,
    attention: str = "full", attn_implementation: str | None = None, tp: int = 1, routing: str | None = None,
    predict: bool = False,
) -> Any:
    """What generating text with the causal LM ``source`` costs (``core.llm.LlmReport``): counted prefill and
    decode on the meta device for every batch x prompt x gen point, bounds against ``target_gpu`` (a table name)
    or this machine's GPU (split over ``tp`` of them), and with ``measure`` the measured runs of ``backends``
    placed against them. ``attention``: the prefill query/key pairs counted ("full" or "causal");
    ``attn_implementation``: "sdpa" or "eager" for a transformers model (default: SDPA where it has one);
    ``routing`` (uniform, zipf:S or a .json of shares per expert): the expert distribution that a mixture of
    experts' bytes assume. ``predict``: also TTFT and TPOT predicted from this GPU's calibration (and on
    ``target_gpu``, transferred), beside the measured ones (``report.predictions``)."""
    from modelcost.analysis.llm import analyze_llm
    from modelcost.analysis.llm_bounds import add_bounds
    from modelcost.core.errors import ModelcostError
    from modelcost.loaders.llm_loader import load_causal_lm
    from modelcost.runs import predict as prediction
    from modelcost.bench.memory import long_lived_frozen
    from modelcost.runs.gpu import gpu_spec, this_gpu

    found = prediction.calibrations() if predict else []  # before any work: none is one line, now
    lm = load_causal_lm(source, dtype, attn_implementation)
    counts: dict[tuple[int, int, int], Any] = {}
    try:
        with long_lived_frozen():  # the collector skips torch, transformers and the model while counting
            report = analyze_llm(lm, list(prompt_lens), list(gen_lens), list(batch_sizes), kv_dtype, attention,
                                 routing, layer_counts=counts if predict else None)
    except ValueError as exc:
        raise ModelcostError(str(exc)) from exc
    gpu = gpu_spec(target_gpu) if isinstance(target_gpu, str) else target_gpu or this_gpu(required=False)
    if gpu is not None:
        add_bounds(report, gpu, tp=tp)
    elif tp != 1:
        raise ModelcostError(f"{{tp}} {tp}: bounds need a GPU; pass {{target_gpu}}", fields=("tp", "target_gpu"))
    else:
        report.notes.append("no GPU here and no --target-gpu: bounds left out")
    if measure:
        _measure(lm, report, backends, prompt_lens, gen_lens, batch_sizes, dtype, device, runs, warmup, repeats)
    if predict:
        prediction.attach_llm_predictions(report, counts, target_gpu, found, backends)
        if tp != 1:
            report.notes.append(f"predict: TTFT and TPOT are predicted on one GPU (as the measured runs use one); "
                                f"--tp {tp} splits the bounds only")
    return report


def _measure(lm: Any, report: Any, backends: Sequence[str] | None, prompt_lens: Sequence[int],
             gen_lens: Sequence[int], batch_sizes: Sequence[int], dtype: str, device: str | None, runs: int,
             warmup: int, repeats: int) -> None:
    """Every (prompt, gen) point measured on ``backends``, each result placed against its counted bound."""
    from modelcost.analysis.llm_bounds import place_measured
    from modelcost.bench.generation import BACKENDS, measure_generation
    from modelcost.runs.gpu import this_gpu

    wanted = list(backends or (*BACKENDS, *ENGINES))
    points = {(p.batch_size, p.prompt_len, p.gen_len): p for p in report.points}
    for prompt in prompt_lens:
        for gen in gen_lens:
            report.benchmarks += measure_generation(
                lm, backends=wanted, batch_sizes=batch_sizes, prompt_len=prompt, gen_len=gen, precision=dtype,
                device=device, runs=runs, warmup=warmup, repeats=repeats)
            wanted = [b for b in wanted if b not in ENGINES]  # absent: say once
    ran_on = this_gpu(required=False) if (device or "cuda").startswith("cuda") else None  # ratios: its GPU
    for r in report.benchmarks:
        point = points.get((r.batch_size, r.prompt_len, r.gen_len))
        if point is not None:
            place_measured(r, point, report, ran_on)
