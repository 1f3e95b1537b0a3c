//===- DeviceConvTest.cpp - Convolutions as cuDNN would compute them ------===//
//
// Checks the description of a convolution the generator hands the device
// executor (GeneratedKernel::conv, DeviceConv.h): planConvolution's call,
// run with cuDNN's documented semantics by loops on the host (after
// checking the dimensions cuDNN requires to agree), writes what the
// generated C++ kernel (im2col and OpenBLAS) writes. Forward: ResNet-18's
// distinct forward convolutions over boxes with padding before, after and
// none, inside larger output boxes. Input gradients (BackwardData) and
// weight gradients (BackwardFilter): ResNet-like shapes (3x3 stride 1 and
// 2, 1x1 stride 2, 7x7 stride 2 padding 3, dilation 2, a forward that
// dropped a row; descriptions only: dY of two rows) over whole boxes and
// strategy shares (rows, channels, batch and reduction slices). Boxes cuDNN cannot express get no call;
// grouped convolutions get no description.
//
//===----------------------------------------------------------------------===//

#include "tofu/CodeGen/GraphKernels.h"
#include "tofu/CodeGen/KernelCompiler.h"
#include "tofu/Runtime/DeviceConv.h"
#include "DeviceTestUtils.h"

#include <map>

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::runtime;
using namespace tofu::testing;

