"""A seeded fuzzer of the commands that read user files and arguments besides ``analyze``: sweep plans (TOML),
results databases (page-level corruption), ``llm`` configs (JSON) and the command lines of ``llm`` / ``train`` /
``sweep`` / ``results``.

Each case is one valid base input changed by one named mutator, run in-process through typer's CliRunner (the
CLI's own error handling) in a worker subprocess under a memory limit (tests/fuzz/harness.py classifies it).
Case ``i`` of seed ``s`` on a surface is fully determined by ``(surface, s, i)``, so any outcome can be replayed.

Nothing may be lost: every case runs in a fresh folder beside a *guard* (a cache folder, ``MODELCOST_CACHE_DIR``,
whose entries hold files modelcost did not write, and a folder of the user's files). After each case the guard
and the case's own input files (all but the paths the command was told to write) must be byte for byte as they
were; anything else is the outcome ``lost``.

    python3 tests/fuzz/fuzz_surfaces.py --surface plan --cases 5000 --seed 1 --jobs 2 --json plan.json
    python3 tests/fuzz/fuzz_surfaces.py --surface llm --replay 1:1234 --save case/   # write one case's files

The cases themselves, surface by surface, are made in tests/fuzz/surface_cases.py.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import harness  # noqa: E402 - beside this script, which also runs as a file
from surface_cases import CLI_COMMANDS, SURFACES, Case, base_db_bytes, case  # noqa: E402 - beside it too


GROWTH_MB = 384  # a case made of files under 100 KB that grows the worker's peak RSS by more than this is a bug


def _digest(folder: Path) -> dict[str, str]:
    """path -> sha256 of every file under ``folder`` (links not followed)."""
    out = {}
    for root, _dirs, names in os.walk(folder):
        for n in names:
            p = Path(root, n)
            out[str(p.relative_to(folder))] = hashlib.sha256(p.read_bytes()).hexdigest() if p.is_file() else "link"
    return out


def make_guard(root: Path) -> Path:
    """A cache folder of foreign files at every depth (inside the entries modelcost writes too) and a folder of
    the user's own files; ``MODELCOST_CACHE_DIR`` points at the cache."""
    guard = root / "guard"
    for rel in ("cache/onnx/my_model.onnx", "cache/screening/plan.txt", "cache/inductor/notes.txt",
                "cache/tensorrt/engine.txt", "cache/ceilings/mine.json", "cache/onnx-fp16/a/b/deep.txt",
                "cache/notes.txt", "home/results.sqlite", "home/plan.toml"):
        p = guard / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(f"the user's own {rel}\n".encode())
    os.environ["MODELCOST_CACHE_DIR"] = str(guard / "cache")
    return guard


def run_case(c: Case, folder: Path, guard: Path, guard_digest: dict[str, str]) -> tuple[str, str]:
    """Run one case in a fresh ``folder`` (the working directory): (outcome, detail)."""
    from typer.testing import CliRunner

    from modelcost.cli import app

    if folder.exists():
        shutil.rmtree(folder)
    folder.mkdir()
    for name, data in c.files.items():
        (folder / name).write_bytes(data)
    inputs = {k: v for k, v in _digest(folder).items() if k not in c.outputs}
    here = os.getcwd()
    os.chdir(folder)
    try:
        outcome, detail = harness.classify(CliRunner().invoke(app, c.args))
    finally:
        os.chdir(here)
    after = _digest(folder)
    changed = sorted(k for k, v in inputs.items() if after.get(k) != v)
    guard_now = _digest(guard)
    lost = sorted(k for k, v in guard_digest.items() if guard_now.get(k) != v)
    if changed or lost:
        return "lost", f"changed or removed: {', '.join(changed + ['guard/' + x for x in lost])} ({outcome}: {detail})"
    return outcome, detail


def warm_cases(surface: str, seed: int) -> list[Case]:
    """Cases run before the first timed one, so a command's first imports (transformers, a model build) do not
    read as a case that grew the worker's memory: case 0, and on the command-line surface each command as is."""
    cases = [case(surface, seed, 0)]
    if surface == "cli":
        template = case("cli", seed, 0)
        for base, _, _ in CLI_COMMANDS.values():
            args = [*base, "-p", "16", "-g", "8"] if base[0] == "llm" else list(base)
            cases.append(Case("warm", base[0], template.files | {"results.sqlite": base_db_bytes()}, args))
    return cases


def _worker(surface: str, seed: int, indices: list[int], mem_mb: int, mix: str | None = None) -> None:
    """Run ``indices`` of ``surface``; with ``mix`` (``fuzz_slices``), index k is case ``_mixed(mix)[k]``."""
    import warnings

    warnings.simplefilter("ignore")
    # transformers' logger keeps the stderr of the first case's CliRunner, closed by the next case: its warnings
    # would then print logging's own error report into a later case's stderr.
    os.environ["TRANSFORMERS_VERBOSITY"] = "error"
    mixed = _mixed(mix) if mix else None
    surfaces = list(dict.fromkeys(s for s, _ in mixed)) if mixed else [surface]
    with tempfile.TemporaryDirectory(prefix="modelcost-fuzz-") as tmp:
        root = Path(tmp)
        guard = make_guard(root)
        guard_digest = _digest(guard)
        harness.limit_memory(mem_mb)
        harness.build_each_cli_once()
        for warm in [w for s in surfaces for w in warm_cases(s, seed)]:  # every command's imports and first
            run_case(warm, root / "warm", guard, guard_digest)  # model build before the clock

        def one(index: int) -> dict[str, Any]:
            s, i = mixed[index] if mixed else (surface, index)
            c = case(s, seed, i)
            outcome, detail = run_case(c, root / "case", guard, guard_digest)
            return {"source": c.source, "mutator": c.mutator, "outcome": outcome, "detail": detail,
                    "args": " ".join(c.args)[:300]}

        harness.serve(indices, one, GROWTH_MB)


