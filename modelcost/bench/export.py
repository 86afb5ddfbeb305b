"""PyTorch -> ONNX, made when an ONNX Runtime or TensorRT backend is asked to run a PyTorch model.

The export is traced at batch 2 with the batch (first) dimension of every input and output made dynamic, so one
file serves every batch size of the sweep. The TorchScript-based exporter is tried first (fast, and the graphs
it writes are the ones TensorRT's parser knows best); where it is missing or fails, writes a file with inputs
the model was not given, or a file that does not compute what the module does (bench/export_parity.py: ONNX
Runtime's CPU provider against the module, at batch 1), the ``torch.export``-based exporter (``dynamo=True``) is
used; where neither writes a file that agrees, there is no file, and the error says why for each. The file is
cached under ``<cache>/onnx/<name>-<hash>/model.onnx`` where the hash covers the module's class, weights and input
specs and the torch version; a later run reuses it.
"""

from __future__ import annotations

import contextlib
import io
import os
import re
import shutil
import sys
import tempfile
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any, Protocol

from modelcost.core.errors import ModelcostError
from modelcost.core.text import first_line
from modelcost.core.types import TensorSpec
from modelcost.loaders.binding import Bound, args_kwargs


class Exportable(Protocol):
    """What the export reads of a model; ``bench.model.BenchModel`` is one. Declared here, below the model:
    the model imports this module when a backend first asks for its ONNX file, so this one must not import it."""

    name: str

    def content_hash(self) -> str: ...

    def cpu_module(self) -> Any: ...

    def host_inputs(self, batch_size: int) -> tuple[list[Any], list[str]]: ...

    def specs(self, batch_size: int) -> list[TensorSpec]: ...

    def call_args(self, tensors: Sequence[Any]) -> Bound: ...


EXPORT_BATCH = 2
OPSET = 17


def _slug(name: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "_", name).strip("_")[:60] or "model"


def flatten_outputs(obj: Any) -> list[Any]:
    """Tensors of a module's output in order: a tensor, tuples/lists, dicts (by insertion) and HF-style outputs."""
    import torch

    if isinstance(obj, torch.Tensor):
        return [obj]
    if isinstance(obj, dict) or hasattr(obj, "to_tuple"):
        values = obj.values() if isinstance(obj, dict) else obj.to_tuple()
        return [t for v in values for t in flatten_outputs(v)]
    if isinstance(obj, (list, tuple)):
        return [t for v in obj for t in flatten_outputs(v)]
    return []


def export_path(model: Exportable, cache_dir: Path) -> Path:
    """Where the export of ``model`` is cached (whether or not it is there yet)."""
    return Path(cache_dir) / "onnx" / f"{_slug(model.name)}-{model.content_hash()[:16]}" / "model.onnx"


def export_to_onnx(model: Exportable, cache_dir: Path) -> tuple[Path, str]:
    """(path of the ONNX file, a note saying how it was made and whether it was checked against the module)."""
    import torch

    from modelcost.bench.cache import mark_used
    from modelcost.bench.export_parity import check_parity

    final = export_path(model, cache_dir)
    final_dir = final.parent
    if final.exists():
        mark_used(final)
        return final, f"ONNX export reused from the cache ({final})"
    module = model.cpu_module()
    arrays, _ = model.host_inputs(EXPORT_BATCH)
    tensors = tuple(torch.from_numpy(a.copy()) for a in arrays)
    specs = model.specs(EXPORT_BATCH)
    input_names = [s.name for s in specs]
    args, kwargs = args_kwargs(model.call_args(tensors))  # by keyword when example_inputs gave a dict
    with torch.no_grad():
        n_out = len(flatten_outputs(module(*args, **kwargs)))
    output_names = [f"output_{i}" for i in range(n_out)]
    feed, reference = _parity_inputs(model, module)  # once, for whichever exporter's file is checked
    tmp_dir = _scratch(Path(cache_dir), final_dir)
    errors: list[tuple[str, str]] = []  # (exporter, why it failed)
    try:
        for exporter in (_export_torchscript, _export_dynamo):
            try:
                with native_output_kept_back():
                    how = exporter(module, args, kwargs, tmp_dir / "model.onnx", input_names, output_names)
                parity = check_parity(tmp_dir / "model.onnx", feed, reference)
                if parity.agrees is False:
                    raise ModelcostError(parity.why)
                break
            except Exception as exc:  # noqa: BLE001 - try the other exporter, then report both
                # first_line removes the colour codes torch.onnx puts in its step messages; modelcost's own
                # refusals (extra inputs, a file that disagrees) need no class name
                errors.append((exporter.__name__.removeprefix("_export_"),
                               first_line(exc, with_type=not isinstance(exc, ModelcostError))))
                for f in tmp_dir.iterdir():  # the scratch folder is this process's own (mkdtemp)
                    f.unlink()
        else:
            raise ModelcostError(f"could not export {model.name} to ONNX "
                                 f"({'; '.join(f'{name}: {why}' for name, why in errors)})")
        opset = _opset(tmp_dir / "model.onnx")
        _publish(Path(cache_dir), tmp_dir, final_dir)
    finally:
        shutil.rmtree(tmp_dir, ignore_errors=True)
    # the exporter that failed first, and why: the user sees why the file came from the other one
    failed = "".join(f"; {name} exporter failed: {why}" for name, why in errors)
    return final, (f"exported to ONNX with the {how} exporter (opset {opset}, dynamic batch{failed}; {parity.why}), "
                   f"cached at {final}")


