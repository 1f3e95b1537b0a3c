//===- ONNXSpatial.cpp - Lower ONNX convolutions, poolings, resampling ----===//
//
// This file implements the lowerings of ONNX's operators over spatial axes:
// Conv and ConvTranspose (1-3 spatial axes) -> convolution /
// convolution_nobias, MaxPool / AveragePool (2-3 axes directly, 1 axis as a
// 2-d pooling of a view with a unit row) -> max_pool{2,3}d_with_indices__0 /
// avg_pool{2,3}d, GlobalAveragePool -> mean_dim over the spatial axes,
// DepthToSpace -> pixel_shuffle (DCR: of a channel-reordering transpose), Resize -> upsample_nearest{1,2,3}d /
// upsample_{linear1d,bilinear2d,trilinear3d} (.vec, by output size), and
// reflect / edge Pad -> reflection_pad{1,2,3}d / replication_pad{1,2,3}d.
//
// Per-axis attributes become the params ATen's list arguments do in an
// exported graph: `strides` [2, 2] -> stride_0 = 2, stride_1 = 2.
//
//===----------------------------------------------------------------------===//

#include "ONNXNodeLowering.h"

#include "llvm/ADT/STLExtras.h"

using namespace tofu;
using namespace tofu::graph;
using namespace tofu::graph::onnximport;

namespace {

/// Appends `name_0`, `name_1`, ... = `values`.
void addAxes(Params &params, StringRef name, ArrayRef<int64_t> values) {
  for (size_t i = 0; i != values.size(); ++i)
    params.emplace_back((name + "_" + Twine(i)).str(), I(values[i]));
}

/// The spatial attributes of a convolution or pooling node, with ONNX's
/// defaults, checked against the number of spatial axes.
struct Window {
  std::vector<int64_t> kernel, strides, pads, dilations;
};

} // namespace

/// Reads kernel_shape (when `needKernel`), strides, pads (symmetric only)
/// and dilations for `spatial` axes into `w`.
static bool readWindow(NodeLowering &n, unsigned spatial, bool needKernel,
                       Window &w) {
  const auto *autoPad = findAttr(n.node, "auto_pad");
  if (autoPad && autoPad->s() != "NOTSET" && autoPad->s() != "VALID")
    return n.fail("auto_pad " + autoPad->s() + " is not supported");
  w.kernel = attrInts(n.node, "kernel_shape", {});
  w.strides = attrInts(n.node, "strides", std::vector<int64_t>(spatial, 1));
  w.dilations = attrInts(n.node, "dilations", std::vector<int64_t>(spatial, 1));
  std::vector<int64_t> pads =
      attrInts(n.node, "pads", std::vector<int64_t>(2 * spatial, 0));
  if ((needKernel && w.kernel.size() != spatial) ||
      w.strides.size() != spatial || w.dilations.size() != spatial ||
      pads.size() != 2 * spatial)
    return n.fail("kernel_shape, strides, dilations and pads must have " +
                  Twine(spatial) + " spatial axes");
  for (unsigned i = 0; i != spatial; ++i)
    if (pads[i] != pads[i + spatial])
      return n.fail("asymmetric padding is not supported");
  w.pads.assign(pads.begin(), pads.begin() + spatial);
  return true;
}

/// Emits `convolution` / `convolution_nobias` for a Conv or ConvTranspose
/// node with window `w` and `outputPadding` (zeros for Conv).
static bool emitConvolution(NodeLowering &n, const Window &w, bool transposed,
                            ArrayRef<int64_t> outputPadding) {
  Params params;
  addAxes(params, "stride", w.strides);
  addAxes(params, "padding", w.pads);
  addAxes(params, "dilation", w.dilations);
  params.emplace_back("transposed", I(transposed));
  addAxes(params, "output_padding", outputPadding);
  params.emplace_back("groups", I(attrInt(n.node, "group", 1)));
  std::vector<std::string> inputs = {n.in(0), n.in(1)};
  if (n.hasInput(2))
    inputs.push_back(n.in(2));
  n.l.emit(n.hasInput(2) ? "convolution" : "convolution_nobias", inputs,
           params, n.outName(), n.out().shape, n.out().dtype);
  return true;
}

bool NodeLowering::conv() {
  size_t rank = info(0).shape.size();
  if (rank < 3 || rank > 5)
    return fail("only 1-, 2- and 3-d convolutions are supported");
  unsigned spatial = rank - 2;
  Window w;
  if (!readWindow(*this, spatial, /*needKernel=*/false, w))
    return false;
  return emitConvolution(*this, w, /*transposed=*/false,
                         std::vector<int64_t>(spatial, 0));
}

