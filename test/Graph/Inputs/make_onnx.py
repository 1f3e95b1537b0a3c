"""Writes small ONNX inference models for the importer tests (with
onnx.helper, so no PyTorch is needed): an MLP, a conv net, an attention
block, and a model with unsupported operators.

    make_onnx.py OUTDIR
"""
import os
import sys

import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper


def init(name, *shape):
    return numpy_helper.from_array(
        np.zeros(shape, dtype=np.float32), name=name)


def model(name, nodes, inputs, outputs, inits):
    graph = helper.make_graph(nodes, name, inputs, outputs, inits)
    m = helper.make_model(graph, producer_name="make_onnx.py",
                          opset_imports=[helper.make_opsetid("", 13)])
    onnx.checker.check_model(m)
    return m


def f32(name, *shape):
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, list(shape))


def mlp():
    nodes = [
        helper.make_node("Gemm", ["x", "w1", "b1"], ["h"], name="fc1", transB=1),
        helper.make_node("Relu", ["h"], ["r"], name="relu"),
        helper.make_node("Gemm", ["r", "w2", "b2"], ["logits"], name="fc2",
                         transB=1, alpha=0.5),
        helper.make_node("Softmax", ["logits"], ["probs"], name="softmax", axis=1),
    ]
    return model("mlp", nodes, [f32("x", 8, 32)], [f32("probs", 8, 10)],
                 [init("w1", 64, 32), init("b1", 64), init("w2", 10, 64),
                  init("b2", 10)])


def convnet():
    nodes = [
        helper.make_node("Conv", ["x", "w1", "b1"], ["c1"], name="conv1",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[1, 1]),
        helper.make_node("BatchNormalization", ["c1", "g", "b", "m", "v"], ["n1"],
                         name="bn1", epsilon=1e-5),
        helper.make_node("Relu", ["n1"], ["r1"], name="relu1"),
        helper.make_node("MaxPool", ["r1"], ["p1"], name="pool1",
                         kernel_shape=[2, 2], strides=[2, 2]),
        helper.make_node("Conv", ["p1", "w2"], ["c2"], name="conv2",
                         kernel_shape=[3, 3], pads=[1, 1, 1, 1], strides=[2, 2]),
        helper.make_node("Relu", ["c2"], ["r2"], name="relu2"),
        helper.make_node("GlobalAveragePool", ["r2"], ["gap"], name="gap"),
        helper.make_node("Flatten", ["gap"], ["flat"], name="flatten", axis=1),
        helper.make_node("Gemm", ["flat", "wf", "bf"], ["logits"], name="fc",
                         transB=1),
    ]
    return model("convnet", nodes, [f32("x", 4, 3, 16, 16)],
                 [f32("logits", 4, 10)],
                 [init("w1", 8, 3, 3, 3), init("b1", 8), init("g", 8),
                  init("b", 8), init("m", 8), init("v", 8),
                  init("w2", 16, 8, 3, 3), init("wf", 10, 16), init("bf", 10)])


def attention():
    # One head-split self-attention block: q/k/v projections, scores
    # scaled by a constant, softmax, weighted sum, output projection.
    B, S, H, NH = 2, 8, 16, 4
    D = H // NH
    shape4 = numpy_helper.from_array(np.array([B, S, NH, D], dtype=np.int64), "shape4")
    shape3 = numpy_helper.from_array(np.array([B, S, H], dtype=np.int64), "shape3")
    scale = numpy_helper.from_array(np.array(float(D) ** 0.5, dtype=np.float32), "scale")
    nodes = []
    for p in "qkv":
        nodes += [
            helper.make_node("MatMul", ["x", "w" + p], [p + "0"], name=p + "_proj"),
            helper.make_node("Add", [p + "0", "b" + p], [p + "1"], name=p + "_bias"),
            helper.make_node("Reshape", [p + "1", "shape4"], [p + "2"], name=p + "_split"),
            helper.make_node("Transpose", [p + "2"], [p],
                             name=p + "_heads",
                             perm=[0, 2, 3, 1] if p == "k" else [0, 2, 1, 3]),
        ]
    nodes += [
        helper.make_node("MatMul", ["q", "k"], ["scores0"], name="scores"),
        helper.make_node("Div", ["scores0", "scale"], ["scores"], name="scale"),
        helper.make_node("Softmax", ["scores"], ["attn"], name="softmax", axis=-1),
        helper.make_node("MatMul", ["attn", "v"], ["ctx0"], name="context"),
        helper.make_node("Transpose", ["ctx0"], ["ctx1"], name="merge", perm=[0, 2, 1, 3]),
        helper.make_node("Reshape", ["ctx1", "shape3"], ["ctx"], name="merge_heads"),
        helper.make_node("MatMul", ["ctx", "wo"], ["o0"], name="out_proj"),
        helper.make_node("Add", ["o0", "x"], ["y"], name="residual"),
    ]
    inits = [shape4, shape3, scale, init("wo", H, H)]
    for p in "qkv":
        inits += [init("w" + p, H, H), init("b" + p, H)]
    return model("attention", nodes, [f32("x", B, S, H)], [f32("y", B, S, H)], inits)


