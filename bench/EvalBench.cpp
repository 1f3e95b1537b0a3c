//===- EvalBench.cpp - How fast the TDL evaluator is ----------------------===//
//
// Benchmarks of CompiledOp::run on the contract's matmul and padded conv2d
// and on a softmax (whose reductions the evaluator caches per row), the
// numbers quoted in docs/Evaluator.md. Counters report the time per
// multiply-add. Run build/bin/EvalBench.
//
//===----------------------------------------------------------------------===//

#include "tofu/Eval/Evaluator.h"
#include "tofu/Support/Diagnostics.h"
#include "tofu/TDL/Parser.h"
#include "tofu/TDL/Sema.h"

#include "llvm/Support/MemoryBuffer.h"

#include <benchmark/benchmark.h>

#include <random>

using namespace tofu;
using namespace tofu::eval;

namespace {

const char *const library = R"(
op matmul(A, B) = lambda i, j: Sum(lambda k: A[i, k] * B[k, j]);
op conv2d<stride, pad>(data, w) =
    lambda n, co, y, x: Sum(lambda ci, ky, kx:
        data[n, ci, y * stride + ky - pad, x * stride + kx - pad] * w[co, ci, ky, kx]);
op softmax(x) = lambda i, j: exp(x[i, j]) / Sum(lambda k: exp(x[i, k]));
)";

/// The library above, parsed and checked once.
struct Library {
  Library() : diags(srcMgr) {
    unsigned id = srcMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(library, "bench.tdl"), SMLoc());
    if (!tdl::parseBuffer(id, diags, module) ||
        !tdl::checkModule(module, diags))
      std::abort();
  }
  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags;
  tdl::Module module;
};

const tdl::OpDecl &getOp(StringRef name) {
  static Library lib;
  return *lib.module.lookupOp(name);
}

Tensor randomTensor(ArrayRef<int64_t> shape) {
  static std::mt19937 rng(0);
  std::normal_distribution<double> dist;
  Tensor t(DType::F32, shape);
  for (double &v : t.getData())
    v = float(dist(rng));
  return t;
}

/// Compiles `name` for `inputs` and runs it once per iteration; `macs` is
/// the multiply-adds of one run.
void runOp(benchmark::State &state, StringRef name, ArrayRef<Shape> shapes,
           ArrayRef<double> params, ArrayRef<int64_t> outShape, double macs) {
  std::vector<Tensor> tensors;
  SmallVector<const Tensor *, 2> inputs;
  for (const Shape &s : shapes)
    tensors.push_back(randomTensor(s));
  for (const Tensor &t : tensors)
    inputs.push_back(&t);
  auto compiled = CompiledOp::compile(getOp(name), shapes, params, outShape);
  if (!compiled)
    std::abort();
  Tensor out(DType::F32, outShape);
  for (auto _ : state) {
    compiled->run(inputs, out);
    benchmark::DoNotOptimize(out.getData().data());
  }
  state.counters["ns_per_mac"] = benchmark::Counter(
      macs * 1e-9, benchmark::Counter::kIsIterationInvariantRate |
                       benchmark::Counter::kInvert);
}

void BM_Matmul256(benchmark::State &state) {
  Shape a{256, 256};
  runOp(state, "matmul", {a, a}, {}, a, 256.0 * 256 * 256);
}
BENCHMARK(BM_Matmul256)->Unit(benchmark::kMillisecond);

void BM_Conv2dPad1(benchmark::State &state) {
  runOp(state, "conv2d", {Shape{8, 16, 32, 32}, Shape{32, 16, 3, 3}}, {1, 1},
        Shape{8, 32, 32, 32}, 8.0 * 32 * 32 * 32 * 16 * 9);
}
BENCHMARK(BM_Conv2dPad1)->Unit(benchmark::kMillisecond);

void BM_Softmax(benchmark::State &state) {
  Shape s{256, 1024};
  runOp(state, "softmax", {s}, {}, s, 256.0 * 1024);
}
BENCHMARK(BM_Softmax)->Unit(benchmark::kMillisecond);

} // namespace

BENCHMARK_MAIN();
