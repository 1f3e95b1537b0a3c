//===- RuntimeBench.cpp - Training steps on generated kernels -------------===//
//
// Times whole training steps of a tofu-graph through the library: the graph
// planned for K workers (the single-worker plan for K = 1, the planner's
// plan otherwise), lowered (lib/Lowering), executed by runtime::Executor on
// K threads with the graph's generated kernels (lib/CodeGen, compiled by
// KernelCompiler). Per K it prints the step time (the best of --steps steps
// after one warm-up step) and its ratio to K = 1, the bytes moved in a step
// against the plan's comm_bytes, and the fullest worker's measured peak
// against the unpartitioned (K = 1) measured peak divided by K. With
// --profile it also prints, for K = 1, the kernel time per operator type.
// `--json` prints one JSON object instead (bench/runtime-vs-torch.py reads
// it). Not a test; docs/Runtime.md ("Performance") has numbers from it.
//
//===----------------------------------------------------------------------===//

#include "tofu/CodeGen/GraphKernels.h"
#include "tofu/CodeGen/KernelCompiler.h"
#include "tofu/Graph/Graph.h"
#include "tofu/Graph/ModelFile.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Graph/Verifier.h"
#include "tofu/Lowering/PlanLowering.h"
#include "tofu/Planner/Planner.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/Executor.h"
#include "tofu/Support/Diagnostics.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <random>

using namespace tofu;
namespace cl = llvm::cl;

#ifndef TOFU_SPECS_DIR
#define TOFU_SPECS_DIR ""
#endif

namespace {

cl::opt<std::string> graphFile(cl::Positional, cl::Required,
                               cl::desc("<GRAPH.json>"));
cl::list<unsigned> workerCounts("workers", cl::CommaSeparated,
                                cl::desc("Worker counts (default 1,2,4)"));
cl::opt<unsigned> numSteps("steps", cl::desc("Timed steps per K"),
                           cl::init(3));
cl::opt<bool> profile("profile",
                      cl::desc("Kernel time per operator type at K = 1"));
cl::opt<bool> json("json", cl::desc("Print one JSON object"));

using Clock = std::chrono::steady_clock;

double secondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

/// The generated kernels, timed per kernel index when asked.
class TimedKernels : public runtime::KernelProvider {
public:
  explicit TimedKernels(std::vector<runtime::KernelInfo> table)
      : seconds(table.size(), 0.0), table(std::move(table)) {}
  void run(unsigned kernel, const runtime::KernelCall &call) override {
    if (!timing) {
      table.run(kernel, call);
      return;
    }
    Clock::time_point start = Clock::now();
    table.run(kernel, call);
    double s = secondsSince(start);
    std::lock_guard<std::mutex> lock(mutex);
    seconds[kernel] += s;
  }
  bool timing = false;
  std::vector<double> seconds;

private:
  runtime::KernelTable table;
  std::mutex mutex;
};

bool isInteger(DType t) {
  return t == DType::I64 || t == DType::I32 || t == DType::I8;
}

/// Random values for graph input `t`: reals uniform in [0, 0.1), integers
/// (labels) in [0, n) with n the smallest extent of a real tensor read by
/// an op reading `t`, booleans 0 or 1.
runtime::HostTensor makeInput(const graph::Graph &g, unsigned t,
                              std::mt19937_64 &rng) {
  const graph::Tensor &tensor = g.getTensor(t);
  runtime::HostTensor out;
  out.type = *lowering::getElementType(tensor.dtype);
  out.shape.assign(tensor.shape.begin(), tensor.shape.end());
  int64_t n = 1;
  for (int64_t e : tensor.shape)
    n *= e;
  out.data.resize(n * runtime::getElementSize(out.type));
  int64_t bound = INT64_MAX;
  for (unsigned o = 0, e = g.getNumOps(); o != e; ++o) {
    const graph::Op &op = g.getOp(o);
    if (llvm::none_of(op.inputs, [&](const graph::TensorRef &in) {
          return in.index == int(t);
        }))
      continue;
    for (const graph::TensorRef &in : op.inputs)
      if (in.index >= 0 && !isInteger(g.getTensor(in.index).dtype))
        for (int64_t extent : g.getTensor(in.index).shape)
          bound = std::min(bound, extent);
  }
  if (bound == INT64_MAX)
    bound = 2;
  std::uniform_real_distribution<double> real(0, 0.1);
  std::uniform_int_distribution<int64_t> index(0, bound - 1);
  for (int64_t i = 0; i != n; ++i) {
    switch (out.type) {
    case runtime::ElementType::F32: {
      float v = float(real(rng));
      std::memcpy(&out.data[i * 4], &v, 4);
      break;
    }
    case runtime::ElementType::F64: {
      double v = real(rng);
      std::memcpy(&out.data[i * 8], &v, 8);
      break;
    }
    case runtime::ElementType::I64: {
      int64_t v = index(rng);
      std::memcpy(&out.data[i * 8], &v, 8);
      break;
    }
    case runtime::ElementType::I32: {
      int32_t v = int32_t(index(rng));
      std::memcpy(&out.data[i * 4], &v, 4);
      break;
    }
    case runtime::ElementType::I8:
      out.data[i] = uint8_t(std::min<int64_t>(index(rng), 127));
      break;
    case runtime::ElementType::Bool:
      out.data[i] = uint8_t(rng() & 1);
      break;
    }
  }
  return out;
}

struct Measured {
  unsigned workers = 1;
  double stepSeconds = 0;
  int64_t movedBytes = 0, commBytes = 0, peakBytes = 0;
};

} // namespace

