//===- DevicePoolingTest.cpp - Poolings as cuDNN would compute them -------===//
//
// Checks the description of a 2-D pooling the generator hands the device
// executor (GeneratedKernel::pooling, DevicePooling.h) on ResNet-18's max
// pooling (3x3, stride 2, padding 1) and a small graph's average, adaptive
// average and unpadded f64 max poolings: planPooling's call, run with cuDNN's semantics (a max over the
// window's positions inside the input, an average over the whole window)
// by loops on the host, writes what the generated C++ kernel writes over
// boxes of the whole output, its first three rows and columns (padding
// before them) and its last three, on negative inputs (a padding read as 0
// would win every maximum it touches); a partial window gets no call; the
// CUDA target describes the same; the max pooling's indices and backward
// are not described.
//
//===----------------------------------------------------------------------===//

#include "tofu/CodeGen/GraphKernels.h"
#include "tofu/Graph/Graph.h"
#include "tofu/Runtime/DevicePooling.h"
#include "DeviceTestUtils.h"

#include <limits>

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::runtime;
using namespace tofu::testing;

namespace {

/// y = pool(x) as cudnnPoolingForward defines it (max: padded positions
/// never count; average including padding: the sum over the window size),
/// by loops.
template <typename T> void runOnHost(const PoolingCall &p) {
  const T *x = static_cast<const T *>(p.x);
  T *y = static_cast<T *>(p.y);
  const std::int64_t *xs = p.xStrides, *ys = p.yStrides;
  for (std::int64_t n = 0; n != p.yDims[0]; ++n)
    for (std::int64_t c = 0; c != p.yDims[1]; ++c)
      for (std::int64_t oy = 0; oy != p.yDims[2]; ++oy)
        for (std::int64_t ox = 0; ox != p.yDims[3]; ++ox) {
          double max = -std::numeric_limits<double>::infinity(), sum = 0;
          for (std::int64_t r = 0; r != p.window[0]; ++r)
            for (std::int64_t s = 0; s != p.window[1]; ++s) {
              std::int64_t iy = oy * p.stride[0] - p.pad[0] + r;
              std::int64_t ix = ox * p.stride[1] - p.pad[1] + s;
              if (iy < 0 || iy >= p.xDims[2] || ix < 0 || ix >= p.xDims[3])
                continue;
              double v = x[n * xs[0] + c * xs[1] + iy * xs[2] + ix * xs[3]];
              max = std::max(max, v);
              sum += v;
            }
          y[n * ys[0] + c * ys[1] + oy * ys[2] + ox * ys[3]] =
              T(p.mode == PoolingMode::Max ? max : sum / double(p.window[0] * p.window[1]));
        }
}

/// Small poolings: 2x2 stride-2 average, 8x8 to 2x2 adaptive average and
/// an unpadded 3x3 stride-1 max pooling on f64.
const char *const PoolGraph = R"({"format": "tofu-graph", "version": 1,
 "tensors": [
  {"name": "x", "shape": [2, 3, 8, 8], "dtype": "f32", "role": "input"},
  {"name": "x64", "shape": [2, 3, 8, 8], "dtype": "f64", "role": "input"},
  {"name": "avg", "shape": [2, 3, 4, 4], "dtype": "f32", "role": "output"},
  {"name": "ada", "shape": [2, 3, 2, 2], "dtype": "f32", "role": "output"},
  {"name": "max", "shape": [2, 3, 6, 6], "dtype": "f64", "role": "output"}
 ],
 "ops": [
  {"name": "avg", "type": "avg_pool2d", "inputs": ["x"], "outputs": ["avg"],
   "params": {"kernel_size_0": 2, "kernel_size_1": 2, "stride_0": 2, "stride_1": 2,
              "padding_0": 0, "padding_1": 0, "ceil_mode": 0, "count_include_pad": 1}},
  {"name": "ada", "type": "_adaptive_avg_pool2d", "inputs": ["x"], "outputs": ["ada"],
   "params": {"output_size_0": 2, "output_size_1": 2}},
  {"name": "max", "type": "max_pool2d_with_indices__0", "inputs": ["x64"], "outputs": ["max"],
   "params": {"kernel_size_0": 3, "kernel_size_1": 3, "stride_0": 1, "stride_1": 1,
              "padding_0": 0, "padding_1": 0, "dilation_0": 1, "dilation_1": 1, "ceil_mode": 0}}
 ]})";