namespace {

/// Runs `p` as cuDNN defines its three convolutions (cross-correlation,
/// `pad` zeros on both sides, the result overwritten), by loops; fails if
/// the dimensions are not ones cuDNN accepts (cudnnGetConvolutionNd-
/// ForwardOutputDim of x, w and the convolution must give y's).
template <typename T>
::testing::AssertionResult runOnHost(const ConvCall &p) {
  const std::int64_t *xd = p.xDims, *yd = p.yDims, *wd = p.wDims;
  if (xd[0] != yd[0] || xd[1] != wd[1] || yd[1] != wd[0])
    return ::testing::AssertionFailure() << "batch or channels disagree";
  for (unsigned s = 0; s != 2; ++s) {
    std::int64_t rows = (xd[s + 2] + 2 * p.pad[s] - p.dilation[s] * (wd[s + 2] - 1) - 1) /
                            p.stride[s] + 1;
    if (rows != yd[s + 2] || p.pad[s] < 0)
      return ::testing::AssertionFailure()
             << "cuDNN computes " << rows << " rows, y has " << yd[s + 2];
  }
  T *x = static_cast<T *>(p.x), *w = static_cast<T *>(p.w),
    *y = static_cast<T *>(p.y);
  const std::int64_t *xs = p.xStrides, *ys = p.yStrides;
  auto xAt = [&](std::int64_t n, std::int64_t c, std::int64_t h,
                 std::int64_t v) -> T & {
    return x[n * xs[0] + c * xs[1] + h * xs[2] + v * xs[3]];
  };
  auto yAt = [&](std::int64_t n, std::int64_t k, std::int64_t a,
                 std::int64_t b) -> T & {
    return y[n * ys[0] + k * ys[1] + a * ys[2] + b * ys[3]];
  };
  auto wAt = [&](std::int64_t k, std::int64_t c, std::int64_t r,
                 std::int64_t s) -> T & {
    return w[((k * wd[1] + c) * wd[2] + r) * wd[3] + s];
  };
  // Sums in double over the result's elements, in NCHW / KCRS order.
  const std::int64_t *rd = p.kind == ConvKind::Forward        ? yd
                           : p.kind == ConvKind::BackwardData ? xd
                                                              : wd;
  std::vector<double> sum(rd[0] * rd[1] * rd[2] * rd[3], 0.0);
  auto at = [&](std::int64_t a, std::int64_t b, std::int64_t c,
                std::int64_t d) -> double & {
    return sum[((a * rd[1] + b) * rd[2] + c) * rd[3] + d];
  };
  for (std::int64_t n = 0; n != yd[0]; ++n)
    for (std::int64_t k = 0; k != yd[1]; ++k)
      for (std::int64_t oy = 0; oy != yd[2]; ++oy)
        for (std::int64_t ox = 0; ox != yd[3]; ++ox)
          for (std::int64_t c = 0; c != wd[1]; ++c)
            for (std::int64_t r = 0; r != wd[2]; ++r)
              for (std::int64_t s = 0; s != wd[3]; ++s) {
                std::int64_t iy = oy * p.stride[0] - p.pad[0] + r * p.dilation[0];
                std::int64_t ix = ox * p.stride[1] - p.pad[1] + s * p.dilation[1];
                if (iy < 0 || iy >= xd[2] || ix < 0 || ix >= xd[3])
                  continue;
                double xv = xAt(n, c, iy, ix), yv = yAt(n, k, oy, ox),
                       wv = wAt(k, c, r, s);
                if (p.kind == ConvKind::Forward)
                  at(n, k, oy, ox) += xv * wv;
                else if (p.kind == ConvKind::BackwardData)
                  at(n, c, iy, ix) += yv * wv;
                else
                  at(k, c, r, s) += yv * xv;
              }
  for (std::int64_t a = 0; a != rd[0]; ++a)
    for (std::int64_t b = 0; b != rd[1]; ++b)
      for (std::int64_t c = 0; c != rd[2]; ++c)
        for (std::int64_t d = 0; d != rd[3]; ++d) {
          T v = T(at(a, b, c, d));
          if (p.kind == ConvKind::Forward)
            yAt(a, b, c, d) = v;
          else if (p.kind == ConvKind::BackwardData)
            xAt(a, b, c, d) = v;
          else
            wAt(a, b, c, d) = v;
        }
  return ::testing::AssertionSuccess();
}

/// The host run of the device's call for `c` (false: the device would
/// launch the generated kernel); a planned call cuDNN would reject fails
/// the test.
auto plannedRun(const DeviceConv &c) {
  return [&c](const KernelCall &call) {
    std::optional<ConvCall> plan = planConvolution(c, call);
    if (!plan)
      return false;
    EXPECT_EQ(plan->kind, c.kind);
    EXPECT_TRUE(call.output.type == ElementType::F32 ? runOnHost<float>(*plan)
                                                     : runOnHost<double>(*plan));
    return true;
  };
}

/// Compiles the generated C++ kernels into one library, kernel i at i.
std::unique_ptr<KernelLibrary> compileKernels(const std::vector<GeneratedKernel> &kernels) {
  std::string source = getKernelPrelude();
  for (const GeneratedKernel &kernel : kernels)
    source += kernel.source;
  source += "extern \"C\" const tofu::runtime::KernelInfo *tofu_graph_kernels(unsigned *count) {\n"
            "  static const tofu::runtime::KernelInfo table[] = {\n";
  for (const GeneratedKernel &kernel : kernels)
    source += "    {\"" + kernel.name + "\", " + kernel.name + ", nullptr, 0},\n";
  source += "  };\n  *count = " + std::to_string(kernels.size()) +
            ";\n  return table;\n}\n";
  auto library = KernelCompiler().compile(source);
  EXPECT_TRUE(bool(library)) << llvm::toString(library.takeError());
  return library ? std::move(*library) : nullptr;
}

/// Whether the CUDA target's kernel for `inst` carries the same
/// description `c` as the C++ target's.
::testing::AssertionResult cudaDescribesAlike(const KernelInstance &inst,
                                              const DeviceConv &c) {
  KernelOptions options;
  options.target = KernelTarget::Cuda;
  auto cuda = emitKernel(inst, "k", options);
  if (!cuda)
    return ::testing::AssertionFailure() << llvm::toString(cuda.takeError());
  if (!cuda->conv)
    return ::testing::AssertionFailure() << "no description for the device";
  const DeviceConv &d = *cuda->conv;
  bool same = d.kind == c.kind && d.input == c.input && d.weight == c.weight &&
              d.groups == c.groups;
  for (unsigned i = 0; i != 4; ++i)
    same &= d.inputShape[i] == c.inputShape[i] &&
            d.weightShape[i] == c.weightShape[i] &&
            d.outputShape[i] == c.outputShape[i] &&
            (i >= 3 || d.reduceVars[i] == c.reduceVars[i]) &&
            (i >= 2 || (d.stride[i] == c.stride[i] &&
                        d.padding[i] == c.padding[i] &&
                        d.dilation[i] == c.dilation[i]));
  if (!same)
    return ::testing::AssertionFailure() << "the descriptions differ";
  return ::testing::AssertionSuccess();
}

/// A whole-tensor random box of shape `shape`.
TestBox wholeBox(ElementType type, const Shape &shape, std::mt19937_64 &rng) {
  return makeBox(type, std::vector<std::int64_t>(shape.size(), 0),
                 std::vector<std::int64_t>(shape.begin(), shape.end()), rng);
}

TEST(DeviceConvTest, ResNetConvolutionsAgreeWithTheCppKernels) {
  TestGraph tg;
  tg.loadFile(TOFU_SOURCE_DIR "/models/resnet18.json");
  ASSERT_TRUE(tg.graph);
  const graph::Graph &g = *tg.graph;
  // One unit of the distinct forward convolutions' C++ kernels.
  std::map<std::string, unsigned> distinct;
  std::vector<GeneratedKernel> kernels;
  std::vector<KernelInstance> instances;
  for (unsigned op = 0; op != g.getNumOps(); ++op) {
    if (g.getOp(op).type != "convolution_nobias")
      continue;
    auto inst = makeKernelInstance(g, op, tg.specs);
    ASSERT_TRUE(bool(inst)) << llvm::toString(inst.takeError());
    std::string name = "conv" + std::to_string(kernels.size());
    auto kernel = emitKernel(*inst, name);
    ASSERT_TRUE(bool(kernel)) << llvm::toString(kernel.takeError());
    ASSERT_TRUE(kernel->conv.hasValue()) << g.getOp(op).name;
    const DeviceConv &c = *kernel->conv;
    EXPECT_EQ(c.kind, ConvKind::Forward);
    std::string key;
    for (std::int64_t v : {c.stride[0], c.stride[1], c.padding[0], c.padding[1],
                           c.dilation[0], c.dilation[1], c.inputShape[1],
                           c.inputShape[2], c.weightShape[0], c.weightShape[2]})
      key += std::to_string(v) + ",";
    if (!distinct.emplace(key, kernels.size()).second)
      continue;
    EXPECT_TRUE(cudaDescribesAlike(*inst, c));
    kernels.push_back(std::move(*kernel));
    instances.push_back(std::move(*inst));
  }
  ASSERT_GE(kernels.size(), 4u);
  std::unique_ptr<KernelLibrary> library = compileKernels(kernels);
  ASSERT_TRUE(library);

  std::mt19937_64 rng(11);
  unsigned planned = 0, declined = 0;
  bool sawStride2 = false, sawPadding3 = false;
  for (unsigned i = 0; i != kernels.size(); ++i) {
    const GeneratedKernel &kernel = kernels[i];
    const KernelInstance &inst = instances[i];
    const DeviceConv &c = *kernel.conv;
    sawStride2 |= c.stride[0] == 2;
    sawPadding3 |= c.padding[0] == 3;
    const Shape &out = inst.outputShape;
    // Rows and columns: the whole output, its first 3, its last 3.
    using Range = std::pair<std::int64_t, std::int64_t>;
    for (Range rows : {Range(0, out[2]), Range(0, std::min<std::int64_t>(3, out[2])),
                       Range(std::max<std::int64_t>(out[2] - 3, 0), out[2])}) {
      std::vector<std::int64_t> lo(kernel.varExtents.size(), 0),
          hi(kernel.varExtents.begin(), kernel.varExtents.end());
      lo[0] = 0, hi[0] = 1;
      lo[1] = std::min<std::int64_t>(1, out[1] - 1);
      hi[1] = std::min<std::int64_t>(lo[1] + 2, out[1]);
      lo[2] = rows.first, hi[2] = rows.second;
      lo[3] = rows.first, hi[3] = std::min(rows.second, out[3]);
      ElementType type = elementTypeOf(inst.outputType);
      TestBox x = makeBox(type, {0, 0, 0, 0},
                          {1, c.inputShape[1], c.inputShape[2], c.inputShape[3]}, rng);
      TestBox w = makeBox(type, {lo[1], 0, 0, 0},
                          {hi[1] - lo[1], c.weightShape[1], c.weightShape[2],
                           c.weightShape[3]},
                          rng);
      std::vector<BoxView> views(2);
      views[c.input] = x.view();
      views[c.weight] = w.view();
      std::vector<std::int64_t> outLo, outExtent;
      for (unsigned d = 0; d != 4; ++d) {
        outLo.push_back(std::max<std::int64_t>(lo[d] - 1, 0));
        outExtent.push_back(hi[d] - outLo.back() + (d == 3 ? 2 : 1));
      }
      KernelCall call{views.data(), 2, {}, lo.data(), hi.data()};
      bool ran = false;
      EXPECT_TRUE(agreeOnBox(library->getKernel(i), call,
                             makeBox(type, outLo, outExtent, rng),
                             plannedRun(c), ran))
          << kernel.name << " rows [" << rows.first << ", " << rows.second << ")";
      ++(ran ? planned : declined);
    }
  }
  EXPECT_TRUE(sawStride2);
  EXPECT_TRUE(sawPadding3);
  // Every whole-output box is one cuDNN call, and so are the first rows of
  // the strided ones; some boxes of first or last rows are not (padding on
  // one side only).
  EXPECT_GE(planned, 2 * kernels.size());
  EXPECT_GE(declined, 1u);
}

/// A convolution's shapes and params: X [n, c, h, h], W [k, c / groups,
/// r, r], dY [n, k, p, p].
struct ConvShape {
  const char *name;
  std::int64_t n, c, h, k, r, p, stride, padding, dilation, groups;
};

/// A tofu-graph with the input gradient (`<name>.dx`) and the weight
/// gradient (`<name>.dw`) of each shape.
std::string gradientGraph(llvm::ArrayRef<ConvShape> shapes) {
  std::ostringstream tensors, ops;
  auto tensor = [&](const std::string &name, std::vector<std::int64_t> shape) {
    tensors << (tensors.tellp() > 0 ? ",\n" : "") << "{\"name\": \"" << name
            << "\", \"shape\": [";
    for (unsigned i = 0; i != shape.size(); ++i)
      tensors << (i ? ", " : "") << shape[i];
    tensors << "], \"dtype\": \"f32\", \"role\": \"input\"}";
  };
  for (const ConvShape &s : shapes) {
    std::string n = s.name;
    tensor(n + ".x", {s.n, s.c, s.h, s.h});
    tensor(n + ".w", {s.k, s.c / s.groups, s.r, s.r});
    tensor(n + ".dy", {s.n, s.k, s.p, s.p});
    tensor(n + ".dx", {s.n, s.c, s.h, s.h});
    tensor(n + ".dw", {s.k, s.c / s.groups, s.r, s.r});
    std::ostringstream params;
    params << "{\"bias_sizes_0\": 0, \"stride_0\": " << s.stride
           << ", \"stride_1\": " << s.stride << ", \"padding_0\": " << s.padding
           << ", \"padding_1\": " << s.padding << ", \"dilation_0\": "
           << s.dilation << ", \"dilation_1\": " << s.dilation
           << ", \"transposed\": 0, \"output_padding_0\": 0, "
              "\"output_padding_1\": 0, \"groups\": "
           << s.groups << "}";
    for (auto [type, second, out] :
         {std::make_tuple("0", ".w", ".dx"), std::make_tuple("1", ".x", ".dw")})
      ops << (ops.tellp() > 0 ? ",\n" : "") << "{\"name\": \"" << n << out
          << "\", \"type\": \"convolution_backward__" << type
          << "\", \"inputs\": [\"" << n << ".dy\", \"" << n << second
          << "\"], \"outputs\": [\"" << n << out << "\"], \"params\": "
          << params.str() << "}";
  }
  return "{\"format\": \"tofu-graph\", \"version\": 1, \"metadata\": {},\n"
         "\"tensors\": [" +
         tensors.str() + "],\n\"ops\": [" + ops.str() + "]}\n";
}

TEST(DeviceConvTest, GradientsAgreeWithTheCppKernels) {
  // ResNet's convolutions, a dilated one, one whose forward dropped X's
  // last row ((10 + 2 - 3) / 2 + 1 = 5 rows), and a grouped one.
  const ConvShape shapes[] = {
      {"s1", 2, 4, 10, 6, 3, 10, 1, 1, 1, 1},
      {"s2", 2, 4, 11, 6, 3, 6, 2, 1, 1, 1},
      {"down", 2, 4, 10, 6, 1, 5, 2, 0, 1, 1},
      {"stem", 2, 3, 16, 5, 7, 8, 2, 3, 1, 1},
      {"dilated", 2, 4, 9, 6, 3, 9, 1, 2, 2, 1},
      {"dropped", 2, 4, 10, 6, 3, 5, 2, 1, 1, 1},
      {"grouped", 2, 4, 8, 6, 3, 8, 1, 1, 1, 2},
      // dY of two rows (ResNet-18's last stage at 64x64): kernel row 0
      // reads one dY row, so the description needs the other rows.
      {"last", 2, 4, 2, 6, 3, 2, 1, 1, 1, 1},
      {"lastdown", 2, 4, 4, 6, 3, 2, 2, 1, 1, 1},
      // dY of one row: any stride giving one row is the convolution; the
      // description takes rows + 2 padding - (kernel rows - 1) = 2.
      {"onerow", 2, 4, 2, 6, 3, 1, 3, 1, 1, 1},
  };
  TestGraph tg;
  tg.loadText(gradientGraph(shapes));
  ASSERT_TRUE(tg.graph);
  const graph::Graph &g = *tg.graph;
  std::vector<GeneratedKernel> kernels;
  std::vector<KernelInstance> instances;
  for (unsigned op = 0; op != g.getNumOps(); ++op) {
    auto inst = makeKernelInstance(g, op, tg.specs);
    ASSERT_TRUE(bool(inst)) << llvm::toString(inst.takeError());
    auto kernel = emitKernel(*inst, "k" + std::to_string(op));
    ASSERT_TRUE(bool(kernel)) << llvm::toString(kernel.takeError());
    const ConvShape &shape = shapes[op / 2];
    bool filter = g.getOp(op).type == "convolution_backward__1";
    if (shape.groups != 1) {
      EXPECT_FALSE(kernel->conv.hasValue()) << g.getOp(op).name;
      continue;
    }
    ASSERT_TRUE(kernel->conv.hasValue()) << g.getOp(op).name;
    const DeviceConv &c = *kernel->conv;
    EXPECT_EQ(c.kind, filter ? ConvKind::BackwardFilter : ConvKind::BackwardData);
    for (unsigned s = 0; s != 2; ++s) {
      EXPECT_EQ(c.stride[s], shape.p == 1 && !filter ? 2 : shape.stride)
          << g.getOp(op).name;
      EXPECT_EQ(c.padding[s], shape.padding) << g.getOp(op).name;
      EXPECT_EQ(c.dilation[s], shape.dilation) << g.getOp(op).name;
    }
    EXPECT_TRUE(cudaDescribesAlike(*inst, c));
    if (shape.h < 8)
      continue; // too few rows for the boxes below
    kernels.push_back(std::move(*kernel));
    instances.push_back(std::move(*inst));
  }
  ASSERT_EQ(kernels.size(), 12u);
  std::unique_ptr<KernelLibrary> library = compileKernels(kernels);
  ASSERT_TRUE(library);

  std::mt19937_64 rng(5);
  unsigned planned = 0, declined = 0, interior = 0;
  using Range = std::pair<std::int64_t, std::int64_t>;
  for (unsigned i = 0; i != kernels.size(); ++i) {
    const GeneratedKernel &kernel = kernels[i];
    const KernelInstance &inst = instances[i];
    const DeviceConv &c = *kernel.conv;
    bool filter = c.kind == ConvKind::BackwardFilter;
    ElementType type = elementTypeOf(inst.outputType);
    // The rows (dX's, or dY's for a weight gradient) of whole boxes and
    // of shares: the first 3, the last 3, a middle slice.
    std::int64_t rows = filter ? c.weightShape[2] : c.outputShape[2];
    // Batch and channels (of dX, or of dY and X for a weight gradient):
    // all, or a slice; the reduction's channels (dY's): all, or a share.
    const Range rowRanges[] = {{0, rows}, {0, 3}, {rows - 3, rows}, {2, rows - 2}};
    const Range halves[] = {{0, 2}, {1, 2}};
    for (Range r : rowRanges)
      for (Range part : halves) {
        std::vector<std::int64_t> lo(kernel.varExtents.size(), 0),
            hi(kernel.varExtents.begin(), kernel.varExtents.end());
        unsigned rowVar = filter ? c.reduceVars[1] : 2,
                 colVar = filter ? c.reduceVars[2] : 3;
        lo[rowVar] = r.first, hi[rowVar] = r.second;
        lo[colVar] = r.first, hi[colVar] = r.second;
        // A share: the second batch element (a batch slice of the
        // reduction for a weight gradient), channels from 1, dY channels
        // from 1 (a reduction share for an input gradient).
        std::int64_t from = part.first;
        unsigned batchVar = filter ? c.reduceVars[0] : 0,
                 chanVar = 1, dyChanVar = filter ? 0 : c.reduceVars[0];
        lo[batchVar] = from;
        lo[chanVar] = from;
        lo[dyChanVar] = from;
        // The strided operand's box: the whole tensor; the filter's: its
        // packed slice (the channels of the iteration box, whole windows).
        std::vector<TestBox> boxes;
        boxes.push_back(wholeBox(type, inst.inputShapes[c.input], rng));
        std::vector<std::int64_t> outLo(4), outExtent(4);
        for (unsigned d = 0; d != 4; ++d) {
          outLo[d] = std::max<std::int64_t>(lo[d] - 1, 0);
          outExtent[d] = hi[d] - outLo[d] + (d == 3 ? 2 : 1);
        }
        if (filter) {
          boxes.push_back(wholeBox(type, inst.inputShapes[c.weight], rng));
          // The weight gradient is the filter: exact in channels and
          // window, larger in output channels.
          for (unsigned d = 1; d != 4; ++d)
            outLo[d] = lo[d], outExtent[d] = hi[d] - lo[d];
        } else {
          const Shape &w = inst.inputShapes[c.weight];
          boxes.push_back(makeBox(type, {0, lo[1], 0, 0},
                                  {w[0], hi[1] - lo[1], w[2], w[3]}, rng));
        }
        std::vector<BoxView> views(2);
        views[c.input] = boxes[0].view();
        views[c.weight] = boxes[1].view();
        KernelCall call{views.data(), 2, {}, lo.data(), hi.data()};
        bool ran = false;
        EXPECT_TRUE(agreeOnBox(library->getKernel(i), call,
                               makeBox(type, outLo, outExtent, rng),
                               plannedRun(c), ran))
            << kernel.name << " rows [" << r.first << ", " << r.second
            << ") from " << from;
        ++(ran ? planned : declined);
        interior += ran && (r == rowRanges[0] || r == rowRanges[3]);
      }
  }
  // Whole boxes and middle rows are one cuDNN call; first and last rows
  // are not where they would need padding on one side only.
  EXPECT_EQ(interior, 4 * kernels.size());
  EXPECT_GE(planned, 5 * kernels.size());
  EXPECT_GE(declined, 1u);
}

} // namespace