int main(int argc, char **argv) {
  cl::ParseCommandLineOptions(argc, argv, "Training steps on generated kernels\n");
  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags(srcMgr);
  auto g = graph::readModelFile(graphFile, diags);
  graph::SpecLibrary specs;
  if (!g || !specs.load(TOFU_SPECS_DIR, {}, diags) ||
      !graph::verifyGraph(*g, specs, diags))
    return 1;
  auto problem = planner::PlanningProblem::build(*g, specs, diags);
  if (!problem)
    return 1;

  Clock::time_point start = Clock::now();
  auto kernels = codegen::emitGraphKernels(*g, specs);
  if (!kernels) {
    llvm::errs() << llvm::toString(kernels.takeError()) << '\n';
    return 1;
  }
  double generateSeconds = secondsSince(start);
  start = Clock::now();
  codegen::KernelCompiler compiler;
  auto library = compiler.compile(kernels->source);
  if (!library) {
    llvm::errs() << llvm::toString(library.takeError()) << '\n';
    return 1;
  }
  double compileSeconds = secondsSince(start);
  TimedKernels provider((*library)->getKernels().vec());

  std::vector<unsigned> counts(workerCounts.begin(), workerCounts.end());
  if (counts.empty())
    counts = {1, 2, 4};
  if (counts.front() != 1)
    counts.insert(counts.begin(), 1);
  std::vector<Measured> results;
  std::map<std::string, double> perType;
  std::vector<std::pair<double, std::string>> perOp;
  try {
    for (unsigned k : counts) {
      plan::Plan p;
      if (k == 1) {
        p = lowering::makeSingleWorkerPlan(*problem);
      } else {
        planner::PlannerOptions options;
        options.workers = k;
        planner::PlannerReport report;
        auto planned = planner::planGraph(*problem, options, report);
        if (!planned) {
          llvm::errs() << llvm::toString(planned.takeError()) << '\n';
          return 1;
        }
        p = std::move(*planned);
      }
      auto lowered = lowering::lowerPlan(*problem, p);
      if (!lowered) {
        llvm::errs() << llvm::toString(lowered.takeError()) << '\n';
        return 1;
      }
      auto transport = runtime::createThreadTransport(
          k, std::chrono::milliseconds(600000));
      runtime::Executor executor(*lowered, provider, *transport);
      std::mt19937_64 rng(0);
      for (unsigned t = 0, e = g->getNumTensors(); t != e; ++t)
        if (g->getProducer(t) < 0)
          executor.setInput(t, makeInput(*g, t, rng));
      Measured m;
      m.workers = k;
      m.commBytes = lowered->commBytes;
      m.stepSeconds = 1e30;
      for (unsigned s = 0; s != numSteps + 1; ++s) {
        provider.timing = profile && k == 1 && s != 0;
        Clock::time_point stepStart = Clock::now();
        runtime::StepResult r = executor.runStep();
        if (s != 0)
          m.stepSeconds = std::min(m.stepSeconds, secondsSince(stepStart));
        m.movedBytes = r.movedBytes;
        for (int64_t peak : r.peakBytesPerWorker)
          m.peakBytes = std::max(m.peakBytes, peak);
      }
      provider.timing = false;
      if (profile && k == 1)
        for (unsigned i = 0, e = lowered->ops.size(); i != e; ++i) {
          double s = provider.seconds[lowered->ops[i].kernel] / numSteps;
          perType[lowered->ops[i].type] += s;
          perOp.push_back({s, lowered->ops[i].name});
        }
      std::fill(provider.seconds.begin(), provider.seconds.end(), 0.0);
      results.push_back(m);
    }
  } catch (const runtime::RuntimeError &e) {
    llvm::errs() << "error: " << e.what() << '\n';
    return 1;
  }

  const Measured &one = results.front();
  std::vector<std::pair<double, std::string>> types;
  for (auto &[type, s] : perType)
    types.push_back({s, type});
  llvm::sort(types, std::greater<>());
  if (json) {
    llvm::json::Array runs, ops;
    for (const Measured &m : results)
      runs.push_back(llvm::json::Object{{"workers", int64_t(m.workers)},
                                        {"step_s", m.stepSeconds},
                                        {"moved_bytes", m.movedBytes},
                                        {"comm_bytes", m.commBytes},
                                        {"peak_bytes", m.peakBytes}});
    for (auto &[s, type] : types)
      ops.push_back(llvm::json::Object{{"type", type}, {"s", s}});
    llvm::outs() << llvm::json::Value(llvm::json::Object{
                        {"graph", graphFile},
                        {"generate_s", generateSeconds},
                        {"compile_s", compileSeconds},
                        {"cached", compiler.lastWasCached()},
                        {"runs", std::move(runs)},
                        {"profile", std::move(ops)}})
                 << '\n';
    return 0;
  }
  llvm::outs() << graphFile << ": kernels generated in "
               << llvm::format("%.2f", generateSeconds) << " s, compiled in "
               << llvm::format("%.2f", compileSeconds) << " s"
               << (compiler.lastWasCached() ? " (cached)" : "") << "\n";
  llvm::outs() << "  K     step_s  vs_K=1     moved_bytes      comm_bytes  "
                  "peak/worker  K=1_peak/K  peak/(K=1/K)\n";
  for (const Measured &m : results)
    llvm::outs() << llvm::format(
        "%3u %10.4f %7.2fx %15lld %15lld %12lld %11lld %12.2fx\n", m.workers,
        m.stepSeconds, m.stepSeconds / one.stepSeconds,
        (long long)m.movedBytes, (long long)m.commBytes,
        (long long)m.peakBytes, (long long)(one.peakBytes / m.workers),
        double(m.peakBytes) * m.workers / one.peakBytes);
  if (profile) {
    llvm::outs() << "kernel time per step by operator type (K = 1):\n";
    double total = 0;
    for (auto &[s, type] : types)
      total += s;
    for (auto &[s, type] : types)
      llvm::outs() << llvm::format("  %-40s %9.4f s %5.1f%%\n", type.c_str(), s,
                                   100 * s / std::max(total, 1e-30));
    llvm::sort(perOp, std::greater<>());
    llvm::outs() << "the slowest ops:\n";
    for (unsigned i = 0; i != std::min<size_t>(perOp.size(), 8); ++i)
      llvm::outs() << llvm::format("  %-40s %9.4f s\n", perOp[i].second.c_str(),
                                   perOp[i].first);
    llvm::outs() << llvm::format("  %-40s %9.4f s of a %.4f s step\n",
                                 (const char *)"all kernels", total, one.stepSeconds);
  }
  return 0;
}
