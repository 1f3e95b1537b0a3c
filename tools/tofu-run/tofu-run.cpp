//===- tofu-run.cpp - Execute a plan on K workers -------------------------===//
//
// tofu-run lowers a plan (tofu-plan JSON) of a training graph to the
// runtime's ExecutablePlan and runs training steps on K workers with the
// graph's generated kernels (lib/CodeGen, compiled once and cached; the TDL
// evaluator for ops without one, or for all with --kernels=evaluator),
// counting the bytes the transport moves against the plan's comm_bytes.
// With --check it also runs the unpartitioned graph on one worker with the
// same inputs and kernels (or reads that run's values from --reference) and
// compares every graph output and updated parameter. With --transport mpi
// every MPI rank runs this tool and one worker; rank 0 prints, checks and
// reports. --backend cuda or cuda-host runs the device executor
// (Backend.h), also one worker per rank under --transport mpi. Exit status: 0 success, 1 bad input or a failed run, 2 bad
// usage, 3 --check found errors beyond tolerance.
// docs/Runtime.md describes the runtime and this tool.
//
//===----------------------------------------------------------------------===//

#include "Backend.h"
#include "GeneratedKernels.h"
#include "Inputs.h"
#include "Processes.h"
#include "Reference.h"
#include "ReferenceKernels.h"
#include "Tolerance.h"
#include "Trace.h"

#include "tofu/Graph/ModelFile.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Graph/Verifier.h"
#include "tofu/Lowering/PlanLowering.h"
#include "tofu/Plan/Layouts.h"
#include "tofu/Plan/PlanJSON.h"
#include "tofu/Planner/CostModel.h"
#include "tofu/Planner/PlanVerifier.h"
#include "tofu/Planner/Recompute.h"
#include "tofu/Runtime/CudaDevice.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/MemoryCheck.h"
#include "tofu/Support/CommandLine.h"
#include "tofu/Support/Diagnostics.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/WithColor.h"
#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/raw_ostream.h"

#include <fmt/format.h>

#include <chrono>
#include <climits>
#include <cmath>
#include <new>
#include <thread>

using namespace tofu;
namespace cl = llvm::cl;

#ifndef TOFU_SPECS_DIR
#define TOFU_SPECS_DIR ""
#endif

