//===- DeviceConvTest.cpp - Convolutions as cuDNN would compute them ------===//
//
// Checks the description of a forward convolution the generator hands the
// device executor (GeneratedKernel::conv, DeviceConv.h) on ResNet-18's
// distinct forward convolutions (7x7 stride 2 padding 3, 3x3 stride 1 and
// 2, 1x1 stride 2): planConvolution's call, run with cuDNN's semantics by
// loops on the host, writes what the generated C++ kernel (im2col and
// OpenBLAS) writes over boxes with padding before, after and none, inside
// larger output boxes; boxes cuDNN's symmetric padding cannot express get
// no call.
//
//===----------------------------------------------------------------------===//

#include "tofu/CodeGen/GraphKernels.h"
#include "tofu/CodeGen/KernelCompiler.h"
#include "tofu/Graph/Graph.h"
#include "tofu/Graph/ModelFile.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Runtime/DeviceConv.h"
#include "tofu/Support/Diagnostics.h"
#include "DeviceTestUtils.h"

#include "llvm/Support/SourceMgr.h"

#include "gtest/gtest.h"

#include <cmath>
#include <map>

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::runtime;
using namespace tofu::testing;

namespace {

/// y = conv(x, w) as cudnnConvolutionForward defines it (cross-correlation,
/// `pad` zeros on both sides), by loops.
template <typename T> void runOnHost(const ConvCall &p) {
  const T *x = static_cast<const T *>(p.x), *w = static_cast<const T *>(p.w);
  T *y = static_cast<T *>(p.y);
  const std::int64_t *xs = p.xStrides, *ys = p.yStrides, *wd = p.wDims;
  for (std::int64_t n = 0; n != p.yDims[0]; ++n)
    for (std::int64_t k = 0; k != p.yDims[1]; ++k)
      for (std::int64_t oy = 0; oy != p.yDims[2]; ++oy)
        for (std::int64_t ox = 0; ox != p.yDims[3]; ++ox) {
          double sum = 0;
          for (std::int64_t c = 0; c != wd[1]; ++c)
            for (std::int64_t r = 0; r != wd[2]; ++r)
              for (std::int64_t s = 0; s != wd[3]; ++s) {
                std::int64_t iy = oy * p.stride[0] - p.pad[0] + r * p.dilation[0];
                std::int64_t ix = ox * p.stride[1] - p.pad[1] + s * p.dilation[1];
                if (iy < 0 || iy >= p.xDims[2] || ix < 0 || ix >= p.xDims[3])
                  continue;
                sum += double(x[n * xs[0] + c * xs[1] + iy * xs[2] + ix * xs[3]]) *
                       double(w[((k * wd[1] + c) * wd[2] + r) * wd[3] + s]);
              }
          y[n * ys[0] + k * ys[1] + oy * ys[2] + ox * ys[3]] = T(sum);
        }
}

TEST(DeviceConvTest, ResNetConvolutionsAgreeWithTheCppKernels) {
  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags(srcMgr);
  std::unique_ptr<graph::Graph> g =
      graph::readModelFile(TOFU_SOURCE_DIR "/models/resnet18.json", diags);
  ASSERT_TRUE(g);
  graph::SpecLibrary specs;
  ASSERT_TRUE(specs.load(TOFU_SOURCE_DIR "/specs", {}, diags));
  // One unit of the distinct forward convolutions' C++ kernels.
  std::map<std::string, unsigned> distinct;
  std::vector<GeneratedKernel> kernels;
  std::vector<KernelInstance> instances;
  std::string source = getKernelPrelude();
  KernelOptions cudaOptions;
  cudaOptions.target = KernelTarget::Cuda;
  for (unsigned op = 0; op != g->getNumOps(); ++op) {
    if (g->getOp(op).type != "convolution_nobias")
      continue;
    auto inst = makeKernelInstance(*g, op, specs);
    ASSERT_TRUE(bool(inst)) << llvm::toString(inst.takeError());
    std::string name = "conv" + std::to_string(kernels.size());
    auto kernel = emitKernel(*inst, name);
    ASSERT_TRUE(bool(kernel)) << llvm::toString(kernel.takeError());
    ASSERT_TRUE(kernel->conv.hasValue()) << g->getOp(op).name;
    const DeviceConv &c = *kernel->conv;
    std::string key;
    for (std::int64_t v : {c.stride[0], c.stride[1], c.padding[0], c.padding[1],
                           c.dilation[0], c.dilation[1], c.inputShape[1],
                           c.inputShape[2], c.weightShape[0], c.weightShape[2]})
      key += std::to_string(v) + ",";
    if (!distinct.emplace(key, kernels.size()).second)
      continue;
    // The CUDA target describes the same convolution.
    auto cuda = emitKernel(*inst, name, cudaOptions);
    ASSERT_TRUE(bool(cuda)) << llvm::toString(cuda.takeError());
    ASSERT_TRUE(cuda->conv.hasValue());
    EXPECT_EQ(cuda->conv->stride[0], c.stride[0]);
    EXPECT_EQ(cuda->conv->padding[1], c.padding[1]);
    source += kernel->source;
    kernels.push_back(std::move(*kernel));
    instances.push_back(std::move(*inst));
  }
  ASSERT_GE(kernels.size(), 4u);
  source += "extern \"C\" const tofu::runtime::KernelInfo *tofu_graph_kernels(unsigned *count) {\n"
            "  static const tofu::runtime::KernelInfo table[] = {\n";
  for (const GeneratedKernel &kernel : kernels)
    source += "    {\"" + kernel.name + "\", " + kernel.name + ", nullptr, 0},\n";
  source += "  };\n  *count = " + std::to_string(kernels.size()) +
            ";\n  return table;\n}\n";
  auto library = KernelCompiler().compile(source);
  ASSERT_TRUE(bool(library)) << llvm::toString(library.takeError());

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
      TestBox expected = makeBox(type, outLo, outExtent, rng);
      TestBox actual = expected;
      KernelCall call{views.data(), 2, expected.view(), lo.data(), hi.data()};
      (*library)->getKernel(i)(call);
      call.output = actual.view();
      std::optional<ConvCall> plan = planConvolution(c, call);
      if (!plan) {
        ++declined;
        continue;
      }
      ++planned;
      if (type == ElementType::F32)
        runOnHost<float>(*plan);
      else
        runOnHost<double>(*plan);
      for (std::size_t e = 0; e != expected.size(); ++e)
        ASSERT_NEAR(actual.at(e), expected.at(e),
                    1e-4 * (1 + std::abs(expected.at(e))))
            << kernel.name << " rows [" << rows.first << ", " << rows.second
            << ") element " << e;
    }
  }
  EXPECT_TRUE(sawStride2);
  EXPECT_TRUE(sawPadding3);
  // Every whole-output box and every box of the first rows is one cuDNN
  // call; some boxes of the last rows are not (padding only after them).
  EXPECT_GE(planned, 2 * kernels.size());
  EXPECT_GE(declined, 1u);
}

} // namespace
