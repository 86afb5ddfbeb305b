"""Read an ONNX file without its weight bytes: a *lean* ModelProto parsed from the file's protobuf wire format.

``onnx.load(load_external_data=False)`` still parses every inline weight: memory and parsing time for bytes
static analysis never looks at (BENCHMARKS.md, 'Figures that used to live in docstrings'). Here the file is walked field
by field; every tensor whose data is larger than ``STUB_BYTES`` (integer tensors: larger than
``KEEP_INT_BYTES``, so the index / position / shape tables that shape inference propagates stay) is rewritten as a
*stub*: the same name, dims and data type, no data, marked external at ``STUB_LOCATION``, a location no file has.
Only the messages on the way to tensors are decoded (model -> graph -> node -> attribute -> subgraph, functions,
sparse initializers); everything else is copied as bytes, and a weight's pages are never touched.

The file is read with ``os.pread`` in small windows, not memory-mapped: a mapping's page faults read ahead and
map megabytes of weights around every tensor header, which shows up as resident memory.

The result parses with protobuf into a normal ModelProto a few hundred KB in size. Stubs are never read: the
external-data check skips them, and the analysis uses dims and dtypes only.
"""

from __future__ import annotations

import os
from pathlib import Path

STUB_BYTES = 4096  # inline tensor data above this many bytes becomes a stub
KEEP_INT_BYTES = 1 << 16  # ... but integer / bool tensors up to this size keep their values (shape arithmetic)
STUB_LOCATION = "modelcost-stub-never-read"

INT_TYPES = frozenset({2, 3, 4, 5, 6, 7, 9, 12, 13})  # uint8 int8 uint16 int16 int32 int64 bool uint32 uint64
_TENSOR_DATA = frozenset({4, 5, 6, 7, 9, 10, 11})  # float/int32/string/int64/raw/double/uint64 data
_TENSOR_EXTERNAL = frozenset({13, 14})  # external_data, data_location: replaced in a stub

# message -> {field number: message kind} for the fields that can hold tensors (onnx.proto3 numbering)
_CHILDREN: dict[str, dict[int, str]] = {
    "model": {7: "graph", 25: "function"},
    "graph": {1: "node", 5: "tensor", 15: "sparse"},
    "function": {7: "node"},
    "node": {5: "attribute"},
    "attribute": {5: "tensor", 6: "graph", 10: "tensor", 11: "graph", 22: "sparse", 23: "sparse"},
    "sparse": {1: "tensor", 2: "tensor"},
}


WINDOW_BYTES = 1 << 16


class WireError(ValueError):
    """The bytes are not a well-formed protobuf message."""


class _File:
    """Random access to a file through one cached window of ``WINDOW_BYTES`` (os.pread)."""

    def __init__(self, fd: int, size: int) -> None:
        self.fd, self.size = fd, size
        self.base, self.window = 0, b""

    def byte(self, pos: int) -> int:
        off = pos - self.base
        if not 0 <= off < len(self.window):
            self.base, self.window = pos, os.pread(self.fd, WINDOW_BYTES, pos)
            if not self.window:
                raise WireError("unexpected end of file")
            off = 0
        return self.window[off]

    def read(self, start: int, stop: int) -> bytes:
        off = start - self.base
        if 0 <= off and stop - self.base <= len(self.window):
            return self.window[off:stop - self.base]
        data = os.pread(self.fd, stop - start, start)
        if len(data) != stop - start:
            raise WireError("unexpected end of file")
        return data


def _varint(buf: _File, pos: int, end: int) -> tuple[int, int]:
    result = shift = 0
    while True:
        if pos >= end or shift > 63:
            raise WireError("truncated varint")
        byte = buf.byte(pos)
        pos += 1
        result |= (byte & 0x7F) << shift
        if not byte & 0x80:
            return result, pos
        shift += 7


def _encode_varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte = value & 0x7F
        value >>= 7
        if value:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _fields(buf: _File, start: int, end: int):  # type: ignore[no-untyped-def]
    """(field number, wire type, field start, payload start, payload end) of each field in buf[start:end]."""
    pos = start
    while pos < end:
        first = pos
        tag, pos = _varint(buf, pos, end)
        number, wire = tag >> 3, tag & 7
        if wire == 0:
            payload = pos
            _, pos = _varint(buf, pos, end)
        elif wire == 1:
            payload, pos = pos, pos + 8
        elif wire == 2:
            length, payload = _varint(buf, pos, end)
            pos = payload + length
        elif wire == 5:
            payload, pos = pos, pos + 4
        else:
            raise WireError(f"unsupported wire type {wire}")
        if pos > end or number == 0:
            raise WireError("field past the end of its message")
        yield number, wire, first, payload, pos


def _message(buf: _File, start: int, end: int, kind: str) -> bytes:
    """The message buf[start:end] of ``kind`` with its big tensors stubbed."""
    if kind == "tensor":
        return _tensor(buf, start, end)
    children = _CHILDREN[kind]
    out: list[bytes] = []
    for number, wire, first, payload, stop in _fields(buf, start, end):
        child = children.get(number) if wire == 2 else None
        if child is None or stop - payload <= STUB_BYTES:
            out.append(buf.read(first, stop))  # nothing big inside: copied as it is
            continue
        body = _message(buf, payload, stop, child)
        out.append(_encode_varint(number << 3 | 2) + _encode_varint(len(body)) + body)
    return b"".join(out)


def _tensor(buf: _File, start: int, end: int) -> bytes:
    fields = list(_fields(buf, start, end))
    data_bytes = sum(stop - payload for number, _, _, payload, stop in fields if number in _TENSOR_DATA)
    data_type = next((_varint(buf, payload, stop)[0] for number, wire, _, payload, stop in fields
                      if number == 2 and wire == 0), 0)
    limit = KEEP_INT_BYTES if data_type in INT_TYPES else STUB_BYTES
    if data_bytes <= limit:
        return buf.read(start, end)
    out = [buf.read(first, stop) for number, _, first, _, stop in fields
           if number not in _TENSOR_DATA and number not in _TENSOR_EXTERNAL]
    entry = _string_field(1, "location") + _string_field(2, STUB_LOCATION)
    out.append(_encode_varint(13 << 3 | 2) + _encode_varint(len(entry)) + entry)  # external_data
    out.append(_encode_varint(14 << 3) + _encode_varint(1))  # data_location = EXTERNAL
    return b"".join(out)


def _string_field(number: int, text: str) -> bytes:
    data = text.encode()
    return _encode_varint(number << 3 | 2) + _encode_varint(len(data)) + data


def lean_model_bytes(path: Path) -> bytes:
    """The serialized ModelProto of ``path`` with every big inline tensor stubbed (see module doc).
    Raises WireError when the file is not well-formed protobuf."""
    with open(path, "rb") as f:
        size = os.fstat(f.fileno()).st_size
        return _message(_File(f.fileno(), size), 0, size, "model")


def is_stub(tensor: object) -> bool:
    """True for a tensor this module (or the skeleton) stubbed: its data is not in the file's parse."""
    entries = getattr(tensor, "external_data", ())
    return any(e.key == "location" and e.value == STUB_LOCATION for e in entries)