bool NodeLowering::convTranspose() {
  size_t rank = info(0).shape.size();
  if (rank < 3 || rank > 5)
    return fail("only 1-, 2- and 3-d transposed convolutions are supported");
  if (findAttr(node, "output_shape"))
    return fail("the output_shape attribute is not supported (give pads and "
                "output_padding)");
  unsigned spatial = rank - 2;
  Window w;
  if (!readWindow(*this, spatial, /*needKernel=*/false, w))
    return false;
  std::vector<int64_t> outputPadding = attrInts(
      node, "output_padding", std::vector<int64_t>(spatial, 0));
  if (outputPadding.size() != spatial)
    return fail("output_padding must have " + Twine(spatial) +
                " spatial axes");
  return emitConvolution(*this, w, /*transposed=*/true, outputPadding);
}

/// Lowers a pooling node through `emitPool(input, inputShape, window,
/// outputName, outputShape)`: 2- and 3-d directly, 1-d as a 2-d pooling of
/// the input viewed to [N, C, 1, L] with a unit window row.
template <typename EmitFn>
static bool lowerPooling(NodeLowering &n, EmitFn emitPool) {
  const Shape &xs = n.info(0).shape;
  if (xs.size() < 3 || xs.size() > 5)
    return n.fail("only 1-, 2- and 3-d pooling is supported");
  unsigned spatial = xs.size() - 2;
  Window w;
  if (!readWindow(n, spatial, /*needKernel=*/true, w))
    return false;
  if (spatial != 1)
    return emitPool(n.in(0), xs, w, n.outName(), n.out().shape);
  auto unitRow = [](std::vector<int64_t> v, int64_t first) {
    v.insert(v.begin(), first);
    return v;
  };
  Window w2 = {unitRow(w.kernel, 1), unitRow(w.strides, 1),
               unitRow(w.pads, 0), unitRow(w.dilations, 1)};
  Shape xs2 = {xs[0], xs[1], 1, xs[2]};
  const Shape &os = n.out().shape;
  Shape os2 = {os[0], os[1], 1, os[2]};
  std::string x = n.view(n.in(0), xs, xs2, n.info(0).dtype, n.l.temp("rows"));
  std::string pooled = n.l.temp("pool");
  if (!emitPool(x, xs2, w2, pooled, os2))
    return false;
  n.view(pooled, os2, os, n.out().dtype, n.outName());
  return true;
}

bool NodeLowering::maxPool() {
  if (node.output_size() > 1 && !node.output(1).empty())
    return fail("the Indices output is not supported");
  int64_t ceilMode = attrInt(node, "ceil_mode", 0);
  return lowerPooling(*this, [&](const std::string &x, const Shape &xs,
                                 const Window &w, const std::string &name,
                                 const Shape &shape) {
    Params params;
    addAxes(params, "kernel_size", w.kernel);
    addAxes(params, "stride", w.strides);
    addAxes(params, "padding", w.pads);
    addAxes(params, "dilation", w.dilations);
    params.emplace_back("ceil_mode", I(ceilMode));
    std::string type = "max_pool" + std::to_string(xs.size() - 2) +
                       "d_with_indices__0";
    l.emit(type, {x}, params, name, shape, out().dtype);
    return true;
  });
}

bool NodeLowering::avgPool() {
  int64_t ceilMode = attrInt(node, "ceil_mode", 0);
  int64_t countIncludePad = attrInt(node, "count_include_pad", 0);
  return lowerPooling(*this, [&](const std::string &x, const Shape &xs,
                                 const Window &w, const std::string &name,
                                 const Shape &shape) {
    if (llvm::any_of(w.dilations, [](int64_t d) { return d != 1; }))
      return fail("dilated average pooling is not supported");
    Params params;
    addAxes(params, "kernel_size", w.kernel);
    addAxes(params, "stride", w.strides);
    addAxes(params, "padding", w.pads);
    params.emplace_back("ceil_mode", I(ceilMode));
    params.emplace_back("count_include_pad", I(countIncludePad));
    l.emit("avg_pool" + std::to_string(xs.size() - 2) + "d", {x}, params,
           name, shape, out().dtype);
    return true;
  });
}

bool NodeLowering::globalAveragePool() {
  size_t rank = info(0).shape.size();
  if (rank < 3 || rank > 6)
    return fail("only inputs with 1 to 4 spatial axes are supported");
  Params params;
  for (size_t d = 2; d != rank; ++d)
    params.emplace_back("dim_" + std::to_string(d - 2), I(d));
  params.emplace_back("keepdim", I(1));
  l.emit("mean_dim", {in(0)}, params, outName(), out().shape, out().dtype);
  return true;
}

