"""The int8 twin of a graph scales each row (token) of a MatMul's input on its own: a row of
outliers does not coarsen its neighbours, and a text's result does not depend on its batch."""

from __future__ import annotations

from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
from onnx import TensorProto, helper, numpy_helper

from indexer.embed._int8 import per_row_int8


def _graph(weights: list[np.ndarray]) -> Any:
    """x [batch, tokens, 16] through MatMuls by ``weights`` (the last two share one weight)."""
    names = [f"w{i}" for i in range(len(weights))]
    nodes = [helper.make_node("MatMul", ["x", names[0]], ["h0"], name="first")]
    nodes.append(helper.make_node("Relu", ["h0"], ["r0"]))
    nodes.append(helper.make_node("MatMul", ["r0", names[1]], ["a"], name="second"))
    nodes.append(helper.make_node("MatMul", ["r0", names[1]], ["b"], name="twin"))  # same input, same weight
    nodes.append(helper.make_node("Add", ["a", "b"], ["y"]))
    graph = helper.make_graph(
        nodes,
        "g",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, ["n", "t", 16])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, ["n", "t", 8])],
        [numpy_helper.from_array(w, n) for w, n in zip(weights, names, strict=True)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _run(model: Any, x: np.ndarray) -> np.ndarray:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return np.asarray(session.run(None, {"x": x})[0])


def test_each_row_is_scaled_on_its_own() -> None:
    rng = np.random.default_rng(7)
    weights = [rng.normal(size=(16, 32)).astype(np.float32), rng.normal(size=(32, 8)).astype(np.float32)]
    x = rng.normal(size=(2, 5, 16)).astype(np.float32)
    x[1, 0] *= 40  # a [CLS]-like token of another text, far larger than every other
    exact = _run(_graph(weights), x)
    model = per_row_int8(_graph(weights))
    onnx.checker.check_model(model)
    ops = [n.op_type for n in model.graph.node]
    assert ops.count("MatMulIntegerToFloat") == 3
    assert "MatMul" not in ops
    assert sum(i.name.endswith("/int8") for i in model.graph.initializer) == 2  # the shared weight once
    quantized = _run(model, x)
    error = np.abs(quantized - exact) / np.abs(exact).max(axis=-1, keepdims=True)
    assert error.max() < 0.02  # 0.016: the ReLU rows use all 256 steps
    alone = _run(model, x[:1])  # the first text without its neighbour's outlier row
    assert np.abs(alone - quantized[:1]).max() < 1e-5
    shorter = _run(model, x[:, 1:])  # a row's result does not depend on the other rows either
    assert np.abs(shorter - quantized[:, 1:]).max() < 1e-5
