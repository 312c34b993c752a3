"""The model's embedding tables kept as int8 in the optimised graph: rows gathered, then scaled.

The shipped model stores its word and position embeddings as int8 with one float32 scale per
row, turned into float32 by ``Cast`` and ``Mul`` in front of the ``Gather`` that picks the
tokens' rows. onnxruntime folds those into float32 tables (the word table alone is 30,522 x 384:
47 MB of the cached optimised graph's 71 MB), which every new process reads, parses and copies
when it opens the cached graph. :func:`int8_gathers` gathers the int8 rows and their scales
instead, then casts and multiplies only those rows: each element is the same float32 product
of the same two numbers, so the vectors are bitwise the same.

Like :mod:`linkmem.embed.onnx_graph` it edits the protobuf through a partial schema (no ``onnx``
package) and returns ``None`` when the model has no such table: the graph is then used as it is.
"""

from __future__ import annotations

from typing import Any

from linkmem.embed.onnx_graph import _FLOAT, _INT, ParsedGraph, int8_scaled

#: Changes whenever the rewrite does (part of the model cache's key).
VERSION = "gather8"


def int8_gathers(model: bytes) -> bytes | None:
    """``model`` with each ``Gather`` of an int8 table times per-row scales rewritten to gather
    the int8 rows and their scales first, or None when it has none (or anything is not as
    expected)."""
    try:
        return _rewrite(model)
    except Exception:  # a model of another shape: used as it is
        return None


def _rewrite(model_bytes: bytes) -> bytes | None:
    parsed = ParsedGraph.of(model_bytes)
    messages, model = parsed.messages, parsed.model
    graph = model.graph
    replaced: dict[int, list[Any]] = {}
    dropped: set[int] = set()
    for node in graph.node:
        if node.op_type != "Gather" or node.domain or len(node.input) != 2:
            continue
        if any(attribute.name == "axis" and attribute.i != 0 for attribute in node.attribute):
            continue
        found = parsed.dequantised(node.input[0])
        if found is None:
            continue
        mul, cast, weights, scales = found
        if cast.domain or mul.domain or [a.i for a in cast.attribute if a.name == "to"] != [_FLOAT]:
            continue
        if not int8_scaled(weights, scales, per_row=True):
            continue
        replaced[id(node)] = _gather_then_scale(messages, node, weights.name, scales.name)
        dropped.update((id(mul), id(cast)))
    if not replaced:
        return None
    nodes = [
        new
        for node in graph.node
        if id(node) not in dropped
        for new in replaced.get(id(node), [node])
    ]
    del graph.node[:]
    graph.node.extend(nodes)
    return model.SerializeToString()


def _gather_then_scale(messages: dict[str, Any], gather: Any, table: str, scales: str) -> list:
    """Gather(table) and Gather(scales) of the same rows, then Cast and Mul: the nodes that
    write ``gather``'s output in its place."""
    (out,) = gather.output
    rows = gather.input[1]
    base = f"{out}_linkmem_int8"
    node = messages["Node"]
    picked = node(input=[table, rows], output=[f"{base}_q"], name=f"{base}_q", op_type="Gather")
    scaled = node(input=[scales, rows], output=[f"{base}_s"], name=f"{base}_s", op_type="Gather")
    for part in (picked, scaled):
        part.attribute.add(name="axis", i=0, type=_INT)
    cast = node(input=[f"{base}_q"], output=[f"{base}_f"], name=f"{base}_f", op_type="Cast")
    cast.attribute.add(name="to", i=_FLOAT, type=_INT)
    mul = node(input=[f"{base}_f", f"{base}_s"], output=[out], name=f"{base}_mul", op_type="Mul")
    return [picked, scaled, cast, mul]
