//===- DeviceGemmTest.cpp - Contractions as the device computes them ------===//
//
// Checks the description of a contraction the generator hands the device
// executor (GeneratedKernel::gemm, DeviceGemm.h): on the bundled MLP's
// matmul kernels and GPT's bmm kernels, planGemm's (strided-batched) GEMMs,
// run by a loop on the host, write what the generated C++ kernel (whose
// BLAS call comes from the same matcher) writes, over boxes that are
// sub-boxes of larger output boxes, with whole and partial batch and
// reduction ranges; the CUDA target describes the same; and a rank-4
// batch is one call when its batch dimensions are whole, one per outer
// batch element when the inner one is partial.
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

/// C_e = op(A_e) op(B_e) for every batch element e of one planned call,
/// by loops.
template <typename T> void runOnHost(const GemmCall &g) {
  for (std::int64_t e = 0; e != g.batch; ++e) {
    const T *a = static_cast<const T *>(g.a) + e * g.strideA,
            *b = static_cast<const T *>(g.b) + e * g.strideB;
    T *c = static_cast<T *>(g.c) + e * g.strideC;
    for (std::int64_t r = 0; r != g.m; ++r)
      for (std::int64_t s = 0; s != g.n; ++s) {
        double sum = 0;
        for (std::int64_t t = 0; t < g.k; ++t)
          sum += double(g.transA ? a[t * g.lda + r] : a[r * g.lda + t]) *
                 double(g.transB ? b[s * g.ldb + t] : b[t * g.ldb + s]);
        c[r * g.ldc + s] = T(sum);
      }
  }
}

