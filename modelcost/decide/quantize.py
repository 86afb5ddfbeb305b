"""Make the candidates a comparison checks: an ONNX Runtime static Q/DQ INT8 model and an FP16 model.

INT8: ``onnxruntime.quantization.quantize_static`` in the QDQ format — QuantizeLinear/DequantizeLinear pairs
around the float ops, which each backend may fuse into INT8 kernels (TensorRT, the CPU provider) or run as
dequantize + float op (the CUDA provider). Weights per channel, INT8 symmetric; activations INT8 symmetric
(zero point 0, what TensorRT requires); MinMax calibration. The model is first pre-processed
(``quant_pre_process``: shape inference and graph optimisation), as the ONNX Runtime docs advise; when that
fails the original is quantized and a note says so.

Calibration data: ``--calib-data FILE.npz`` with one array per model input (keyed by input name; a single array
is used for a single-input model whatever its key), first axis = samples. Without it the calibration runs on
generated data (standard normal for float inputs, valid ids for integer inputs — ``bench.inputs``), and the
result says so: scales calibrated on random data may not fit real data, so the accuracy figures of such a
model say little about real accuracy.

FP16: ``onnxruntime.transformers.float16.convert_float_to_float16`` (else ``onnxconverter_common``) with
``keep_io_types=True``: the model still takes and returns float32.
"""

from __future__ import annotations

import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from modelcost.core.atomic import scratch_beside
from modelcost.core.errors import ModelcostError
from modelcost.core.lazy import require
from modelcost.core.text import first_line
from modelcost.core.types import TensorSpec

SpecsFor = Callable[[int], list[TensorSpec]]


@dataclass
class Quantized:
    path: Path
    precision: str  # "int8" | "fp16"
    calibration: str = ""  # what the INT8 scales were calibrated on, in words
    notes: list[str] = field(default_factory=list)


def load_npz(path: str | Path, input_names: list[str]) -> dict[str, Any]:
    """``{input name: array}`` from an .npz; one array for a one-input model may have any key."""
    np = require("numpy")
    p = Path(path)
    if not p.is_file():
        raise ModelcostError(f"data file {p} does not exist")
    try:
        with np.load(p, allow_pickle=False) as z:
            arrays = {k: z[k] for k in z.files}
    except Exception as exc:  # noqa: BLE001 - any unreadable file is the user's to fix
        raise ModelcostError(f"{p} is not a readable .npz file ({exc.__class__.__name__}: {exc})") from None
    if len(input_names) == 1 and len(arrays) == 1:
        return {input_names[0]: next(iter(arrays.values()))}
    missing = [n for n in input_names if n not in arrays]
    if missing:
        raise ModelcostError(f"{p} has arrays {sorted(arrays)}; the model needs {input_names} (missing {missing})")
    counts = {len(arrays[n]) for n in input_names}
    if len(counts) != 1:
        raise ModelcostError(f"{p}: the arrays for {input_names} have different numbers of samples (first axis)")
    return {n: arrays[n] for n in input_names}


def npz_chunks(data: dict[str, Any], chunk: int) -> Iterator[dict[str, Any]]:
    n = len(next(iter(data.values())))
    for i in range(0, n, chunk):
        yield {k: v[i:i + chunk] for k, v in data.items()}


class _Reader:
    """A CalibrationDataReader over a list of feeds (ONNX Runtime calls ``get_next`` until it gets None)."""

    def __init__(self, feeds: list[dict[str, Any]]) -> None:
        self._it = iter(feeds)

    def get_next(self) -> dict[str, Any] | None:
        return next(self._it, None)

    def rewind(self) -> None:  # not needed by MinMax; kept for other calibrators
        pass


