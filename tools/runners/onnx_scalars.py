"""The single-valued initializers of an ONNX graph (quantisation scales and zero points), read from its bytes.

onnxruntime runs a graph but does not show its initializers, and the `onnx` package that does (with protobuf) is
a large dependency for a few numbers. An ONNX file is a protobuf message, and the few fields needed here are read
from protobuf's wire format directly: `ModelProto.graph` (field 7) → `GraphProto.initializer` (5) → each
`TensorProto`'s `data_type` (2), `name` (8) and `raw_data` (9). Only values stored as `raw_data` are found, which is
how exporters store them; a tensor stored elsewhere (external data, typed fields) or holding more than one value is
left out.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np

MODEL_GRAPH = 7
GRAPH_INITIALIZER = 5
TENSOR_DATA_TYPE = 2
TENSOR_NAME = 8
TENSOR_RAW_DATA = 9

DATA_TYPES = {1: "<f4", 2: "u1", 3: "i1", 4: "<u2", 5: "<i2", 6: "<i4", 7: "<i8", 10: "<f2", 11: "<f8"}
"""ONNX `TensorProto.DataType` → the numpy dtype of its little-endian `raw_data`."""


def scalar_initializers(model: bytes) -> dict[str, float]:
    """Name → value of every initializer of `model` (an ONNX file's bytes) that holds one number as raw data.

    Raises ValueError when the bytes are not a protobuf message.
    """
    found: dict[str, float] = {}
    for graph in _submessages(memoryview(model), MODEL_GRAPH):
        for tensor in _submessages(graph, GRAPH_INITIALIZER):
            fields = {number: value for number, value in _fields(tensor)}
            dtype = DATA_TYPES.get(int(fields.get(TENSOR_DATA_TYPE, 0)))
            raw = fields.get(TENSOR_RAW_DATA)
            if dtype is None or not isinstance(raw, memoryview) or len(raw) != np.dtype(dtype).itemsize:
                continue
            name = bytes(fields.get(TENSOR_NAME, b"")).decode("utf-8")
            found[name] = np.frombuffer(raw, dtype=dtype).item()
    return found


def _submessages(message: memoryview, number: int) -> Iterator[memoryview]:
    """The length-delimited fields numbered `number` of `message`, as views of their bytes."""
    for field, value in _fields(message):
        if field == number and isinstance(value, memoryview):
            yield value


def _fields(message: memoryview) -> Iterator[tuple[int, int | memoryview]]:
    """(field number, value) of each field of a protobuf message, in order: varints as ints, length-delimited and
    fixed-size values as views of their bytes (a repeated field appears once per value)."""
    position = 0
    while position < len(message):
        key, position = _varint(message, position)
        number, wire_type = key >> 3, key & 7
        if wire_type == 0:
            value, position = _varint(message, position)
            yield number, value
            continue
        if wire_type == 2:
            size, position = _varint(message, position)
        elif wire_type in (1, 5):
            size = 8 if wire_type == 1 else 4
        else:
            raise ValueError(f"not a protobuf message: wire type {wire_type} at byte {position}")
        if position + size > len(message):
            raise ValueError(f"not a protobuf message: a field runs past the end at byte {position}")
        yield number, message[position : position + size]
        position += size


def _varint(message: memoryview, position: int) -> tuple[int, int]:
    """The base-128 integer starting at `position`, and the position after it."""
    value = shift = 0
    while True:
        if position >= len(message) or shift > 63:
            raise ValueError(f"not a protobuf message: a varint runs past byte {position}")
        byte = message[position]
        value |= (byte & 0x7F) << shift
        position, shift = position + 1, shift + 7
        if byte < 0x80:
            return value, position
