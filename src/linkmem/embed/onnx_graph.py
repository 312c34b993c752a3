"""The shipped model's int8 matrix products as onnxruntime's int8 kernels (``MatMulNBits``).

The model file stores each linear layer's weights as int8 with one float32 scale per output
column, turned back into float32 by ``Cast`` and ``Mul`` in front of a float32 ``MatMul``;
onnxruntime folds those into float32 constants, so every call reads ~42 MB of float32 weights
and multiplies in float32. :func:`int8_matmuls` rewrites each such product as a
``com.microsoft.MatMulNBits`` node (8 bits, blocks of ``BLOCK`` rows sharing the column's
scale, so the weights are exactly the file's), ``accuracy_level`` 4: onnxruntime quantises
the activations to int8 per block of ``BLOCK`` values and multiplies with int8 instructions
(AVX-512 VNNI / AVX2 here). By default only the feed-forward products are rewritten
(``FEED_FORWARD_ONLY``). Against the float32 graph's vectors (``bench_query_embedding.py``):
cosine >= 0.99938 on every LoCoMo dev turn and >= 0.99993 on every dev question, the questions'
ten nearest turns 98.7% the same; dev recall full 1-4 @10 / @25 0.8154 / 0.8779 -> 0.8158 /
0.8779; a lone query's ``session.run`` 7.34 -> 6.47 ms of thread CPU (load 8-10).

The rewrite edits the model's protobuf through a partial schema of the ONNX messages (only the
fields read or written here are declared; protobuf keeps every other field as it was read), so
it needs no ``onnx`` package. Anything unexpected returns ``None``: the model is then used as
shipped.
"""

from __future__ import annotations

import platform
from collections import Counter
from dataclasses import dataclass
from functools import cache
from typing import Any

import numpy as np

#: Rows of a weight column that share one block of the activations' int8 quantisation (16 is
#: MatMulNBits' smallest). All six products, blocks of 16 / 32 / 64 / 128: query embedding
#: 7.2 / 6.3 / 5.6 / 8.0 ms against 9.8 ms for float32 (one noisy run, load 5-8), lowest
#: cosine to the float32 vectors over the LoCoMo dev turns 0.9987 / 0.9982 / 0.9970 / 0.9943.
BLOCK = 16
#: Only the feed-forward products (384 x 1536 and 1536 x 384, two thirds of the weights) run
#: on int8 kernels; the attention's four 384 x 384 stay float32. All six: the lowest cosine
#: to the float32 sentence-transformers reference (tests/data) fell 0.99905 -> 0.99881, below
#: the 0.999 the tests hold, and one dev turn fell to 0.99872 of the float32 graph's vector;
#: feed-forward only: 0.99904 and 0.99938, for 0.87 of the 1.48 ms of CPU per query the six save.
FEED_FORWARD_ONLY = True
#: Changes whenever the rewrite does (with ``FEED_FORWARD_ONLY``: the model cache's key).
VERSION = "matmulnbits8-b16-a4"
#: Machine types whose onnxruntime has int8 kernels for MatMulNBits; elsewhere the op would
#: turn its weights back into float32 on every call (4x slower than the float32 graph here).
MACHINES = ("x86_64", "amd64")

_FLOAT, _UINT8, _INT8 = 1, 2, 3  # TensorProto.DataType
_INT = 2  # AttributeProto.AttributeType


def enabled() -> bool:
    return platform.machine().lower() in MACHINES


def variant() -> str:
    """What :func:`int8_matmuls` does by default, for the model cache's key."""
    return f"{VERSION}-{'ffn' if FEED_FORWARD_ONLY else 'all'}"