namespace {

enum ExitStatus { Success = 0, BadInput = 1, BadUsage = 2, CheckFailed = 3 };
enum class TransportKind { Threads, Mpi };
enum class KernelKind { Generated, Evaluator };

/// --inject-failure W:I: worker W fails at op I.
struct FailurePoint {
  unsigned worker = 0, op = 0;
};
struct FailurePointSpec {
  using Type = FailurePoint;
  static constexpr const char *valueName = "W:I";
  static std::string parse(StringRef text, FailurePoint &value) {
    auto [w, i] = text.split(':');
    if (w.getAsInteger(10, value.worker) || i.getAsInteger(10, value.op))
      return "expects W:I, a worker and an op index (non-negative "
             "integers), got '" +
             text.str() + "'";
    return "";
  }
};

/// --inject-start-delay's worker and seconds.
struct StartDelay {
  unsigned worker = 0;
  double seconds = 0;
};
struct StartDelaySpec {
  using Type = StartDelay;
  static constexpr const char *valueName = "W:S";
  static std::string parse(StringRef text, StartDelay &value) {
    auto [w, s] = text.split(':');
    if (w.getAsInteger(10, value.worker) || s.getAsDouble(value.seconds) ||
        !(value.seconds >= 0))
      return "expects W:S, a worker (a non-negative integer) and seconds "
             "(a non-negative number), got '" +
             text.str() + "'";
    return "";
  }
};

cl::OptionCategory category("tofu-run options");
cl::opt<std::string> planFile(cl::Positional, cl::Required,
                              cl::desc("<PLAN.json>"), cl::cat(category));
cl::opt<std::string> graphFile(
    "graph", cl::desc("The plan's graph (default: the plan's \"graph\" field)"),
    cl::value_desc("GRAPH.json"), cl::cat(category));
cl::list<std::string> specFiles(
    "spec", cl::desc("Also use the operators of FILE.tdl (repeatable)"),
    cl::value_desc("FILE.tdl"), cl::cat(category));
cl::opt<Backend> backend(
    "backend", cl::desc("Where kernels run"), cl::init(Backend::Cpu),
    cl::values(clEnumValN(Backend::Cpu, "cpu", "CPU kernels (see --kernels)"),
               clEnumValN(Backend::Cuda, "cuda",
                          "the device executor on CUDA GPUs"),
               clEnumValN(Backend::CudaHost, "cuda-host",
                          "the device executor on its host emulation")),
    cl::cat(category));
cl::opt<TransportKind> transportKind(
    "transport", cl::desc("How workers exchange bytes"),
    cl::init(TransportKind::Threads),
    cl::values(clEnumValN(TransportKind::Threads, "threads",
                          "K threads of this process"),
               clEnumValN(TransportKind::Mpi, "mpi",
                          "one worker per MPI rank: mpirun -np K tofu-run "
                          "... (any backend; cuda: each rank on GPU "
                          "local rank mod #GPUs, NCCL between ranks)")),
    cl::cat(category));
cl::opt<KernelKind> kernelKind(
    "kernels", cl::desc("Which CPU kernels run the ops"),
    cl::init(KernelKind::Generated),
    cl::values(clEnumValN(KernelKind::Generated, "generated",
                          "C++ generated from the TDL operators, compiled "
                          "with $CXX (default c++) -O3 and cached; the "
                          "evaluator's for an op without one"),
               clEnumValN(KernelKind::Evaluator, "evaluator",
                          "the TDL evaluator (slow reference)")),
    cl::cat(category));
cl::opt<std::string> kernelCache(
    "kernel-cache",
    cl::desc("Where compiled kernels are kept (default $TOFU_KERNEL_CACHE, "
             "else tofu-kernels-UID in the temporary directory)"),
    cl::value_desc("DIR"), cl::cat(category));
cl::list<std::string> evaluatorOps(
    "evaluator-op",
    cl::desc("With --kernels=generated, run op NAME with the evaluator's "
             "kernel (repeatable; to find a wrong generated kernel)"),
    cl::value_desc("NAME"), cl::cat(category));
cl::opt<cli::Flag<cli::UnsignedInRange<1, UINT_MAX>>> threadsPerWorker(
    "threads-per-worker",
    cl::desc("Threads of each worker's oneDNN and OpenBLAS calls (default: "
             "the libraries' own, OMP_NUM_THREADS and OPENBLAS_NUM_THREADS, "
             "else every core)"),
    cl::value_desc("N"), cl::cat(category));
cl::opt<bool> useOneDnn(
    "onednn",
    cl::desc("With --kernels=generated, compute convolutions, batch norms "
             "and poolings whose box is one library problem with oneDNN, "
             "where tofu-run was built with it (default true)"),
    cl::init(true), cl::cat(category));
cl::opt<bool> indexedPooling(
    "indexed-pooling",
    cl::desc("With --kernels=generated, compute max pooling's indices and "
             "gradient with the runtime's loops instead of the generated "
             "kernels (docs/Runtime.md, \"Kernels\"; default true)"),
    cl::init(true), cl::cat(category));
cl::opt<bool> batchNormStats(
    "batch-norm-stats",
    cl::desc("With --kernels=generated, compute a training batch norm's "
             "inverse deviation and input gradient with one-pass sums (the "
             "runtime's loops) instead of the generated kernels "
             "(docs/Runtime.md, \"Kernels\"; default true)"),
    cl::init(true), cl::cat(category));
cl::opt<bool> batchNormSums(
    "batch-norm-sums",
    cl::desc("With --batch-norm-stats, compute a training batch norm's "
             "inverse deviation from its mean's sums and its weight and bias "
             "gradients from the input gradient's per-channel sums instead of "
             "summing again (docs/Runtime.md, \"Kernels\"; default true)"),
    cl::init(true), cl::cat(category));
cl::opt<bool> fuse(
    "fuse",
    cl::desc("With --kernels=generated, run chains of element-wise ops "
             "(up to 8) as one loop where the plan allows "
             "(docs/CodeGen.md, \"Fusion\"; default true)"),
    cl::init(true), cl::cat(category));
cl::opt<bool> fusedKernels(
    "fused-kernels",
    cl::desc("With --fuse, run a fused chain whose kernels are all dense "
             "runs as one generated kernel (each op's value computed per "
             "element in the last op's loop) instead of the kernels in "
             "blocks (docs/CodeGen.md, \"Fusion\"; default true)"),
    cl::init(true), cl::cat(category));
cl::opt<bool> fuseEpilogues(
    "fuse-epilogues",
    cl::desc("With --fused-kernels, run a GEMM (mm, bmm) and the "
             "element-wise ops after it, each reading the one before's value "
             "alone and X + c * that value, c constant (the SGD update W - "
             "lr * grad), as one prefilled GEMM, at the GEMM where they are "
             "not consecutive: "
             "X stored, then the GEMM adds alpha = product of the c times "
             "the sum (beta = 1); the result differs from the unfused ops' "
             "by f32 rounding (docs/CodeGen.md, \"Fusion\"; CPU only; "
             "default true: the bundled MLP's step at K = 1 took 10-13% "
             "less time; false computes the unfused ops' values bit for "
             "bit)"),
    cl::init(true), cl::cat(category));
cl::opt<bool> inPlaceUpdates(
    "in-place-updates",
    cl::desc("Write parameters' and optimizer state's next values over "
             "their current ones where the layouts agree and the old value "
             "is dead (docs/Runtime.md, \"Memory\"; default true; false "
             "gives every next value its own buffer and a new one for the "
             "next step, which the plan's peak does not predict)"),
    cl::init(true), cl::cat(category));
cl::opt<bool> trimPools(
    "trim-pools",
    cl::desc("Free the memory of buffers a worker's pool keeps for reuse "
             "so that what it holds never exceeds its peak "
             "(held_bytes_per_worker = peak_bytes_per_worker; "
             "docs/Runtime.md, \"Memory\"; default false: a trimmed "
             "buffer's memory is obtained again in every step, which "
             "costs page faults or device allocations)"),
    cl::init(false), cl::cat(category));
cl::opt<bool> directUpdates(
    "direct-updates",
    cl::desc("Compute a next value written in place straight into the "
             "buffer of what it replaces where its op reads that only "
             "element for element (docs/Runtime.md, \"Memory\"; default "
             "true; false computes it aside and copies it, which the "
             "plan's peak does not predict)"),
    cl::init(true), cl::cat(category));
cl::opt<cli::Flag<cli::UnsignedInRange<1, UINT_MAX>>>
    numSteps("steps", cl::desc("Training steps to run (at least 1)"),
             cl::value_desc("N"), cl::init(1u), cl::cat(category));
cl::opt<uint64_t> seed("seed", cl::desc("Seed of the random inputs"),
                       cl::init(0), cl::cat(category));
cl::list<std::string> inputFiles(
    "input", cl::desc("The value of graph input NAME (repeatable)"),
    cl::value_desc("NAME=FILE.npy"), cl::cat(category));
cl::opt<bool> check("check",
                    cl::desc("Compare with the unpartitioned graph on one "
                             "worker"),
                    cl::cat(category));
cl::opt<std::string> referenceFile(
    "reference",
    cl::desc("--check against the unpartitioned run saved in FILE by "
             "--save-reference (same seed, steps and inputs; any kernels) "
             "instead of running it"),
    cl::value_desc("FILE"), cl::cat(category));
cl::opt<std::string> saveReferenceFile(
    "save-reference",
    cl::desc("Save the unpartitioned run's values (implies running it) to "
             "FILE for --reference"),
    cl::value_desc("FILE"), cl::cat(category));
cl::opt<cli::Flag<cli::NonNegativeNumber>> tolerance(
    "tolerance",
    cl::desc("--check passes when |a - b| <= T * (1 + |b|) everywhere "
             "(default 1e-4; 3e-2 for a graph with bf16 tensors, 4e-3 with "
             "f16 ones)"),
    cl::value_desc("T"), cl::init(1e-4), cl::cat(category));
cl::opt<std::string> reportFile("report", cl::desc("Write a JSON report"),
                                cl::value_desc("FILE.json"), cl::cat(category));
cl::opt<std::string> kernelTimesFile(
    "kernel-times",
    cl::desc("With --backend cuda: time every op's kernel with CUDA events "
             "and write each op's device seconds in its fastest step "
             "(JSON, docs/DeviceExecutor.md)"),
    cl::value_desc("FILE.json"), cl::cat(category));
cl::opt<cli::Flag<cli::PositiveNumber>> timeoutSeconds(
    "timeout", cl::desc("Longest wait for a message, in seconds"),
    cl::value_desc("SECONDS"), cl::init(60.0), cl::cat(category));
cl::opt<cli::Flag<cli::PositiveNumber>> startTimeoutSeconds(
    "start-timeout",
    cl::desc("Longest wait for the other processes at start-up (their "
             "plans loaded, kernels compiled), in seconds from when this one "
             "is ready"),
    cl::value_desc("SECONDS"), cl::init(600.0), cl::cat(category));
cl::opt<cli::Flag<cli::UnsignedInRange<0, 1024>>> prefetchDepth(
    "prefetch-depth",
    cl::desc("Post each worker's receives this many ops ahead, before it "
             "computes (0: none; docs/Runtime.md, \"Overlap\")"),
    cl::value_desc("N"), cl::init(1u), cl::cat(category));
cl::opt<bool> sendsFirst(
    "sends-first",
    cl::desc("Let a worker take a phase's sends before its receives where "
             "its pool's peak stays the same (docs/Runtime.md, \"Overlap\"; "
             "default true; false keeps the device executor's order)"),
    cl::init(true), cl::cat(category));
cl::opt<std::string> traceFile(
    "trace",
    cl::desc("Write the spans (kernels, receive waits, sends) of the step "
             "step_seconds timed, per worker (JSON; FILE.<rank> per MPI "
             "rank; utils/wait-trace.py reads them)"),
    cl::value_desc("FILE.json"), cl::cat(category));
cl::opt<cli::Flag<FailurePointSpec>> injectFailure(
    "inject-failure", cl::desc("Testing: worker W fails at op I"),
    cl::value_desc("W:I"), cl::Hidden, cl::cat(category));

cl::opt<cli::Flag<cli::ByteSize>> availableMemory(
    "available-memory",
    cl::desc("Testing: the bytes of memory the memory check takes as "
             "available (instead of MemAvailable, or the GPU's free memory)"),
    cl::value_desc("BYTES[K|M|G]"), cl::Hidden, cl::cat(category));

cl::opt<cli::Flag<StartDelaySpec>> injectStartDelay(
    "inject-start-delay",
    cl::desc("Testing: the process of worker W sleeps S seconds after "
             "loading its kernels, before the processes agree to start"),
    cl::value_desc("W:S"), cl::Hidden, cl::cat(category));

/// The processes of this run; only the first prints the summary.
std::unique_ptr<Processes> processes;

bool isRootProcess() { return !processes || processes->isRoot(); }

/// An error every process finds alike (bad input): the first reports it.
llvm::raw_ostream &error() {
  return llvm::WithColor::error(isRootProcess() ? llvm::errs() : llvm::nulls(),
                                "tofu-run");
}

/// Everything a run needs, loaded. For a plan that recomputes
/// (tofu/Planner/Recompute.h), `graph`, `problem` and `plan` are the
/// rewritten graph and its plan, which the run executes; the rewrite keeps
/// every tensor of the graph at its index.
struct Loaded {
  std::unique_ptr<graph::Graph> graph;
  graph::SpecLibrary specs;
  std::unique_ptr<planner::PlanningProblem> problem;
  plan::Plan plan;
};

/// Reads the plan and the graph it names or --graph gives.
bool load(DiagnosticEngine &diags, Loaded &out) {
  auto buffer = llvm::MemoryBuffer::getFile(planFile);
  if (!buffer) {
    error() << "cannot read '" << planFile
            << "': " << buffer.getError().message() << "\n";
    return false;
  }
  auto p = plan::readPlanJSON((*buffer)->getBuffer());
  if (!p) {
    error() << planFile << ": " << llvm::toString(p.takeError()) << "\n";
    return false;
  }
  out.plan = std::move(*p);
  std::string path = graphFile;
  if (path.empty()) {
    auto json = llvm::json::parse((*buffer)->getBuffer());
    if (json) {
      if (const auto *object = json->getAsObject())
        if (auto named = object->getString("graph")) {
          llvm::SmallString<256> resolved(llvm::sys::path::parent_path(planFile));
          llvm::sys::path::append(resolved, *named);
          path = llvm::sys::path::is_absolute(*named) ? named->str()
                                                       : resolved.str().str();
        }
    } else {
      llvm::consumeError(json.takeError());
    }
  }
  if (path.empty()) {
    error() << planFile << " names no graph: pass --graph GRAPH.json\n";
    return false;
  }
  out.graph = graph::readModelFile(path, diags);
  if (!out.graph ||
      !out.specs.loadFor(*out.graph, TOFU_SPECS_DIR, specFiles, diags) ||
      !graph::verifyGraph(*out.graph, out.specs, diags))
    return false;
  out.problem = planner::PlanningProblem::build(*out.graph, out.specs, diags);
  if (!out.problem)
    return false;
  // A plan made for another graph is one error; the checks below assume
  // the plan matches.
  if (llvm::Error err = planner::checkPlanMatchesGraph(*out.graph, out.plan)) {
    error() << "the plan does not match the graph: "
            << llvm::toString(std::move(err)) << "\n";
    return false;
  }
  // A compact plan's layouts, checked against the graph's shapes; regions
  // are derived from them where read (docs/PlanFormat.md).
  if (llvm::Error err = plan::checkLayouts(
          out.plan, out.problem->getTensors().size(),
          [&](unsigned t) { return out.problem->getShape(t); })) {
    error() << planFile << ": " << llvm::toString(std::move(err)) << "\n";
    return false;
  }
  if (!out.plan.recompute.empty()) {
    auto prepared =
        planner::prepareRecomputedPlan(*out.graph, out.specs, out.plan);
    if (!prepared) {
      error() << planFile << ": " << llvm::toString(prepared.takeError())
              << "\n";
      return false;
    }
    out.problem = std::move(prepared->problem);
    out.graph = std::move(prepared->rewritten.graph);
    out.plan = std::move(prepared->plan);
  }
  // A plan whose numbers are not the cost model's, recomputed from the plan
  // and the graph, is refused (docs/Runtime.md): its comm_bytes and peaks
  // are what this run is measured against.
  planner::CostReport costs;
  if (!planner::verifyPlan(*out.problem, out.plan,
                           isRootProcess() ? llvm::errs() : llvm::nulls(),
                           costs, "tofu-run", /*exactPeaks=*/true)) {
    llvm::WithColor::note(isRootProcess() ? llvm::errs() : llvm::nulls(),
                          "tofu-run")
        << "refusing " << planFile
            << ": a plan's numbers must be the cost model's for its graph, "
               "recomputed from the plan and "
            << path << "\n";
    return false;
  }
  return true;
}

/// How long a process waits for the others at start-up (--start-timeout).
std::chrono::milliseconds getStartAllowance() {
  return std::chrono::milliseconds(
      int64_t(std::min(startTimeoutSeconds.value, 1e9) * 1000));
}

/// Whether this process's part of the plan fits the memory available
/// (runtime/MemoryCheck.h): its workers' peaks (every worker with threads,
/// its own under MPI), the graph inputs it draws and, with --check and no
/// --reference, the unpartitioned run's peak (on one worker, while the
/// partitioned run's pools are still held), on the host; for --backend
/// cuda the workers' peaks on the GPU. "" if it does (or the memory is
/// unknown).
std::string checkAvailableMemory(const Loaded &loaded) {
  const plan::Plan &p = loaded.plan;
  std::vector<int64_t> peaks;
  bool oneWorker = processes->getSize() > 1;
  for (unsigned w = 0; w != p.workers; ++w)
    if (!oneWorker || w == processes->getRank())
      peaks.push_back(w < p.peakBytesPerWorker.size() ? p.peakBytesPerWorker[w]
                                                      : 0);
  const graph::Graph &g = *loaded.graph;
  int64_t inputs = 0;
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t)
    if (g.getProducer(t) < 0) {
      int64_t bytes = g.getTensor(t).getNumBytes();
      inputs = std::min(inputs, INT64_MAX - bytes) + bytes;
    }
  std::string what = "the graph's inputs";
  if (check && referenceFile.empty()) {
    plan::Plan whole = lowering::makeSingleWorkerPlan(*loaded.problem);
    planner::recordPeaks(*loaded.problem, whole);
    int64_t peak = std::max<int64_t>(whole.peakBytesPerWorker[0], 0);
    inputs = std::min(inputs, INT64_MAX - peak) + peak;
    what += " and --check's unpartitioned run";
  }
  auto available = [&](std::optional<int64_t> measured) {
    return availableMemory.getNumOccurrences()
               ? std::optional<int64_t>(availableMemory.value)
               : measured;
  };
  bool onDevice = backend == Backend::Cuda;
  std::string why;
  if (onDevice) {
    int64_t free = getDeviceFreeMemory(backend, processes->getLocalRank(), why);
    if (auto bytes = available(free >= 0 ? std::optional<int64_t>(free)
                                         : std::nullopt))
      return runtime::checkMemory({peaks, 0, ""}, *bytes,
                                  "the GPU's free memory");
    return "";
  }
  if (auto bytes = available(runtime::getAvailableHostMemory()))
    return runtime::checkMemory({peaks, inputs, what}, *bytes,
                                availableMemory.getNumOccurrences()
                                    ? "--available-memory"
                                    : "MemAvailable of /proc/meminfo");
  return "";
}