/// The C++ kernels of `g`'s poolings (checking that the CUDA target
/// describes them alike) into `kernels`; its max pooling's indices and
/// backward must get no description (counted in `others`).
void collectPoolings(const graph::Graph &g, graph::SpecLibrary &specs,
                     std::vector<GeneratedKernel> &kernels,
                     std::vector<KernelInstance> &instances, unsigned &others) {
  KernelOptions cudaOptions = cudaKernelOptions();
  for (unsigned op = 0; op != g.getNumOps(); ++op) {
    const std::string &type = g.getOp(op).type;
    bool pool = type == "max_pool2d_with_indices__0" || type == "avg_pool2d" ||
                type == "_adaptive_avg_pool2d";
    if (!pool && type != "max_pool2d_with_indices__1" &&
        type != "max_pool2d_with_indices_backward")
      continue;
    auto inst = makeKernelInstance(g, op, specs);
    ASSERT_TRUE(bool(inst)) << llvm::toString(inst.takeError());
    std::string name = "pool" + std::to_string(kernels.size()) + "_" + std::to_string(op);
    auto kernel = emitKernel(*inst, name);
    ASSERT_TRUE(bool(kernel)) << llvm::toString(kernel.takeError());
    if (!pool) {
      EXPECT_FALSE(kernel->pooling.hasValue()) << type;
      ++others;
      continue;
    }
    ASSERT_TRUE(kernel->pooling.hasValue()) << type;
    auto cuda = emitKernel(*inst, name, cudaOptions);
    ASSERT_TRUE(bool(cuda)) << llvm::toString(cuda.takeError());
    ASSERT_TRUE(cuda->pooling.hasValue());
    EXPECT_EQ(cuda->pooling->padding[0], kernel->pooling->padding[0]);
    EXPECT_EQ(cuda->pooling->mode, kernel->pooling->mode);
    kernels.push_back(std::move(*kernel));
    instances.push_back(std::move(*inst));
  }
}

TEST(DevicePoolingTest, PoolingsAgreeWithTheCppKernels) {
  TestGraph resnet, small;
  resnet.loadFile(TOFU_SOURCE_DIR "/models/resnet18.json");
  small.loadText(PoolGraph);
  ASSERT_TRUE(resnet.graph && small.graph);
  std::vector<GeneratedKernel> kernels;
  std::vector<KernelInstance> instances;
  unsigned others = 0;
  collectPoolings(*resnet.graph, resnet.specs, kernels, instances, others);
  collectPoolings(*small.graph, small.specs, kernels, instances, others);
  EXPECT_EQ(others, 2u);
  ASSERT_EQ(kernels.size(), 4u);
  auto library = compileKernelUnit(kernels);
  ASSERT_TRUE(bool(library)) << llvm::toString(library.takeError());

  std::mt19937_64 rng(23);
  unsigned planned = 0, declined = 0;
  unsigned sawMax = 0, sawAverage = 0;
  for (unsigned i = 0; i != kernels.size(); ++i) {
    const DevicePooling &p = *kernels[i].pooling;
    const KernelInstance &inst = instances[i];
    if (p.mode == PoolingMode::Max) {
      ++sawMax;
      EXPECT_EQ(p.window[0], 3);
      EXPECT_EQ(p.padding[1], i == 0 ? 1 : 0);
    } else {
      ++sawAverage;
      EXPECT_EQ(p.window[1], p.stride[1]);
      EXPECT_EQ(p.padding[0], 0);
    }
    const Shape &out = inst.outputShape;
    using Range = std::pair<std::int64_t, std::int64_t>;
    // The whole output, its first 3 rows and columns, its last 3; the
    // whole output with a partial window.
    for (unsigned box = 0; box != 4; ++box) {
      Range rows = box == 1   ? Range(0, std::min<std::int64_t>(3, out[2]))
                   : box == 2 ? Range(std::max<std::int64_t>(out[2] - 3, 0), out[2])
                              : Range(0, out[2]);
      std::vector<std::int64_t> lo(kernels[i].varExtents.size(), 0),
          hi(kernels[i].varExtents.begin(), kernels[i].varExtents.end());
      lo[0] = 0, hi[0] = 1;
      lo[1] = 1, hi[1] = 3;
      lo[2] = rows.first, hi[2] = rows.second;
      lo[3] = rows.first, hi[3] = std::min(rows.second, out[3]);
      if (box == 3)
        lo[p.ky] = 1;
      ElementType type = elementTypeOf(inst.outputType);
      TestBox x = makeBox(type, {0, 0, 0, 0},
                          {1, std::min<std::int64_t>(4, p.inputShape[1]), p.inputShape[2],
                           p.inputShape[3]},
                          rng);
      for (float &v : x.f32)
        v -= 2;
      for (double &v : x.f64)
        v -= 2;
      std::vector<BoxView> views{x.view()};
      KernelCall call{views.data(), 1, {}, lo.data(), hi.data()};
      bool ran = false;
      EXPECT_TRUE(agreeOnBox(
          (*library)->getKernel(i), call, makeOutputBox(type, lo, hi, 4, rng),
          [&](const KernelCall &planned) {
            std::optional<PoolingCall> plan = planPooling(p, planned);
            if (!plan)
              return false;
            if (type == ElementType::F32)
              runOnHost<float>(*plan);
            else
              runOnHost<double>(*plan);
            return true;
          },
          ran))
          << kernels[i].name << " box " << box;
      EXPECT_EQ(ran, box != 3) << kernels[i].name << " box " << box;
      ++(ran ? planned : declined);
    }
  }
  EXPECT_EQ(sawMax, 2u);
  EXPECT_EQ(sawAverage, 2u);
  EXPECT_EQ(planned, 12u);
  EXPECT_EQ(declined, 4u);
}

} // namespace
