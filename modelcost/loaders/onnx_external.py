"""Check an ONNX model's external data without reading a byte of it.

For every tensor whose ``data_location`` is EXTERNAL (initializers, Constant-node values, sparse
initializers, in the main graph and in every subgraph) we check, from the ``external_data`` entries that
``onnx.external_data_helper.ExternalDataInfo`` parses:

* the location is a relative path that stays inside the model's folder: an absolute path, a drive letter or a
  ``..`` component is refused (the rule onnx itself applies when it loads external data), and so is a location
  whose real path (symlinks followed) lies outside the model's real folder, or one holding a NUL byte;
* the file exists and is a regular file;
* ``offset + length`` fits in the file, and ``length`` (when given) is at least what the tensor's dims and
  dtype need; without ``length`` the needed bytes are computed from the dims.

Each distinct file is stat'ed once and nothing is opened, so a 27 GB sparse weights file costs nothing.
"""

from __future__ import annotations

import os
import re
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath, PureWindowsPath
from typing import Any

from modelcost.core.errors import ModelcostError
from modelcost.loaders.onnx_lean import is_stub
from modelcost.loaders.onnx_types import packed_nbytes

_DRIVE = re.compile(r"^[A-Za-z]:")
_EXTERNAL = 1  # TensorProto.EXTERNAL


@dataclass
class ExternalDataSummary:
    files: dict[str, int] = field(default_factory=dict)  # location -> size of the file on disk, bytes
    tensors: int = 0  # how many tensors keep their data outside the model file

    @property
    def total_bytes(self) -> int:
        return sum(self.files.values())


def iter_tensors(graph: Any) -> Iterator[Any]:
    """Every TensorProto a graph holds: initializers, sparse initializers' values and indices, and tensors in
    node attributes (Constant values, ...), recursing into subgraphs."""
    yield from graph.initializer
    for sparse in graph.sparse_initializer:
        yield sparse.values
        yield sparse.indices
    for node in graph.node:
        for attr in node.attribute:
            if attr.HasField("t"):
                yield attr.t
            yield from attr.tensors
            if attr.HasField("sparse_tensor"):
                yield attr.sparse_tensor.values
                yield attr.sparse_tensor.indices
            if attr.HasField("g"):
                yield from iter_tensors(attr.g)
            for sub in attr.graphs:
                yield from iter_tensors(sub)


def check_location(location: str, tensor_name: str, model_name: str) -> None:
    """Refuse an external-data location that is empty, absolute or climbs out of the model's folder."""
    if not location:
        raise ModelcostError(f"{model_name}: tensor {tensor_name!r} is marked external but names no data file")
    if "\0" in location:
        raise ModelcostError(
            f"{model_name}: external data location {location!r} of tensor {tensor_name!r} holds a NUL byte; refusing it"
        )
    posix, windows = PurePosixPath(location), PureWindowsPath(location)
    if posix.is_absolute() or windows.is_absolute() or location.startswith(("/", "\\")) or _DRIVE.match(location):
        raise ModelcostError(
            f"{model_name}: external data location {location!r} of tensor {tensor_name!r} is an absolute path; "
            "refusing it (locations must be relative to the model's folder)"
        )
    if ".." in posix.parts or ".." in windows.parts:
        raise ModelcostError(
            f"{model_name}: external data location {location!r} of tensor {tensor_name!r} escapes the model's "
            "folder ('..'); refusing it"
        )


def check_real_path(folder: Path, location: str, tensor_name: str, model_name: str) -> None:
    """Refuse a location that leaves the model's folder through a symlink (a linked file or a linked folder on
    the way): its real path, symlinks followed, must lie inside the real path of the model's folder."""
    real_folder = os.path.realpath(folder)
    real = os.path.realpath(folder / location)
    if os.path.commonpath([real_folder, real]) != real_folder:
        raise ModelcostError(
            f"{model_name}: external data location {location!r} of tensor {tensor_name!r} leads outside the "
            f"model's folder through a symlink (to {real}); refusing it"
        )


def _info(tensor: Any, model_name: str) -> tuple[str, int, int | None]:
    from onnx.external_data_helper import ExternalDataInfo

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")  # unknown keys: onnx ignores them, so do we
            info = ExternalDataInfo(tensor)
    except ValueError as exc:  # negative or non-integer offset / length
        raise ModelcostError(f"{model_name}: bad external data entry of tensor {tensor.name!r}: {exc}") from None
    return info.location, int(info.offset or 0), info.length


# protobuf serializes no message of 2 GB or more; the margin leaves room for the graph's own bytes
PROTOBUF_LIMIT_BYTES = (1 << 31) - (1 << 24)


def needs_external_data(model: Any) -> bool:
    """Whether ``model`` (a ModelProto with its weights in it) must be saved with its weights as external data: its
    size is over ``PROTOBUF_LIMIT_BYTES``. Past 2 GB protobuf cannot even size it (``ByteSize`` raises
    "EncodeError: Failed to serialize proto"), and the size check itself failed: OLMo 2 1B's fp16 copy (3 GB)
    under ort-cuda (H100, benchmarks/results/device_2026-12-08)."""
    from google.protobuf.message import EncodeError

    try:
        return model.ByteSize() > PROTOBUF_LIMIT_BYTES
    except EncodeError:
        return True


def check_external_data(model: Any, model_path: Path) -> ExternalDataSummary:
    """Validate every external tensor of ``model`` against the files beside ``model_path`` (see module doc)."""
    folder = model_path.parent
    name = model_path.name
    summary = ExternalDataSummary()
    for tensor in iter_tensors(model.graph):
        if tensor.data_location != _EXTERNAL or is_stub(tensor):  # a stub: inline data this parse left out
            continue
        summary.tensors += 1
        location, offset, length = _info(tensor, name)
        check_location(location, tensor.name, name)
        size = summary.files.get(location)
        if size is None:
            check_real_path(folder, location, tensor.name, name)
            size = _file_size(folder / location, location, tensor.name, name)
            summary.files[location] = size
        needed = packed_nbytes(tensor.dims, tensor.data_type)
        if length is not None and length < needed:
            raise ModelcostError(
                f"{name}: tensor {tensor.name!r} declares {length} bytes of external data in {location!r} but its "
                f"dims {list(tensor.dims)} need {needed}; the model is inconsistent"
            )
        end = offset + (length if length is not None else needed)
        if end > size:
            raise ModelcostError(
                f"{name}: external data file {location!r} is too short: tensor {tensor.name!r} needs bytes "
                f"{offset}..{end} but the file has {size} bytes (truncated copy?)"
            )
    return summary


def _file_size(path: Path, location: str, tensor_name: str, model_name: str) -> int:
    try:
        st = os.stat(path)
    except FileNotFoundError:
        raise ModelcostError(
            f"{model_name}: external data file {location!r} (needed by tensor {tensor_name!r}) not found in "
            f"{path.parent}; copy it beside the model"
        ) from None
    except OSError as exc:
        raise ModelcostError(f"{model_name}: cannot stat external data file {location!r}: {exc.strerror}") from None
    if not path.is_file():
        raise ModelcostError(f"{model_name}: external data location {location!r} is not a regular file")
    return st.st_size
