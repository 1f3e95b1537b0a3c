//===- tofu-calibrate.cpp - Measure this machine for step-time estimates --===//
//
// tofu-calibrate measures what `tofu-plan --machine` needs to estimate a
// plan's training step on this machine (docs/StepTime.md): the generated
// kernels of a calibration graph (CalibrationGraph.h), compiled as tofu-run
// compiles a graph's, each timed at several sizes while K workers compute
// at once; a memory copy; and a message's round trip through the
// transport (K threads, or K MPI ranks under mpirun). It writes a machine
// file. Exit status: 0 success, 1 failure (with a message), 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "CalibrationGraph.h"
#include "Timing.h"

#include "tofu/CodeGen/GraphKernels.h"
#include "tofu/CodeGen/KernelCompiler.h"
#include "tofu/Graph/GraphReader.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Graph/Verifier.h"
#include "tofu/Planner/Assignment.h"
#include "tofu/Planner/Machine.h"
#include "tofu/Planner/WorkModel.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Support/CommandLine.h"
#include "tofu/Support/Diagnostics.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

#ifdef TOFU_HAVE_MPI
#include "tofu/Runtime/MPITransport.h"
#endif

#include <climits>
#include <thread>

using namespace tofu;
namespace cl = llvm::cl;

#ifndef TOFU_SPECS_DIR
#define TOFU_SPECS_DIR ""
#endif