def layernorm():
    # Layer normalization as torch.onnx writes it at opset 13.
    c = lambda name, v: numpy_helper.from_array(np.array(v, dtype=np.float32), name)
    nodes = [
        helper.make_node("ReduceMean", ["x"], ["mu"], name="mean", axes=[-1]),
        helper.make_node("Sub", ["x", "mu"], ["d"], name="center"),
        helper.make_node("Pow", ["d", "two"], ["d2"], name="square"),
        helper.make_node("ReduceMean", ["d2"], ["var"], name="variance", axes=[-1]),
        helper.make_node("Add", ["var", "eps"], ["ve"], name="add_eps"),
        helper.make_node("Sqrt", ["ve"], ["sd"], name="std"),
        helper.make_node("Div", ["d", "sd"], ["n"], name="normalize"),
        helper.make_node("Mul", ["n", "gamma"], ["s"], name="scale"),
        helper.make_node("Add", ["s", "beta"], ["y"], name="shift"),
    ]
    return model("layernorm", nodes, [f32("x", 2, 8, 32)], [f32("y", 2, 8, 32)],
                 [c("two", 2.0), c("eps", 1e-5), init("gamma", 32), init("beta", 32)])


def const(name, value, dtype=np.int64):
    return helper.make_node(
        "Constant", [], [name], name=name,
        value=numpy_helper.from_array(np.array(value, dtype=dtype), name=name))


def shapechain():
    # Shape arithmetic the importer folds: a flatten target from
    # Shape/Gather/Unsqueeze/Concat, an `expand(n, -1, -1)` target from
    # ConstantOfShape/Mul/Equal/Where, gather indices from Sub/Cast/Range.
    nodes = [
        helper.make_node("Shape", ["x"], ["s"], name="shape"),
        const("zero", 0), const("one", 1), const("minus1", [-1]),
        const("axes0", [0]), const("three", [3]), const("neg", -1),
        helper.make_node("Gather", ["s", "zero"], ["n"], name="batch"),
        helper.make_node("Unsqueeze", ["n", "axes0"], ["n1"], name="n1"),
        helper.make_node("Concat", ["n1", "minus1"], ["target"], name="target",
                         axis=0),
        helper.make_node("Reshape", ["x", "target"], ["flat"], name="flatten"),
        helper.make_node("ConstantOfShape", ["three"], ["ones"], name="ones",
                         value=numpy_helper.from_array(
                             np.array([1], dtype=np.int64))),
        helper.make_node("Mul", ["ones", "neg"], ["negs"], name="negs"),
        helper.make_node("Concat", ["n1", "minus1", "minus1"], ["want"],
                         name="want", axis=0),
        helper.make_node("Equal", ["want", "negs"], ["eq"], name="eq"),
        helper.make_node("Where", ["eq", "ones", "want"], ["shape3"],
                         name="where"),
        helper.make_node("Expand", ["token", "shape3"], ["tokens"],
                         name="expand"),
        helper.make_node("Gather", ["s", "one"], ["c"], name="channels"),
        helper.make_node("Sub", ["c", "one"], ["c1"], name="c1"),
        helper.make_node("Cast", ["c1"], ["c1f"], name="tofloat",
                         to=TensorProto.FLOAT),
        helper.make_node("Cast", ["c1f"], ["limit"], name="toint",
                         to=TensorProto.INT64),
        helper.make_node("Range", ["zero", "limit", "one"], ["idx"],
                         name="range"),
        helper.make_node("Gather", ["x", "idx"], ["first"], name="first",
                         axis=1),
    ]
    return model("shapechain", nodes, [f32("x", 2, 3, 4, 4)],
                 [f32("flat", 2, 48), f32("tokens", 2, 1, 8),
                  f32("first", 2, 2, 4, 4)],
                 [init("token", 1, 1, 8)])


