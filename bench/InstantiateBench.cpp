//===- InstantiateBench.cpp - How fast generic operators instantiate ------===//
//
// Benchmarks of the Instantiator, which a graph validator or planner calls
// once per graph op: a memo hit (the same use again, the common case in a
// graph of repeated layers) and a fresh instantiation (overload choice,
// ellipsis expansion with broadcasting, dim/rank folding, Sema). Run
// build/bin/InstantiateBench.
//
//===----------------------------------------------------------------------===//

#include "tofu/Support/Diagnostics.h"
#include "tofu/TDL/Instantiate.h"
#include "tofu/TDL/Parser.h"
#include "tofu/TDL/Sema.h"

#include "llvm/Support/MemoryBuffer.h"

#include <benchmark/benchmark.h>

using namespace tofu;
using namespace tofu::tdl;

namespace {

const char *const library = R"(
op add_Tensor<alpha: real>(self, other) = lambda ...i: self[...i] + alpha * other[...i];
op _softmax<dim, half_to_float>(x) where dim == rank(x) - 1 || dim == -1 =
    lambda ...i, j: exp(x[...i, j]) / Sum(lambda k: exp(x[...i, k]));
op matmul(A, B) = lambda i, j: Sum(lambda k: A[i, k] * B[k, j]);
)";

/// The library above, parsed and checked once.
struct Library {
  Library() : diags(srcMgr) {
    unsigned id = srcMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBuffer(library, "bench.tdl"), SMLoc());
    if (!parseBuffer(id, diags, module) || !checkModule(module, diags))
      std::abort();
  }
  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags;
  Module module;
};

const Module &getLibrary() {
  static Library lib;
  return lib.module;
}

/// A GPT-like residual add: [32, 128, 768] + [768].
const Shape addShapes[] = {{32, 128, 768}, {768}};
const NamedParamValue addParams[] = {{"alpha", ParamValue::ofReal(1.0)}};
const Shape softmaxShapes[] = {{32, 12, 128, 128}};
const NamedParamValue softmaxParams[] = {{"dim", ParamValue::ofInt(-1)},
                                         {"half_to_float", ParamValue::ofInt(0)}};

void BM_InstantiateMemoHit(benchmark::State &state) {
  Instantiator instantiator(getLibrary());
  if (!instantiator.instantiate("add_Tensor", addShapes, addParams))
    std::abort();
  for (auto _ : state) {
    auto instance = instantiator.instantiate("add_Tensor", addShapes, addParams);
    benchmark::DoNotOptimize(*instance);
  }
}
BENCHMARK(BM_InstantiateMemoHit);

void BM_InstantiateMemoHitPlainOp(benchmark::State &state) {
  Instantiator instantiator(getLibrary());
  const Shape shapes[] = {{64, 1024}, {1024, 4096}};
  if (!instantiator.instantiate("matmul", shapes, {}))
    std::abort();
  for (auto _ : state) {
    auto instance = instantiator.instantiate("matmul", shapes, {});
    benchmark::DoNotOptimize(*instance);
  }
}
BENCHMARK(BM_InstantiateMemoHitPlainOp);

/// A fresh Instantiator per iteration, so every call instantiates.
void BM_InstantiateFreshAdd(benchmark::State &state) {
  const Module &library = getLibrary();
  for (auto _ : state) {
    Instantiator instantiator(library);
    auto instance = instantiator.instantiate("add_Tensor", addShapes, addParams);
    benchmark::DoNotOptimize(*instance);
  }
}
BENCHMARK(BM_InstantiateFreshAdd)->Unit(benchmark::kMicrosecond);

void BM_InstantiateFreshSoftmax(benchmark::State &state) {
  const Module &library = getLibrary();
  for (auto _ : state) {
    Instantiator instantiator(library);
    auto instance =
        instantiator.instantiate("_softmax", softmaxShapes, softmaxParams);
    benchmark::DoNotOptimize(*instance);
  }
}
BENCHMARK(BM_InstantiateFreshSoftmax)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
