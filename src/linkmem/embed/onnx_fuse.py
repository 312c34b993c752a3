"""The model's self-attention and GELU as onnxruntime's fused kernels (``Attention``, ``Gelu``).

The shipped model is a torch "dynamo" export: each layer's attention is ~30 small nodes
(projections, reshapes and transposes of the heads, scaling, a mask built from
``attention_mask`` by ranges and gathers, softmax, a NaN guard) and each GELU five. Neither
onnxruntime's graph optimizer nor ``onnxruntime.transformers.optimizer`` (model_type "bert")
recognises them, so a lone query pays for ~270 nodes, a third of ``session.run`` going to
per-node overhead. :func:`fused` rewrites each layer's attention as one
``com.microsoft.Attention`` node (the three projections' weights side by side as one
384 x 1152 float32 product, exactly the file's int8 values times their scales, as
onnxruntime's constant folding makes them; the padding mask read straight from
``attention_mask``) and each GELU as ``com.microsoft.Gelu`` (the same erf formula).

Like :mod:`linkmem.embed.onnx_graph` it edits the protobuf through a partial schema (no
``onnx`` package) and returns ``None`` when anything is not as expected: the graph is then
used without it.
"""

from __future__ import annotations

import math
from collections import defaultdict
from typing import Any

import numpy as np

from linkmem.embed.onnx_graph import _FLOAT, _INT, _INT8, _messages, _tensor

#: Changes whenever the rewrite does (part of the model cache's key).
VERSION = "attn1"
_INT32 = 6  # TensorProto.DataType
_PASS_THROUGH = ("Reshape", "Transpose", "Mul")


def fused(model: bytes) -> bytes | None:
    """``model`` with its self-attention blocks as ``Attention`` and its GELUs as ``Gelu``,
    or None when it has no attention block of the expected shape."""
    try:
        return _Rewrite(model).run()
    except Exception:  # a model of another shape: used as it is
        return None