namespace {

enum ExitStatus { Success = 0, Failure = 1, BadUsage = 2 };
enum class TransportKind { Threads, Mpi };

cl::OptionCategory category("tofu-calibrate options");
cl::opt<TransportKind> transportKind(
    "transport", cl::desc("The transport the plans will run with"),
    cl::init(TransportKind::Threads),
    cl::values(clEnumValN(TransportKind::Threads, "threads",
                          "K threads of one process (default)"),
               clEnumValN(TransportKind::Mpi, "mpi",
                          "one worker per MPI rank: mpirun -np K "
                          "tofu-calibrate --transport mpi ...")),
    cl::cat(category));
cl::opt<cli::Flag<cli::UnsignedInRange<1, 4096>>> workersFlag(
    "workers",
    cl::desc("Workers computing at once, the K of the plans to estimate "
             "(default: the processor's threads; under MPI the ranks)"),
    cl::value_desc("K"), cl::cat(category));
cl::opt<std::string> outputFile("o", cl::desc("Write the machine file to FILE"),
                                cl::value_desc("FILE"), cl::init("-"),
                                cl::cat(category));
cl::opt<std::string> kernelCache(
    "kernel-cache",
    cl::desc("Where compiled kernels are kept (default $TOFU_KERNEL_CACHE, "
             "else tofu-kernels-UID in the temporary directory)"),
    cl::value_desc("DIR"), cl::cat(category));
cl::opt<bool> quick("quick",
                    cl::desc("Only the smaller sizes and short rounds (a "
                             "test of the tool, not a calibration)"),
                    cl::cat(category));

cl::opt<bool> cpuTime(
    "cpu-time",
    cl::desc("Time kernels and copies by their threads' CPU time times the "
             "workers per processor thread (at least 1): a quiet machine's "
             "times on a loaded one; needs OPENBLAS_NUM_THREADS=1"),
    cl::cat(category));
cl::list<std::string> graphFiles(
    "graph",
    cl::desc("Also time the op types of GRAPH.json (repeatable): up to "
             "three ops of each type, at their whole size and at a K-th of "
             "it; the estimate times an op of a calibrated type from its "
             "type's samples"),
    cl::value_desc("GRAPH.json"), cl::cat(category));
cl::opt<std::string> timeGraph(
    "time-graph",
    cl::desc("Diagnostics: time the f32 ops of GRAPH.json at their whole "
             "size instead (stderr; no machine file)"),
    cl::value_desc("GRAPH.json"), cl::Hidden, cl::cat(category));
cl::opt<std::string> predictMachine(
    "machine",
    cl::desc("Diagnostics, with --time-graph: print each op's time that "
             "MACHINE.json predicts next to the measured one"),
    cl::value_desc("MACHINE.json"), cl::Hidden, cl::cat(category));

llvm::raw_ostream &error() {
  return llvm::WithColor::error(llvm::errs(), "tofu-calibrate");
}

/// This process's part of the job: the workers it runs and how they talk.
struct Job {
  unsigned rank = 0, ranks = 1, workers = 1;
  std::unique_ptr<runtime::Transport> transport;
#ifdef TOFU_HAVE_MPI
  std::unique_ptr<runtime::MPISession> session;
#endif
  /// Threads of this process that compute at once.
  unsigned localThreads() const { return ranks == 1 ? workers : 1; }
  /// The mean of `value` over the processes, summed in units of `unit`.
  double mean(double value, double unit) {
    if (ranks == 1)
      return value;
    std::vector<int64_t> v{int64_t(value / unit)};
    transport->sumOverProcesses(v);
    return double(v[0]) * unit / ranks;
  }
  void barrier() {
    std::vector<int64_t> v{0};
    if (ranks > 1)
      transport->sumOverProcesses(v);
  }
  /// The largest of the processes' `seconds` (to a picosecond).
  double max(double seconds) {
    if (ranks == 1)
      return seconds;
    std::vector<int64_t> v(ranks, 0);
    v[rank] = int64_t(seconds * 1e12);
    transport->sumOverProcesses(v);
    return double(*std::max_element(v.begin(), v.end())) * 1e-12;
  }
  /// timeKernel's rounds lined up across the processes (null for one).
  const ProcessRounds *getProcessRounds() {
    if (ranks == 1)
      return nullptr;
    if (!rounds.barrier)
      rounds = {[this] { barrier(); },
                [this](double seconds) { return max(seconds); }};
    return &rounds;
  }

private:
  ProcessRounds rounds;
};

/// The calibration graph, its kernels compiled, and each op's work points.
struct Calibration {
  std::unique_ptr<graph::Graph> graph;
  graph::SpecLibrary specs;
  std::unique_ptr<planner::PlanningProblem> problem;
  codegen::GraphKernels emitted;
  std::unique_ptr<codegen::KernelLibrary> library;
};

/// Reads and compiles the graph in `file`, or the calibration graph.
bool prepare(DiagnosticEngine &diags, Calibration &c, bool root,
             StringRef file) {
  llvm::SourceMgr &sm = diags.getSourceMgr();
  if (!file.empty()) {
    c.graph = graph::readGraphFile(file, diags);
  } else {
    unsigned id = sm.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(getCalibrationGraph(quick),
                                             "calibration-graph.json"),
        llvm::SMLoc());
    c.graph = graph::readGraph(id, diags);
  }
  if (!c.graph ||
      !c.specs.loadFor(*c.graph, TOFU_SPECS_DIR, {}, diags) ||
      !graph::verifyGraph(*c.graph, c.specs, diags))
    return false;
  c.problem = planner::PlanningProblem::build(*c.graph, c.specs, diags);
  if (!c.problem)
    return false;
  auto emitted = codegen::emitGraphKernels(*c.graph, c.specs);
  if (!emitted) {
    error() << llvm::toString(emitted.takeError()) << "\n";
    return false;
  }
  c.emitted = std::move(*emitted);
  codegen::KernelCompiler::Options options;
  options.cacheDir = kernelCache;
  codegen::KernelCompiler compiler(options);
  if (root)
    llvm::errs() << "tofu-calibrate: compiling " << c.emitted.kernels.size()
                 << " kernels...\n";
  auto library = compiler.compile(c.emitted.source);
  if (!library) {
    error() << llvm::toString(library.takeError()) << "\n";
    return false;
  }
  c.library = std::move(*library);
  return true;
}

/// Whether every tensor of op `i` is f32 (the timed calls' element type).
bool isF32(const graph::Graph &g, unsigned i) {
  bool f32 = g.getTensor(g.getOp(i).outputs[0].index).dtype == DType::F32;
  for (const graph::TensorRef &t : g.getOp(i).inputs)
    f32 &= g.getTensor(t.index).dtype == DType::F32;
  return f32;
}

/// Op `i`'s call over its whole tensors and iteration box.
KernelShape getCallShape(const graph::Graph &g, unsigned i,
                         const codegen::GeneratedKernel &kernel) {
  KernelShape shape;
  for (const graph::TensorRef &t : g.getOp(i).inputs) {
    const Shape &s = g.getTensor(t.index).shape;
    shape.inputs.emplace_back(s.begin(), s.end());
  }
  const Shape &out = g.getTensor(g.getOp(i).outputs[0].index).shape;
  shape.output.assign(out.begin(), out.end());
  shape.varExtents = kernel.varExtents;
  return shape;
}