def layers():
    # The newly mapped operators, with constant operands: Pad, AveragePool,
    # Clip, Concat, Slice, Gather of one index, and the exact GELU as
    # torch.onnx decomposes it.
    nodes = [
        const("pads", [0, 0, 1, 1, 0, 0, 1, 1]),
        const("padval", 0.0, np.float32),
        helper.make_node("Pad", ["x", "pads", "padval"], ["p"], name="pad"),
        helper.make_node("AveragePool", ["p"], ["a"], name="avg",
                         kernel_shape=[2, 2], strides=[2, 2]),
        const("lo", 0.0, np.float32), const("hi", 6.0, np.float32),
        helper.make_node("Clip", ["a", "lo", "hi"], ["c"], name="relu6"),
        helper.make_node("Concat", ["c", "a"], ["cat"], name="cat", axis=1),
        const("starts", [1]), const("ends", [100]), const("axes", [2]),
        const("steps", [2]),
        helper.make_node("Slice", ["cat", "starts", "ends", "axes", "steps"],
                         ["sl"], name="slice"),
        const("idx", 3),
        helper.make_node("Gather", ["sl", "idx"], ["g"], name="pick", axis=1),
        const("sqrt2", 1.4142135381698608, np.float32),
        const("one", 1.0, np.float32), const("half", 0.5, np.float32),
        helper.make_node("Div", ["g", "sqrt2"], ["d"], name="gelu_div"),
        helper.make_node("Erf", ["d"], ["e"], name="gelu_erf"),
        helper.make_node("Add", ["e", "one"], ["e1"], name="gelu_add"),
        helper.make_node("Mul", ["g", "e1"], ["m"], name="gelu_mul"),
        helper.make_node("Mul", ["m", "half"], ["y"], name="gelu"),
    ]
    return model("layers", nodes, [f32("x", 1, 4, 8, 8)],
                 [f32("y", 1, 2, 5)], [])


def clamps():
    # Clip with one bound: clamp<max>, then clamp<min>.
    nodes = [
        const("hi", 2.5, np.float32), const("lo", -1.0, np.float32),
        helper.make_node("Clip", ["x", "", "hi"], ["c"], name="upper"),
        helper.make_node("Clip", ["c", "lo"], ["y"], name="lower"),
    ]
    return model("clamps", nodes, [f32("x", 2, 3)], [f32("y", 2, 3)], [])


def lstm():
    # A reverse LSTM without bias or initial state (handwritten; the torch
    # exports of onnx-models.test have both): Y and Y_h.
    nodes = [helper.make_node("LSTM", ["x", "w", "r"], ["y", "y_h"],
                              name="lstm", hidden_size=2, direction="reverse")]
    return model("lstm", nodes, [f32("x", 3, 2, 4)],
                 [f32("y", 3, 1, 2, 2), f32("y_h", 1, 2, 2)],
                 [init("w", 1, 8, 4), init("r", 1, 8, 2)])


def badlstm():
    # Per-sequence lengths are not supported: an error naming the node.
    nodes = [helper.make_node("LSTM", ["x", "w", "r", "", "lens"], ["y"],
                              name="lstm", hidden_size=2)]
    lens = numpy_helper.from_array(np.array([3, 2], dtype=np.int32),
                                   name="lens")
    return model("badlstm", nodes, [f32("x", 3, 2, 4)],
                 [f32("y", 3, 1, 2, 2)],
                 [init("w", 1, 8, 4), init("r", 1, 8, 2), lens])


def splitshape():
    # Reshape targets that are parts of a Split of a constant: the folder
    # splits the constant (ONNX shape inference does not propagate values
    # through Split), so both targets are known.
    nodes = [
        const("c", [3, 8, 4, 6]), const("sizes", [2, 2]),
        helper.make_node("Split", ["c", "sizes"], ["s0", "s1"],
                         name="parts", axis=0),
        helper.make_node("Reshape", ["x", "s0"], ["a"], name="r0"),
        helper.make_node("Reshape", ["a", "s1"], ["y"], name="r1"),
    ]
    return model("splitshape", nodes, [f32("x", 2, 12)], [f32("y", 4, 6)],
                 [])


def badgru():
    # An activation the unrolling has no op for: an error naming it.
    nodes = [helper.make_node("GRU", ["x", "w", "r"], ["y"], name="gru",
                              hidden_size=2,
                              activations=["Sigmoid", "Softsign"])]
    return model("badgru", nodes, [f32("x", 3, 2, 4)],
                 [f32("y", 3, 1, 2, 2)],
                 [init("w", 1, 6, 4), init("r", 1, 6, 2)])


def unsupported():
    nodes = [
        helper.make_node("Sin", ["x"], ["a"], name="sin1"),
        helper.make_node("Relu", ["a"], ["r"], name="relu"),
        helper.make_node("Sin", ["r"], ["b"], name="sin2"),
        helper.make_node("LRN", ["b"], ["c"], name="lrn", size=3),
        # A supported type used in an unsupported way.
        helper.make_node("Pad", ["c", "pads"], ["y"], name="wrap",
                         mode="wrap"),
    ]
    pads = numpy_helper.from_array(
        np.array([0, 0, 1, 1, 0, 0, 1, 1], dtype=np.int64), name="pads")
    return model("unsupported", nodes, [f32("x", 1, 3, 8, 8)],
                 [f32("y", 1, 3, 10, 10)], [pads])