def calibration_feeds(model_path: Path, specs_for: SpecsFor, calib_data: str | Path | None, samples: int,
                      chunk: int, seed: int) -> tuple[list[dict[str, Any]], str]:
    """The calibration batches and, in words, what they are."""
    np = require("numpy")
    names = [s.name for s in specs_for(1)]
    if calib_data is not None:
        data = load_npz(calib_data, names)
        feeds = [{k: np.ascontiguousarray(v) for k, v in c.items()} for c in npz_chunks(data, chunk)]
        n = len(next(iter(data.values())))
        return feeds, f"--calib-data {calib_data} ({n} samples)"
    from modelcost.bench.inputs import make_host_inputs, onnx_int_ranges

    onnx = require("onnx")
    highs = onnx_int_ranges(onnx.load(str(model_path), load_external_data=False))
    feeds = []
    for i in range(0, samples, chunk):
        arrays, _ = make_host_inputs(specs_for(min(chunk, samples - i)), int_high=highs, seed=seed + i)
        feeds.append(dict(zip(names, arrays)))
    return feeds, (f"generated data ({samples} samples: standard normal floats, valid integer ids), not real "
                   "data: the INT8 scales may not fit real inputs; pass --calib-data FILE.npz for real accuracy")


def quantize_int8(model_path: str | Path, out_path: str | Path | None = None, *, specs_for: SpecsFor,
                  calib_data: str | Path | None = None, samples: int = 32, chunk: int = 8, seed: int = 1000,
                  per_channel: bool = True) -> Quantized:
    """Write a static Q/DQ INT8 copy of ``model_path`` (default ``<stem>.int8.onnx`` beside it)."""
    src = Path(model_path)
    out = Path(out_path) if out_path is not None else src.with_name(f"{src.stem}.int8.onnx")
    q = require("onnxruntime.quantization")
    feeds, calibration = calibration_feeds(src, specs_for, calib_data, samples, chunk, seed)
    notes: list[str] = []
    with tempfile.TemporaryDirectory(prefix="modelcost-quant-") as tmp:
        prepared = Path(tmp) / "prepared.onnx"
        try:
            from onnxruntime.quantization.shape_inference import quant_pre_process

            quant_pre_process(str(src), str(prepared), skip_symbolic_shape=False)
            source = prepared
        except Exception as exc:  # noqa: BLE001 - pre-processing is advised, not required
            notes.append(f"pre-processing (quant_pre_process) failed, quantized the original: "
                         f"{first_line(exc)}")
            source = src
        tmp_out = scratch_beside(out)
        try:
            q.quantize_static(
                str(source), str(tmp_out), _Reader(feeds), quant_format=q.QuantFormat.QDQ, per_channel=per_channel,
                activation_type=q.QuantType.QInt8, weight_type=q.QuantType.QInt8,
                calibrate_method=q.CalibrationMethod.MinMax,
                extra_options={"ActivationSymmetric": True, "WeightSymmetric": True},
            )
        except BaseException as exc:
            tmp_out.unlink(missing_ok=True)  # this process's own (mkstemp)
            if isinstance(exc, Exception):
                raise ModelcostError(f"INT8 quantization of {src} failed: {first_line(exc)}") from exc
            raise
        tmp_out.replace(out)
    notes.append("ONNX Runtime static quantization, QDQ format, INT8 weights per channel (symmetric) and INT8 "
                 "activations (symmetric), MinMax calibration")
    return Quantized(out, "int8", calibration, notes)


def convert_fp16(model_path: str | Path, out_path: str | Path | None = None) -> Quantized:
    """Write an FP16 copy of ``model_path`` with float32 inputs and outputs (default ``<stem>.fp16.onnx``)."""
    src = Path(model_path)
    out = Path(out_path) if out_path is not None else src.with_name(f"{src.stem}.fp16.onnx")
    onnx = require("onnx")
    try:
        from onnxruntime.transformers.float16 import convert_float_to_float16
        how = "onnxruntime.transformers.float16"
    except ImportError:
        convert_float_to_float16 = require("onnxconverter_common.float16").convert_float_to_float16
        how = "onnxconverter_common.float16"
    from modelcost.loaders.onnx_external import needs_external_data

    model = onnx.load(str(src))
    converted = convert_float_to_float16(model, keep_io_types=True)
    tmp_out = scratch_beside(out)
    big = needs_external_data(converted)
    try:
        onnx.save(converted, str(tmp_out), save_as_external_data=big,
                  location=f"{out.name}.data" if big else None)
        tmp_out.replace(out)
    except BaseException:
        tmp_out.unlink(missing_ok=True)  # this process's own (mkstemp)
        raise
    return Quantized(out, "fp16", notes=[f"float16 conversion ({how}), inputs and outputs kept float32"])