/// Sorts samples by points; of two calls of the same size, keeps the
/// faster.
void sortSamples(std::vector<planner::Machine::Sample> &samples) {
  llvm::sort(samples, [](const planner::Machine::Sample &a,
                         const planner::Machine::Sample &b) {
    return a.points < b.points ||
           (a.points == b.points && a.seconds < b.seconds);
  });
  samples.erase(std::unique(samples.begin(), samples.end(),
                            [](const auto &a, const auto &b) {
                              return a.points == b.points;
                            }),
                samples.end());
}

/// Times every op of the calibration graph into `machine.kernels`.
bool timeKernels(Calibration &c, Job &job, planner::Machine &machine,
                 bool root, const planner::Machine *predictor) {
  double measuredTotal = 0, predictedTotal = 0;
  const graph::Graph &g = *c.graph;
  SmallVector<analysis::Range, 8> box;
  for (unsigned i = 0, e = g.getNumOps(); i != e; ++i) {
    int k = c.emitted.opKernel[i];
    runtime::KernelFn fn = c.library->getKernel(i);
    if (k < 0 || !fn) {
      error() << "op '" << g.getOp(i).name << "' has no kernel: "
              << c.emitted.notes[i] << "\n";
      return false;
    }
    const codegen::GeneratedKernel &kernel = c.emitted.kernels[k];
    if (!timeGraph.empty() && !isF32(g, i))
      continue;
    KernelShape shape = getCallShape(g, i, kernel);
    const planner::ProblemOp &op = c.problem->getOp(i);
    planner::getOpBox(op, {}, {}, {}, box);
    planner::WorkModel work(op);
    double points = work.getPoints(box);
    // Elements read and written: the GEMM kinds' speed depends on the
    // shape, which the estimate keys by intensity (points / elements).
    bool conv = kernel.kind == codegen::KernelKind::Convolution;
    double elements = conv || kernel.kind == codegen::KernelKind::Gemm
                          ? work.getGemmElements(box, conv)
                          : 0;
    job.barrier();
    double seconds = timeKernel(fn, shape, job.localThreads(),
                                quick ? 0.002 : 0.05, job.getProcessRounds());
    const char *kind = codegen::getKernelKindName(kernel.kind);
    if (root)
      llvm::errs() << llvm::format("  %-12s %-20s %12.4g points %12.4g s",
                                   kind, g.getOp(i).type.c_str(), points,
                                   seconds);
    if (root && predictor) {
      // --time-graph with --machine: the estimate's time for this call.
      double predicted = predictor->getOpSeconds(g.getOp(i).type, kind,
                                                 points, elements);
      llvm::errs() << llvm::format(" predicted %12.4g s", predicted);
      measuredTotal += seconds;
      predictedTotal += predicted;
    }
    if (root)
      llvm::errs() << "\n";
    auto &samples = machine.kernels[kind];
    samples.push_back({points, seconds, elements});
  }
  if (root && predictor)
    llvm::errs() << llvm::format(
        "tofu-calibrate: all timed ops %.4g s measured, %.4g s predicted "
        "(%.2f)\n",
        measuredTotal, predictedTotal, predictedTotal / measuredTotal);
  for (auto &[kind, samples] : machine.kernels)
    sortSamples(samples);
  for (const char *kind : planner::MachineKernelKinds)
    if (!machine.kernels.count(kind) && timeGraph.empty()) {
      error() << "the calibration graph has no " << kind
              << " kernel (the kernel generator routes its ops otherwise)\n";
      return false;
    }
  return true;
}

/// How many ops of one type --graph times.
constexpr unsigned OpsPerType = 3;

