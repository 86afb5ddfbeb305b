"""``modelcost gpu`` through typer's CliRunner, ``print_run_gpu`` on a synthetic run, the JSON sections,
the roofline plot, and the ceilings cache (no GPU needed for any of it)."""

from __future__ import annotations

import json

import pytest
from typer.testing import CliRunner

from modelcost.cli import app
from modelcost.core.types import CeilingMeasurement, RunReport
from modelcost.hardware import ceilings
from modelcost.hardware.specs import spec_from_table
from tests.analysis.test_roofline import make_cost, result

runner = CliRunner()


def test_gpu_name_what_if() -> None:
    res = runner.invoke(app, ["gpu", "--name", "H100 SXM"])
    assert res.exit_code == 0, res.output
    assert "989.4" in res.output and "Hopper" in res.output and "1830 MHz" in res.output


def test_gpu_list() -> None:
    res = runner.invoke(app, ["gpu", "--list"])
    assert res.exit_code == 0
    for name in ("V100 SXM2", "T4", "A100 SXM", "L40S", "H200", "B200"):
        assert name in res.output


def test_gpu_unknown_name_is_one_line() -> None:
    res = runner.invoke(app, ["gpu", "--name", "Z9000"])
    assert res.exit_code == 1
    assert "unknown GPU 'Z9000'" in res.output and "Traceback" not in res.output


def test_gpu_without_a_gpu_says_so(monkeypatch: pytest.MonkeyPatch) -> None:
    from modelcost.hardware import nvml

    monkeypatch.setattr(nvml, "query_gpu", lambda index=0: None)
    monkeypatch.setattr(nvml, "no_gpu_reason", lambda: "NVML sees no NVIDIA GPU")
    res = runner.invoke(app, ["gpu"])
    assert res.exit_code == 1
    assert "no NVIDIA GPU here" in res.output and "--name" in res.output


def test_measure_with_name_is_refused() -> None:
    res = runner.invoke(app, ["gpu", "--name", "L4", "--measure"])
    assert res.exit_code == 1 and "drop --name" in res.output


def test_gpu_json(tmp_path) -> None:
    path = tmp_path / "gpu.json"
    res = runner.invoke(app, ["gpu", "--name", "A100", "--json", str(path)])
    assert res.exit_code == 0, res.output
    doc = json.loads(path.read_text())
    assert doc["schema"].startswith("modelcost.report/")
    assert doc["gpu"]["name"] == "A100 SXM" and doc["gpu"]["peak_tflops"]["bf16"] == pytest.approx(311.9, rel=1e-3)
    assert doc["gpu"]["sparse_peak_tflops"]["bf16"] == pytest.approx(623.8, rel=1e-3)


def synthetic_run() -> RunReport:
    return RunReport(cost=make_cost(), benchmarks=[
        result("fp32", 8, 1.0), result("bf16", 8, 0.05, backend="torch-half"),
        result("fp32", 8, 3.0, backend="torch-cpu", device="cpu"),
    ], gpu=spec_from_table("H100 SXM"))


def test_print_roofline_fills_json_and_plots(tmp_path) -> None:
    from rich.console import Console

    from modelcost.runs import gpu as pipeline
    from modelcost.cli.flow import write_outputs
    from modelcost.report.console_gpu import print_run_gpu
    from modelcost.report.json_report import run_to_dict

    console = Console(record=True, width=200)
    run = pipeline.attach_gpu(synthetic_run())  # the run's stages fill it, the CLI prints it and writes the plot
    run.what_if = pipeline.what_if_rows(run, "L4")
    run.layer_tables = pipeline.layer_tables(run)
    print_run_gpu(run, console=console)
    write_outputs(run, json_path=None, report=False, out_dir=None, roofline_plot=tmp_path / "roofline.png")
    text = console.export_text()
    assert "Roofline on H100 SXM" in text and "What-if" in text and "L4" in text
    assert "Per-layer intensity" in text
    png = (tmp_path / "roofline.png").read_bytes()
    assert png[:8] == b"\x89PNG\r\n\x1a\n"
    doc = run_to_dict(run)
    gpu_rows = [b for b in doc["benchmarks"] if b["roofline"]]
    assert len(gpu_rows) == 2  # the CPU result has none
    for key in ("achieved_tflops", "peak_tflops", "mfu", "achieved_gbps", "peak_gbps", "intensity", "bound",
                "lower_bound_ms"):
        assert key in gpu_rows[0]["roofline"]
    assert doc["gpu"]["name"] == "H100 SXM"
    # fp32 on H100: peak 66.9 TFLOP/s (CUDA cores, TF32 off)
    assert gpu_rows[0]["roofline"]["peak_tflops"] == pytest.approx(132 * 256 * 1980e6 / 1e12)


