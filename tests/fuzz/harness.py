"""The parts every fuzzer of tests/fuzz/ shares: classifying one CLI outcome, the worker subprocess that runs
cases under a memory limit, the parent that kills and replaces a worker that hangs or dies, and the summary.

A fuzzer is a script with a ``--worker`` mode. The parent starts ``python3 SCRIPT --worker --seed S --mem-mb M
--indices i,j,... [extra]``; the worker calls ``serve`` with a function that runs one case, and answers one JSON
line per case (``{"start": i}`` before it, the record after it). A case that does not answer within the time
limit is a hang, a worker that dies is a crash; either way a fresh worker goes on with the next case.

Outcomes:

    clean      exit 1 with exactly one ``error:`` line on stderr (bad input, said once), or a usage error of the
               command line (exit 2, click's "Usage:" or error box, no exception)
    analysed   exit 0, or 3 (a partial result), or 1 with nothing on stderr and a verdict on stdout (a regression
               found by ``results --compare``)
    traceback  any other exception, or an error that is not one line            -> a bug
    hang       no answer within the per-case time limit (the worker is killed)   -> a bug
    crash      the worker died (segfault, out of memory under the memory limit)  -> a bug
    memory     the worker's peak RSS grew by more than the allowed growth        -> a bug
    lost       a file outside the case's output paths was removed or changed     -> a bug
"""

from __future__ import annotations

import json
import os
import select
import subprocess
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
FAILURES = ("traceback", "hang", "crash", "memory", "lost")
OUTCOMES = ("clean", "analysed", *FAILURES)


def classify(result: Any) -> tuple[str, str]:
    """(outcome, detail) of a typer CliRunner result."""
    import traceback

    exc = result.exception
    if exc is not None and not isinstance(exc, SystemExit):
        frames = traceback.extract_tb(exc.__traceback__)
        where = f"{Path(frames[-1].filename).name}:{frames[-1].lineno} {frames[-1].name}" if frames else "?"
        return "traceback", f"{type(exc).__name__}: {str(exc)[:160]} ({where})"
    if result.exit_code in (0, 3):
        return "analysed", f"exit {result.exit_code}"
    lines = [line for line in result.stderr.splitlines() if line.strip()]
    if result.exit_code == 1 and len(lines) == 1 and lines[0].startswith("error: "):
        return "clean", lines[0][:200]
    if result.exit_code == 1 and not lines and result.stdout.strip():  # a verdict (results --compare: regressed)
        return "analysed", "exit 1, a verdict on stdout"
    if result.exit_code == 2 and ("Usage:" in result.stderr + result.stdout or "Error" in result.stderr):
        # click refused the command line (typer's rich error box, or the plain "Usage: ... Error:" lines)
        return "clean", "usage: " + " ".join(lines[-3:])[:200]
    return "traceback", f"exit {result.exit_code}, stderr {result.stderr[-300:]!r}"


def build_each_cli_once() -> None:
    """typer's CliRunner builds the click command of an app anew on every ``invoke`` (``typer.main.get_command``
    reads the signature and type hints of every command: about 80 ms of CPU for modelcost's app, more than most
    cases take to run). The command is the same each time, so build it once per app and process; each invoke
    still parses, runs and handles its errors afresh, as the installed ``modelcost`` does."""
    import functools

    import typer.main
    import typer.testing

    if not hasattr(typer.testing._get_command, "cache_info"):
        typer.testing._get_command = functools.cache(typer.main.get_command)


