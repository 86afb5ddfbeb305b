"""``modelcost cache --clear`` removes what modelcost wrote into the cache and nothing else, at any depth (issue 24):
a cache folder the user also keeps files in (``MODELCOST_CACHE_DIR`` pointed at a project folder) loses none
of them, not even those inside the folders modelcost writes into (onnx/, screening/, tensorrt/ ...)."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from modelcost.cli import app

pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning")

# Files the user keeps in the cache folder: beside the entries, inside them, and deeper.
FOREIGN = ["mine.txt", "onnx/my_model.onnx", "onnx/mine/deeper/weights.bin", "onnx-fp16/notes.md",
           "screening/plan.txt", "ceilings/h100.json", "tensorrt/my.engine", "tensorrt/deep/timing.cache",
           "inductor/keep.py", "ort-tensorrt/mine.profile", "compile-ahead/todo.done", "onnx-qdq-int8/x.onnx",
           "projects/src/main.py"]


def _tiny():
    import torch

    from modelcost.bench.model import from_module
    from modelcost.core.types import TensorSpec

    torch.manual_seed(0)
    net = torch.nn.Sequential(torch.nn.Conv2d(3, 4, 3), torch.nn.Flatten(), torch.nn.Linear(4 * 6 * 6, 5))
    return from_module(net.eval(), lambda b: [TensorSpec("x", (b, 3, 8, 8), "float32")], name="tiny")


def _write_as_modelcost(cache: Path) -> list[Path]:
    """What a run writes, through the real writers: the ONNX export of a torch model, its fp16 copy, a
    screening record and measured ceilings. Returns the files written."""
    from modelcost.bench.backends.ort import fp16_copy
    from modelcost.bench.base import BenchConfig
    from modelcost.bench.screening_record import ScreeningRecord
    from modelcost.core.types import BenchResult, CeilingMeasurement, GpuSpec, LatencyStats
    from modelcost.hardware import ceilings

    model = _tiny()
    export = model.onnx_file(cache)
    fp16 = fp16_copy(export, cache, "tinykey")
    record = ScreeningRecord.open(cache, {"model": model.content_hash(), "settings": BenchConfig().seed})
    lat = LatencyStats(count=5, p50=1.0, p90=1.0, p95=1.0, p99=1.0, mean=1.0, std=0.0, min=1.0, max=1.0)
    record.add(BenchResult("ort-cpu", "fp32", 1, "ok", latency_ms=lat, throughput_ips=1000.0), "x 1x3x8x8")
    record.save()
    gpu = GpuSpec(name="Test GPU", architecture="Hopper", driver="1.0")
    ceiling = ceilings._save(gpu, [CeilingMeasurement("matmul", "fp32", 1.0, "TFLOP/s")], None, {})
    return [export, fp16, record.path, ceiling]


def _plant(cache: Path, names: list[str]) -> None:
    for name in names:
        (cache / name).parent.mkdir(parents=True, exist_ok=True)
        (cache / name).write_text(f"the user's own {name}\n")


def test_clear_removes_what_modelcost_wrote_and_no_file_of_the_user(tmp_path: Path, monkeypatch) -> None:
    cache = tmp_path / "project"
    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(cache))
    _plant(cache, FOREIGN)
    ours = _write_as_modelcost(cache)
    export_folder = ours[0].parent
    _plant(cache, [f"onnx/{export_folder.name}/README.txt"])  # dropped into the folder of our export
    foreign = [*FOREIGN, f"onnx/{export_folder.name}/README.txt"]
    assert all(p.is_file() for p in ours)

    listed = CliRunner().invoke(app, ["cache"])
    assert listed.exit_code == 0, listed.output
    assert "screening" in listed.output and "onnx-fp16" in listed.output
    res = CliRunner().invoke(app, ["cache", "--clear"])
    assert res.exit_code == 0, res.output
    for name in foreign:  # every file of the user's is there, unchanged
        assert (cache / name).read_text() == f"the user's own {name}\n", name
    assert not [p for p in ours if p.exists()]  # and what modelcost wrote is gone
    assert "left alone" in res.output and "onnx/my_model.onnx" in res.output
    # a folder that is none of modelcost's entries is named, not read: a cache pointed at a large folder stays quick
    from modelcost.bench.cache import cache_usage

    others = cache_usage(cache).others
    assert "projects/" in others and "projects/src/main.py" not in others and "onnx/mine/deeper/weights.bin" in others
    res = CliRunner().invoke(app, ["cache"])
    assert "holds nothing modelcost wrote" in res.output


def test_the_issue_reproduction_keeps_both_files(tmp_path: Path, monkeypatch) -> None:
    cache = tmp_path / "P"
    sample = Path(__file__).resolve().parents[2] / "sample_models" / "resnet_tiny.onnx"
    (cache / "onnx").mkdir(parents=True)
    (cache / "screening").mkdir()
    (cache / "onnx" / "my_model.onnx").write_bytes(sample.read_bytes())
    (cache / "screening" / "plan.txt").write_text("x\n")
    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(cache))
    res = CliRunner().invoke(app, ["cache", "--clear"])
    assert res.exit_code == 0, res.output
    assert (cache / "onnx" / "my_model.onnx").read_bytes() == sample.read_bytes()
    assert (cache / "screening" / "plan.txt").read_text() == "x\n"
    assert "holds nothing modelcost wrote" in res.output
    assert "left alone (not written by modelcost): onnx/my_model.onnx, screening/plan.txt" in res.output


def test_a_folder_made_for_inductor_goes_whole_one_the_user_made_stays(tmp_path: Path, monkeypatch) -> None:
    from modelcost.bench.backends.torch_backends import use_compile_cache
    from modelcost.bench.cache import cache_usage, clear_cache

    ours, theirs = tmp_path / "ours", tmp_path / "theirs"
    _plant(theirs, ["inductor/keep.py"])
    for cache in (ours, theirs):
        monkeypatch.setenv("TORCHINDUCTOR_CACHE_DIR", "")  # unset: modelcost points inductor at the cache
        assert use_compile_cache(cache) == str(cache / "inductor")
        _plant(cache, ["inductor/fxgraph/ab/graph.py"])  # what inductor writes there, named as it likes
    assert [(e.name, e.files) for e in cache_usage(ours).entries] == [("inductor", 1)]
    assert cache_usage(theirs).entries == [] and cache_usage(theirs).others == [
        "inductor/fxgraph/ab/graph.py", "inductor/keep.py"]  # a folder that was there before is never claimed
    clear_cache(ours)
    clear_cache(theirs)
    assert sorted(p.name for p in ours.iterdir()) == []
    assert (theirs / "inductor" / "keep.py").is_file() and (theirs / "inductor/fxgraph/ab/graph.py").is_file()


def test_tensorrt_engines_and_timing_caches_are_recorded(tmp_path: Path) -> None:
    from modelcost.bench.backends.ort import fp16_copy_path
    from modelcost.bench.backends.tensorrt import _write_atomic
    from modelcost.bench.cache import cache_usage, clear_cache
    from modelcost.core import owned

    cache = tmp_path / "cache"
    _plant(cache, ["tensorrt/my.engine", "ort-tensorrt/mine.profile"])
    _write_atomic(cache / "tensorrt" / "k.engine", b"e" * 100, cache)
    _write_atomic(cache / "tensorrt" / "timing-10.0-H100.cache", b"t" * 10, cache)
    assert not owned.claim_tree(cache, cache / "ort-tensorrt")  # the user's folder: not claimed
    assert owned.claim_tree(cache, fp16_copy_path(cache, "k").parent)  # a new folder: claimed
    usage = cache_usage(cache)
    # tensorrt: 100 + 10 bytes in 2 files (the user's my.engine is not counted)
    assert [(e.name, e.size_bytes, e.files) for e in usage.entries] == [("tensorrt", 110, 2)]
    assert usage.others == ["ort-tensorrt/mine.profile", "tensorrt/my.engine"]
    clear_cache(cache)
    assert sorted(p.relative_to(cache).as_posix() for p in cache.rglob("*")) == [
        "ort-tensorrt", "ort-tensorrt/mine.profile", "tensorrt", "tensorrt/my.engine"]


def test_a_folder_made_by_modelcost_goes_once_the_users_files_are_out(tmp_path: Path, monkeypatch) -> None:
    from modelcost.bench.cache import clear_cache

    cache = tmp_path / "cache"
    monkeypatch.setenv("MODELCOST_CACHE_DIR", str(cache))
    export = _tiny().onnx_file(cache)
    _plant(cache, [f"onnx/{export.parent.name}/README.txt"])
    clear_cache(cache)
    assert sorted(p.name for p in export.parent.iterdir()) == ["README.txt"]
    again = _tiny().onnx_file(cache)  # exported again beside the user's file, which stays
    assert again == export and export.is_file() and (export.parent / "README.txt").is_file()
    clear_cache(cache)
    (export.parent / "README.txt").unlink()
    clear_cache(cache)  # the folders modelcost made (onnx/, onnx/tiny-...) go once empty
    assert list(cache.iterdir()) == []


def test_a_manifest_never_reaches_outside_the_folder_nor_through_a_link(tmp_path: Path) -> None:
    from modelcost.core import owned

    cache, outside = tmp_path / "cache", tmp_path / "outside"
    _plant(outside, ["precious.txt", "linked/data.bin"])
    cache.mkdir()
    owned.write(cache, cache / "screening" / "r.json", b"{}")
    owned.write(cache, cache / "onnx" / "m" / "model.onnx", b"m")
    # the user puts links where modelcost's files and folders were
    (cache / "screening" / "r.json").unlink()
    (cache / "screening" / "r.json").symlink_to(outside / "precious.txt")
    (cache / "onnx" / "m" / "model.onnx").unlink()
    (cache / "onnx" / "m").rmdir()
    (cache / "onnx" / "m").symlink_to(outside / "linked")
    (outside / "linked" / "model.onnx").write_text("the user's")
    with (cache / owned.MANIFEST).open("a") as fh:  # and lines that name paths outside the folder
        fh.write(f"file ../outside/precious.txt\nfile {outside / 'precious.txt'}\ntree ../outside\n"
                 "folder ..\ntree onnx/m\nfile onnx/m/model.onnx\n")
    removal = owned.remove_owned(cache)
    assert removal.removed == [] and removal.failed == []
    assert (outside / "precious.txt").read_text() == "the user's own precious.txt\n"
    assert (outside / "linked" / "model.onnx").read_text() == "the user's"
    assert (cache / "screening" / "r.json").is_symlink() and (cache / "onnx" / "m").is_symlink()


def test_the_export_works_in_a_folder_of_its_own_and_removes_only_that(tmp_path: Path) -> None:
    import os

    from modelcost.bench.export import export_path

    cache = tmp_path / "cache"
    model = _tiny()
    final_dir = export_path(model, cache).parent
    mine = final_dir.parent / f".{final_dir.name}.tmp{os.getpid()}" / "keep.txt"  # the scratch folder's old name
    _plant(cache, [mine.relative_to(cache).as_posix()])
    assert model.onnx_file(cache).is_file()
    assert mine.read_text() == f"the user's own {mine.relative_to(cache).as_posix()}\n"
    assert sorted(p.name for p in final_dir.parent.iterdir()) == sorted([final_dir.name, mine.parent.name])


def test_the_fp16_copy_infers_shapes_before_it_reads_the_external_weights(tmp_path: Path, monkeypatch) -> None:
    # The converter's own shape inference serialized the whole model, which protobuf refuses past 2 GB (BLOOM-560M's
    # 2.2 GB fp32 export: "EncodeError: Failed to serialize proto"). Shapes are now inferred on the proto that
    # holds only the external weights' references, and the copy still gets every weight, in fp16.
    import onnx
    import onnx.shape_inference

    cache = tmp_path / "cache"
    cache.mkdir()
    model = onnx.load(str(_tiny().onnx_file(cache)))
    big = tmp_path / "big.onnx"
    onnx.save(model, str(big), save_as_external_data=True, all_tensors_to_one_file=True, location="big.data",
              size_threshold=0)
    real, seen = onnx.shape_inference.infer_shapes, []

    def infer(m, *a, **k):
        seen.append(sum(len(t.raw_data) for t in m.graph.initializer))
        return real(m, *a, **k)

    monkeypatch.setattr(onnx.shape_inference, "infer_shapes", infer)
    from modelcost.bench.backends.ort import fp16_copy

    out = onnx.load(str(fp16_copy(big, cache, "bigkey")))
    assert seen == [0]  # inferred once, on references only
    weights = [t for t in out.graph.initializer if t.dims]
    assert weights and all(t.data_type == onnx.TensorProto.FLOAT16 and t.raw_data for t in weights)


def _two_cumsums_of_one_cast(path: Path) -> Path:
    """DETR's position embedding in small: one Cast of the mask feeds two CumSums (fp32-only for the converter)."""
    import onnx
    from onnx import TensorProto, helper

    axis1 = helper.make_tensor("axis1", TensorProto.INT64, [], [1])
    axis2 = helper.make_tensor("axis2", TensorProto.INT64, [], [2])
    nodes = [helper.make_node("Cast", ["mask"], ["m"], to=TensorProto.FLOAT, name="/model/position_embedding/Cast"),
             helper.make_node("Relu", ["m"], ["r"], name="relu"),
             helper.make_node("CumSum", ["r", "axis1"], ["y"], name="cumsum_y"),
             helper.make_node("CumSum", ["r", "axis2"], ["x"], name="cumsum_x"),
             helper.make_node("Add", ["x", "y"], ["out"], name="add")]
    graph = helper.make_graph(nodes, "pos", [helper.make_tensor_value_info("mask", TensorProto.FLOAT, [1, 4, 4])],
                              [helper.make_tensor_value_info("out", TensorProto.FLOAT, [1, 4, 4])],
                              initializer=[axis1, axis2])
    onnx.save(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)]), str(path))
    return path