/// The graph inputs' values: --input files, then seeded random data.
bool makeInputs(const graph::Graph &g,
                std::vector<llvm::Optional<runtime::HostTensor>> &values) {
  values.assign(g.getNumTensors(), llvm::None);
  for (const std::string &spec : inputFiles) {
    auto [name, path] = StringRef(spec).split('=');
    int t = g.lookupTensor(name);
    if (path.empty() || t < 0 || g.getProducer(t) >= 0) {
      error() << "--input " << spec
              << ": expected NAME=FILE.npy with NAME a graph input\n";
      return false;
    }
    auto value = readInputFile(g, t, path);
    if (!value) {
      error() << llvm::toString(value.takeError()) << "\n";
      return false;
    }
    values[t] = std::move(*value);
  }
  std::mt19937_64 rng(seed);
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t)
    if (g.getProducer(t) < 0) {
      // Drawn for every input, so that a constant or an --input file
      // leaves the other inputs' draws as they were.
      runtime::HostTensor random;
      try {
        random = makeRandomInput(g, t, rng);
      } catch (const std::bad_alloc &) {
        error() << "out of memory drawing input '" << g.getTensor(t).name
                << "' (" << g.getTensor(t).getNumBytes() << " bytes)\n";
        return false;
      }
      auto constant = readValueField(g, t);
      if (!constant) {
        error() << llvm::toString(constant.takeError()) << "\n";
        return false;
      }
      if (!values[t])
        values[t] = *constant ? std::move(**constant) : std::move(random);
    }
  return true;
}