def _parity_inputs(model: Exportable, module: Any) -> tuple[dict[str, Any], list[Any]]:
    """(feed, reference) for bench/export_parity.py: the model's own seeded inputs at ``PARITY_BATCH`` by input
    name, and the module's outputs on them."""
    import torch

    from modelcost.bench.export_parity import PARITY_BATCH

    arrays, _ = model.host_inputs(PARITY_BATCH)
    args, kwargs = args_kwargs(model.call_args(tuple(torch.from_numpy(a.copy()) for a in arrays)))
    with torch.no_grad():
        reference = [t.detach().float().numpy() for t in flatten_outputs(module(*args, **kwargs))]
    return dict(zip((s.name for s in model.specs(PARITY_BATCH)), arrays, strict=True)), reference


def _opset(path: Path) -> int | str:
    """The default-domain opset the file was written at (the torch.export-based exporter writes its own, not
    ``OPSET``); '?' where the file names none."""
    import onnx

    imports = onnx.load(str(path), load_external_data=False).opset_import
    found = [o.version for o in imports if o.domain in ("", "ai.onnx")]
    return found[0] if found else "?"


def _scratch(cache_dir: Path, final_dir: Path) -> Path:
    """A folder of this process's own beside the export's, recorded as modelcost's so that a run killed while
    exporting leaves nothing ``modelcost cache --clear`` would not remove."""
    import tempfile

    from modelcost.core import owned

    owned.make_folder(cache_dir, final_dir.parent)
    tmp_dir = Path(tempfile.mkdtemp(prefix=f".{final_dir.name}.", suffix=".tmp", dir=final_dir.parent))
    owned.record_tree(cache_dir, tmp_dir)
    return tmp_dir


def _publish(cache_dir: Path, tmp_dir: Path, final_dir: Path) -> None:
    """Move the export into place: the whole folder when it is new, else (a folder left from before that holds
    files modelcost did not write) its files one by one, beside those. Each is recorded as modelcost's."""
    from modelcost.core import owned

    names = sorted(p.name for p in tmp_dir.iterdir())
    if not os.path.lexists(final_dir):
        try:
            os.replace(tmp_dir, final_dir)
            owned.record_folder(cache_dir, final_dir)
            owned.record(cache_dir, *(final_dir / n for n in names))
            return
        except OSError:  # another process made it first, or it appeared meanwhile
            pass
    if (final_dir / "model.onnx").exists():  # another process's export: the same model, already recorded
        return
    if not final_dir.is_dir() or final_dir.is_symlink():
        raise ModelcostError(f"cannot cache the ONNX export: {final_dir} is in the way (not a folder modelcost "
                             "made); move it")
    in_the_way = owned.foreign(cache_dir, [f"{owned.relative(cache_dir, final_dir)}/{n}" for n in names])
    if in_the_way:
        raise ModelcostError(f"cannot cache the ONNX export: {cache_dir / in_the_way[0]} was not written by "
                             "modelcost; move it")
    for name in names:
        os.replace(tmp_dir / name, final_dir / name)
    owned.record(cache_dir, *(final_dir / n for n in names))