void runOnHost(const GemmCall &g, ElementType type) {
  if (type == ElementType::F32)
    runOnHost<float>(g);
  else
    runOnHost<double>(g);
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

TEST(DeviceGemmTest, GptBmmsAreStridedBatches) {
  TestGraph tg;
  tg.loadFile(TOFU_SOURCE_DIR "/models/gpt-2l.json");
  ASSERT_TRUE(tg.graph);
  const graph::Graph &g = *tg.graph;
  KernelOptions cudaOptions = cudaKernelOptions();
  // The distinct bmm instances (by shapes).
  std::vector<GeneratedKernel> kernels;
  std::vector<KernelInstance> instances;
  std::vector<std::string> seen;
  for (unsigned op = 0; op != g.getNumOps(); ++op) {
    if (g.getOp(op).type != "bmm")
      continue;
    auto inst = makeKernelInstance(g, op, tg.specs);
    ASSERT_TRUE(bool(inst)) << llvm::toString(inst.takeError());
    std::string key = formatShape(inst->inputShapes[0]) +
                      formatShape(inst->inputShapes[1]);
    if (llvm::is_contained(seen, key))
      continue;
    seen.push_back(key);
    std::string name = "bmm" + std::to_string(kernels.size());
    auto kernel = emitKernel(*inst, name);
    ASSERT_TRUE(bool(kernel)) << llvm::toString(kernel.takeError());
    ASSERT_TRUE(kernel->gemm.hasValue()) << g.getOp(op).name;
    auto cuda = emitKernel(*inst, name, cudaOptions);
    ASSERT_TRUE(bool(cuda)) << llvm::toString(cuda.takeError());
    ASSERT_TRUE(cuda->gemm.hasValue());
    EXPECT_TRUE(sameGemm(*kernel->gemm, *cuda->gemm)) << name;
    kernels.push_back(std::move(*kernel));
    instances.push_back(std::move(*inst));
  }
  ASSERT_GE(kernels.size(), 2u);
  auto library = compileKernelUnit(kernels);
  ASSERT_TRUE(bool(library)) << llvm::toString(library.takeError());

  std::mt19937_64 rng(13);
  for (unsigned i = 0; i != kernels.size(); ++i) {
    const DeviceGemm &gemm = *kernels[i].gemm;
    const KernelInstance &inst = instances[i];
    std::int64_t kExtent = gemm.kExtent;
    // The whole output; a batch range, rows, columns and reduction range
    // past their starts.
    for (bool whole : {true, false}) {
      std::vector<std::int64_t> lo(kernels[i].varExtents.size(), 0),
          hi(kernels[i].varExtents.begin(), kernels[i].varExtents.end());
      if (!whole)
        for (unsigned v : {0u, 1u, 2u, gemm.kVar}) {
          lo[v] = std::min<std::int64_t>(1, hi[v] - 1);
          hi[v] = std::max(lo[v] + 1, hi[v] - 1);
        }
      std::vector<TestBox> inputs;
      std::vector<BoxView> views;
      for (unsigned t = 0; t != 2; ++t) {
        const Shape &shape = inst.inputShapes[t];
        inputs.push_back(makeBox(elementTypeOf(inst.inputTypes[t]),
                                 std::vector<std::int64_t>(shape.size(), 0),
                                 std::vector<std::int64_t>(shape.begin(), shape.end()),
                                 rng));
      }
      for (TestBox &box : inputs)
        views.push_back(box.view());
      ElementType type = elementTypeOf(inst.outputType);
      TestBox out = makeOutputBox(type, lo, hi, 3, rng);
      KernelCall call{views.data(), 2, {}, lo.data(), hi.data()};
      bool ran = false;
      EXPECT_TRUE(agreeOnBox(
          (*library)->getKernel(i), call, out,
          [&](const KernelCall &planned) {
            std::vector<GemmCall> plan = planGemm(gemm, planned);
            // One strided batch: the only batch variable is contiguous.
            EXPECT_EQ(plan.size(), 1u);
            if (plan.size() != 1)
              return false;
            EXPECT_EQ(plan[0].batch, hi[0] - lo[0]);
            EXPECT_EQ(plan[0].strideC, out.extent[1] * out.extent[2]);
            EXPECT_EQ(plan[0].k, std::min(hi[gemm.kVar], kExtent) - lo[gemm.kVar]);
            runOnHost(plan[0], type);
            return true;
          },
          ran))
          << kernels[i].name << (whole ? " whole" : " partial");
      EXPECT_TRUE(ran);
    }
  }
}

/// out[b0, b1, i, j] = Sum_k A[b0, b1, i, k] * B[b0, b1, k, j] over
/// [2 x 3 x 4 x 5] and [2 x 3 x 5 x 6], by loops over the whole tensors.
TEST(DeviceGemmTest, Rank4BatchesMergeWhileTheStrideHolds) {
  DeviceGemm g;
  g.kVar = 4;
  g.kExtent = 5;
  g.aVars = {0, 1, 2, 4};
  g.bVars = {0, 1, 4, 3};
  std::mt19937_64 rng(17);
  std::vector<std::int64_t> zero(4, 0);
  TestBox a = makeBox(ElementType::F64, zero, {2, 3, 4, 5}, rng);
  TestBox b = makeBox(ElementType::F64, zero, {2, 3, 5, 6}, rng);
  BoxView views[] = {a.view(), b.view()};
  struct Case {
    std::vector<std::int64_t> lo, hi;
    std::size_t calls;
  };
  // Whole batch dimensions: one call of 6; the inner one partial: one
  // call per outer batch element; a single batch element.
  for (const Case &c : {Case{{0, 0, 0, 0, 0}, {2, 3, 4, 6, 5}, 1},
                        Case{{0, 1, 1, 0, 0}, {2, 3, 4, 5, 5}, 2},
                        Case{{1, 2, 0, 0, 1}, {2, 3, 3, 6, 4}, 1}}) {
    TestBox out = makeBox(ElementType::F64, zero, {2, 3, 4, 6}, rng);
    KernelCall call{views, 2, out.view(), c.lo.data(), c.hi.data()};
    std::vector<GemmCall> plan = planGemm(g, call);
    ASSERT_EQ(plan.size(), c.calls);
    std::int64_t elements = 0;
    for (const GemmCall &p : plan) {
      elements += p.batch;
      runOnHost(p, ElementType::F64);
    }
    EXPECT_EQ(elements, (c.hi[0] - c.lo[0]) * (c.hi[1] - c.lo[1]));
    for (std::int64_t b0 = c.lo[0]; b0 != c.hi[0]; ++b0)
      for (std::int64_t b1 = c.lo[1]; b1 != c.hi[1]; ++b1)
        for (std::int64_t i = c.lo[2]; i != c.hi[2]; ++i)
          for (std::int64_t j = c.lo[3]; j != c.hi[3]; ++j) {
            double sum = 0;
            for (std::int64_t k = c.lo[4]; k != c.hi[4]; ++k)
              sum += a.f64[((b0 * 3 + b1) * 4 + i) * 5 + k] *
                     b.f64[((b0 * 3 + b1) * 5 + k) * 6 + j];
            ASSERT_NEAR(out.f64[((b0 * 3 + b1) * 4 + i) * 6 + j], sum, 1e-12)
                << b0 << " " << b1 << " " << i << " " << j;
          }
  }
}

} // namespace
