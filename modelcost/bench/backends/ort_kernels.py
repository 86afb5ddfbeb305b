"""Which nodes of an ONNX file ONNX Runtime's CUDA execution provider has no kernel for, so that it runs them on
the CPU (and copies their tensors across), read from the installed ONNX Runtime's own kernel registry before a
session runs.

ONNX Runtime says this only in a verbose log line per node ("CUDA kernel not found in registries for Op type:
DFT"). FNet's 24 DFT nodes have none (microsoft/onnxruntime#21164): its CPU DFT is a naive O(n^2) one at a
length that is no power of two (768), and one pinned CPU thread ran one batch-64 forward for minutes; the
fourteenth held-out set lost its whole 585 s device call to it (H100, device_2026-12-02). The registry is
``onnxruntime.capi._pybind_state.get_all_opkernel_def``, a debugging entry point of ONNX Runtime's Python
bindings; where a build lacks it, nothing is said. Type constraints are not read: an op with a CUDA kernel for
other types only is not caught.

onnxruntime-gpu 1.31.1's listing crashes its process (H100, device_2026-12-03), so on the GPU the placement is
also read after the fact, from ONNX Runtime's own profile of a session's first run (``placed_off``): every node's
event names the provider that ran it."""

from __future__ import annotations

import functools
import json
from collections import Counter
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

_ONNX_DOMAINS = ("", "ai.onnx")
# ops ONNX Runtime turns into initializers when it loads the graph: they run no kernel
_LOADED_AS_DATA = {"Constant"}


# Run in a child process: onnxruntime-gpu 1.31.1's listing crashed the process (a segmentation fault inside
# ``get_all_opkernel_def``, H100, device_2026-12-03) where the CPU build's did not; a crash there must cost the
# check, not the run.
_LIST_KERNELS = """
import json, sys
from onnxruntime.capi import _pybind_state
listing = getattr(_pybind_state, "get_all_opkernel_def", None)
if listing is None:
    sys.exit(3)
rows = [[k.domain, k.op_name, list(k.version_range)] for k in listing() if k.provider == sys.argv[1]]
print(json.dumps(rows))
"""
LIST_TIMEOUT_S = 120


@functools.lru_cache(maxsize=4)
def kernel_ranges(provider: str) -> dict[tuple[str, str], tuple[tuple[int, int], ...]] | None:
    """(domain, op type) -> the opset ranges of the installed ONNX Runtime's kernels for ``provider``; None where
    this build does not list its kernels, or its listing fails (``_LIST_KERNELS``)."""
    import subprocess
    import sys

    try:
        done = subprocess.run([sys.executable, "-c", _LIST_KERNELS, provider], capture_output=True, text=True,
                              timeout=LIST_TIMEOUT_S, check=False)
        rows = json.loads(done.stdout) if done.returncode == 0 else None
    except (OSError, subprocess.TimeoutExpired, json.JSONDecodeError):
        rows = None
    if rows is None:
        return None
    ranges: dict[tuple[str, str], list[tuple[int, int]]] = {}
    for domain, op, (start, end) in rows:
        key = ("" if domain in _ONNX_DOMAINS else domain, op)
        ranges.setdefault(key, []).append((start, end))
    return {key: tuple(value) for key, value in ranges.items()}


def _nodes(graph: Any) -> Iterator[Any]:
    """Every node of ``graph`` and of the subgraphs its nodes hold (Loop, If, Scan bodies)."""
    for node in graph.node:
        yield node
        for attr in node.attribute:
            if attr.HasField("g"):
                yield from _nodes(attr.g)
            for sub in attr.graphs:
                yield from _nodes(sub)


def _schema(op_type: str, opset: int, domain: str) -> Any | None:
    """The schema of ``op_type`` that opset ``opset`` uses (the kernel registry is keyed by its version); None for
    an op onnx does not know (a contrib op)."""
    import onnx

    try:
        return onnx.defs.get_schema(op_type, opset, domain)
    except Exception:  # noqa: BLE001 - onnx raises SchemaError for an unknown op
        return None