bool NodeLowering::resize() {
  const Shape &xs = info(0).shape, &os = out().shape;
  if (xs.size() < 3 || xs.size() > 5)
    return fail("only 1-, 2- and 3-d resizing is supported");
  if (xs[0] != os[0] || xs[1] != os[1])
    return fail("only the spatial axes may be resized");
  unsigned spatial = xs.size() - 2;
  std::string mode = attrString(node, "mode", "nearest");
  std::string coords =
      attrString(node, "coordinate_transformation_mode", "half_pixel");
  Params params;
  addAxes(params, "output_size", ArrayRef<int64_t>(os).drop_front(2));
  std::string type;
  if (mode == "nearest") {
    // PyTorch's nearest: source index floor(dst * in / out).
    if (coords != "asymmetric" ||
        attrString(node, "nearest_mode", "round_prefer_floor") != "floor")
      return fail("nearest mode needs coordinate_transformation_mode "
                  "'asymmetric' and nearest_mode 'floor' (PyTorch's)");
    type = "upsample_nearest" + std::to_string(spatial) + "d_vec";
  } else if (mode == "linear") {
    if (coords != "half_pixel" && coords != "pytorch_half_pixel" &&
        coords != "align_corners")
      return fail("coordinate_transformation_mode '" + coords +
                  "' is not supported");
    params.emplace_back("align_corners", I(coords == "align_corners"));
    static const char *const names[] = {"upsample_linear1d_vec",
                                        "upsample_bilinear2d_vec",
                                        "upsample_trilinear3d_vec"};
    type = names[spatial - 1];
  } else {
    return fail("mode '" + mode + "' is not supported");
  }
  l.emit(type, {in(0)}, params, outName(), os, out().dtype);
  return true;
}

bool NodeLowering::depthToSpace() {
  // CRD is pixel_shuffle's channel order (and what torch.onnx writes);
  // DCR, ONNX's default, orders the channels block-first: channel
  // (b1 * b + b2) * C' + c. A [N, b*b, C', H, W] view transposed to
  // [N, C', b*b, H, W] is the CRD order c * b*b + b1 * b + b2.
  int64_t b = attrInt(node, "blocksize", 1);
  std::string mode = attrString(node, "mode", "DCR");
  const Shape &x = info(0).shape;
  if (mode != "CRD" && mode != "DCR")
    return fail("mode '" + mode + "' is unknown (DCR and CRD are)");
  if (x.size() != 4 || b < 1 || x[1] % (b * b))
    return fail("the input must be [N, C, H, W] with C a multiple of "
                "blocksize^2");
  std::string in0 = in(0);
  if (mode == "DCR" && b > 1) {
    Shape split{x[0], b * b, x[1] / (b * b), x[2], x[3]};
    Shape swapped{x[0], x[1] / (b * b), b * b, x[2], x[3]};
    std::string v = view(in0, x, split, info(0).dtype, l.temp("blocks"));
    std::string t = l.temp("crd");
    l.emit("transpose_int", {v}, {{"dim0", I(1)}, {"dim1", I(2)}}, t, swapped,
           info(0).dtype);
    in0 = view(t, swapped, x, info(0).dtype, l.temp("crd_channels"));
  }
  l.emit("pixel_shuffle", {in0}, {{"upscale_factor", I(b)}}, outName(),
         out().shape, out().dtype);
  return true;
}

bool NodeLowering::spatialPad(StringRef mode, ArrayRef<int64_t> pads) {
  int64_t rank = info(0).shape.size();
  // ONNX lists the begins then the ends of every axis; ATen's padding
  // lists (begin, end) of every spatial axis from the last one on.
  bool batchOrChannel = pads[0] || pads[1] || pads[rank] || pads[rank + 1];
  if (rank < 3 || rank > 5 || batchOrChannel)
    return fail("only the spatial axes of an [N, C, 1-3 spatial axes] input "
                "may be padded in mode '" + mode + "'");
  Params params;
  unsigned k = 0;
  for (int64_t d = rank - 1; d >= 2; --d) {
    params.emplace_back("padding_" + std::to_string(k++), I(pads[d]));
    params.emplace_back("padding_" + std::to_string(k++), I(pads[d + rank]));
  }
  std::string type = (mode == "reflect" ? "reflection_pad" : "replication_pad") +
                     std::to_string(rank - 2) + "d";
  l.emit(type, {in(0)}, params, outName(), out().shape, out().dtype);
  return true;
}
