"""Pool the host's price per aten call over stored calibrations (issue 28): the committed
``modelcost/analysis/host_prices.json`` that analysis/predict_host.py reads (its module doc says why and when a
prediction takes the pooled price).

Per GPU kind (the canonical name, analysis/predict_transfer.canonical_name) and host-priced family ("eager",
"autocast"): the median over the calibrations of their ``host_us`` (``kernel_op_us`` and ``view_op_us`` each),
the median of medians: each calibration is one lease's draw, whatever the number of processes it ran. A
calibration without ``host_us`` is skipped. The file lists the calibrations it pooled (file, created, eager price).

    python3 benchmarks/host_price_pool.py CAL.json [CAL.json ...] [--out FILE]   # default: the committed file
"""

from __future__ import annotations

import argparse
import json
import statistics
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from modelcost.analysis.predict_host import POOL_FILE, SCHEMA  # noqa: E402
from modelcost.analysis.predict_transfer import canonical_name  # noqa: E402
from modelcost.core.calibration import load  # noqa: E402


def pool(paths: list[Path]) -> dict:
    """The host_prices document of ``paths`` (module doc)."""
    by_gpu: dict[str, list] = {}
    for path in paths:
        cal = load(path)
        if cal.host_us:
            by_gpu.setdefault(canonical_name(cal.gpu.name), []).append((path, cal))
    gpus = {}
    for gpu, cals in sorted(by_gpu.items()):
        families = sorted({f for _, cal in cals for f in cal.host_us})
        host = {f: {k: round(statistics.median(getattr(cal.host_us[f], k) for _, cal in cals if f in cal.host_us), 3)
                    for k in ("kernel_op_us", "view_op_us")} for f in families}
        eager = [cal.host_us["eager"].kernel_op_us for _, cal in cals if "eager" in cal.host_us]
        gpus[gpu] = {"calibrations": len(cals), "host_us": host,
                     "eager_range_us": [round(min(eager), 2), round(max(eager), 2)] if eager else [],
                     "pooled": [{"file": str(p.relative_to(ROOT) if p.is_relative_to(ROOT) else p),
                                 "created": cal.created,
                                 "eager_kernel_op_us": round(cal.host_us["eager"].kernel_op_us, 2)
                                 if "eager" in cal.host_us else None} for p, cal in cals]}
    return {"schema": SCHEMA, "produced_by": "benchmarks/host_price_pool.py", "gpus": gpus}


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("calibrations", nargs="+", type=Path)
    p.add_argument("--out", type=Path, default=POOL_FILE)
    args = p.parse_args()
    doc = pool([c.resolve() for c in args.calibrations])
    args.out.write_text(json.dumps(doc, indent=1) + "\n")
    for gpu, row in doc["gpus"].items():
        print(f"{gpu}: {row['calibrations']} calibrations, eager {row['host_us'].get('eager')} "
              f"(range {row['eager_range_us']}), autocast {row['host_us'].get('autocast')}")
    print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
