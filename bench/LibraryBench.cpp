//===- LibraryBench.cpp - The operator library on real graphs -------------===//
//
// Measures what the planner pays to get from a training graph to analysed
// operators: every distinct use (type, input shapes, params, output rank)
// of the bundled ResNet-50, GPT and LSTM graphs instantiated against the
// standard library (specs/) with a fresh Instantiator, then analysed and
// bound to its shapes; the same uses again once memoized; and ResNet-50's
// uses at batch 32, 16, 8, 4 and 2 (a planner halving the batch at each
// level), counting the instances made.
//
//===----------------------------------------------------------------------===//

#include "tofu/Analysis/Binding.h"
#include "tofu/Analysis/OperatorAnalysis.h"
#include "tofu/Graph/GraphReader.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Support/Diagnostics.h"
#include "tofu/TDL/Instantiate.h"

#include "llvm/Support/SourceMgr.h"

#include <benchmark/benchmark.h>

#include <cstdlib>
#include <set>

using namespace tofu;

namespace {

/// One use of an operator in a graph.
struct Use {
  std::string model;
  std::string type;
  SmallVector<Shape, 4> inputs;
  std::vector<tdl::NamedParamValue> params;
  Shape output;
};

/// The library and the distinct uses of the bundled graphs.
struct Corpus {
  Corpus() : diags(srcMgr) {
    if (!specs.addDirectory(TOFU_SOURCE_DIR "/specs", diags) ||
        !specs.check(diags))
      std::abort();
    std::set<std::string> seen;
    for (const char *model : {"resnet50", "gpt-2l", "rnn-2l"}) {
      std::string path = std::string(TOFU_SOURCE_DIR "/models/") + model +
                         ".json";
      std::unique_ptr<graph::Graph> g = graph::readGraphFile(path, diags);
      if (!g)
        std::abort();
      for (const graph::Op &op : g->getOps()) {
        Use use{model, op.type, {}, op.params,
                g->getTensor(op.getOutput()).shape};
        std::string key = op.type;
        for (const graph::TensorRef &ref : op.inputs) {
          use.inputs.push_back(g->getTensor(ref.index).shape);
          key += "|" + formatShape(use.inputs.back());
        }
        for (const auto &[name, value] : op.params)
          key += "|" + name + "=" + std::to_string(value.asReal());
        key += "|" + formatShape(use.output);
        if (seen.insert(key).second)
          uses.push_back(std::move(use));
      }
    }
  }

  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags;
  graph::SpecLibrary specs;
  std::vector<Use> uses;
};

const Corpus &getCorpus() {
  static Corpus corpus;
  return corpus;
}

/// Instantiates, analyses and binds one use; aborts on failure (the
/// bundled graphs are covered: test/Specs/coverage.test).
void analyzeUse(tdl::Instantiator &inst, const Use &use) {
  llvm::Expected<const tdl::Instance *> instance = inst.instantiate(
      use.type, use.inputs, use.params, unsigned(use.output.size()));
  if (!instance)
    std::abort();
  auto analysis = analysis::OperatorAnalysis::analyze(*(*instance)->op);
  if (!analysis)
    std::abort();
  auto binding = analysis::Binding::create(*analysis, use.inputs, use.output,
                                           (*instance)->intParams);
  if (!binding)
    std::abort();
  benchmark::DoNotOptimize(binding->getVarExtents().data());
}

void BM_AnalyzeEveryUseFresh(benchmark::State &state) {
  const Corpus &corpus = getCorpus();
  for (auto _ : state) {
    tdl::Instantiator inst(corpus.specs.getModule());
    for (const Use &use : corpus.uses)
      analyzeUse(inst, use);
  }
  state.counters["uses"] = corpus.uses.size();
  tdl::Instantiator inst(corpus.specs.getModule());
  for (const Use &use : corpus.uses)
    analyzeUse(inst, use);
  state.counters["instances"] = inst.getNumInstances();
}
BENCHMARK(BM_AnalyzeEveryUseFresh)->Unit(benchmark::kMillisecond);

/// ResNet-50's uses with the batch (dimension 0 of extent 32) halved four
/// times, as a planner partitioning the batch recursively makes them.
void BM_InstantiateResNetHalvingTheBatch(benchmark::State &state) {
  const Corpus &corpus = getCorpus();
  unsigned instances = 0, uses = 0;
  for (auto _ : state) {
    tdl::Instantiator inst(corpus.specs.getModule());
    uses = 0;
    for (int64_t batch = 32; batch >= 2; batch /= 2)
      for (const Use &use : corpus.uses) {
        if (use.model != "resnet50")
          continue;
        SmallVector<Shape, 4> inputs(use.inputs.begin(), use.inputs.end());
        for (Shape &shape : inputs)
          if (!shape.empty() && shape[0] == 32)
            shape[0] = batch;
        auto instance = inst.instantiate(use.type, inputs, use.params,
                                         unsigned(use.output.size()));
        if (!instance)
          std::abort();
        ++uses;
      }
    instances = inst.getNumInstances();
  }
  state.counters["uses"] = uses;
  state.counters["instances"] = instances;
}
BENCHMARK(BM_InstantiateResNetHalvingTheBatch)->Unit(benchmark::kMillisecond);

void BM_InstantiateEveryUseMemoized(benchmark::State &state) {
  const Corpus &corpus = getCorpus();
  tdl::Instantiator inst(corpus.specs.getModule());
  for (const Use &use : corpus.uses)
    analyzeUse(inst, use);
  for (auto _ : state)
    for (const Use &use : corpus.uses) {
      auto instance = inst.instantiate(use.type, use.inputs, use.params,
                                       unsigned(use.output.size()));
      if (!instance)
        std::abort();
      benchmark::DoNotOptimize((*instance)->op);
    }
  state.counters["uses"] = corpus.uses.size();
}
BENCHMARK(BM_InstantiateEveryUseMemoized)->Unit(benchmark::kMicrosecond);

} // namespace

BENCHMARK_MAIN();