def test_roofline_plot_svg(tmp_path) -> None:
    from modelcost.api import attach_roofline
    from modelcost.report.roofline_plot import plot_roofline

    run = attach_roofline(synthetic_run())
    run.gpu.measured_tflops = {"bf16": 700.0}
    run.gpu.measured_gbps = 3000.0
    path = plot_roofline(run.gpu, run.benchmarks, tmp_path / "r.svg")
    assert path.read_text().lstrip().startswith("<?xml")


def test_attach_roofline_without_gpu_or_cost(monkeypatch: pytest.MonkeyPatch) -> None:
    from modelcost.api import attach_roofline
    from modelcost.hardware import nvml

    monkeypatch.setattr(nvml, "query_gpu", lambda index=0: None)
    run = attach_roofline(RunReport(cost=make_cost(), benchmarks=[result("fp32", 8, 1.0)]))
    assert run.gpu is None and run.benchmarks[0].roofline is None
    assert any(n.startswith("roofline: no NVIDIA GPU") for n in run.notes)
    run = attach_roofline(RunReport(benchmarks=[result("fp32", 8, 1.0)]), spec_from_table("L4"))
    assert run.gpu is not None and any("no static analysis" in n for n in run.notes)


def test_ceilings_cache_roundtrip(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(tmp_path))
    gpu = spec_from_table("H100 SXM")
    gpu.driver = "580.65.06"
    assert ceilings.cache_path(gpu) == tmp_path / "ceilings" / "h100-sxm__580.65.06.json"
    assert ceilings.load_cached(gpu) is None
    ms = [CeilingMeasurement("matmul", "bf16", 700.0, "TFLOP/s", spec=989.4, fraction_of_spec=700 / 989.4,
                             throttle_reasons=["sw_power_cap"]),
          CeilingMeasurement("copy", "", 2900.0, "GB/s", spec=3350.0),
          CeilingMeasurement("matmul", "fp8", None, "TFLOP/s", error="RuntimeError: no kernel")]
    ceilings._save(gpu, ms, None, {"created": "now"})
    again = spec_from_table("H100 SXM")
    again.driver = "580.65.06"
    ceilings.with_cached_ceilings(again)
    assert again.measured_tflops == {"bf16": 700.0} and again.measured_gbps == 2900.0
    assert again.measurements[0].throttle_reasons == ["sw_power_cap"]
    other_driver = spec_from_table("H100 SXM")
    other_driver.driver = "999"
    assert ceilings.load_cached(other_driver) is None  # keyed by driver too