def test_the_fp16_copy_has_one_cast_where_the_converter_made_two(tmp_path: Path) -> None:
    # onnxruntime 1.31's converter (the GPU machine's) casts the Relu's fp16 output back to fp32 once per CumSum,
    # both nodes named "r_cast_to_fp32_node" writing "r_cast_to_fp32": ORT refused DETR's copy. The repeat goes.
    import onnx
    from onnx import helper

    from modelcost.bench.backends.ort import fp16_copy, one_cast_each

    model = onnx.load(str(_two_cumsums_of_one_cast(tmp_path / "pos.onnx")))
    cast = helper.make_node("Cast", ["r"], ["r_cast_to_fp32"], to=1, name="r_cast_to_fp32_node")
    info = helper.make_tensor_value_info("r_cast_to_fp32", onnx.TensorProto.FLOAT, [1, 4, 4])
    model.graph.node.extend([cast, cast])  # as 1.31 leaves it
    model.graph.value_info.extend([info, info])
    fixed = one_cast_each(model)
    assert [n.name for n in fixed.graph.node].count("r_cast_to_fp32_node") == 1
    assert [v.name for v in fixed.graph.value_info].count("r_cast_to_fp32") == 1
    # and the copy this machine's converter writes has unique node names, and ONNX Runtime loads and runs it (the
    # converter appends its Casts at the end, which onnx.checker calls unsorted and ONNX Runtime sorts)
    import numpy as np
    import onnxruntime as ort

    cache = tmp_path / "cache"
    cache.mkdir()
    copy = fp16_copy(tmp_path / "pos.onnx", cache, "pos")
    names = [n.name for n in onnx.load(str(copy)).graph.node]
    assert len(names) == len(set(names))
    mask = np.ones((1, 4, 4), dtype=np.float32)
    [out] = ort.InferenceSession(str(copy), providers=["CPUExecutionProvider"]).run(None, {"mask": mask})
    # ones cumsummed along each axis and added: out[0, i, j] = (i + 1) + (j + 1)
    assert out[0, 3, 3] == 8.0 and out[0, 0, 0] == 2.0