/// A lowered plan with its transport and executor.
struct Run {
  runtime::ExecutablePlan plan;
  Engine engine;
  runtime::StepExecutor *executor = nullptr;
  std::vector<double> losses;
  int64_t movedBytes = 0;
  std::vector<int64_t> peaks;
  /// Per worker, the most bytes its pool held (live and kept free buffers).
  std::vector<int64_t> held;
  /// Wall seconds of the fastest step after the first (of the only step
  /// when there is one): the report's step_seconds.
  double stepSeconds = 0;
  /// Per worker, where the time of that step went.
  std::vector<runtime::WorkerTimes> times;
  /// That step's spans of this process's workers, with --trace.
  std::vector<runtime::TraceEvent> trace;
  /// The next values this process's workers computed straight into what
  /// they replace in the last step (StepExecutor::getNumDirectUpdates).
  unsigned directUpdates = 0;
  /// The element-wise chains this process's workers fused in the last
  /// step, and the ops in them.
  unsigned fused = 0, fusedOps = 0;
  /// Per worker, how many workers' pieces its process's schedule holds
  /// (1 under MPI: each rank schedules its own worker only; K with
  /// threads), and that schedule's pieces (countSchedules).
  std::vector<int64_t> scheduledWorkers, scheduledPieces;
  /// This process's start-up: wall seconds lowering the plan (lowerPlan)
  /// and starting the executor (validatePlan, the schedule, the workers).
  double lowerSeconds = 0, startSeconds = 0;
  /// Per worker, over every process: the boxes its process's lowered plan
  /// holds (stored boxes, and each op's iteration, input and output boxes
  /// per worker) and that process's two start-up times in microseconds
  /// (countSchedules).
  std::vector<int64_t> loweredBoxes, lowerMicros, startMicros;
  /// This process's oneDNN calls in the run's steps, if oneDNN ran.
  std::optional<runtime::OneDnnCounts> oneDnn;
  /// This process's max pooling loop calls, if they ran.
  std::optional<IndexedPoolingCounts> indexedPooling;
  /// This process's batch norm loop calls, if they ran.
  std::optional<BatchNormStatsCounts> batchNormStats;
  /// This process's fused chains run as one generated kernel, all steps.
  std::uint64_t fusedKernelCalls = 0;
  /// Of those, a GEMM's with its epilogue (--fuse-epilogues), all steps.
  std::uint64_t epilogueCalls = 0;
};

/// The generated kernels, when --kernels=generated.
GeneratedKernels *generatedKernels = nullptr;

/// Lowers `p` and starts its executor: on this run's processes, or on one
/// thread of this process when `local`.
bool startRun(Loaded &loaded, const plan::Plan &p, Backend where,
              runtime::KernelProvider &kernels,
              const std::vector<llvm::Optional<runtime::HostTensor>> &inputs,
              bool local, Run &run) {
  auto since = [](std::chrono::steady_clock::time_point start) {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() -
                                         start)
        .count();
  };
  auto lowerStart = std::chrono::steady_clock::now();
  // An MPI rank (one worker per process) lowers the other workers'
  // iteration boxes empty: only its own worker's kernels read one.
  bool oneWorker = !local && processes->getSize() > 1;
  auto lowered = lowering::lowerPlan(
      *loaded.problem, p, oneWorker ? int(processes->getRank()) : -1);
  run.lowerSeconds = since(lowerStart);
  if (!lowered) {
    error() << planFile << " does not match the graph: "
            << llvm::toString(lowered.takeError()) << "\n";
    return false;
  }
  run.plan = std::move(*lowered);
  run.plan.inPlaceUpdates = inPlaceUpdates;
  run.plan.directUpdates = directUpdates;
  run.plan.trimPools = trimPools;
  std::chrono::milliseconds timeout(
      int64_t(std::min(timeoutSeconds.value, 1e9) * 1000));
  auto engineStart = std::chrono::steady_clock::now();
  run.engine = createEngine(
      where, run.plan, kernels, *loaded.graph, loaded.specs,
      local ? runtime::createThreadTransport(run.plan.workers, timeout)
            : processes->createTransport(run.plan.workers, timeout),
      local ? 0 : processes->getLocalRank(),
      where == Backend::Cuda && !kernelTimesFile.empty());
  run.executor = run.engine.executor.get();
  run.startSeconds = since(engineStart);
  run.executor->setPrefetchDepth(prefetchDepth.value);
  run.executor->setSendsFirst(sendsFirst);
  if (fuse && generatedKernels) {
    runtime::FusionHints hints = generatedKernels->getFusionHints();
    if (!fuseEpilogues)
      hints.epilogueLength.clear();
    run.executor->setFusion(hints);
  }
  run.executor->setTrace(!local && !traceFile.empty());
  for (unsigned t = 0, e = inputs.size(); t != e; ++t)
    if (inputs[t])
      run.executor->setInput(t, *inputs[t]);
  return true;
}

