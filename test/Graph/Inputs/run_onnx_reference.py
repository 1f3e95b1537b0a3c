"""Handwritten ONNX nodes that torch.onnx does not write, checked against
the ONNX operator definitions computed here with numpy: each model is
imported with tofu-graph, the imported graph is run with PyTorch's CPU
kernels (as run_onnx_import.py does) and its output compared with the
numpy reference.

    run_onnx_reference.py TOFU_EXPORT_DIR TOFU_GRAPH OUTDIR

Models: gru (a reverse GRU with linear_before_reset=0, bias and initial
state), rnn (a bidirectional RNN, Tanh forward and Sigmoid backward, no
bias), depth_to_space (mode DCR, ONNX's default). Prints `MODEL: N ops
ran, output matches` per model, or the mismatch; exits 1 on a mismatch.
"""

import json
import os
import subprocess
import sys

sys.path.insert(0, sys.argv[1])
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import numpy as np  # noqa: E402
import onnx  # noqa: E402
import torch  # noqa: E402
from onnx import TensorProto, helper, numpy_helper  # noqa: E402

from run_onnx_import import aten_of  # noqa: E402
from tofu_export import models, replay  # noqa: E402

RNG = np.random.default_rng(0)


def rand(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


def sigmoid(v):
    return 1 / (1 + np.exp(-v))


def gru_reference(x, w, r, b, h0):
    """ONNX GRU, one reverse direction, linear_before_reset=0."""
    H = r.shape[-1]
    w, r, b, h = w[0], r[0], b[0], h0[0]
    wb, rb = b[:3 * H], b[3 * H:]
    ys = [None] * len(x)
    for t in reversed(range(len(x))):
        xw = x[t] @ w.T + wb
        z = sigmoid(xw[:, :H] + h @ r[:H].T + rb[:H])
        rr = sigmoid(xw[:, H:2 * H] + h @ r[H:2 * H].T + rb[H:2 * H])
        n = np.tanh(xw[:, 2 * H:] + (rr * h) @ r[2 * H:].T + rb[2 * H:])
        h = (1 - z) * n + z * h
        ys[t] = h
    return np.stack(ys)[:, None]  # [T, 1, B, H]


def rnn_reference(x, w, r):
    """ONNX RNN, bidirectional, no bias: Tanh forward, Sigmoid backward."""
    out = []
    for d, (f, steps) in enumerate([(np.tanh, range(len(x))),
                                    (sigmoid, reversed(range(len(x))))]):
        h = np.zeros((x.shape[1], r.shape[-1]), np.float32)
        ys = [None] * len(x)
        for t in steps:
            h = f(x[t] @ w[d].T + h @ r[d].T)
            ys[t] = h
        out.append(np.stack(ys))
    return np.stack(out, 1)  # [T, 2, B, H]


def dcr_reference(x, b):
    n, c, h, w = x.shape
    y = x.reshape(n, b, b, c // (b * b), h, w).transpose(0, 3, 4, 1, 5, 2)
    return y.reshape(n, c // (b * b), h * b, w * b)


def build(name):
    """(ONNX model, input, expected output)."""
    f32 = TensorProto.FLOAT
    if name == "gru":
        T, B, I, H = 4, 2, 3, 5
        x, w, r = rand(T, B, I), rand(1, 3 * H, I), rand(1, 3 * H, H)
        b, h0 = rand(1, 6 * H), rand(1, B, H)
        node = helper.make_node("GRU", ["x", "w", "r", "b", "", "h0"], ["y"],
                                hidden_size=H, direction="reverse",
                                linear_before_reset=0, name="gru")
        inits = dict(w=w, r=r, b=b, h0=h0)
        expected, out_shape = gru_reference(x, w, r, b, h0), [T, 1, B, H]
    elif name == "rnn":
        T, B, I, H = 3, 2, 4, 3
        x, w, r = rand(T, B, I), rand(2, H, I), rand(2, H, H)
        node = helper.make_node("RNN", ["x", "w", "r"], ["y"], hidden_size=H,
                                direction="bidirectional",
                                activations=["Tanh", "Sigmoid"], name="rnn")
        inits = dict(w=w, r=r)
        expected, out_shape = rnn_reference(x, w, r), [T, 2, B, H]
    else:
        x = rand(2, 12, 3, 2)
        node = helper.make_node("DepthToSpace", ["x"], ["y"], blocksize=2,
                                name="d2s")
        inits = {}
        expected, out_shape = dcr_reference(x, 2), [2, 3, 6, 4]
    graph = helper.make_graph(
        [node], name, [helper.make_tensor_value_info("x", f32, x.shape)],
        [helper.make_tensor_value_info("y", f32, out_shape)],
        [numpy_helper.from_array(v, k) for k, v in inits.items()])
    model = helper.make_model(graph, producer_name="run_onnx_reference.py",
                              opset_imports=[helper.make_opsetid("", 13)])
    return model, x, inits, expected


def run(name, tofu_graph, outdir):
    model, x, inits, expected = build(name)
    path = os.path.join(outdir, name + ".onnx")
    onnx.save(model, path)
    doc = json.loads(subprocess.run(
        [tofu_graph, path, "--emit=json"], check=True,
        capture_output=True, text=True).stdout)
    shape_of = {t["name"]: (t["shape"], models.DTYPE_NAMES[t["dtype"]])
                for t in doc["tensors"]}
    values = {"x": torch.from_numpy(x)}
    values.update({k: torch.from_numpy(v) for k, v in inits.items()})
    for op in doc["ops"]:
        op["aten"] = aten_of(op["type"])
        values[op["outputs"][0]] = replay.run_op(op, values, shape_of)
    out = [t["name"] for t in doc["tensors"] if t["role"] == "output"]
    got = values[out[0]].numpy()
    if got.shape != expected.shape or not np.allclose(got, expected,
                                                      rtol=1e-4, atol=1e-5):
        err = np.abs(got - expected).max() if got.shape == expected.shape \
            else f"shape {list(got.shape)}"
        print(f"{name}: output differs ({err})")
        return False
    print(f"{name}: {len(doc['ops'])} ops ran, output matches")
    return True


def main():
    tofu_graph, outdir = sys.argv[2], sys.argv[3]
    os.makedirs(outdir, exist_ok=True)
    ok = all([run(n, tofu_graph, outdir) for n in ("gru", "rnn",
                                                   "depth_to_space")])
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
