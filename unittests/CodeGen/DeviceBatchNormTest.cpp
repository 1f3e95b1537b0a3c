//===- DeviceBatchNormTest.cpp - Batch norms as cuDNN would compute them --===//
//
// Checks the description of a batch normalization the generator hands the
// device executor (GeneratedKernel::batchNorm, DeviceBatchNorm.h) on
// ResNet-18's distinct native_batch_norm__0 instances: planBatchNorm's
// call, run with cuDNN's semantics (two-pass mean and biased variance per
// channel) by loops on the host, writes what the generated C++ kernel
// writes over boxes of all channels and of a channel slice, inside larger
// output and input boxes; a box with part of H, or a `reduce` share of a
// statistic, gets no call; the CUDA target describes the same; the mean
// and rstd outputs (__1, __2) are not described.
//
//===----------------------------------------------------------------------===//

#include "tofu/CodeGen/GraphKernels.h"
#include "tofu/Runtime/DeviceBatchNorm.h"
#include "tofu/Support/Shape.h"
#include "DeviceTestUtils.h"

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::runtime;
using namespace tofu::testing;

namespace {

/// y = the spatial batch norm of x as cudnnBatchNormalizationForwardTraining
/// defines it, by loops.
template <typename T> void runOnHost(const BatchNormCall &p) {
  const T *x = static_cast<const T *>(p.x);
  const T *scale = static_cast<const T *>(p.scale),
          *bias = static_cast<const T *>(p.bias);
  T *y = static_cast<T *>(p.y);
  const std::int64_t *d = p.dims, *xs = p.xStrides, *ys = p.yStrides;
  auto each = [&](auto fn) {
    for (std::int64_t n = 0; n != d[0]; ++n)
      for (std::int64_t h = 0; h != d[2]; ++h)
        for (std::int64_t w = 0; w != d[3]; ++w)
          fn(n * xs[0] + h * xs[2] + w * xs[3], n * ys[0] + h * ys[2] + w * ys[3]);
  };
  double m = double(d[0] * d[2] * d[3]);
  for (std::int64_t c = 0; c != d[1]; ++c) {
    const T *xc = x + c * xs[1];
    T *yc = y + c * ys[1];
    double sum = 0, sq = 0;
    each([&](std::int64_t i, std::int64_t) { sum += double(xc[i]); });
    double mean = sum / m;
    each([&](std::int64_t i, std::int64_t) {
      sq += (double(xc[i]) - mean) * (double(xc[i]) - mean);
    });
    double invstd = 1 / std::sqrt(sq / m + p.epsilon);
    each([&](std::int64_t i, std::int64_t o) {
      yc[o] = T((double(xc[i]) - mean) * invstd * double(scale[c]) + double(bias[c]));
    });
  }
}

TEST(DeviceBatchNormTest, ResNetBatchNormsAgreeWithTheCppKernels) {
  TestGraph tg;
  tg.loadFile(TOFU_SOURCE_DIR "/models/resnet18.json");
  ASSERT_TRUE(tg.graph);
  const graph::Graph *g = tg.graph.get();
  KernelOptions cudaOptions = cudaKernelOptions();
  std::vector<GeneratedKernel> kernels;
  std::vector<KernelInstance> instances;
  std::vector<std::string> seen;
  unsigned statistics = 0;
  for (unsigned op = 0; op != g->getNumOps(); ++op) {
    const std::string &type = g->getOp(op).type;
    bool stat = type == "native_batch_norm__1" || type == "native_batch_norm__2";
    if (type != "native_batch_norm__0" && !(stat && statistics < 2))
      continue;
    auto inst = makeKernelInstance(*g, op, tg.specs);
    ASSERT_TRUE(bool(inst)) << llvm::toString(inst.takeError());
    std::string name = "bn" + std::to_string(op);
    auto kernel = emitKernel(*inst, name);
    ASSERT_TRUE(bool(kernel)) << llvm::toString(kernel.takeError());
    if (stat) {
      // The statistics alone are not one cuDNN call.
      EXPECT_FALSE(kernel->batchNorm.hasValue()) << type;
      ++statistics;
      continue;
    }
    ASSERT_TRUE(kernel->batchNorm.hasValue()) << g->getOp(op).name;
    std::string key = formatShape(inst->inputShapes[0]);
    if (llvm::is_contained(seen, key))
      continue;
    seen.push_back(key);
    auto cuda = emitKernel(*inst, name, cudaOptions);
    ASSERT_TRUE(bool(cuda)) << llvm::toString(cuda.takeError());
    ASSERT_TRUE(cuda->batchNorm.hasValue());
    EXPECT_EQ(cuda->batchNorm->epsilon, kernel->batchNorm->epsilon);
    EXPECT_EQ(cuda->batchNorm->input, kernel->batchNorm->input);
    kernels.push_back(std::move(*kernel));
    instances.push_back(std::move(*inst));
  }
  EXPECT_EQ(statistics, 2u);
  // 64 channels at 112 and 56, 128 at 28, 256 at 14, 512 at 7.
  ASSERT_EQ(kernels.size(), 5u);
  auto library = compileKernelUnit(kernels);
  ASSERT_TRUE(bool(library)) << llvm::toString(library.takeError());

  std::mt19937_64 rng(19);
  unsigned planned = 0, declined = 0;
  for (unsigned i = 0; i != kernels.size(); ++i) {
    const DeviceBatchNorm &b = *kernels[i].batchNorm;
    const KernelInstance &inst = instances[i];
    EXPECT_EQ(b.epsilon, 1e-5);
    std::int64_t channels = b.shape[1];
    // All channels; channels [1, 3); [1, 3) with rows [0, 1) (declined);
    // [1, 3) with a reduce share of the first statistic's n (declined).
    for (unsigned box = 0; box != 4; ++box) {
      std::vector<std::int64_t> lo(kernels[i].varExtents.size(), 0),
          hi(kernels[i].varExtents.begin(), kernels[i].varExtents.end());
      if (box != 0)
        lo[1] = 1, hi[1] = 3;
      if (box == 2)
        hi[2] = 1;
      if (box == 3)
        hi[4] = 1;
      ElementType type = elementTypeOf(inst.outputType);
      // The input holds one more channel on each side where there is one.
      std::int64_t in0 = std::max<std::int64_t>(lo[1] - 1, 0),
                   in1 = std::min(hi[1] + 1, channels);
      TestBox x = makeBox(type, {0, in0, 0, 0},
                          {b.shape[0], in1 - in0, b.shape[2], b.shape[3]}, rng);
      TestBox w = makeBox(type, {0}, {channels}, rng);
      TestBox bias = makeBox(type, {in0}, {in1 - in0}, rng);
      std::vector<BoxView> views(3);
      views[b.input] = x.view();
      views[b.weight] = w.view();
      views[b.bias] = bias.view();
      TestBox out = makeBox(type, {0, in0, 0, 0},
                            {b.shape[0], in1 - in0, b.shape[2], b.shape[3]}, rng);
      KernelCall call{views.data(), 3, {}, lo.data(), hi.data()};
      bool ran = false;
      EXPECT_TRUE(agreeOnBox(
          (*library)->getKernel(i), call, out,
          [&](const KernelCall &planned) {
            std::optional<BatchNormCall> plan = planBatchNorm(b, planned);
            if (!plan)
              return false;
            EXPECT_EQ(plan->dims[1], hi[1] - lo[1]);
            if (type == ElementType::F32)
              runOnHost<float>(*plan);
            else
              runOnHost<double>(*plan);
            return true;
          },
          ran))
          << kernels[i].name << " box " << box;
      EXPECT_EQ(ran, box < 2) << kernels[i].name << " box " << box;
      ++(ran ? planned : declined);
    }
  }
  EXPECT_EQ(planned, 2 * kernels.size());
  EXPECT_EQ(declined, 2 * kernels.size());
}

} // namespace