/// The boxes `plan` holds: every stored box, and per op and worker its
/// input boxes, output box and iteration box (where it has one: not an
/// other worker's under MPI, nor an op's without index variables).
int64_t countBoxes(const runtime::ExecutablePlan &plan) {
  int64_t boxes = 0;
  for (const runtime::TensorInfo &t : plan.tensors)
    for (const std::optional<runtime::Box> &box : t.stored)
      boxes += box.has_value();
  for (const runtime::OpInfo &op : plan.ops)
    for (const runtime::OpShare &share : op.workers)
      boxes += 1 + share.inputs.size() + (share.iteration.getRank() > 0);
  return boxes;
}

/// Fills run.scheduledWorkers, run.scheduledPieces, run.loweredBoxes and
/// the start-up times over every process (each process calls it once,
/// after its executor started).
void countSchedules(Run &run) {
  const runtime::Schedule &schedule = run.executor->getSchedule();
  unsigned k = run.plan.workers;
  int64_t pieces = schedule.nextStep.size();
  for (const runtime::OpSchedule &ops : schedule.ops)
    pieces += ops.fetch.size() + ops.reduce.size() + ops.deliver.size();
  int64_t boxes = countBoxes(run.plan);
  std::vector<int64_t> counts(5 * k, 0);
  for (unsigned w : run.engine.transport->getLocalWorkers()) {
    counts[w] = schedule.worker >= 0 ? 1 : k;
    counts[k + w] = pieces;
    counts[2 * k + w] = boxes;
    counts[3 * k + w] = std::llround(run.lowerSeconds * 1e6);
    counts[4 * k + w] = std::llround(run.startSeconds * 1e6);
  }
  run.engine.transport->sumOverProcesses(counts);
  auto part = [&](unsigned i) {
    return std::vector<int64_t>(counts.begin() + i * k,
                                counts.begin() + (i + 1) * k);
  };
  run.scheduledWorkers = part(0);
  run.scheduledPieces = part(1);
  run.loweredBoxes = part(2);
  run.lowerMicros = part(3);
  run.startMicros = part(4);
}

/// Names the ops whose scheduled bytes differ from the cost model's.
void explainMismatch(const Loaded &loaded, const Run &run) {
  auto report = planner::evaluatePlan(*loaded.problem, loaded.plan);
  if (!report) {
    llvm::consumeError(report.takeError());
    return;
  }
  const runtime::Schedule &schedule = run.executor->getSchedule();
  if (schedule.worker >= 0 && run.plan.workers > 1) {
    llvm::errs() << "(each process scheduled only its own worker's pieces: "
                    "run with --transport threads for the bytes per op)\n";
    return;
  }
  for (unsigned i = 0, e = run.plan.ops.size(); i != e; ++i) {
    int64_t fetch = 0, produce = 0;
    auto add = [&](const std::vector<runtime::Piece> &pieces, unsigned tensor,
                   bool isFetch, int64_t &total) {
      for (const runtime::Piece &piece : pieces)
        if (piece.src != piece.dst) {
          unsigned t = isFetch ? run.plan.ops[i].inputs[piece.slot] : tensor;
          total += piece.box.getVolume() *
                   runtime::getElementSize(run.plan.tensors[t].type);
        }
    };
    const runtime::OpSchedule &ops = schedule.ops[i];
    add(ops.fetch, 0, true, fetch);
    add(ops.reduce, run.plan.ops[i].output, false, produce);
    add(ops.deliver, run.plan.ops[i].output, false, produce);
    const plan::OpCost &cost = report->ops[i];
    if (fetch != cost.fetchBytes || produce != cost.produceBytes)
      llvm::errs() << "op '" << run.plan.ops[i].name << "': scheduled fetch "
                   << fetch << ", produce " << produce
                   << " bytes; the cost model charges " << cost.fetchBytes
                   << " and " << cost.produceBytes << "\n";
  }
  int64_t nextStep = 0;
  for (int64_t bytes : report->nextStepBytes)
    nextStep += bytes;
  if (nextStep != schedule.nextStepBytes)
    llvm::errs() << "next step: scheduled " << schedule.nextStepBytes
                 << " bytes; the cost model charges " << nextStep << "\n";
  if (report->commBytes != run.plan.commBytes)
    llvm::errs() << "the plan says comm_bytes " << run.plan.commBytes
                 << " but the cost model gives " << report->commBytes << "\n";
}

/// The graph's scalar floating-point output, the loss, or -1.
int findLoss(const graph::Graph &g) {
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    const graph::Tensor &tensor = g.getTensor(t);
    if (tensor.role == graph::Role::Output && tensor.shape.empty() &&
        (tensor.dtype == DType::F32 || tensor.dtype == DType::F64))
      return t;
  }
  return -1;
}

void runSteps(Run &run, int loss, bool print) {
  run.peaks.assign(run.plan.workers, 0);
  run.held.assign(run.plan.workers, 0);
  for (unsigned s = 0; s != numSteps.value; ++s) {
    auto start = std::chrono::steady_clock::now();
    runtime::StepResult result = run.executor->runStep();
    double seconds = std::chrono::duration<double>(
                         std::chrono::steady_clock::now() - start)
                         .count();
    if (s <= 1 || seconds < run.stepSeconds) {
      run.stepSeconds = seconds;
      run.times = result.timesPerWorker;
      run.trace = run.executor->getTrace();
    }
    run.movedBytes = result.movedBytes;
    run.fused = run.executor->getNumFused();
    run.fusedOps = run.executor->getNumFusedOps();
    run.directUpdates = run.executor->getNumDirectUpdates();
    for (unsigned w = 0; w != run.plan.workers; ++w) {
      run.peaks[w] = std::max(run.peaks[w], result.peakBytesPerWorker[w]);
      run.held[w] = std::max(run.held[w], result.heldBytesPerWorker[w]);
    }
    if (loss >= 0) {
      runtime::HostTensor value = run.executor->gather(loss);
      if (!run.executor->isRoot())
        continue;
      run.losses.push_back(toDoubles(value)[0]);
      if (print)
        llvm::outs() << fmt::format("step {}: loss {:.6g}\n", s + 1,
                                    run.losses.back());
    }
  }
}

struct Errors {
  double maxAbs = 0, maxRel = 0;
  std::string worstTensor;
  /// The first element beyond tolerance, for the message.
  std::string firstBad;
  bool ok = true;
};

/// What a reference run's values depend on besides the graph (not the
/// kernels: a reference from one kind checks runs with the other).
std::string getReferenceKey() {
  std::string key =
      fmt::format("seed {}, steps {}", uint64_t(seed), numSteps.value);
  for (const std::string &input : inputFiles)
    key += ", input " + input;
  return key;
}

/// The graph outputs and updated parameters, which --check compares.
std::vector<unsigned> checkedTensors(const graph::Graph &g,
                                     const planner::PlanningProblem &problem) {
  std::vector<unsigned> checked;
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t) {
    bool updatedParam = false;
    for (const planner::ProblemTensor &pt : problem.getTensors())
      updatedParam |= pt.updates == int(t);
    if (g.getTensor(t).role == graph::Role::Output || updatedParam)
      checked.push_back(t);
  }
  return checked;
}