def zerostride():
    # A zero stride: ONNX shape inference would divide by it.
    nodes = [helper.make_node("MaxPool", ["x"], ["y"], name="pool",
                              kernel_shape=[2, 2], strides=[2, 0])]
    return model("zerostride", nodes, [f32("x", 1, 1, 4, 4)],
                 [f32("y", 1, 1, 2, 2)], [])


def noinput():
    # A Shape node without its input (not a valid model): the folding must
    # leave it to the lowering's diagnostic, not read a missing input.
    nodes = [helper.make_node("Shape", [], ["s"], name="shape"),
             helper.make_node("Reshape", ["x", "s"], ["y"], name="reshape")]
    graph = helper.make_graph(nodes, "noinput", [f32("x", 2, 2)],
                              [f32("y", 2, 2)], [])
    return helper.make_model(graph, producer_name="make_onnx.py",
                             opset_imports=[helper.make_opsetid("", 13)])


def badgelu():
    # The GELU pattern around a Div without its divisor (not a valid
    # model): the fusion must not read the missing input.
    nodes = [
        const("one", 1.0, np.float32), const("half", 0.5, np.float32),
        helper.make_node("Div", ["x"], ["d"], name="gelu_div"),
        helper.make_node("Erf", ["d"], ["e"], name="gelu_erf"),
        helper.make_node("Add", ["e", "one"], ["e1"], name="gelu_add"),
        helper.make_node("Mul", ["x", "e1"], ["m"], name="gelu_mul"),
        helper.make_node("Mul", ["m", "half"], ["y"], name="gelu"),
    ]
    graph = helper.make_graph(nodes, "badgelu", [f32("x", 2, 2)],
                              [f32("y", 2, 2)], [])
    return helper.make_model(graph, producer_name="make_onnx.py",
                             opset_imports=[helper.make_opsetid("", 13)])


def malformed():
    # A Gemm with one input: not a valid model (the checker would say so);
    # the importer must report it, not read past the inputs.
    nodes = [helper.make_node("Gemm", ["x"], ["y"], name="gemm")]
    graph = helper.make_graph(nodes, "malformed", [f32("x", 2, 2)],
                              [f32("y", 2, 2)], [])
    return helper.make_model(graph, producer_name="make_onnx.py",
                             opset_imports=[helper.make_opsetid("", 13)])


def badaxis():
    # Axes beyond the rank (one resolution, NodeLowering::resolveAxis, for
    # every op with an axis): each is an error naming the axis.
    nodes = [
        helper.make_node("Softmax", ["x"], ["y"], name="sm", axis=2),
        helper.make_node("Concat", ["x", "x"], ["z"], name="cat", axis=-3),
        helper.make_node("Split", ["x"], ["s1", "s2"], name="split", axis=2),
        helper.make_node("LayerNormalization", ["x", "g", "b"], ["w"],
                         name="ln", axis=4),
    ]
    graph = helper.make_graph(
        nodes, "badaxis", [f32("x", 2, 4), f32("g", 4), f32("b", 4)],
        [f32("y", 2, 4), f32("z", 4, 4), f32("s1", 1, 4), f32("s2", 1, 4),
         f32("w", 2, 4)], [])
    return helper.make_model(graph, producer_name="make_onnx.py",
                             opset_imports=[helper.make_opsetid("", 17)])


def symbolic():
    # A batch dimension left symbolic: the importer needs static shapes.
    nodes = [helper.make_node("Relu", ["x"], ["y"], name="relu")]
    return model("symbolic", nodes, [f32("x", "batch", 4)],
                 [f32("y", "batch", 4)], [])


def strings():
    # A string input: tofu-graph has no dtype for it.
    nodes = [helper.make_node("Identity", ["s"], ["y"], name="id")]
    graph = helper.make_graph(
        nodes, "strings",
        [helper.make_tensor_value_info("s", TensorProto.STRING, [2])],
        [helper.make_tensor_value_info("y", TensorProto.STRING, [2])])
    return helper.make_model(graph, producer_name="make_onnx.py",
                             opset_imports=[helper.make_opsetid("", 13)])


if __name__ == "__main__":
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    for make in (mlp, convnet, attention, layernorm, shapechain, layers,
                 clamps, lstm, badlstm, badgru, splitshape, zerostride, noinput, badgelu,
                 unsupported, malformed, badaxis, symbolic,
                 strings):
        onnx.save(make(), os.path.join(out, make.__name__ + ".onnx"))
    with open(os.path.join(out, "garbage.onnx"), "wb") as f:
        f.write(b"\x08\x07\x12\xff\xff not a model")