@cache
def _messages() -> dict[str, Any]:
    """ModelProto and the messages it holds, declared with the fields used here only."""
    from google.protobuf import descriptor_pb2, descriptor_pool, message_factory

    field = descriptor_pb2.FieldDescriptorProto
    optional, repeated = field.LABEL_OPTIONAL, field.LABEL_REPEATED
    kinds = {"string": field.TYPE_STRING, "int64": field.TYPE_INT64, "bytes": field.TYPE_BYTES}
    kinds["int32"], kinds["float"] = field.TYPE_INT32, field.TYPE_FLOAT
    schema = {
        "Model": [("opset_import", 8, repeated, "OpSet"), ("graph", 7, optional, "Graph")],
        "OpSet": [("domain", 1, optional, "string"), ("version", 2, optional, "int64")],
        "Graph": [
            ("node", 1, repeated, "Node"),
            ("initializer", 5, repeated, "Tensor"),
            ("input", 11, repeated, "Value"),
            ("output", 12, repeated, "Value"),
        ],
        "Value": [("name", 1, optional, "string")],
        "Node": [
            ("input", 1, repeated, "string"),
            ("output", 2, repeated, "string"),
            ("name", 3, optional, "string"),
            ("op_type", 4, optional, "string"),
            ("attribute", 5, repeated, "Attribute"),
            ("domain", 7, optional, "string"),
        ],
        "Attribute": [
            ("name", 1, optional, "string"),
            ("f", 2, optional, "float"),
            ("i", 3, optional, "int64"),
            ("ints", 8, repeated, "int64"),
            ("type", 20, optional, "int32"),
        ],
        "Tensor": [
            ("dims", 1, repeated, "int64"),
            ("data_type", 2, optional, "int32"),
            ("name", 8, optional, "string"),
            ("raw_data", 9, optional, "bytes"),
        ],
    }
    proto = descriptor_pb2.FileDescriptorProto(
        name="linkmem_onnx_partial.proto", package="linkmem_onnx_partial", syntax="proto2"
    )
    for message, fields in schema.items():
        described = proto.message_type.add(name=message)
        for name, number, label, kind in fields:
            entry = described.field.add(name=name, number=number, label=label)
            if kind in kinds:
                entry.type = kinds[kind]
            else:
                entry.type = field.TYPE_MESSAGE
                entry.type_name = f".linkmem_onnx_partial.{kind}"
    pool = descriptor_pool.DescriptorPool()
    pool.Add(proto)
    return {
        name: message_factory.GetMessageClass(pool.FindMessageTypeByName(f"{proto.package}.{name}"))
        for name in schema
    }


def int8_matmuls(
    model: bytes, block: int = BLOCK, feed_forward_only: bool | None = None
) -> bytes | None:
    """``model`` with its int8 ``Cast`` -> ``Mul`` -> ``MatMul`` products as ``MatMulNBits``
    (only the non-square ones, the feed-forward layers', if ``feed_forward_only``), or None
    when it has none (or anything is not as expected). ``feed_forward_only`` defaults to
    ``FEED_FORWARD_ONLY``."""
    if feed_forward_only is None:
        feed_forward_only = FEED_FORWARD_ONLY
    try:
        return _rewrite(model, block, feed_forward_only)
    except Exception:  # a model of another shape: used as it is
        return None


@dataclass(frozen=True)
class ParsedGraph:
    """A model parsed through the partial schema, with lookups over its graph: initializers
    by name, the node that writes each name, how many inputs read each name."""

    messages: dict[str, Any]
    model: Any
    tensors: dict[str, Any]
    producer: dict[str, Any]
    readers: Counter[str]

    @classmethod
    def of(cls, model_bytes: bytes) -> ParsedGraph:
        messages = _messages()
        model = messages["Model"].FromString(model_bytes)
        graph = model.graph
        return cls(
            messages,
            model,
            {tensor.name: tensor for tensor in graph.initializer},
            {output: node for node in graph.node for output in node.output},
            Counter(name for node in graph.node for name in node.input),
        )

    def dequantised(self, name: str) -> tuple[Any, Any, Any, Any] | None:
        """(mul, cast, weights, scales) when ``name`` is ``Mul(Cast(weights), scales)`` read by
        one node only, as the shipped model turns its int8 weights into float32; else None."""
        mul = self.producer.get(name)
        cast = self.producer.get(mul.input[0]) if mul is not None and mul.op_type == "Mul" else None
        if cast is None or cast.op_type != "Cast" or len(mul.input) != 2:
            return None
        if self.readers[mul.output[0]] != 1 or self.readers[cast.output[0]] != 1:
            return None  # the float32 weights are read elsewhere too: left as they are
        return mul, cast, self.tensors.get(cast.input[0]), self.tensors.get(mul.input[1])