/// The values of the unpartitioned run that --check compares.
Reference gatherReference(const graph::Graph &g,
                          const planner::PlanningProblem &problem,
                          const Run &whole) {
  Reference ref;
  ref.key = getReferenceKey();
  ref.values.resize(g.getNumTensors());
  for (unsigned t : checkedTensors(g, problem))
    ref.values[t] = whole.executor->gather(t);
  return ref;
}

/// The error of a partitioned run's value `a` against the reference's `b`:
/// |a - b|, 0 for the same infinity or two NaNs, infinite where they differ
/// otherwise and either is not finite.
double getElementError(double a, double b) {
  if (a == b || (std::isnan(a) && std::isnan(b)))
    return 0;
  return std::isfinite(a) && std::isfinite(b) ? std::fabs(a - b) : INFINITY;
}

/// Compares the partitioned run's values of the checked tensors with the
/// reference's.
Errors compare(const graph::Graph &g, const planner::PlanningProblem &problem,
               const std::vector<unsigned> &checked,
               const std::vector<runtime::HostTensor> &partitioned,
               const Reference &ref) {
  Errors errors;
  int loss = findLoss(g);
  double limit = tolerance.getNumOccurrences() ? tolerance.value
                                                : getDefaultTolerance(g);
  for (unsigned c = 0, e = checked.size(); c != e; ++c) {
    unsigned t = checked[c];
    if (!ref.values[t])
      continue;
    std::vector<double> a = toDoubles(partitioned[c]);
    std::vector<double> b = toDoubles(*ref.values[t]);
    // The loss and the training state (updated parameters and state, their
    // next values) must be finite: a step that makes them NaN trains
    // nothing, and a NaN equal to a NaN would pass any partitioning. Other
    // outputs may hold infinities and NaNs by design (a cast's overflow),
    // which must match exactly.
    bool mustBeFinite = g.getTensor(t).role != graph::Role::Output ||
                        int(t) == loss || problem.getTensor(t).updates >= 0;
    for (size_t i = 0, n = a.size(); i != n; ++i) {
      if (mustBeFinite && !std::isfinite(b[i])) {
        errors.maxAbs = errors.maxRel = INFINITY;
        errors.worstTensor = g.getTensor(t).name;
        if (errors.ok)
          errors.firstBad = fmt::format(
              "{} element {}: {} in the unpartitioned run (a step whose loss "
              "or training state is not finite cannot be checked)",
              g.getTensor(t).name, i, b[i]);
        errors.ok = false;
        continue;
      }
      double diff = getElementError(a[i], b[i]);
      double rel = std::isfinite(b[i]) ? diff / (1 + std::fabs(b[i])) : diff;
      if (diff > errors.maxAbs) {
        errors.maxAbs = diff;
        errors.worstTensor = g.getTensor(t).name;
      }
      errors.maxRel = std::max(errors.maxRel, rel);
      if (!(rel <= limit)) {
        if (errors.ok)
          errors.firstBad = fmt::format("{} element {}: {} vs {}",
                                        g.getTensor(t).name, i, a[i], b[i]);
        errors.ok = false;
      }
    }
  }
  return errors;
}

/// The report's per-worker compute_seconds, comm_seconds and
/// wait_seconds, of the step step_seconds timed, and its phases taken
/// sends first and receives first.
void addTimes(llvm::json::Object &report,
              const std::vector<runtime::WorkerTimes> &times) {
  llvm::json::Array compute, comm, wait, sendsFirstPhases, receivesFirstPhases;
  for (const runtime::WorkerTimes &t : times) {
    compute.push_back(t.compute);
    comm.push_back(t.comm);
    wait.push_back(t.wait);
    sendsFirstPhases.push_back(t.sendsFirst);
    receivesFirstPhases.push_back(t.receivesFirst);
  }
  report["compute_seconds"] = std::move(compute);
  report["comm_seconds"] = std::move(comm);
  report["wait_seconds"] = std::move(wait);
  report["sends_first_phases"] = std::move(sendsFirstPhases);
  report["receives_first_phases"] = std::move(receivesFirstPhases);
}

/// `value`, or null where it is not finite (JSON has no NaN or infinity).
llvm::json::Value finiteOrNull(double value) {
  return std::isfinite(value) ? llvm::json::Value(value)
                              : llvm::json::Value(nullptr);
}

bool writeReport(const Run &run, const Errors &errors) {
  llvm::json::Array peaks, held, planPeaks, losses;
  for (int64_t p : run.peaks)
    peaks.push_back(p);
  for (int64_t h : run.held)
    held.push_back(h);
  for (int64_t p : run.plan.peakBytesPerWorker)
    planPeaks.push_back(p);
  for (double l : run.losses)
    losses.push_back(finiteOrNull(l));
  llvm::json::Array scheduledWorkers, scheduledPieces;
  for (int64_t n : run.scheduledWorkers)
    scheduledWorkers.push_back(n);
  for (int64_t n : run.scheduledPieces)
    scheduledPieces.push_back(n);
  llvm::json::Array loweredBoxes, lowerSeconds, startSeconds;
  for (unsigned w = 0; w != run.loweredBoxes.size(); ++w) {
    loweredBoxes.push_back(run.loweredBoxes[w]);
    lowerSeconds.push_back(run.lowerMicros[w] * 1e-6);
    startSeconds.push_back(run.startMicros[w] * 1e-6);
  }
  llvm::json::Object report{
      {"workers", int64_t(run.plan.workers)},
      {"steps", int64_t(numSteps.value)},
      {"moved_bytes", run.movedBytes},
      {"comm_bytes", run.plan.commBytes},
      {"peak_bytes_per_worker", std::move(peaks)},
      {"held_bytes_per_worker", std::move(held)},
      {"plan_peak_bytes_per_worker", std::move(planPeaks)},
      {"max_abs_error", finiteOrNull(errors.maxAbs)},
      {"max_rel_error", finiteOrNull(errors.maxRel)},
      {"direct_updates", int64_t(run.directUpdates)},
      {"step_seconds", run.stepSeconds},
      {"fused_chains", int64_t(run.fused)},
      {"fused_chain_ops", int64_t(run.fusedOps)},
      {"fused_kernel_calls", int64_t(run.fusedKernelCalls)},
      {"fused_epilogue_calls", int64_t(run.epilogueCalls)},
      {"scheduled_workers_per_worker", std::move(scheduledWorkers)},
      {"scheduled_pieces_per_worker", std::move(scheduledPieces)},
      {"lowered_boxes_per_worker", std::move(loweredBoxes)},
      {"lowering_seconds_per_worker", std::move(lowerSeconds)},
      {"executor_start_seconds_per_worker", std::move(startSeconds)},
      {"losses", std::move(losses)}};
  addTimes(report, run.times);
  if (run.oneDnn)
    report["onednn_calls"] = llvm::json::Object{
        {"conv_forward", int64_t(run.oneDnn->convForward)},
        {"conv_backward_data", int64_t(run.oneDnn->convBackwardData)},
        {"conv_backward_filter", int64_t(run.oneDnn->convBackwardFilter)},
        {"batch_norm", int64_t(run.oneDnn->batchNorm)},
        {"pooling", int64_t(run.oneDnn->pooling)},
        {"total", int64_t(run.oneDnn->total())},
        {"generated_fallbacks", int64_t(run.oneDnn->fallbacks)}};
  if (run.indexedPooling)
    report["indexed_pooling_calls"] = llvm::json::Object{
        {"indices", int64_t(run.indexedPooling->indices)},
        {"backward", int64_t(run.indexedPooling->backward)},
        {"declined", int64_t(run.indexedPooling->declined)}};
  if (run.batchNormStats)
    report["batch_norm_stats_calls"] = llvm::json::Object{
        {"inv_std", int64_t(run.batchNormStats->invStd)},
        {"backward_input", int64_t(run.batchNormStats->backwardInput)},
        {"declined", int64_t(run.batchNormStats->declined)},
        {"grads_from_sums", int64_t(run.batchNormStats->gradsFromSums)},
        {"grads_summed", int64_t(run.batchNormStats->gradsSummed)},
        {"mean", int64_t(run.batchNormStats->mean)},
        {"inv_std_from_sums", int64_t(run.batchNormStats->invStdFromSums)}};
  std::error_code ec;
  llvm::raw_fd_ostream os(reportFile, ec);
  if (ec) {
    error() << "cannot write '" << reportFile << "': " << ec.message() << "\n";
    return false;
  }
  os << llvm::formatv("{0:2}", llvm::json::Value(std::move(report))) << "\n";
  return true;
}

