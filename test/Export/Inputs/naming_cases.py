"""Prints how tofu_export.naming canonicalizes a set of ATen calls, one line
per call: `aten op -> type [inputs] {params}` (or `alias of X`), so that a
FileCheck test pins the naming rules of docs/OperatorLibrary.md."""

import sys
from types import SimpleNamespace

sys.path.insert(0, sys.argv[1])

import torch  # noqa: E402

from tofu_export import naming  # noqa: E402

aten = torch.ops.aten


def t(name, *shape):
    """A stand-in for an FX node carrying a tensor of `shape`."""
    return SimpleNamespace(name=name, meta={
        "tensor_meta": SimpleNamespace(shape=list(shape))})


def show(op, *args, **kwargs):
    label = f"{op.overloadpacket.__name__}.{op._overloadname}"
    try:
        call = naming.canonicalize(op, args, kwargs)
    except naming.NamingError as e:
        print(f"{label} -> error: {e}")
        return
    if call.alias:
        print(f"{label} -> alias of {call.tensors[0][1].name}")
        return
    n = call.num_outputs
    for k in range(max(n, 1)):
        ins = ",".join(x.name for x in call.output_inputs(k))
        ps = ",".join(f"{p}={v}" for p, v in call.params.items())
        print(f"{label} -> {call.output_type(k)} [{ins}] {{{ps}}}")


x, y, w, b = t("x", 2, 3, 8, 8), t("y", 2, 3, 8, 8), t("w", 4, 3, 3, 3), t("b", 4)
m = t("m", 4, 6)
show(aten.add.Tensor, x, y)
show(aten.add_.Tensor, x, y)
show(aten.mul.Tensor, x, 0.5)
show(aten.add.Tensor, x, 1)
show(aten.relu_.default, x)
show(aten.convolution.default, x, w, None, [1, 1], [1, 1], [1, 1], False,
     [0, 0], 1)
show(aten.convolution.default, x, w, b, [2, 2], [0, 0], [1, 1], False,
     [0, 0], 1)
show(aten.convolution_backward.default, y, x, w, [4], [1, 1], [1, 1],
     [1, 1], False, [0, 0], 1, [True, True, True])
show(aten.native_batch_norm.default, x, b, b, b, b, True, 0.1, 1e-5)
show(aten.sum.dim_IntList, m, [-1], True)
show(aten._log_softmax.default, m, -1, False)
show(aten.transpose.int, x, -2, -1)
show(aten.unsqueeze.default, m, -1)
show(aten.stack.default, [m, m], -1)
show(aten.gelu.default, m)
show(aten.gelu.default, m, approximate="tanh")
show(aten.detach.default, m)
show(aten.clone.default, m)
show(aten.slice.Tensor, m, 1, 0, 9223372036854775807)
show(aten.slice.Tensor, m, 1, 2, 9223372036854775807)
show(aten._reshape_alias.default, m, [24], [1])
show(aten.ones_like.default, m)
show(aten.zeros.default, [2, 3])
show(aten.bernoulli_.float, m, 0.5)
show(aten.cat.default, [m, m, m], 0)
show(aten.nll_loss_forward.default, m, t("tgt", 4), None, 1, -100)
show(aten.mean.dim, x, [-1, -2], True)
show(aten.where.self, t("c", 4, 6), m, 0.0)
show(aten.expand.default, m, [4, -1])
show(aten.expand.default, t("r", 4, 1), [4, 6])
show(aten.view.default, m, [4, 6])
show(aten.view.default, m, [-1, 2])
show(aten.expand.default, t("r", 4, 1), [3, -1, 6])
show(aten.slice_backward.default, m, [4, 6], 1, 0, 9223372036854775807, 1)
show(aten.slice_backward.default, m, [9, 6], -2, 2, 9223372036854775807, 1)
show(aten.slice.Tensor, m, 0, None, None, 2)
show(aten.cat.default, [m, m], -1)
show(aten.slice.Tensor, m, 1, -4, -1)
show(aten.slice_scatter.default, m, t("s", 4, 3), 1, -3)