def _covered(ranges: Iterable[tuple[int, int]], since: int) -> bool:
    return any(start <= since <= end for start, end in ranges)


def missing_kernels(model: Any, ranges: dict[tuple[str, str], tuple[tuple[int, int], ...]]) -> Counter[str]:
    """Op type -> how many nodes of ``model`` (an onnx ModelProto) have no kernel among ``ranges``."""
    opsets = {("" if o.domain in _ONNX_DOMAINS else o.domain): o.version for o in model.opset_import}
    missing: Counter[str] = Counter()
    for node in _nodes(model.graph):
        domain = "" if node.domain in _ONNX_DOMAINS else node.domain
        opset = opsets.get(domain)
        if opset is None or (domain == "" and node.op_type in _LOADED_AS_DATA):
            continue
        schema = _schema(node.op_type, opset, domain) if domain == "" else None
        if _covered(ranges.get((domain, node.op_type), ()), schema.since_version if schema else opset):
            continue
        # an op defined by a function of other ops (HardSwish) that has no kernel of its own is inlined
        if schema is None or not (schema.has_function or schema.has_context_dependent_function):
            missing[node.op_type] += 1
    return missing


def cpu_fallback(path: Path, provider: str) -> Counter[str] | None:
    """Op type -> the nodes of the ONNX file at ``path`` that ``provider`` has no kernel for; None where this ONNX
    Runtime does not list its kernels."""
    import onnx

    ranges = kernel_ranges(provider)
    if ranges is None:
        return None
    return missing_kernels(onnx.load(str(path), load_external_data=False), ranges)


# an op type is named when its nodes ran this long off the provider in the profiled first run: ONNX Runtime puts
# shape arithmetic on the CPU on purpose (microseconds a node); a float op without a kernel takes far longer
PLACED_OFF_MIN_MS = 1.0


def placed_off(events: Iterable[dict], provider: str, min_ms: float = PLACED_OFF_MIN_MS) -> tuple[Counter[str], float]:
    """(op type -> nodes that ran on another provider than ``provider``, for the op types whose nodes took at least
    ``min_ms`` there; their milliseconds) from the events of ONNX Runtime's profile of one run (``enable_profiling``:
    a node's "<name>_kernel_time" event, category "Node", with its op and provider in ``args``)."""
    op_of: dict[str, str] = {}  # node -> its op type
    ms_of: Counter[str] = Counter()  # node -> its milliseconds
    for event in events:
        args = event.get("args") or {}
        name = str(event.get("name", ""))
        if event.get("cat") != "Node" or not name.endswith("_kernel_time") or args.get("provider") in (None, provider):
            continue
        op_of[name] = str(args.get("op_name", "?"))
        ms_of[name] += float(event.get("dur", 0)) / 1e3
    nodes: Counter[str] = Counter(op_of.values())
    ms: Counter[str] = Counter()
    for name, op in op_of.items():
        ms[op] += ms_of[name]
    named = [op for op in nodes if ms[op] >= min_ms]
    return Counter({op: nodes[op] for op in named}), sum(ms[op] for op in named)


def _op_list(nodes: Counter[str]) -> str:
    """"DFT x24, Exp x1": op types by their count of nodes, the largest first."""
    return ", ".join(f"{op} x{n}" for op, n in nodes.most_common())


def placed_off_note(nodes: Counter[str], ms: float, provider: str) -> str:
    """One line naming the nodes ``placed_off`` found."""
    return (f"{sum(nodes.values())} nodes ran off {provider} in the first run ({_op_list(nodes)}: {ms:,.1f} ms there, "
            "ONNX Runtime's profile): on the CPU, their tensors copied across, inside the timed figure")


def cpu_fallback_note(missing: Counter[str], provider: str, version: str) -> str | None:
    """One line naming ``missing`` (``cpu_fallback``); None where there is none."""
    if not missing:
        return None
    return (f"{sum(missing.values())} nodes have no {provider} kernel in onnxruntime {version} ({_op_list(missing)}): "
            "ONNX Runtime runs them on the CPU and copies their tensors across, inside the timed figure")