/// The kernels --kernels selects, with progress on stderr.
llvm::Expected<std::unique_ptr<runtime::KernelProvider>>
makeKernels(const graph::Graph &g, graph::SpecLibrary &specs) {
  if (kernelKind == KernelKind::Evaluator) {
    auto kernels = ReferenceKernels::create(g, specs);
    if (!kernels)
      return kernels.takeError();
    return std::unique_ptr<runtime::KernelProvider>(std::move(*kernels));
  }
  LibraryOptions libraries;
  libraries.oneDnn = useOneDnn;
  libraries.indexedPooling = indexedPooling;
  libraries.batchNormStats = batchNormStats;
  libraries.batchNormSums = batchNormSums;
  libraries.fusedKernels = fusedKernels;
  libraries.threadsPerWorker =
      threadsPerWorker.getNumOccurrences() ? threadsPerWorker.value : 0;
  auto kernels = GeneratedKernels::create(g, specs, kernelCache, evaluatorOps,
                                          llvm::errs(), libraries);
  if (!kernels)
    return kernels.takeError();
  generatedKernels = kernels->get();
  return std::unique_ptr<runtime::KernelProvider>(std::move(*kernels));
}

/// A failure of the step, which other processes may not see: every
/// process reports its own, and a multi-process run ends them all.
int stepFailed(const std::string &what) {
  // One write, so that the lines of several ranks do not interleave.
  std::string line;
  llvm::raw_string_ostream os(line);
  llvm::WithColor::error(os, "tofu-run") << what << "\n";
  llvm::errs() << os.str();
  llvm::errs().flush();
  processes->abortAll(BadInput);
  return BadInput;
}

