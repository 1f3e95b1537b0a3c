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

/// C_e = alpha op(A_e) op(B_e) for every batch element e of one planned
/// call, by loops; with a fill, C_e = fillScale F_e (each element one
/// product, as cuBLAS's fill computes it) first, the product added to it.
template <typename T> void runOnHost(const GemmCall &g) {
  for (std::int64_t e = 0; e != g.batch; ++e) {
    const T *a = static_cast<const T *>(g.a) + e * g.strideA,
            *b = static_cast<const T *>(g.b) + e * g.strideB;
    T *c = static_cast<T *>(g.c) + e * g.strideC;
    const T *f = g.fill ? static_cast<const T *>(g.fill) + e * g.strideFill
                        : nullptr;
    for (std::int64_t r = 0; r != g.m; ++r)
      for (std::int64_t s = 0; s != g.n; ++s) {
        T &y = c[r * g.ldc + s];
        if (f)
          y = T(T(g.fillScale) * f[r * g.fillRow + s * g.fillCol]);
        double sum = 0;
        for (std::int64_t t = 0; t < g.k; ++t)
          sum += double(g.transA ? a[t * g.lda + r] : a[r * g.lda + t]) *
                 double(g.transB ? b[s * g.ldb + t] : b[t * g.ldb + s]);
        if (!f)
          y = T(g.alpha * sum);
        else if (g.k > 0)
          y = T(double(y) + g.alpha * sum);
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
  if (x.bias.has_value() != y.bias.has_value() ||
      (x.bias && (x.bias->input != y.bias->input ||
                  x.bias->scale != y.bias->scale || x.bias->vars != y.bias->vars)))
    return false;
  return x.a == y.a && x.b == y.b && x.transA == y.transA &&
         x.transB == y.transB && x.kVar == y.kVar && x.kExtent == y.kExtent &&
         x.aVars == y.aVars && x.bVars == y.bVars && x.alpha == y.alpha;
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
  unsigned checked = 0, biased = 0;
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
    biased += gemm.bias.has_value();
    if (gemm.bias) {
      // nn.Linear's `beta * self[j] + alpha * Sum(..)`, beta = alpha = 1.
      EXPECT_EQ(gemm.bias->vars, std::vector<int>{int(rank) - 1}) << kernel.name;
      EXPECT_EQ(gemm.bias->scale, 1.0);
      EXPECT_EQ(gemm.alpha, 1.0);
    }
  }
  // The MLP's three mm kernels whose whole body is the contraction and
  // its two addmm layers (a bias row filled first).
  EXPECT_EQ(checked, 5u);
  EXPECT_EQ(biased, 2u);
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

/// addmm and baddbmm with every bias form (a row, a full matrix, a
/// column, a broadcast row or column, per batch or shared), f32 and f64,
/// constants beta and alpha other than 1, and the scalar bias that gets no
/// description.
const char *const BiasGraph = R"({"format": "tofu-graph", "version": 1,
 "tensors": [
  {"name": "row", "shape": [5], "dtype": "f64", "role": "input"},
  {"name": "full32", "shape": [4, 5], "dtype": "f32", "role": "input"},
  {"name": "col", "shape": [4, 1], "dtype": "f64", "role": "input"},
  {"name": "row2", "shape": [1, 5], "dtype": "f64", "role": "input"},
  {"name": "scalar", "shape": [], "dtype": "f64", "role": "input"},
  {"name": "x", "shape": [4, 6], "dtype": "f64", "role": "input"},
  {"name": "y", "shape": [6, 5], "dtype": "f64", "role": "input"},
  {"name": "x32", "shape": [4, 6], "dtype": "f32", "role": "input"},
  {"name": "y32", "shape": [6, 5], "dtype": "f32", "role": "input"},
  {"name": "row32", "shape": [5], "dtype": "f32", "role": "input"},
  {"name": "w32", "shape": [5, 6], "dtype": "f32", "role": "input"},
  {"name": "b1", "shape": [3, 4, 6], "dtype": "f64", "role": "input"},
  {"name": "b2", "shape": [3, 6, 5], "dtype": "f64", "role": "input"},
  {"name": "bfull", "shape": [3, 4, 5], "dtype": "f64", "role": "input"},
  {"name": "bshared", "shape": [1, 1, 5], "dtype": "f64", "role": "input"},
  {"name": "bcol", "shape": [3, 4, 1], "dtype": "f64", "role": "input"},
  {"name": "o1", "shape": [4, 5], "dtype": "f64", "role": "output"},
  {"name": "o2", "shape": [4, 5], "dtype": "f32", "role": "output"},
  {"name": "o3", "shape": [4, 5], "dtype": "f64", "role": "output"},
  {"name": "o4", "shape": [4, 5], "dtype": "f64", "role": "output"},
  {"name": "o5", "shape": [4, 5], "dtype": "f64", "role": "output"},
  {"name": "o6", "shape": [4, 5], "dtype": "f32", "role": "output"},
  {"name": "o7", "shape": [3, 4, 5], "dtype": "f64", "role": "output"},
  {"name": "o8", "shape": [3, 4, 5], "dtype": "f64", "role": "output"},
  {"name": "o9", "shape": [3, 4, 5], "dtype": "f64", "role": "output"}
 ],
 "ops": [
  {"name": "row", "type": "addmm", "inputs": ["row", "x", "y"], "outputs": ["o1"],
   "params": {"beta": 0.5, "alpha": 2.0}},
  {"name": "full", "type": "addmm", "inputs": ["full32", "x32", "y32"], "outputs": ["o2"],
   "params": {"beta": -1.5, "alpha": 0.25}},
  {"name": "column", "type": "addmm", "inputs": ["col", "x", "y"], "outputs": ["o3"],
   "params": {"beta": 1.0, "alpha": 1.0}},
  {"name": "row0j", "type": "addmm", "inputs": ["row2", "x", "y"], "outputs": ["o4"],
   "params": {"beta": 3.0, "alpha": -1.0}},
  {"name": "scalar", "type": "addmm", "inputs": ["scalar", "x", "y"], "outputs": ["o5"],
   "params": {"beta": 1.0, "alpha": 1.0}},
  {"name": "linear", "type": "addmm_transposed", "inputs": ["row32", "x32", "w32"],
   "outputs": ["o6"], "params": {"beta": 1.0, "alpha": 1.0, "ta": 0, "tb": 1}},
  {"name": "bfull", "type": "baddbmm", "inputs": ["bfull", "b1", "b2"], "outputs": ["o7"],
   "params": {"beta": 0.75, "alpha": 1.25}},
  {"name": "bshared", "type": "baddbmm", "inputs": ["bshared", "b1", "b2"], "outputs": ["o8"],
   "params": {"beta": 1.0, "alpha": 0.5}},
  {"name": "bcol", "type": "baddbmm", "inputs": ["bcol", "b1", "b2"], "outputs": ["o9"],
   "params": {"beta": 2.0, "alpha": 1.0}}
 ]})";