def _mixed(mix: str) -> list[tuple[str, int]]:
    """``"plan=150,db=100"`` -> a mixed run's index k -> (surface, that surface's case index): plan's 0..149, then
    db's 0..99."""
    return [(s, i) for part in mix.split(",") for s, n in [part.split("=")] for i in range(int(n))]


def fuzz_slices(counts: dict[str, int], seed: int, *, timeout_s: float = 30.0,
                mem_mb: int = 2048) -> dict[str, list[dict[str, Any]]]:
    """Cases ``0 .. n-1`` of each surface in ``counts``, run by one worker process (not one per surface: a single
    start-up and warm-up of what the surfaces share, the CLI, torch, transformers): surface -> its records."""
    mix = ",".join(f"{s}={n}" for s, n in counts.items())
    at = _mixed(mix)

    def describe(k: int) -> dict[str, Any]:
        return _describe(at[k][0], seed)(at[k][1])

    records = harness.fuzz(Path(__file__).resolve(), describe, seed, len(at), timeout_s=timeout_s, mem_mb=mem_mb,
                           extra=("--surface", at[0][0], "--mix", mix))
    out: dict[str, list[dict[str, Any]]] = {s: [] for s in counts}
    for r in records:
        out[at[r["index"]][0]].append({**r, "index": at[r["index"]][1]})
    return out


def _describe(surface: str, seed: int) -> Callable[[int], dict[str, Any]]:
    def describe(index: int) -> dict[str, Any]:
        c = case(surface, seed, index)
        return {"source": c.source, "mutator": c.mutator, "args": " ".join(c.args)[:300]}

    return describe


def fuzz(surface: str, seed: int, count: int, *, start: int = 0, timeout_s: float = 30.0, mem_mb: int = 2048,
         jobs: int = 1, progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Cases ``start .. start+count-1`` of ``seed`` on ``surface``, over ``jobs`` worker processes at a time."""
    script = Path(__file__).resolve()
    bounds = [start + count * j // jobs for j in range(jobs + 1)]

    def chunk(j: int) -> list[dict[str, Any]]:
        return harness.fuzz(script, _describe(surface, seed), seed, bounds[j + 1] - bounds[j], start=bounds[j],
                            timeout_s=timeout_s, mem_mb=mem_mb, extra=("--surface", surface), progress=progress)

    with ThreadPoolExecutor(jobs) as pool:
        return [r for part in pool.map(chunk, range(jobs)) for r in part]


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--surface", choices=SURFACES, required=True)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--cases", type=int, default=500)
    ap.add_argument("--start", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=1, help="worker processes at a time")
    ap.add_argument("--timeout-s", type=float, default=30.0, help="per case: longer is a hang")
    ap.add_argument("--mem-mb", type=int, default=2048, help="address-space limit of the worker (RLIMIT_AS)")
    ap.add_argument("--json", type=Path, help="write the summary and every failure here")
    ap.add_argument("--replay", help="SEED:INDEX: run that one case and print its outcome")
    ap.add_argument("--save", type=Path, help="with --replay: also write the case's files into this folder")
    ap.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--indices", help=argparse.SUPPRESS)
    ap.add_argument("--mix", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        _worker(args.surface, args.seed, [int(i) for i in args.indices.split(",")], args.mem_mb, args.mix)
        return 0
    if args.replay:
        seed, index = (int(x) for x in args.replay.split(":"))
        recs = fuzz(args.surface, seed, 1, start=index, timeout_s=args.timeout_s, mem_mb=args.mem_mb)
        if args.save:
            c = case(args.surface, seed, index)
            args.save.mkdir(parents=True, exist_ok=True)
            for name, data in c.files.items():
                (args.save / name).write_bytes(data)
        print(json.dumps(recs[0], indent=2))
        return 1 if recs[0]["outcome"] in harness.FAILURES else 0
    t0 = time.monotonic()
    records = fuzz(args.surface, args.seed, args.cases, start=args.start, timeout_s=args.timeout_s,
                   mem_mb=args.mem_mb, jobs=args.jobs, progress=harness.progress_printer(args.cases))
    settings = {"surface": args.surface, "seed": args.seed, "start": args.start, "timeout_s": args.timeout_s,
                "mem_mb": args.mem_mb, "jobs": args.jobs}
    return harness.finish(records, t0, settings, f"{args.surface} cases (seed {args.seed})", args.json)


if __name__ == "__main__":
    sys.exit(main())
