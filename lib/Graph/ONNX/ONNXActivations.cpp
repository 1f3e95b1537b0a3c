//===- ONNXActivations.cpp - Lower ONNX activation functions --------------===//
//
// This file implements the lowerings of ONNX's parameterised activation
// functions to the library's: Elu / Selu -> elu (Selu is elu with ONNX's
// alpha and gamma as alpha and scale), Celu -> celu, LeakyRelu ->
// leaky_relu, PRelu -> prelu (the slope viewed to the one dimension the
// library reads), Softplus -> softplus with beta 1, HardSigmoid with
// PyTorch's constants -> hardsigmoid.
//
//===----------------------------------------------------------------------===//

#include "ONNXNodeLowering.h"

#include <cmath>

using namespace tofu;
using namespace tofu::graph;
using namespace tofu::graph::onnximport;

bool NodeLowering::elu(double alpha, double scale) {
  l.emit("elu", {in(0)},
         {{"alpha", R(alpha)}, {"scale", R(scale)}, {"input_scale", R(1)}},
         outName(), out().shape, out().dtype);
  return true;
}

bool NodeLowering::leakyRelu() {
  l.emit("leaky_relu", {in(0)},
         {{"negative_slope", R(attrReal(node, "alpha", 0.01))}}, outName(),
         out().shape, out().dtype);
  return true;
}

bool NodeLowering::prelu() {
  // The slope broadcasts against X: one value, or one per channel (shape
  // [C, 1, ...] or [C]); the library's prelu reads weight[0] or weight[c].
  const Shape &xs = info(0).shape, &ws = info(1).shape;
  int64_t slopes = getNumElements(ws);
  bool perChannel = xs.size() >= 2 && slopes == xs[1] && slopes > 1 &&
                    (ws.size() == 1 || ws.size() == xs.size() - 1) &&
                    ws[0] == slopes;
  if (slopes != 1 && !perChannel)
    return fail("only one slope or one slope per channel is supported");
  std::string weight =
      view(in(1), ws, {slopes}, info(1).dtype, l.temp("slope"));
  l.emit("prelu", {in(0), weight}, {}, outName(), out().shape, out().dtype);
  return true;
}

bool NodeLowering::softplus() {
  // ONNX's log(1 + exp(x)) is PyTorch's softplus with beta 1; PyTorch
  // returns x itself above the threshold, where the two differ by less
  // than exp(-20) relative.
  l.emit("softplus", {in(0)}, {{"beta", R(1)}, {"threshold", R(20)}},
         outName(), out().shape, out().dtype);
  return true;
}

bool NodeLowering::hardSigmoid() {
  double alpha = attrReal(node, "alpha", 0.2), beta = attrReal(node, "beta", 0.5);
  // torch.onnx writes PyTorch's relu6(x + 3) / 6 as alpha 1/6 (as a float).
  if (std::abs(alpha - 1.0 / 6) > 1e-7 || beta != 0.5)
    return fail("only alpha 1/6 and beta 0.5 (PyTorch's hardsigmoid) are "
                "supported");
  return unary("hardsigmoid");
}