def test_measure_without_cuda_is_a_user_error(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    torch = pytest.importorskip("torch")
    if torch.cuda.is_available():
        pytest.skip("this machine has CUDA")
    from modelcost.core.errors import ModelcostError

    with pytest.raises(ModelcostError, match="needs a CUDA GPU"):
        ceilings.measure_ceilings(spec_from_table("L4"), directory=tmp_path, refresh=True)


def test_roofline_after_bench_on_a_cpu_run(monkeypatch: pytest.MonkeyPatch) -> None:
    # No GPU: CPU results get no roofline, but the static analysis is attached and the what-if still prints.
    from rich.console import Console

    from modelcost import api
    from modelcost.bench import runner
    from modelcost.core.types import DeviceInfo
    from modelcost.report.console_gpu import print_run_gpu
    from modelcost.hardware import nvml

    monkeypatch.setattr(nvml, "query_gpu", lambda index=0: None)

    def fake_sweep(model, *, results, **kw):  # one CPU result, without timing anything
        results.append(result("fp32", 1, 5.0, backend="torch-cpu", device="cpu"))
        return results, DeviceInfo("cpu", "cpu")

    monkeypatch.setattr(runner, "run_benchmarks", fake_sweep)
    console = Console(record=True, width=160)
    run = api.run("zoo:bert-tiny", api.RunOptions(target_gpu="H100 SXM", static_required=False))
    print_run_gpu(run, console=console)
    text = console.export_text()
    assert run.cost is not None and run.benchmarks[0].roofline is None
    assert "no roofline: no NVIDIA GPU here" in text and "What-if" in text and "H100 SXM" in text
    # --target-gpu was given: the note does not tell the user to pass it
    assert not any("--target-gpu" in n for n in run.notes)
    assert any("the what-if table estimates H100 SXM instead" in n for n in run.notes)


def test_measure_ceilings_flow_with_a_fake_cuda(tmp_path, monkeypatch: pytest.MonkeyPatch) -> None:
    # The measuring loop on the CPU with CUDA events faked to say 2 ms per call: an 8192^3 matmul is
    # 2 x 8192^3 = 1.0995e12 FLOPs -> 549.76 TFLOP/s; the copy moves 2 x 64 MiB per call -> 67.1 GB/s.
    torch = pytest.importorskip("torch")

    class Event:
        def __init__(self, enable_timing: bool = False) -> None:
            self.t = 0.0

        def record(self) -> None:
            Event.clock += 1
            self.t = Event.clock

        def synchronize(self) -> None:
            pass

        def elapsed_time(self, end: Event) -> float:
            return 2.0 * Event.calls

    Event.clock = 0.0
    Event.calls = 0
    real_step = ceilings._time_blocks

    def time_blocks(torch_, step, budget_s, blocks=7):
        Event.calls = 1
        return real_step(torch_, step, budget_s=0.0, blocks=2)

    monkeypatch.setattr(ceilings, "_device", lambda torch_, index: torch.device("cpu"))
    monkeypatch.setattr(ceilings, "_time_blocks", time_blocks)
    monkeypatch.setattr(ceilings, "COPY_BYTES", 64 << 20)
    monkeypatch.setattr(torch.cuda, "is_available", lambda: True)
    monkeypatch.setattr(torch.cuda, "Event", Event)
    monkeypatch.setattr(torch.cuda, "synchronize", lambda *a: None)
    monkeypatch.setattr(torch.cuda, "empty_cache", lambda: None)
    monkeypatch.setattr(torch.cuda, "get_device_capability", lambda index=0: (8, 0))
    monkeypatch.setattr(torch.cuda, "mem_get_info", lambda index=0: (8 << 30, 80 << 30))
    gpu = spec_from_table("A100 SXM")
    gpu.driver = "1.0"
    gpu = ceilings.measure_ceilings(gpu, directory=tmp_path, refresh=True, n=256,
                                    precisions=("fp32", "bf16", "int8", "fp8"))
    got = {m.precision or "copy": m for m in gpu.measurements}
    assert got["fp32"].value == pytest.approx(2 * 256**3 / 2e-3 / 1e12)  # n=256 here: 0.01678 TFLOP/s
    assert got["bf16"].fraction_of_spec == pytest.approx(got["bf16"].value / 311.869, rel=1e-3)
    assert got["fp8"].value is None and "8.9" in got["fp8"].error  # A100: no FP8
    assert got["copy"].value == pytest.approx(2 * (64 << 20) / 2e-3 / 1e9)
    assert gpu.measured_tflops.keys() == {"fp32", "bf16", "int8"}
    assert ceilings.load_cached(gpu, tmp_path) is not None
