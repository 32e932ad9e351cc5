"""The int8 twin of an exported graph: int8 weights per output column, activations per row.

ONNX Runtime's dynamic quantization scales each MatMul's input once per run, over the
whole tensor. In this model a few tokens ([CLS], [SEP]) carry activations ~10× larger
than the rest (a layer's input peaks at 28 where a median token peaks at 3), so one scale
for all of them rounds every other token coarsely: vectors at cosine 0.994 to the float
graph's on code. Here every row (one token of one text) gets its own range: its minimum
and maximum (zero included) map to 0 and 255, so a row after a GELU (never below -0.17)
uses every step too. The same integer kernel (``MatMulIntegerToFloat``, u8 × s8) runs,
and the row's zero point and scale are applied to its output (``x ≈ s·(q − z)``, so
``x·W ≈ s·(q·W − z·Σ W)``): at the same speed, a sixth of the error (cosine 0.999;
docs/performance.md), and a text's vector no longer depends on the batch it ran in.
Weights are symmetric int8, one scale per output column.
"""

from __future__ import annotations

from typing import Any

__all__ = ["SCHEME", "per_row_int8"]

#: Names the scheme in the twin's file name and in the vectors' key: a new scheme
#: quantizes again and embeds again (``rows-1``, symmetric rows, was never released).
SCHEME = "rows-2"


def per_row_int8(model: Any) -> Any:
    """``model`` (an ``onnx.ModelProto``, changed in place and returned) with every MatMul
    by a constant 2-D weight computed in int8: its input quantized per row (u8, the row's
    own scale and zero point), its weight per output column (s8, symmetric)."""
    import numpy as np
    import onnx
    from onnx import TensorProto, helper, numpy_helper

    graph = model.graph
    weights = {i.name: i for i in graph.initializer}
    added: list[Any] = []

    def constant(name: str, value: Any) -> str:
        added.append(numpy_helper.from_array(value, name))
        return name

    constant("int8/255", np.asarray(255.0, np.float32))
    constant("int8/tiny", np.asarray(1e-8, np.float32))
    constant("int8/zero", np.asarray(0.0, np.float32))
    constant("int8/one", np.asarray(1.0, np.float32))
    constant("int8/no_zero_point", np.asarray(0, np.uint8))
    constant("int8/flat", np.asarray([-1], np.int64))

    rows: dict[str, tuple[str, str, str]] = {}  # an input → (its u8 rows, scales, zero points)
    replaced: set[str] = set()
    nodes: list[Any] = []
    for node in graph.node:
        weight = weights.get(node.input[1]) if node.op_type == "MatMul" else None
        if weight is None or len(weight.dims) != 2:
            nodes.append(node)
            continue
        source = node.input[0]
        if source not in rows:
            p = f"int8/{len(rows)}/"
            shape = constant(p + "rows_of", np.asarray([-1, weight.dims[0]], np.int64))
            nodes += [
                helper.make_node("ReduceMax", [source], [p + "max"], axes=[-1], keepdims=1),
                helper.make_node("ReduceMin", [source], [p + "min"], axes=[-1], keepdims=1),
                helper.make_node("Max", [p + "max", "int8/zero"], [p + "high"]),  # zero in range
                helper.make_node("Min", [p + "min", "int8/zero"], [p + "low"]),
                helper.make_node("Sub", [p + "high", p + "low"], [p + "span"]),
                helper.make_node("Max", [p + "span", "int8/tiny"], [p + "span1"]),
                helper.make_node("Div", [p + "span1", "int8/255"], [p + "scale"]),
                helper.make_node("Div", [p + "low", p + "scale"], [p + "low_steps"]),
                helper.make_node("Neg", [p + "low_steps"], [p + "zero_steps"]),
                helper.make_node("Round", [p + "zero_steps"], [p + "zero_point"]),  # 0..255
                helper.make_node("Reshape", [p + "scale", "int8/flat"], [p + "scale_flat"]),
                helper.make_node("Reshape", [p + "zero_point", "int8/flat"], [p + "zero_flat"]),
                helper.make_node("Cast", [p + "zero_flat"], [p + "zero_u8"], to=TensorProto.UINT8),
                helper.make_node("Reshape", [source, shape], [p + "flat"]),
                helper.make_node(
                    "QuantizeLinear",
                    [p + "flat", p + "scale_flat", p + "zero_u8"],
                    [p + "q_flat"],
                    axis=0,
                ),
                helper.make_node("Shape", [source], [p + "shape"]),
                helper.make_node("Reshape", [p + "q_flat", p + "shape"], [p + "q"]),
            ]
            rows[source] = (p + "q", p + "scale", p + "zero_point")
        quantized, scale, zero_point = rows[source]
        name = weight.name
        if name not in replaced:  # a weight two MatMuls share is quantized once
            matrix = numpy_helper.to_array(weight).astype(np.float32)
            column_scale = np.maximum(np.abs(matrix).max(axis=0), 1e-12) / 127.0
            integers = np.clip(np.round(matrix / column_scale), -127, 127).astype(np.int8)
            constant(name + "/int8", integers)
            constant(name + "/scale", column_scale.astype(np.float32))
            # Σ over the inputs of each column of the weight as quantized: q·W − z·Σ W is exact
            constant(
                name + "/sum", (integers.astype(np.float32).sum(axis=0) * column_scale).astype(np.float32)
            )
            replaced.add(name)
        out = f"int8/{node.name or node.output[0]}"
        nodes += [
            helper.make_node(
                "MatMulIntegerToFloat",
                [quantized, name + "/int8", "int8/one", name + "/scale", "int8/no_zero_point"],
                [out + "/q"],
                domain="com.microsoft",
            ),
            helper.make_node("Mul", [zero_point, name + "/sum"], [out + "/shift"]),
            helper.make_node("Sub", [out + "/q", out + "/shift"], [out + "/centred"]),
            helper.make_node("Mul", [out + "/centred", scale], [node.output[0]]),
        ]
    kept = [i for i in graph.initializer if i.name not in replaced]
    del graph.node[:]
    graph.node.extend(nodes)
    del graph.initializer[:]
    graph.initializer.extend(kept + added)
    if not any(o.domain == "com.microsoft" for o in model.opset_import):
        model.opset_import.append(onnx.helper.make_opsetid("com.microsoft", 1))
    return model