/// Each op of BiasGraph: its bias's vars (by output variable; -1 reads 0),
/// none for the scalar bias.
TEST(DeviceGemmTest, BiasesAreFilledAsTheKernelsWrite) {
  TestGraph tg;
  tg.loadText(BiasGraph);
  ASSERT_TRUE(tg.graph);
  const graph::Graph &g = *tg.graph;
  const std::vector<std::vector<int>> expected = {
      {1}, {0, 1}, {0, -1}, {-1, 1}, {}, {1}, {0, 1, 2}, {-1, -1, 2}, {0, 1, -1}};
  const std::vector<double> scales = {0.5, -1.5, 1, 3, 0, 1, 0.75, 1, 2},
                            alphas = {2, 0.25, 1, -1, 1, 1, 1.25, 0.5, 1};
  ASSERT_EQ(g.getNumOps(), expected.size());
  std::vector<GeneratedKernel> kernels;
  std::vector<KernelInstance> instances;
  for (unsigned op = 0; op != g.getNumOps(); ++op) {
    auto inst = makeKernelInstance(g, op, tg.specs);
    ASSERT_TRUE(bool(inst)) << llvm::toString(inst.takeError());
    std::string name = "k" + std::to_string(op);
    auto kernel = emitKernel(*inst, name);
    ASSERT_TRUE(bool(kernel)) << llvm::toString(kernel.takeError());
    auto cuda = emitKernel(*inst, name, cudaKernelOptions());
    ASSERT_TRUE(bool(cuda)) << llvm::toString(cuda.takeError());
    EXPECT_TRUE(cuda->deviceGemm) << name;
    if (expected[op].empty()) {
      // The scalar bias is not one cuBLAS call: the generated kernel runs.
      EXPECT_FALSE(kernel->gemm.hasValue());
      EXPECT_FALSE(cuda->gemm.hasValue());
      continue;
    }
    ASSERT_TRUE(kernel->gemm.hasValue()) << g.getOp(op).name;
    ASSERT_TRUE(cuda->gemm.hasValue()) << g.getOp(op).name;
    EXPECT_TRUE(sameGemm(*kernel->gemm, *cuda->gemm)) << g.getOp(op).name;
    ASSERT_TRUE(kernel->gemm->bias.has_value()) << g.getOp(op).name;
    EXPECT_EQ(kernel->gemm->bias->vars, expected[op]) << g.getOp(op).name;
    EXPECT_EQ(kernel->gemm->bias->scale, scales[op]) << g.getOp(op).name;
    EXPECT_EQ(kernel->gemm->alpha, alphas[op]) << g.getOp(op).name;
    kernels.push_back(std::move(*kernel));
    instances.push_back(std::move(*inst));
  }
  auto library = compileKernelUnit(kernels);
  ASSERT_TRUE(bool(library)) << llvm::toString(library.takeError());

  std::mt19937_64 rng(29);
  for (unsigned i = 0; i != kernels.size(); ++i) {
    const DeviceGemm &gemm = *kernels[i].gemm;
    const KernelInstance &inst = instances[i];
    unsigned rank = inst.outputShape.size();
    // A bias read at 0 where the description says the column variable (or
    // the row variable, for a column bias) indexes it: a wrong fill.
    std::vector<int> wrongVars = gemm.bias->vars;
    for (int &v : wrongVars)
      if (v == int(rank) - 1 || (v == int(rank) - 2 &&
                                 !llvm::is_contained(gemm.bias->vars, int(rank) - 1)))
        v = -1;
    DeviceGemm wrong = gemm;
    wrong.bias = GemmBias{gemm.bias->input, gemm.bias->scale, wrongVars};
    std::vector<TestBox> inputs;
    std::vector<BoxView> views;
    for (const Shape &shape : inst.inputShapes)
      inputs.push_back(makeBox(elementTypeOf(inst.inputTypes[0]),
                               std::vector<std::int64_t>(shape.size(), 0),
                               std::vector<std::int64_t>(shape.begin(), shape.end()),
                               rng));
    for (TestBox &box : inputs)
      views.push_back(box.view());
    ElementType type = elementTypeOf(inst.outputType);
    // The whole output and reduction; a box past every start with a
    // partial reduction; an empty reduction (the fill alone).
    for (unsigned form = 0; form != 3; ++form) {
      std::vector<std::int64_t> lo(kernels[i].varExtents.size(), 0),
          hi(kernels[i].varExtents.begin(), kernels[i].varExtents.end());
      if (form == 1)
        for (unsigned v = 0; v != lo.size(); ++v) {
          lo[v] = std::min<std::int64_t>(1, hi[v] - 1);
          hi[v] = std::max(lo[v] + 1, hi[v] - 1);
        }
      if (form == 2)
        lo[gemm.kVar] = hi[gemm.kVar] = 2;
      TestBox out = makeOutputBox(type, lo, hi, rank, rng);
      KernelCall call{views.data(), unsigned(views.size()), {}, lo.data(),
                      hi.data()};
      for (const DeviceGemm *d : {&gemm, const_cast<const DeviceGemm *>(&wrong)}) {
        bool ran = false;
        ::testing::AssertionResult agree = agreeOnBox(
            (*library)->getKernel(i), call, out,
            [&](const KernelCall &planned) {
              std::vector<GemmCall> plan = planGemm(*d, planned);
              for (const GemmCall &p : plan)
                runOnHost(p, type);
              return !plan.empty();
            },
            ran);
        EXPECT_TRUE(ran);
        if (d == &gemm)
          EXPECT_TRUE(agree) << kernels[i].name << " form " << form;
        else
          EXPECT_FALSE(agree) << kernels[i].name << " form " << form
                              << ": a wrong bias index agreed";
      }
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