def _rewrite(model_bytes: bytes, block: int, feed_forward_only: bool) -> bytes | None:
    parsed = ParsedGraph.of(model_bytes)
    messages, model = parsed.messages, parsed.model
    graph = model.graph
    replaced: dict[int, Any] = {}
    dropped: set[int] = set()
    new_tensors = []
    for node in graph.node:
        if node.op_type != "MatMul" or node.domain or len(node.input) != 2:
            continue
        found = parsed.dequantised(node.input[1])
        if found is None:
            continue
        mul, cast, weights, scales = found
        if not _per_column_int8(weights, scales, block) or (
            feed_forward_only and weights.dims[0] == weights.dims[1]
        ):
            continue
        rows, cols = weights.dims
        q = np.frombuffer(weights.raw_data, dtype=np.int8).reshape(rows, cols)
        column_scales = np.frombuffer(scales.raw_data, dtype=np.float32).reshape(cols, 1)
        blocks = rows // block
        packed = (q.astype(np.int16) + 128).astype(np.uint8).T.reshape(cols, blocks, block)
        block_scales = np.repeat(column_scales, blocks, axis=1)
        name = f"{weights.name}_linkmem_nbits"
        new_tensors.append(_tensor(messages, name, packed, _UINT8))
        new_tensors.append(_tensor(messages, f"{name}_scales", block_scales, _FLOAT))
        fused = messages["Node"](
            input=[node.input[0], name, f"{name}_scales"],
            output=list(node.output),
            name=f"{node.name}_linkmem_nbits",
            op_type="MatMulNBits",
            domain="com.microsoft",
        )
        for key, value in (("K", rows), ("N", cols), ("bits", 8), ("block_size", block)):
            fused.attribute.add(name=key, i=value, type=_INT)
        fused.attribute.add(name="accuracy_level", i=4, type=_INT)
        replaced[id(node)] = fused
        dropped.update((id(mul), id(cast)))
    if not replaced:
        return None
    nodes = [replaced.get(id(node), node) for node in graph.node if id(node) not in dropped]
    used = {name for node in nodes for name in node.input}
    kept = [tensor for tensor in graph.initializer if tensor.name in used]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept + new_tensors)
    if not any(opset.domain == "com.microsoft" for opset in model.opset_import):
        model.opset_import.add(domain="com.microsoft", version=1)
    return model.SerializeToString()


def _per_column_int8(weights: Any, scales: Any, block: int) -> bool:
    return int8_scaled(weights, scales, per_row=False) and weights.dims[0] % block == 0


def int8_scaled(weights: Any, scales: Any, per_row: bool) -> bool:
    """``weights`` a 2-D int8 tensor and ``scales`` float32, one per row (``per_row``) or one
    per column, both with their data inline."""
    if weights is None or scales is None or len(weights.dims) != 2 or len(scales.dims) != 2:
        return False
    rows, cols = weights.dims
    shape = [rows, 1] if per_row else [1, cols]
    return (
        weights.data_type == _INT8
        and scales.data_type == _FLOAT
        and list(scales.dims) == shape
        and len(weights.raw_data) == rows * cols
        and len(scales.raw_data) == 4 * shape[0] * shape[1]
    )


def _tensor(messages: dict[str, Any], name: str, values: np.ndarray, kind: int) -> Any:
    return messages["Tensor"](
        name=name, dims=list(values.shape), data_type=kind, raw_data=values.tobytes()
    )