/// --graph: times up to OpsPerType ops of each f32 op type of `c.graph`
/// (the smallest, the largest and the middle one by work points), each at
/// its whole iteration box and at a K-th of it (its first variable of at
/// least K values cut to a K-th), into `machine.ops`.
bool timeGraphOps(Calibration &c, Job &job, planner::Machine &machine,
                  bool root) {
  const graph::Graph &g = *c.graph;
  struct Instance {
    double points;
    unsigned op;
  };
  std::map<std::string, std::vector<Instance>> byType;
  SmallVector<analysis::Range, 8> box;
  for (unsigned i = 0, e = g.getNumOps(); i != e; ++i) {
    if (c.emitted.opKernel[i] < 0 || !c.library->getKernel(i) || !isF32(g, i))
      continue;
    planner::getOpBox(c.problem->getOp(i), {}, {}, {}, box);
    double points = planner::WorkModel(c.problem->getOp(i)).getPoints(box);
    if (points > 0)
      byType[g.getOp(i).type].push_back({points, i});
  }
  for (auto &[type, instances] : byType) {
    llvm::sort(instances, [](const Instance &a, const Instance &b) {
      return a.points < b.points;
    });
    std::vector<unsigned> picked;
    size_t n = instances.size();
    for (size_t j : {size_t(0), n / 2, n - 1})
      if (!llvm::is_contained(picked, instances[j].op))
        picked.push_back(instances[j].op);
    std::vector<planner::Machine::Sample> &samples = machine.ops[type];
    for (unsigned i : picked) {
      const codegen::GeneratedKernel &kernel =
          c.emitted.kernels[c.emitted.opKernel[i]];
      const planner::ProblemOp &op = c.problem->getOp(i);
      planner::getOpBox(op, {}, {}, {}, box);
      KernelShape shape = getCallShape(g, i, kernel);
      bool sameBox = shape.varExtents.size() == box.size();
      for (size_t v = 0; sameBox && v != box.size(); ++v)
        sameBox = box[v].lo == 0 && box[v].size() == shape.varExtents[v];
      if (!sameBox) {
        error() << "op '" << g.getOp(i).name
                << "': the kernel's iteration box is not the planner's\n";
        return false;
      }
      planner::WorkModel work(op);
      bool conv = kernel.kind == codegen::KernelKind::Convolution;
      bool gemm = conv || kernel.kind == codegen::KernelKind::Gemm;
      // The whole box, then a K-th of it.
      for (unsigned part : {1u, job.workers}) {
        if (part > 1) {
          auto v = llvm::find_if(box, [&](const analysis::Range &r) {
            return r.size() >= int64_t(part);
          });
          if (v == box.end())
            break;
          v->hi = v->lo + (v->size() + part - 1) / part;
          shape.varExtents[v - box.begin()] = v->size();
        }
        double points = work.getPoints(box);
        double elements = gemm ? work.getGemmElements(box, conv) : 0;
        job.barrier();
        double seconds =
            timeKernel(c.library->getKernel(i), shape, job.localThreads(),
                       quick ? 0.002 : 0.02, job.getProcessRounds());
        if (root)
          llvm::errs() << llvm::format("  %-12s %-28s %12.4g points %12.4g s\n",
                                       codegen::getKernelKindName(kernel.kind),
                                       type.c_str(), points, seconds);
        samples.push_back({points, seconds, elements});
      }
    }
    sortSamples(samples);
  }
  return true;
}

/// Measures the transport's latency and bandwidth between workers 0 and 1.
void timeTransport(Job &job, planner::Machine &machine) {
  unsigned trips = quick ? 20 : 200;
  // Messages of 1 MiB, the size of a step's larger messages: through Open
  // MPI's shared memory, 16 MiB messages moved at 0.44 GB/s and 1 MiB ones
  // at 3-15 GB/s on the development machine (docs/StepTime.md).
  size_t small = 8, large = size_t(1) << 20;
  unsigned largeTrips = quick ? 3 : 20;
  double smallTrip = 0, largeTrip = 0;
  if (job.ranks == 1) {
    auto run = [&](bool first, size_t bytes, unsigned n, uint64_t tag) {
      return timeRoundTrip(*job.transport, first ? 0 : 1, first ? 1 : 0, first,
                           bytes, n, tag);
    };
    std::thread peer([&] {
      run(false, small, trips, 0);
      run(false, large, largeTrips, 1 << 20);
    });
    smallTrip = run(true, small, trips, 0);
    largeTrip = run(true, large, largeTrips, 1 << 20);
    peer.join();
  } else if (job.rank < 2) {
    bool first = job.rank == 0;
    smallTrip = timeRoundTrip(*job.transport, job.rank, 1 - job.rank, first,
                              small, trips, 0);
    largeTrip = timeRoundTrip(*job.transport, job.rank, 1 - job.rank, first,
                              large, largeTrips, 1 << 20);
  }
  machine.transportLatency = smallTrip / 2;
  // A large message's own time is its one-way time less the latency; where
  // the latency's noise hides it (the large trip under 1.5 small ones), the
  // whole one-way time, which bounds the bandwidth from below.
  double oneWay = largeTrip / 2;
  if (largeTrip > 1.5 * smallTrip)
    oneWay -= machine.transportLatency;
  machine.transportBandwidth = double(large) / std::max(oneWay, 1e-9);
}