int runTool(DiagnosticEngine &diags) {
  if (!referenceFile.empty() && !check) {
    error() << "--reference is for --check\n";
    return BadUsage;
  }
  if (!evaluatorOps.empty() && kernelKind != KernelKind::Generated) {
    error() << "--evaluator-op is for --kernels=generated\n";
    return BadUsage;
  }
  if (!referenceFile.empty() && !saveReferenceFile.empty()) {
    error() << "--reference and --save-reference exclude each other\n";
    return BadUsage;
  }
  if (!kernelTimesFile.empty() && backend != Backend::Cuda) {
    error() << "--kernel-times is for --backend cuda\n";
    return BadUsage;
  }
  auto created = Processes::create(transportKind == TransportKind::Mpi);
  if (!created) {
    error() << llvm::toString(created.takeError()) << "\n";
    return BadUsage;
  }
  processes = std::move(*created);
  // Every rank finds it alike; rank 0 says so, every rank exits 1.
  std::string unusable = checkBackend(backend);
  if (!unusable.empty()) {
    error() << "--backend cuda: " << unusable << "\n";
    return BadInput;
  }
  Loaded loaded;
  if (!load(diags, loaded))
    return BadInput;
  if (transportKind == TransportKind::Mpi &&
      processes->getSize() != loaded.plan.workers) {
    unsigned ranks = processes->getSize();
    error() << "--transport mpi: the plan has " << loaded.plan.workers
            << " workers but MPI runs " << ranks
            << (ranks == 1 ? " process (not started by mpirun?)"
                           : " processes")
            << "; run it as mpirun -np " << loaded.plan.workers
            << " tofu-run ...\n";
    return BadUsage;
  }
  const FailurePoint &failure = injectFailure.value;
  if (injectFailure.getNumOccurrences() &&
      (failure.worker >= loaded.plan.workers ||
       failure.op >= loaded.plan.ops.size())) {
    error() << "--inject-failure " << failure.worker << ":" << failure.op
            << ": the plan has " << loaded.plan.workers << " workers and "
            << loaded.plan.ops.size() << " ops (both counted from 0)\n";
    return BadUsage;
  }
  if (injectStartDelay.getNumOccurrences() &&
      injectStartDelay.value.worker >= loaded.plan.workers) {
    error() << "--inject-start-delay " << injectStartDelay.value.worker
            << ":...: the plan has " << loaded.plan.workers
            << " workers (counted from 0)\n";
    return BadUsage;
  }
  // Before anything is allocated: a plan the machine cannot hold is one
  // error with the numbers (each process checks its own part; they agree,
  // so that none waits for a process that stopped).
  std::string tooBig = checkAvailableMemory(loaded);
  if (!tooBig.empty()) {
    std::string line;
    llvm::raw_string_ostream os(line);
    llvm::WithColor::error(os, "tofu-run") << tooBig << "\n";
    llvm::errs() << os.str();
  }
  if (!processes->agree(tooBig.empty(), getStartAllowance()))
    return BadInput;
  const graph::Graph &g = *loaded.graph;
  std::vector<llvm::Optional<runtime::HostTensor>> inputs;
  if (!makeInputs(g, inputs))
    return BadInput;
  // Each process compiles (or loads) its kernels and starts its executor;
  // then the processes agree that all of them are ready before the first
  // step, so that the step's message timeout never counts a peer's compile
  // time (on a busy machine one MPI rank may compile for minutes).
  auto kernels = makeKernels(g, loaded.specs);
  bool ready = bool(kernels);
  if (!kernels) {
    // Not always alike (a rank's cache, a rank's compiler): each says why.
    std::string line;
    llvm::raw_string_ostream os(line);
    llvm::WithColor::error(os, "tofu-run")
        << llvm::toString(kernels.takeError()) << "\n";
    llvm::errs() << os.str();
  }
  int loss = findLoss(g);
  Run partitioned, whole;
  try {
    ready = ready && startRun(loaded, loaded.plan, backend, **kernels, inputs,
                              false, partitioned);
  } catch (const runtime::RuntimeError &e) {
    error() << e.what() << "\n";
    ready = false;
  }
  // Under MPI worker w is rank w; one process runs every worker.
  if (injectStartDelay.getNumOccurrences() &&
      (processes->getSize() == 1 ||
       processes->getRank() == injectStartDelay.value.worker))
    std::this_thread::sleep_for(
        std::chrono::duration<double>(injectStartDelay.value.seconds));
  if (!processes->agree(ready, getStartAllowance()))
    return BadInput;
  if (injectFailure.getNumOccurrences())
    partitioned.executor->injectFailure(injectFailure.value.worker,
                                        injectFailure.value.op);
  // Every process takes part in the step and the gathers; the first one
  // prints, checks and reports.
  bool root = processes->isRoot();
  std::vector<unsigned> checked;
  std::vector<runtime::HostTensor> values;
  try {
    runSteps(partitioned, loss, root);
    countSchedules(partitioned);
    if (generatedKernels) {
      partitioned.oneDnn = generatedKernels->getOneDnnCounts();
      partitioned.indexedPooling = generatedKernels->getIndexedPoolingCounts();
      partitioned.batchNormStats = generatedKernels->getBatchNormStatsCounts();
      partitioned.fusedKernelCalls = generatedKernels->getNumFusedKernelCalls();
      partitioned.epilogueCalls = generatedKernels->getNumEpilogueCalls();
    }
    if (check) {
      checked = checkedTensors(g, *loaded.problem);
      for (unsigned t : checked)
        values.push_back(partitioned.executor->gather(t));
    }
  } catch (const runtime::RuntimeError &e) {
    return stepFailed(e.what());
  }
  if (!traceFile.empty()) {
    std::string file = getTraceFile(traceFile, processes->getRank(),
                                    processes->getSize());
    std::string failed = writeTrace(file, partitioned.plan, partitioned.trace);
    if (!failed.empty()) {
      error() << failed << "\n";
      return BadInput;
    }
  }
  if (!kernelTimesFile.empty() &&
      !writeKernelTimes(partitioned.engine, g, kernelTimesFile))
    return BadInput;
  if (!root)
    return Success;
  llvm::outs() << "moved " << partitioned.movedBytes
               << " bytes per step; the plan's comm_bytes "
               << partitioned.plan.commBytes << "\n";
  if (partitioned.movedBytes != partitioned.plan.commBytes)
    explainMismatch(loaded, partitioned);
  for (unsigned w = 0; w != partitioned.plan.workers; ++w)
    llvm::outs() << "worker " << w << ": peak " << partitioned.peaks[w]
                 << " bytes (plan estimate "
                 << (w < partitioned.plan.peakBytesPerWorker.size()
                         ? partitioned.plan.peakBytesPerWorker[w]
                         : 0)
                 << "), held " << partitioned.held[w] << " bytes\n";
  Errors errors;
  Reference ref;
  if (!referenceFile.empty()) {
    auto read = readReference(referenceFile, g);
    if (!read) {
      error() << llvm::toString(read.takeError()) << "\n";
      return BadInput;
    }
    ref = std::move(*read);
    if (ref.key != getReferenceKey()) {
      error() << referenceFile << " was saved with " << ref.key
              << "; this run has " << getReferenceKey() << "\n";
      return BadInput;
    }
  } else if (check || !saveReferenceFile.empty()) {
    try {
      if (!startRun(loaded, lowering::makeSingleWorkerPlan(*loaded.problem),
                    Backend::Cpu, **kernels, inputs, true, whole))
        return BadInput;
      runSteps(whole, loss, false);
    } catch (const runtime::RuntimeError &e) {
      error() << "the unpartitioned run: " << e.what() << "\n";
      return BadInput;
    }
    ref = gatherReference(g, *loaded.problem, whole);
    if (!saveReferenceFile.empty())
      if (llvm::Error e = writeReference(saveReferenceFile, g, ref)) {
        error() << llvm::toString(std::move(e)) << "\n";
        return BadInput;
      }
  }
  if (check) {
    errors = compare(g, *loaded.problem, checked, values, ref);
    // One write, flushed before the error: under mpirun stdout and stderr
    // reach the terminal through separate pipes, and a line written in
    // pieces can be split by the other stream's output.
    std::string line;
    llvm::raw_string_ostream os(line);
    os << "check: max abs error " << errors.maxAbs << ", max rel error "
       << errors.maxRel;
    if (!errors.worstTensor.empty())
      os << " (worst: '" << errors.worstTensor << "')";
    os << (errors.ok ? ": ok\n" : ": beyond tolerance\n");
    llvm::outs() << os.str();
    llvm::outs().flush();
    if (!errors.ok)
      error() << "--check: " << errors.firstBad << "\n";
  }
  if (!reportFile.empty() && !writeReport(partitioned, errors))
    return BadInput;
  return errors.ok ? Success : CheckFailed;
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  if (!cli::parseToolCommandLine(
          argc, argv, {&category},
          "tofu-run: execute a plan on K workers and count the bytes moved "
          "(docs/Runtime.md).\n\n"
          "  tofu-run PLAN.json [--graph GRAPH.json] [--check] [--steps N]\n"
          "           [--kernels=generated|evaluator] [--save-reference FILE | "
          "--reference FILE]\n"
          "  mpirun -np K tofu-run PLAN.json --transport mpi [...]   (one "
          "worker per rank;\n"
          "      rank 0 prints, checks and writes the report)\n"
          "  mpirun -np K tofu-run PLAN.json --backend cuda --transport mpi "
          "[...]   (multi-GPU,\n"
          "      multi-node: each rank's worker on GPU (local rank mod "
          "#GPUs), NCCL between ranks;\n"
          "      --backend cuda-host runs the same on the host emulation)\n\n"
          "The generated kernels are compiled once per graph ($CXX, default "
          "c++, -O3; progress on\nstderr) and cached in --kernel-cache.\n\n"
          "A plan whose numbers (comm_bytes, resident and peak bytes per "
          "worker) are not the\ncost model's, recomputed from the plan and "
          "the graph, is refused (exit 1).\n\n"
          "The report's peak_bytes_per_worker is the most bytes a worker's "
          "live buffers held at\nonce (the plan's peak predicts it to the "
          "byte); held_bytes_per_worker the most its\npool held, free "
          "buffers it kept for reuse included: more than the peak\n"
          "unless --trim-pools keeps it within.\n\n"
          "Exit status: 0 success, 1 bad input or failed run, 2 bad usage, 3 "
          "--check beyond tolerance.\n"))
    return BadUsage;
  // InitLLVM's handler aborts with "LLVM ERROR: out of memory"; without it
  // an allocation that fails throws, and is reported (checkAvailableMemory
  // catches a plan too large before anything is allocated).
  std::set_new_handler(nullptr);
  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags(srcMgr);
  int status;
  try {
    status = runTool(diags);
  } catch (const std::bad_alloc &) {
    llvm::WithColor::error(llvm::errs(), "tofu-run")
        << "out of memory (the plan's peak per worker is checked against "
           "the memory available before the run: see --help)\n";
    status = BadInput;
  }
  // MPI_Finalize, where the run used MPI, before static destructors.
  processes.reset();
  return status;
}
