//===- AnalysisBench.cpp - How fast the operator analysis is --------------===//
//
// Benchmarks of the two costs the planner pays: analysing operators
// symbolically (once per operator: every operator of the contract's
// examples and of specs/), and instantiating a strategy at concrete shapes
// (thousands of times per plan). Run build/bin/AnalysisBench.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/Regions.h"
#include "tofu/Analysis/ShapeInference.h"
#include "tofu/Analysis/SymbolicRegions.h"
#include "tofu/Support/Diagnostics.h"
#include "tofu/TDL/Parser.h"
#include "tofu/TDL/Sema.h"

#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Path.h"

#include <benchmark/benchmark.h>

using namespace tofu;
using namespace tofu::analysis;

namespace {

/// Every operator of the contract's examples and of specs/, checked once.
struct Corpus {
  Corpus() : diags(srcMgr) {
    std::vector<std::string> paths = {
        TOFU_SOURCE_DIR "/test/TDL/Inputs/contract-examples.tdl"};
    std::error_code ec;
    for (llvm::sys::fs::directory_iterator it(TOFU_SOURCE_DIR "/specs", ec),
         end;
         it != end && !ec; it.increment(ec))
      if (llvm::sys::path::extension(it->path()) == ".tdl")
        paths.push_back(it->path());
    for (const std::string &path : paths) {
      tdl::Module &module = *modules.emplace_back(new tdl::Module);
      if (tdl::parseFile(path, diags, module) && tdl::checkModule(module, diags))
        for (const auto &op : module.getOps())
          if (!op->isGeneric())
            ops.push_back(op.get());
    }
  }
  const tdl::OpDecl &op(StringRef name) const {
    for (const tdl::OpDecl *op : ops)
      if (op->getName() == name)
        return *op;
    std::abort();
  }

  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags;
  std::vector<std::unique_ptr<tdl::Module>> modules;
  std::vector<const tdl::OpDecl *> ops;
};

const Corpus &getCorpus() {
  static Corpus corpus;
  return corpus;
}

void BM_AnalyzeAllOperators(benchmark::State &state) {
  const Corpus &corpus = getCorpus();
  for (auto _ : state)
    for (const tdl::OpDecl *op : corpus.ops) {
      auto analysis = OperatorAnalysis::analyze(*op);
      benchmark::DoNotOptimize(analysis->getStrategies().data());
    }
  state.counters["operators"] = corpus.ops.size();
}
BENCHMARK(BM_AnalyzeAllOperators)->Unit(benchmark::kMicrosecond);

void BM_SymbolicRegionsAllOperators(benchmark::State &state) {
  const Corpus &corpus = getCorpus();
  for (auto _ : state)
    for (const tdl::OpDecl *op : corpus.ops) {
      auto analysis = OperatorAnalysis::analyze(*op);
      for (const Strategy &s : analysis->getStrategies()) {
        SmallVector<SymbolicWorker, 2> workers;
        computeSymbolicStrategy(*analysis, s, 2, workers);
        benchmark::DoNotOptimize(workers.data());
      }
    }
}
BENCHMARK(BM_SymbolicRegionsAllOperators)->Unit(benchmark::kMicrosecond);

/// conv2d bound to a ResNet-like layer.
struct Conv2dFixture {
  Conv2dFixture()
      : analysis(std::move(*OperatorAnalysis::analyze(getCorpus().op("conv2d")))),
        binding(std::move(*Binding::create(analysis,
                                           {{32, 256, 56, 56}, {256, 256, 3, 3}},
                                           {32, 256, 56, 56}, {1, 1}))) {}
  OperatorAnalysis analysis;
  Binding binding;
};

void BM_InstantiateConv1dSplitX(benchmark::State &state) {
  auto analysis = std::move(*OperatorAnalysis::analyze(getCorpus().op("conv1d")));
  Binding binding = std::move(
      *Binding::create(analysis, {{4, 6, 20}, {6, 8, 3}}, {4, 8, 18}, {}));
  const Strategy &splitX = analysis.getStrategies()[2];
  SmallVector<Range, 2> parts;
  SmallVector<WorkerRegions, 2> workers;
  for (auto _ : state) {
    splitEvenly(binding.getVarExtent(splitX.var), 2, parts);
    instantiateStrategy(binding, splitX, parts, workers);
    benchmark::DoNotOptimize(workers.data());
  }
}
BENCHMARK(BM_InstantiateConv1dSplitX);

void BM_InstantiateConv2dAllStrategies(benchmark::State &state) {
  Conv2dFixture f;
  unsigned numWorkers = state.range(0);
  SmallVector<Range, 8> parts;
  SmallVector<WorkerRegions, 8> workers;
  for (auto _ : state)
    for (const Strategy &s : f.analysis.getStrategies()) {
      splitEvenly(f.binding.getVarExtent(s.var), numWorkers, parts);
      instantiateStrategy(f.binding, s, parts, workers);
      benchmark::DoNotOptimize(workers.data());
    }
  state.counters["strategies"] = f.analysis.getStrategies().size();
}
BENCHMARK(BM_InstantiateConv2dAllStrategies)->Arg(2)->Arg(8);

void BM_BindConv2d(benchmark::State &state) {
  Conv2dFixture f;
  for (auto _ : state) {
    auto binding = Binding::create(f.analysis,
                                   {{32, 256, 56, 56}, {256, 256, 3, 3}},
                                   {32, 256, 56, 56}, {1, 1});
    benchmark::DoNotOptimize(binding->getVarExtents().data());
  }
}
BENCHMARK(BM_BindConv2d);

void BM_InferOutputShapeConv2d(benchmark::State &state) {
  Conv2dFixture f;
  for (auto _ : state) {
    auto shape = inferOutputShape(f.analysis,
                                  {{32, 256, 56, 56}, {256, 256, 3, 3}}, {1, 1});
    benchmark::DoNotOptimize(shape->data());
  }
}
BENCHMARK(BM_InferOutputShapeConv2d);

} // namespace

BENCHMARK_MAIN();
