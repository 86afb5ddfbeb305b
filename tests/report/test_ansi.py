"""Terminal colour codes in captured text (a failed export's message) never reach a report: Markdown and HTML
strip them, and so do the places that capture an exception's text."""

from __future__ import annotations

import dataclasses

from tests.report import test_report_data as data

from modelcost.core.text import first_line as _first_line
from modelcost.core.text import strip_ansi
from modelcost.core.types import BenchResult
from modelcost.report.html import render_html
from modelcost.report.markdown import render_markdown

# what torch.onnx's dynamo exporter raised in a real run (issue 16)
COLOURED = ("could not export bert to ONNX (dynamo: TorchExportError: Failed to export the model with torch.export. "
            "\x1b[96mThis is step 1/3\x1b[0m of exporting the model to ONNX. Next steps:)")


def test_strip_ansi_removes_csi_osc_and_control_characters():
    assert strip_ansi("\x1b[96mstep 1/3\x1b[0m done") == "step 1/3 done"
    assert strip_ansi("\x1b[1;31;40mred\x1b[K\x1b[2J") == "red"
    assert strip_ansi("\x1b]8;;https://x.org\x07link\x1b]8;;\x07 text") == "link text"
    assert strip_ansi("bell\x07 back\x08 tab\tnew\nline") == "bell back tab\tnew\nline"
    assert strip_ansi("plain [96m stays") == "plain [96m stays"  # no ESC: ordinary text is not touched


def _run_with_failed_export():
    run = data.run()
    failed = BenchResult("ort-cuda", "fp32", 1, "failed", reason=COLOURED, notes=["\x1b[33mwarning\x1b[0m: slow"])
    return dataclasses.replace(run, benchmarks=[*run.benchmarks, failed])


def test_html_and_markdown_drop_colour_codes():
    run = _run_with_failed_export()
    for text in (render_html(run), render_markdown(run)):
        assert "\x1b" not in text and "[96m" not in text and "[0m" not in text
        assert "This is step 1/3" in text


def test_captured_exception_text_is_plain():
    assert _first_line(RuntimeError(COLOURED)) == "RuntimeError: " + strip_ansi(COLOURED)
    assert "\x1b" not in _first_line(RuntimeError(COLOURED))


def test_first_line_with_and_without_the_type():
    # the one "first line of an exception" helper: the type, then the message's first line; with_type=False the
    # line alone; an empty message gives the type either way
    exc = ValueError("  bad shape\nsecond line")
    assert (_first_line(exc), _first_line(exc, with_type=False)) == ("ValueError: bad shape", "bad shape")
    assert _first_line(exc, 3, with_type=False) == "bad"
    assert _first_line(KeyError(), with_type=False) == "KeyError"
    # torch's BackendCompilerFailed opens with "backend='inductor' raised:" and the cause on the next line: the
    # tenth held-out set's Marian reported only the opening (H100, 2026-11-27), now the cause too
    compiler = RuntimeError("backend='inductor' raised:\n\nRuntimeError: Triton Error [CUDA]: misaligned\n\nSet "
                            "TORCHDYNAMO_VERBOSE=1 for more")
    assert _first_line(compiler) == \
        "RuntimeError: backend='inductor' raised: RuntimeError: Triton Error [CUDA]: misaligned"
    assert _first_line(RuntimeError("nothing follows:")) == "RuntimeError: nothing follows:"


def test_first_line_leaves_out_cpp_source_locations_and_template_signatures():
    # what ONNX Runtime 1.31's CUDA provider raised on VideoMAE's Conv3d at fp16 (H100, the sixteenth held-out set):
    # the cause (cuDNN's frontend found no plan) sat behind two source paths and their 250-character signatures
    sig = ("std::conditional_t<THRW, void, onnxruntime::common::Status> onnxruntime::CudaCall(ERRTYPE, const char*, "
           "const char*, SUCCTYPE, const char*, const char*, int) [with ERRTYPE = cudnn_frontend::error_object; bool "
           "THRW = true; SUCCTYPE = cudnn_frontend::error_code_t; std::conditional_t<THRW, void, common::Status> = "
           "void]")
    ort = RuntimeError("Error in execution: Non-zero status code returned while running Conv node. Name:'/patch/Conv' "
                       "Status Message: Failed to initialize CUDNN Frontend: /onnxruntime_src/onnxruntime/core/"
                       f"providers/cuda/cudnn_fe_call.cc:117 {sig} /onnxruntime_src/onnxruntime/core/providers/cuda/"
                       f"cudnn_fe_call.cc:109 {sig} CUDNN_FE failure 8: HEURISTIC_QUERY_FAILED ; GPU=0")
    assert _first_line(ort) == ("RuntimeError: Error in execution: Non-zero status code returned while running Conv "
                                "node. Name:'/patch/Conv' Status Message: Failed to initialize CUDNN Frontend: "
                                "CUDNN_FE failure 8: HEURISTIC_QUERY_FAILED ; GPU=0")
    # a path without a signature after it stays (it may be the point: a missing file)
    assert _first_line(OSError("cannot open /data/model.onnx:12 for reading")) == \
        "OSError: cannot open /data/model.onnx:12 for reading"