int run(DiagnosticEngine &diags) {
  Job job;
  if (transportKind == TransportKind::Mpi) {
#ifdef TOFU_HAVE_MPI
    job.session = std::make_unique<runtime::MPISession>();
    job.rank = job.session->getRank();
    job.ranks = job.session->getSize();
#else
    error() << "--transport mpi: this tofu-calibrate was built without MPI "
               "(install libopenmpi-dev and reconfigure)\n";
    return BadUsage;
#endif
  }
  bool root = job.rank == 0;
  unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  job.workers = workersFlag.getNumOccurrences() ? unsigned(workersFlag.value)
                : job.ranks > 1                  ? job.ranks
                                                 : hardware;
  if (transportKind == TransportKind::Mpi && job.workers != job.ranks) {
    if (root)
      error() << "--transport mpi: --workers " << job.workers << " but MPI runs "
              << job.ranks << " process" << (job.ranks == 1 ? "" : "es")
              << "; run mpirun -np " << job.workers
              << " tofu-calibrate --transport mpi ...\n";
    return BadUsage;
  }
  std::chrono::milliseconds timeout(60000);
  try {
#ifdef TOFU_HAVE_MPI
    if (job.ranks > 1 || transportKind == TransportKind::Mpi)
      job.transport = runtime::createMPITransport(timeout);
#endif
    if (!job.transport)
      job.transport =
          runtime::createThreadTransport(std::max(job.workers, 2u), timeout);
    tofu::CpuTimeScale::enabled = cpuTime;
    tofu::CpuTimeScale::factor =
        std::max(1.0, double(job.workers) / double(hardware));
    Calibration c;
    if (!prepare(diags, c, root, timeGraph))
      return Failure;
    planner::Machine machine;
    machine.transport =
        transportKind == TransportKind::Mpi ? "mpi" : "threads";
    machine.workers = job.workers;
    machine.hardwareThreads = hardware;
    if (root)
      llvm::errs() << "tofu-calibrate: timing kernels, " << job.workers
                   << " worker" << (job.workers == 1 ? "" : "s")
                   << " at once:\n";
    std::unique_ptr<planner::Machine> predictor;
    if (!predictMachine.empty()) {
      predictor = planner::readMachineFile(predictMachine, diags);
      if (!predictor)
        return Failure;
    }
    if (!timeKernels(c, job, machine, root, predictor.get()))
      return Failure;
    if (!timeGraph.empty())
      return Success;
    for (const std::string &file : graphFiles) {
      Calibration ops;
      if (!prepare(diags, ops, root, file))
        return Failure;
      if (root)
        llvm::errs() << "tofu-calibrate: timing the op types of " << file
                     << ":\n";
      if (!timeGraphOps(ops, job, machine, root))
        return Failure;
    }
    job.barrier();
    machine.memoryBandwidth =
        job.mean(timeMemoryCopy(job.localThreads()), /*bytes/s*/ 1);
    job.barrier();
    timeTransport(job, machine);
    job.barrier();
    if (!root)
      return Success;
    llvm::errs() << llvm::format(
        "tofu-calibrate: memory copy %.3g GB/s, transport %.3g GB/s and "
        "%.3g us per message\n",
        machine.memoryBandwidth / 1e9, machine.transportBandwidth / 1e9,
        machine.transportLatency * 1e6);
    std::error_code ec;
    llvm::ToolOutputFile out(outputFile, ec, llvm::sys::fs::OF_Text);
    if (ec) {
      error() << "cannot write '" << outputFile << "': " << ec.message()
              << "\n";
      return Failure;
    }
    planner::writeMachineJSON(out.os(), machine);
    out.keep();
  } catch (const runtime::RuntimeError &e) {
    error() << e.what() << "\n";
    return Failure;
  }
  return Success;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  if (!cli::parseToolCommandLine(
          argc, argv, {&category},
          "tofu-calibrate: measure this machine for tofu-plan --machine "
          "(docs/StepTime.md).\n\n"
          "  tofu-calibrate [--workers K] -o MACHINE.json\n"
          "  mpirun -np K tofu-calibrate --transport mpi -o MACHINE.json\n\n"
          "Exit status: 0 success, 1 failure, 2 bad usage.\n"))
    return BadUsage;
  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags(srcMgr);
  return run(diags);
}