@contextlib.contextmanager
def native_output_kept_back() -> Iterator[None]:
    """The process's stdout and stderr (file descriptors 1 and 2) into a scratch file while an exporter runs, and
    put back after. A failing TorchScript export prints its whole TorchScript graph to stdout from C++ ("Torch IR
    graph at exception": about 400 lines for transformers' FNet, whose fft it cannot export; torch's
    ``setup_onnx_logging`` turns that log on whatever ``verbose`` says, as it tests the function
    ``_jit_is_onnx_log_enabled`` and not its result), and the torch.export-based exporter logs a warning per
    torchvision op it skips when torchvision is absent: neither is the user's business, and the export's note says
    which exporter failed and why. A progress bar drawn meanwhile goes to the scratch file too, and redraws after."""
    for stream in (sys.stdout, sys.stderr):
        stream.flush()
    try:
        saved = [os.dup(1), os.dup(2)]
    except OSError:  # no descriptor to keep back (a daemon's closed one)
        yield
        return
    try:
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                for stream in (sys.stdout, sys.stderr):
                    stream.flush()
                os.dup2(saved[0], 1)
                os.dup2(saved[1], 2)
    finally:
        for fd in saved:
            os.close(fd)


def _export_torchscript(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any], path: Path,
                        input_names: list[str], output_names: list[str]) -> str:
    import torch

    axes = {name: {0: "batch"} for name in [*input_names, *output_names]}
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        torch.onnx.export(module, args, str(path), kwargs=kwargs or None, input_names=input_names,
                          output_names=output_names, dynamic_axes=axes, opset_version=OPSET,
                          do_constant_folding=True, dynamo=False)
    _refuse_extra_inputs(path, input_names)
    return "TorchScript-based"


def _refuse_extra_inputs(path: Path, input_names: list[str]) -> None:
    """The TorchScript exporter fills in the forward's defaulted arguments, and an int one (transformers' causal
    LMs' ``logits_to_keep=0``) becomes a graph input that nothing feeds; such a file goes to the other exporter."""
    import onnx

    extra = [i.name for i in onnx.load(str(path), load_external_data=False).graph.input if i.name not in input_names]
    if extra:
        raise ModelcostError(f"the file takes inputs the model was not given ({', '.join(extra)}: a defaulted "
                             "argument of its forward, traced)")


def _export_dynamo(module: Any, args: tuple[Any, ...], kwargs: dict[str, Any], path: Path,
                   input_names: list[str], output_names: list[str]) -> str:
    import torch

    batch = torch.export.Dim("batch", min=1, max=65536)
    shapes: Any = {name: {0: batch} for name in kwargs} if kwargs else tuple({0: batch} for _ in args)
    with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
        warnings.simplefilter("ignore")
        program = torch.onnx.export(module, args, kwargs=kwargs or None, input_names=input_names,
                                    output_names=output_names, dynamic_shapes=shapes, dynamo=True, verbose=False)
        program.save(str(path), external_data=_big(module))
    _refuse_fixed_batch(path, input_names)
    return "torch.export-based"


def _refuse_fixed_batch(path: Path, input_names: list[str]) -> None:
    """Where the model's code makes the batch a constant (RT-DETR's query selection; an add of a batch-2 tensor),
    torch.export cannot keep it dynamic and the exporter writes the file at the export's batch (``EXPORT_BATCH``)
    without a word; ONNX Runtime then refuses any other batch ("Got invalid dimensions for input"). Such a file is
    refused here with the reason."""
    import onnx

    fixed = [(i.name, dims[0].dim_value) for i in onnx.load(str(path), load_external_data=False).graph.input
             if i.name in input_names and (dims := i.type.tensor_type.shape.dim) and dims[0].HasField("dim_value")]
    if fixed:
        name, batch = fixed[0]
        raise ModelcostError(f"the file's batch is fixed at {batch} (input {name}): the model's code makes the "
                             "batch a constant, so torch.export could not keep it dynamic")


def _big(module: Any) -> bool:
    return sum(p.numel() * p.element_size() for p in module.parameters()) > (1 << 30)