def _peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def limit_memory(mem_mb: int) -> None:
    """Cap this process's address space (RLIMIT_AS): an unbounded allocation fails instead of swapping."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (mem_mb << 20, mem_mb << 20))


def serve(indices: list[int], run_case: Callable[[int], dict[str, Any]], growth_mb: float) -> None:
    """In the worker: announce each case, run it, answer its record (``run_case`` gives at least ``outcome``
    and ``detail``). A case that grew the peak RSS by more than ``growth_mb`` is a ``memory`` outcome even when it
    then ended cleanly: an allocation the limit stopped may have been caught and survived."""
    sleep_at = int(os.environ.get("MODELCOST_FUZZ_SLEEP_INDEX", "-1"))  # the harness's own test: a fake hang
    for index in indices:
        print(json.dumps({"start": index}), flush=True)
        if index == sleep_at:
            time.sleep(3600)
        before_mb = _peak_rss_mb()
        try:
            record = run_case(index)
        except MemoryError:
            record = {"outcome": "crash", "detail": "MemoryError outside the CLI"}
        peak_mb = _peak_rss_mb()
        if peak_mb - before_mb > growth_mb:
            record["detail"] = f"peak RSS grew {peak_mb - before_mb:,.0f} MiB ({record['outcome']}: {record['detail']})"
            record["outcome"] = "memory"
        print(json.dumps({"index": index, **record, "peak_rss_mb": round(peak_mb, 1)}), flush=True)


def fuzz(script: Path, describe: Callable[[int], dict[str, Any]], seed: int, count: int, *, start: int = 0,
         timeout_s: float = 20.0, mem_mb: int = 1024, extra: tuple[str, ...] = (),
         progress: Callable[[int], None] | None = None) -> list[dict[str, Any]]:
    """Run cases ``start .. start+count-1`` of ``seed`` through ``script``'s workers; one record per case. A worker
    that hangs past ``timeout_s`` on one case, or dies, is replaced and the run goes on with the next case.
    ``describe(index)`` gives the fields (source, mutator) of a case whose worker gave no record."""
    todo = list(range(start, start + count))
    records: list[dict[str, Any]] = []
    while todo:
        done, todo = _one_worker(script, describe, seed, todo, timeout_s, mem_mb, extra, progress, len(records))
        records += done
    return records


def _one_worker(script: Path, describe: Callable[[int], dict[str, Any]], seed: int, todo: list[int],
                timeout_s: float, mem_mb: int, extra: tuple[str, ...], progress: Any,
                offset: int) -> tuple[list[dict[str, Any]], list[int]]:
    """One worker subprocess over ``todo`` until it finishes, hangs on a case or dies: (records, what is left)."""
    cmd = [sys.executable, str(script), "--worker", "--seed", str(seed), "--mem-mb", str(mem_mb),
           "--indices", ",".join(map(str, todo)), *extra]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(REPO), os.environ.get("PYTHONPATH", "")])}
    done: list[dict[str, Any]] = []
    current, clock = None, {"deadline": time.monotonic() + 180.0}  # the first deadline covers the worker's imports
    with tempfile.TemporaryFile() as err:  # a file, not a pipe: a chatty worker can never block on it
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, env=env)
        try:
            for line in _lines(proc, lambda: clock["deadline"]):
                msg = json.loads(line)
                if "start" in msg:
                    current, clock["deadline"] = msg["start"], time.monotonic() + timeout_s
                    continue
                done.append(msg)
                current, clock["deadline"] = None, time.monotonic() + timeout_s
                if progress:
                    progress(offset + len(done))
            outcome, detail = "hang", f"no answer in {timeout_s:g} s"
            if proc.poll() is not None or proc.wait(timeout=1.0) is not None:
                err.seek(0)
                outcome, detail = "crash", f"worker exited {proc.returncode}: {err.read()[-300:]!r}"
        except subprocess.TimeoutExpired:
            pass
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
    rest = todo[len(done):]
    if current is None:  # died before announcing a case, or finished them all
        if rest:
            raise RuntimeError(f"fuzz worker failed to start: {detail}")
        return done, rest
    done.append({"index": current, **describe(current), "outcome": outcome, "detail": detail})
    return done, rest[1:]


def _lines(proc: subprocess.Popen, deadline: Callable[[], float]) -> Iterator[bytes]:
    """The worker's stdout lines, read unbuffered (a buffered reader could hold a line select() cannot see);
    stops at end of file or when ``deadline()`` passes with no new line."""
    fd, buf = proc.stdout.fileno(), b""
    while True:
        while b"\n" in buf:
            line, buf = buf.split(b"\n", 1)
            yield line
        ready, _, _ = select.select([fd], [], [], max(0.0, deadline() - time.monotonic()))
        if not ready:
            return
        chunk = os.read(fd, 65536)
        if not chunk:
            return
        buf += chunk


def progress_printer(total: int, every: int = 500) -> Callable[[int], None]:
    def show(n: int) -> None:
        if sys.stderr.isatty() or n % every == 0:
            print(f"\r{n:,}/{total:,} cases", end="" if sys.stderr.isatty() else "\n", file=sys.stderr, flush=True)

    return show


def summarise(records: list[dict[str, Any]]) -> dict[str, Any]:
    by_mutator: dict[str, Counter] = {}
    for r in records:
        by_mutator.setdefault(r["mutator"], Counter())[r["outcome"]] += 1
    return {"mutants": len(records), "outcomes": dict(Counter(r["outcome"] for r in records)),
            "by_mutator": {k: dict(v) for k, v in sorted(by_mutator.items())},
            "failures": [r for r in records if r["outcome"] in FAILURES]}


def print_summary(summary: dict[str, Any], what: str, limit: int = 40) -> None:
    """The long run's table: outcomes in total and per mutator, then the first failures."""
    outcomes = ", ".join(f"{summary['outcomes'].get(k, 0):,} {k}" for k in OUTCOMES)
    print(f"{summary['mutants']:,} {what} in {summary['wall_s']:,} s, memory limit {summary['mem_mb']:,} MiB "
          f"(peak RSS of a worker {summary['worker_peak_rss_mb']:,.0f} MiB): {outcomes}")
    print(f"{'mutator':<18} " + " ".join(f"{k:>9}" for k in OUTCOMES))
    for name, counts in summary["by_mutator"].items():
        print(f"{name:<18} " + " ".join(f"{counts.get(k, 0):>9,}" for k in OUTCOMES))
    for f in summary["failures"][:limit]:
        print(f"  {summary['seed']}:{f['index']} {f.get('source', '')} {f['mutator']}: {f['outcome']} {f['detail']}")


def children_peak_rss_mb() -> float:
    import resource

    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def finish(records: list[dict[str, Any]], started: float, settings: dict[str, Any], what: str,
           json_path: Path | None) -> int:
    """The end of a long run: the summary (``settings``, wall time, the largest worker's peak RSS, outcomes),
    its table, the JSON file; the exit code is 1 when any case failed."""
    summary = {**settings, "wall_s": round(time.monotonic() - started, 1),
               "worker_peak_rss_mb": round(children_peak_rss_mb(), 1), **summarise(records)}
    print(file=sys.stderr)
    print_summary(summary, what)
    if json_path:
        json_path.write_text(json.dumps(summary, indent=2) + "\n")
    return 1 if summary["failures"] else 0
