"""Reading an ONNX graph's single-valued initializers from protobuf's wire format, on graphs encoded here by hand
(the `onnx` package is not a dependency). The real YAMNet graph's values are checked in test_yamnet.py."""

from __future__ import annotations

import struct

import numpy as np
import pytest

from hugginggraph.tools.runners.onnx_scalars import scalar_initializers

FLOAT, UINT8, INT8, INT64 = 1, 2, 3, 7


def varint(value: int) -> bytes:
    out = bytearray()
    while True:
        byte, value = value & 0x7F, value >> 7
        out.append(byte | (0x80 if value else 0))
        if not value:
            return bytes(out)


def field(number: int, value: int | bytes) -> bytes:
    """One protobuf field: a varint (wire type 0) for an int, length-delimited (wire type 2) for bytes."""
    if isinstance(value, int):
        return varint(number << 3) + varint(value)
    return varint(number << 3 | 2) + varint(len(value)) + value


def tensor(name: str, data_type: int, raw: bytes, dims: tuple[int, ...] = ()) -> bytes:
    """A TensorProto: dims (1), data_type (2), name (8), raw_data (9), in the order exporters write them."""
    return b"".join(field(1, dim) for dim in dims) + field(2, data_type) + field(8, name.encode()) + field(9, raw)


def model(*initializers: bytes) -> bytes:
    """A ModelProto with an ir_version (1), a producer (2) and a graph (7) holding a node (1) and the initializers."""
    graph = field(1, field(4, b"Relu")) + b"".join(field(5, initializer) for initializer in initializers)
    return field(1, 11) + field(2, b"hand") + field(7, graph)


def test_scales_and_zero_points_are_read_with_their_types():
    found = scalar_initializers(
        model(
            tensor("audio_scale", FLOAT, struct.pack("<f", 0.25)),
            tensor("audio_zero_point", UINT8, bytes([144])),
            tensor("bias", INT8, bytes([0xFE])),
            tensor("big", INT64, struct.pack("<q", 2**40)),
        )
    )
    assert found == {"audio_scale": 0.25, "audio_zero_point": 144, "bias": -2, "big": 2**40}
    assert isinstance(found["audio_zero_point"], int)


def test_weights_and_tensors_without_raw_data_are_left_out():
    weights = tensor("weights", FLOAT, np.arange(4, dtype="<f4").tobytes(), dims=(2, 2))
    typed = field(2, FLOAT) + field(8, b"typed") + field(4, struct.pack("<f", 1.0))  # float_data, not raw_data
    unknown = tensor("string", 8, b"x")  # STRING has no fixed width
    assert scalar_initializers(model(weights, typed, unknown, tensor("kept", UINT8, b"\x07"))) == {"kept": 7}


def test_a_graph_without_initializers_has_none():
    assert scalar_initializers(model()) == {}
    assert scalar_initializers(b"") == {}


@pytest.mark.parametrize(
    "garbage",
    [
        field(7, b"x" * 4)[:-2],  # a graph that runs past the end
        b"\x3b",  # field 7 with wire type 3 (a group, which ONNX never writes)
        b"\x08\xff",  # a varint cut off
    ],
)
def test_bytes_that_are_not_a_protobuf_message_are_refused(garbage: bytes):
    with pytest.raises(ValueError, match="not a protobuf message"):
        scalar_initializers(garbage)
