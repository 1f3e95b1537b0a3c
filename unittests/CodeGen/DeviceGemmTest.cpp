//===- DeviceGemmTest.cpp - Contractions as the device computes them ------===//
//
// Checks the description of a contraction the generator hands the device
// executor (GeneratedKernel::gemm, DeviceGemm.h): on the bundled MLP's
// matmul kernels, planGemm's GEMMs, run by a loop on the host, write what
// the generated C++ kernel (whose BLAS call comes from the same matcher)
// writes, over boxes that are sub-boxes of larger output boxes, with whole
// and partial reduction ranges; and the CUDA target describes the same.
//
//===----------------------------------------------------------------------===//

#include "tofu/CodeGen/GraphKernels.h"
#include "tofu/CodeGen/KernelCompiler.h"
#include "tofu/Runtime/DeviceGemm.h"
#include "DeviceTestUtils.h"

using namespace tofu;
using namespace tofu::codegen;
using namespace tofu::runtime;
using namespace tofu::testing;

namespace {

/// C = op(A) op(B) for one planned GEMM, by loops.
template <typename T> void runOnHost(const GemmCall &g) {
  const T *a = static_cast<const T *>(g.a), *b = static_cast<const T *>(g.b);
  T *c = static_cast<T *>(g.c);
  for (std::int64_t r = 0; r != g.m; ++r)
    for (std::int64_t s = 0; s != g.n; ++s) {
      double sum = 0;
      for (std::int64_t t = 0; t < g.k; ++t)
        sum += double(g.transA ? a[t * g.lda + r] : a[r * g.lda + t]) *
               double(g.transB ? b[s * g.ldb + t] : b[t * g.ldb + s]);
      c[r * g.ldc + s] = T(sum);
    }
}

bool sameGemm(const DeviceGemm &x, const DeviceGemm &y) {
  return x.a == y.a && x.b == y.b && x.transA == y.transA &&
         x.transB == y.transB && x.kVar == y.kVar && x.kExtent == y.kExtent &&
         x.aVars == y.aVars && x.bVars == y.bVars;
}

TEST(DeviceGemmTest, MlpMatmulsAgreeWithTheCppKernels) {
  TestGraph tg;
  tg.loadFile(TOFU_SOURCE_DIR "/models/mlp.json");
  ASSERT_TRUE(tg.graph);
  graph::Graph *g = tg.graph.get();
  graph::SpecLibrary &specs = tg.specs;
  auto cpp = emitGraphKernels(*g, specs);
  ASSERT_TRUE(bool(cpp)) << llvm::toString(cpp.takeError());
  KernelOptions cudaOptions;
  cudaOptions.target = KernelTarget::Cuda;
  auto cuda = emitGraphKernels(*g, specs, cudaOptions);
  ASSERT_TRUE(bool(cuda)) << llvm::toString(cuda.takeError());
  auto library = KernelCompiler().compile(cpp->source);
  ASSERT_TRUE(bool(library)) << llvm::toString(library.takeError());

  std::mt19937_64 rng(7);
  unsigned checked = 0;
  for (unsigned op = 0; op != g->getNumOps(); ++op) {
    int k = cpp->opKernel[op];
    if (k < 0 || !cpp->kernels[k].gemm)
      continue;
    const GeneratedKernel &kernel = cpp->kernels[k];
    const DeviceGemm &gemm = *kernel.gemm;
    // The CUDA target hands the device the same description.
    int ck = cuda->opKernel[op];
    ASSERT_GE(ck, 0);
    ASSERT_TRUE(cuda->kernels[ck].gemm.hasValue()) << kernel.name;
    EXPECT_TRUE(cuda->kernels[ck].deviceGemm);
    EXPECT_TRUE(sameGemm(gemm, *cuda->kernels[ck].gemm)) << kernel.name;
    auto inst = makeKernelInstance(*g, op, specs);
    ASSERT_TRUE(bool(inst)) << llvm::toString(inst.takeError());
    unsigned rank = inst->outputShape.size();
    std::int64_t kExtent = kernel.varExtents[gemm.kVar];
    ASSERT_EQ(gemm.kExtent, kExtent);
    // Whole and partial reduction ranges, an empty one.
    using Range = std::pair<std::int64_t, std::int64_t>;
    for (auto [k0, k1] : {Range(0, kExtent), Range(1, kExtent - 1), Range(2, 2)}) {
      std::vector<std::int64_t> lo(kernel.varExtents.size(), 0),
          hi(kernel.varExtents.begin(), kernel.varExtents.end());
      // A box of at most 5 rows and columns, past the output's start.
      for (unsigned d = 0; d != rank; ++d) {
        lo[d] = std::min<std::int64_t>(1, inst->outputShape[d] - 1);
        hi[d] = std::min<std::int64_t>(lo[d] + 5, inst->outputShape[d]);
      }
      lo[gemm.kVar] = k0;
      hi[gemm.kVar] = k1;
      std::vector<TestBox> inputs;
      for (unsigned t = 0; t != inst->inputShapes.size(); ++t)
        inputs.push_back(makeBox(elementTypeOf(inst->inputTypes[t]),
                                 std::vector<std::int64_t>(inst->inputShapes[t].size(), 0),
                                 std::vector<std::int64_t>(inst->inputShapes[t].begin(),
                                                           inst->inputShapes[t].end()),
                                 rng));
      std::vector<BoxView> views;
      for (TestBox &box : inputs)
        views.push_back(box.view());
      // The output box holds the iteration box, one more row and column
      // before it where there is room, and more columns than rows after it.
      std::vector<std::int64_t> outLo, outExtent;
      for (unsigned d = 0; d != rank; ++d) {
        outLo.push_back(std::max<std::int64_t>(lo[d] - 1, 0));
        outExtent.push_back(hi[d] - outLo.back() + (d + 1 == rank ? 3 : 1));
      }
      ElementType type = elementTypeOf(inst->outputType);
      KernelCall call{views.data(), unsigned(views.size()), {}, lo.data(),
                      hi.data()};
      bool ran = false;
      EXPECT_TRUE(agreeOnBox(
          (*library)->getKernel(op), call, makeBox(type, outLo, outExtent, rng),
          [&](const KernelCall &planned) {
            for (const GemmCall &p : planGemm(gemm, planned)) {
              if (type == ElementType::F32)
                runOnHost<float>(p);
              else
                runOnHost<double>(p);
            }
            return true;
          },
          ran))
          << kernel.name << " reduction [" << k0 << ", " << k1 << ")";
    }
    ++checked;
  }
  // The MLP's three mm kernels whose whole body is the contraction (its
  // addmm layers are not: they stay on the generated kernel).
  EXPECT_EQ(checked, 3u);
}

} // namespace
