//===- ONNXNormalization.cpp - Lower ONNX norms and reductions ------------===//
//
// This file implements the lowerings of ONNX's normalizations and
// reductions: BatchNormalization (inference) -> native_batch_norm__0,
// LayerNormalization over the trailing axes -> native_layer_norm__0,
// InstanceNormalization -> native_group_norm__0 with one group per channel,
// and ReduceMean / ReduceSum / ReduceMax / ReduceMin / ReduceLogSumExp ->
// mean_dim / sum_dim_IntList / amax / amin / logsumexp over the listed axes.
//
//===----------------------------------------------------------------------===//

#include "ONNXNodeLowering.h"

#include "llvm/ADT/STLExtras.h"

using namespace tofu;
using namespace tofu::graph;
using namespace tofu::graph::onnximport;

bool NodeLowering::batchNorm() {
  if (node.output_size() > 1)
    return fail("training mode (running statistics outputs) is not supported");
  // PyTorch's momentum weighs the new statistics; ONNX's the old ones.
  Params params = {
      {"eps", R(attrReal(node, "epsilon", 1e-5))},
      {"momentum", R(widen(float(1 - attrReal(node, "momentum", 0.9))))},
      {"training", I(0)}};
  l.emit("native_batch_norm__0", {in(0), in(1), in(2), in(3), in(4)}, params,
         outName(), out().shape, out().dtype);
  return true;
}

bool NodeLowering::layerNorm() {
  const Shape &shape = info(0).shape;
  int64_t rank = shape.size();
  int64_t axis;
  if (!resolveAxis(attrInt(node, "axis", -1), rank, axis))
    return false;
  if (!hasInput(1) || !hasInput(2))
    return fail("only a layer norm with scale and bias is supported");
  for (int i = 1; i < node.output_size(); ++i)
    if (!node.output(i).empty())
      return fail("the Mean and InvStdDev outputs are not supported");
  // The normalized shape is the input's from `axis` on; Scale and B have it.
  Params params;
  for (int64_t d = axis; d != rank; ++d)
    params.emplace_back("normalized_shape_" + std::to_string(d - axis),
                        I(shape[d]));
  params.emplace_back("eps", R(attrReal(node, "epsilon", 1e-5)));
  l.emit("native_layer_norm__0", {in(0), in(1), in(2)}, params, outName(),
         out().shape, out().dtype);
  return true;
}

bool NodeLowering::instanceNorm() {
  const Shape &shape = info(0).shape;
  if (shape.size() < 3)
    return fail("the input must have a batch, a channel and a spatial axis");
  // Instance norm is group norm with one group per channel.
  int64_t n = shape[0], c = shape[1];
  int64_t spatial = getNumElements(ArrayRef<int64_t>(shape).drop_front(2));
  Params params = {{"N", I(n)},          {"C", I(c)},
                   {"HxW", I(spatial)},  {"group", I(c)},
                   {"eps", R(attrReal(node, "epsilon", 1e-5))}};
  l.emit("native_group_norm__0", {in(0), in(1), in(2)}, params, outName(),
         out().shape, out().dtype);
  return true;
}

bool NodeLowering::reduce(StringRef type) {
  int64_t rank = info(0).shape.size();
  // Opset 13 moved ReduceSum's axes (and opset 18 the others') to input 1.
  std::vector<int64_t> axes = attrInts(node, "axes", {});
  if (hasInput(1) && !l.getInts(node.input(1), axes))
    return fail("only constant axes are supported");
  if (axes.empty()) {
    if (attrInt(node, "noop_with_empty_axes", 0)) {
      l.alias(outName(), node.input(0));
      return true;
    }
    for (int64_t d = 0; d != rank; ++d)
      axes.push_back(d);
  }
  if (axes.size() > 4)
    return fail("more than 4 axes are not supported");
  Params params;
  for (size_t i = 0; i != axes.size(); ++i) {
    int64_t axis;
    if (!resolveAxis(axes[i], rank, axis))
      return false;
    params.emplace_back("dim_" + std::to_string(i), I(axis));
  }
  params.emplace_back("keepdim", I(attrInt(node, "keepdims", 1)));
  l.emit(type, {in(0)}, params, outName(), out().shape, out().dtype);
  return true;
}