class _Rewrite:
    def __init__(self, model_bytes: bytes) -> None:
        self.messages = _messages()
        self.model = self.messages["Model"].FromString(model_bytes)
        graph = self.model.graph
        self.tensors = {tensor.name: tensor for tensor in graph.initializer}
        self.producer = {output: node for node in graph.node for output in node.output}
        self.readers: dict[str, list[Any]] = defaultdict(list)
        for node in graph.node:
            for name in node.input:
                self.readers[name].append(node)
        self.new_tensors: list[Any] = []

    def run(self) -> bytes | None:
        graph = self.model.graph
        if "attention_mask" not in {value.name for value in graph.input}:
            return None
        mask = "attention_mask_linkmem_int32"
        replaced: dict[int, Any] = {}
        for node in graph.node:
            if node.op_type == "Softmax" and not node.domain:
                fused = self._attention(node, mask)
                if fused is None:
                    return None  # all or none: a half-fused graph is not worth its risk
                anchor, new = fused
                replaced[id(anchor)] = new
        if not replaced:
            return None
        for node in graph.node:
            if node.op_type == "Erf" and not node.domain:
                gelu = self._gelu(node)
                if gelu is not None:
                    replaced[id(gelu[0])] = gelu[1]
        cast = self.messages["Node"](
            input=["attention_mask"], output=[mask], name=mask, op_type="Cast"
        )
        cast.attribute.add(name="to", i=_INT32, type=_INT)
        nodes = _live([cast] + [replaced.get(id(node), node) for node in graph.node], graph)
        used = {name for node in nodes for name in node.input}
        kept = [tensor for tensor in graph.initializer if tensor.name in used]
        del graph.node[:]
        graph.node.extend(nodes)
        del graph.initializer[:]
        graph.initializer.extend(kept + self.new_tensors)
        if not any(opset.domain == "com.microsoft" for opset in self.model.opset_import):
            self.model.opset_import.add(domain="com.microsoft", version=1)
        return self.model.SerializeToString()

    def _only(self, name: str, op_type: str) -> Any:
        readers = self.readers[name]
        if len(readers) != 1 or readers[0].op_type != op_type:
            raise ValueError(f"{name}: not read by one {op_type}")
        return readers[0]

    def _attention(self, softmax: Any, mask: str) -> tuple[Any, Any] | None:
        """Softmax(Q K' * scale + mask) V of one layer, from its softmax: the node whose
        output is the heads joined again (replaced) and the ``Attention`` node for it."""
        scores = self.producer[softmax.input[0]]
        if scores.op_type != "Add":
            return None
        products = [self.producer.get(name) for name in scores.input]
        qk = next(
            (node for node in products if node is not None and node.op_type == "MatMul"), None
        )
        if qk is None:
            return None
        (x_q, w_q, b_q, s_q), (x_k, w_k, b_k, s_k) = map(self._linear, qk.input)
        # P V: after the softmax's NaN guard (IsNaN -> Where), then the heads joined back.
        guard = next(node for node in self.readers[softmax.output[0]] if node.op_type == "Where")
        pv = self._only(guard.output[0], "MatMul")
        x_v, w_v, b_v, s_v = self._linear(pv.input[1])
        transpose = self._only(pv.output[0], "Transpose")
        joined = self._only(transpose.output[0], "Reshape")
        if list(_ints(transpose, "perm")) != [0, 2, 1, 3] or not x_q == x_k == x_v or s_v != 1:
            return None
        hidden = w_q.shape[1]
        head_size = 1.0 / (s_q * s_k) ** 2
        heads = hidden / round(head_size)
        if abs(head_size - round(head_size)) > 1e-3 or heads != int(heads):
            return None
        name = f"{joined.output[0]}_linkmem_attention"
        weights = np.concatenate([w_q, w_k, w_v], axis=1).astype(np.float32)
        bias = np.concatenate([b_q, b_k, b_v]).astype(np.float32)
        self.new_tensors.append(_tensor(self.messages, f"{name}_qkv", weights, _FLOAT))
        self.new_tensors.append(_tensor(self.messages, f"{name}_bias", bias, _FLOAT))
        node = self.messages["Node"](
            input=[x_q, f"{name}_qkv", f"{name}_bias", mask],
            output=list(joined.output),
            name=name,
            op_type="Attention",
            domain="com.microsoft",
        )
        node.attribute.add(name="num_heads", i=int(heads), type=_INT)
        return joined, node

    def _linear(self, name: str) -> tuple[str, np.ndarray, np.ndarray, float]:
        """The projection ``x W + b`` that ``name`` is, after reshapes, transposes and
        scalar products: (x, W, b, the scalars' product)."""
        scale = 1.0
        node = self.producer[name]
        while node.op_type in _PASS_THROUGH:
            if node.op_type == "Mul":
                constants = [self._value(i) for i in node.input]
                (factor,) = [c for c in constants if c is not None]
                if factor.size != 1:
                    raise ValueError("not a scalar product")
                scale *= float(factor.reshape(()))
                name = next(i for i, c in zip(node.input, constants, strict=True) if c is None)
            else:
                name = node.input[0]
            node = self.producer[name]
        if node.op_type != "Add":
            raise ValueError("no bias")
        bias = [self._value(i) for i in node.input]
        (b,) = [c for c in bias if c is not None]
        matmul = self.producer[next(i for i, c in zip(node.input, bias, strict=True) if c is None)]
        if matmul.op_type != "MatMul" or matmul.domain:
            raise ValueError("no product")
        weights = self._weights(matmul.input[1])
        if weights.ndim != 2 or b.shape != (weights.shape[1],):
            raise ValueError("shapes")
        return matmul.input[0], weights, b, scale

    def _weights(self, name: str) -> np.ndarray:
        """A float32 weight matrix: an initializer, or int8 ones times their scales."""
        direct = self._value(name)
        if direct is not None:
            return direct
        mul = self.producer[name]
        cast = self.producer[mul.input[0]]
        if mul.op_type != "Mul" or cast.op_type != "Cast":
            raise ValueError("not int8 weights")
        q, scales = self._value(cast.input[0], _INT8), self._value(mul.input[1])
        return q.astype(np.float32) * scales

    def _value(self, name: str, kind: int = _FLOAT) -> np.ndarray | None:
        tensor = self.tensors.get(name)
        if tensor is None or tensor.data_type != kind or not tensor.raw_data:
            return None
        dtype = np.float32 if kind == _FLOAT else np.int8
        return np.frombuffer(tensor.raw_data, dtype=dtype).reshape(tuple(tensor.dims))

    def _gelu(self, erf: Any) -> tuple[Any, Any] | None:
        """x * 0.5 * (1 + erf(x / sqrt 2)) from its Erf: the last Mul and a ``Gelu``."""
        try:
            div = self.producer[erf.input[0]]
            add = self._only(erf.output[0], "Add")
            half = self._only(add.output[0], "Mul")
            last = self._only(half.output[0], "Mul")
        except (KeyError, ValueError):
            return None
        x = div.input[0]
        constants = (
            (div.op_type, self._value(div.input[1]), math.sqrt(2.0)),
            ("Add", self._value(next(i for i in add.input if i != erf.output[0])), 1.0),
            ("Mul", self._value(next(i for i in half.input if i != add.output[0])), 0.5),
        )
        for op_type, value, expected in constants:
            if op_type not in ("Div", "Add", "Mul") or value is None or value.size != 1:
                return None
            if not math.isclose(float(value.reshape(())), expected, rel_tol=1e-6):
                return None
        if sorted(last.input) != sorted([x, half.output[0]]):
            return None
        node = self.messages["Node"](
            input=[x],
            output=list(last.output),
            name=f"{last.output[0]}_linkmem_gelu",
            op_type="Gelu",
            domain="com.microsoft",
        )
        return last, node


def _ints(node: Any, name: str) -> list[int]:
    return next((list(a.ints) for a in node.attribute if a.name == name), [])


def _live(nodes: list[Any], graph: Any) -> list[Any]:
    """``nodes`` (in order) that the graph's outputs depend on."""
    needed = {value.name for value in graph.output}
    kept = []
    for node in reversed(nodes):
        if any(name in needed for name in node.output):
            kept.append(node)
            needed.update(node.input)
    return kept[::-1]
