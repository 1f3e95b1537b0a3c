//===- tofu-plan.cpp - Partition a training graph across workers ----------===//
//
// tofu-plan reads a training graph (tofu-graph JSON, or ONNX when the
// importer is built), verifies it against the TDL operator specs, and
// finds for every op its step at each level and for every tensor where
// each worker stores it, minimising the bytes moved (docs/CostModel.md).
// It writes the plan as JSON, a summary, Graphviz or C++; with --verify it
// checks an existing plan against its graph instead. Exit status: 0
// success, 1 bad input (with a diagnostic), 2 bad usage.
//
//===----------------------------------------------------------------------===//

#include "Summary.h"

#include <algorithm>
#include <cstring>

#include "tofu/CodeGen/GraphKernels.h"
#include "tofu/Graph/ModelFile.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Graph/Verifier.h"
#include "tofu/Lowering/PlanLowering.h"
#include "tofu/PlanEmit/PlanEmitters.h"
#include "tofu/Plan/Layouts.h"
#include "tofu/Plan/PlanJSON.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Planner/ClusterModel.h"
#include "tofu/Planner/ParallelBaselines.h"
#include "tofu/Planner/PlanVerifier.h"
#include "tofu/Planner/Planner.h"
#include "tofu/Planner/Recompute.h"
#include "tofu/Planner/RecomputeChoice.h"
#include "tofu/Planner/StepTime.h"
#include "tofu/Support/CommandLine.h"
#include "tofu/Support/Diagnostics.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/InitLLVM.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "llvm/Support/ToolOutputFile.h"
#include "llvm/Support/WithColor.h"

using namespace tofu;
namespace cl = llvm::cl;

#ifndef TOFU_SPECS_DIR
#define TOFU_SPECS_DIR ""
#endif

namespace {

enum class EmitKind { Plan, Summary, Dot, Cpp };
enum class BaselineChoice {
  None,
  DataParallel,
  Replicate,
  Megatron,
  Fsdp,
  MegatronDP,
  Megatron3D
};
enum ExitStatus { Success = 0, BadInput = 1, BadUsage = 2 };

cl::OptionCategory category("tofu-plan options");

cl::list<std::string> positional(cl::Positional, cl::OneOrMore,
                                 cl::desc("<GRAPH.json | MODEL.onnx>"),
                                 cl::cat(category));

/// The most workers a plan may have.
constexpr unsigned MaxWorkers = 65536;

cl::opt<cli::Flag<cli::UnsignedInRange<1, MaxWorkers>>> workersFlag(
    "workers", cl::desc("Number of workers K (1 to 65536)"),
    cl::value_desc("K"), cl::cat(category));

cl::list<std::string> specFiles(
    "spec", cl::desc("Also use the operators of FILE.tdl (repeatable)"),
    cl::value_desc("FILE.tdl"), cl::cat(category));

cl::opt<bool> noDefaultSpecs(
    "no-default-specs",
    cl::desc("Do not load the standard operator library (" TOFU_SPECS_DIR
             "/*.tdl)"),
    cl::cat(category));

cl::opt<EmitKind> emitKind(
    "emit", cl::desc("What to write"), cl::init(EmitKind::Plan),
    cl::values(
        clEnumValN(EmitKind::Plan, "plan", "plan JSON (default)"),
        clEnumValN(EmitKind::Summary, "summary",
                   "a report: bytes moved and held against the baselines, "
                   "the search, per-layer steps, top communication sites"),
        clEnumValN(EmitKind::Dot, "dot",
                   "Graphviz: the forward/backward groups coloured by step"),
        clEnumValN(EmitKind::Cpp, "cpp",
                   "C++: the lowered plan and the graph's kernels, to "
                   "compile into a training program (docs/Linking.md)")),
    cl::cat(category));

cl::opt<std::string> cppNamespace(
    "cpp-namespace",
    cl::desc("With --emit=cpp: the namespace of getGeneratedPlan() "
             "(default tofu_plan), so that several plans link into one "
             "program"),
    cl::value_desc("NS"), cl::init("tofu_plan"), cl::cat(category));

cl::opt<bool> checkCpp(
    "check-cpp",
    cl::desc("With --emit=cpp: derive every worker's boxes from the "
             "source's tables as the runtime does (buildExecutablePlan) and "
             "check that they are the plan's lowering (exit 1 naming the "
             "first difference)"),
    cl::cat(category));

cl::opt<planner::SearchKind> searchKind(
    "search", cl::desc("The search"), cl::init(planner::SearchKind::Recursive),
    cl::values(clEnumValN(planner::SearchKind::Recursive, "recursive",
                          "Tofu's level-by-level search (default)"),
               clEnumValN(planner::SearchKind::Exact, "exact",
                          "the optimum of the cost model over every "
                          "factoring of K (or --levels), or an error when "
                          "one is too large for it: small graphs")),
    cl::cat(category));

cl::opt<BaselineChoice> baseline(
    "baseline", cl::desc("Emit a baseline plan instead of searching"),
    cl::init(BaselineChoice::None),
    cl::values(clEnumValN(BaselineChoice::DataParallel, "data-parallel",
                          "batch split, everything else replicated"),
               clEnumValN(BaselineChoice::Replicate, "replicate",
                          "everything whole on every worker"),
               clEnumValN(BaselineChoice::Megatron, "megatron",
                          "Megatron-LM tensor parallelism: linear weights "
                          "split column/row-parallel in pairs, the rest "
                          "searched under that layout"),
               clEnumValN(BaselineChoice::Fsdp, "fsdp",
                          "FSDP/ZeRO-3: batch split, parameters, gradients "
                          "and optimizer state sharded over all workers"),
               clEnumValN(BaselineChoice::MegatronDP, "megatron-dp",
                          "Megatron tensor parallelism within the "
                          "innermost --topology group (default 8 workers), "
                          "data parallelism across groups"),
               clEnumValN(BaselineChoice::Megatron3D, "megatron-3d",
                          "Megatron-LM's tensor x pipeline x data "
                          "parallelism (--tensor-parallel, "
                          "--pipeline-parallel), its step simulated on a "
                          "GPU cluster's --machine (docs/Machines.md)")),
    cl::cat(category));

cl::opt<cli::Flag<cli::UnsignedInRange<1, MaxWorkers>>> tensorParallelFlag(
    "tensor-parallel",
    cl::desc("With --baseline=megatron-3d: the tensor-parallel GPUs of one "
             "layer, within a node (default 1)"),
    cl::value_desc("T"), cl::init(1), cl::cat(category));

cl::opt<cli::Flag<cli::UnsignedInRange<1, MaxWorkers>>> pipelineParallelFlag(
    "pipeline-parallel",
    cl::desc("With --baseline=megatron-3d: the pipeline stages, each a "
             "contiguous range of layers (default 1)"),
    cl::value_desc("P"), cl::init(1), cl::cat(category));

cl::opt<cli::Flag<cli::UnsignedInRange<1, MaxWorkers>>> microbatchSizeFlag(
    "microbatch-size",
    cl::desc("With --baseline=megatron-3d: sequences per microbatch "
             "(default 1)"),
    cl::value_desc("B"), cl::init(1), cl::cat(category));

cl::opt<cli::Flag<cli::ByteSize>> memoryFlag(
    "memory",
    cl::desc("Cap on resident bytes per worker; within it tensors may be "
             "replicated where that saves communication"),
    cl::value_desc("BYTES[K|M|G]"), cl::cat(category));

cl::opt<cli::Flag<cli::ByteSize>> peakMemoryFlag(
    "peak-memory",
    cl::desc("Cap on the predicted peak bytes per worker (what the runtime "
             "measures); when the searched plan exceeds it, forward "
             "activations are recomputed in the backward pass until it "
             "fits (docs/Planner.md, \"Recomputation\")"),
    cl::value_desc("BYTES[K|M|G]"), cl::cat(category));

cl::opt<bool> recomputeChains(
    "recompute-chains",
    cl::desc("With --peak-memory: recompute each chosen activation with its "
             "chain, the forward-only inputs only it needs (default); "
             "--recompute-chains=false recomputes single ops"),
    cl::init(true), cl::cat(category));

cl::opt<std::string> topologyFlag(
    "topology",
    cl::desc("The machine: nested groups of workers, outermost first, and "
             "the bandwidth of each level's links in GB/s (2x4:25,300 is 2 "
             "machines of 4 workers, 25 GB/s between machines, 300 inside "
             "one). The search charges each level's bytes by its link, and "
             "the plan gets an estimated step time"),
    cl::value_desc("F1xF2x...:BW1,BW2,..."), cl::cat(category));

cl::opt<std::string> machineFlag(
    "machine",
    cl::desc("A machine file written by tofu-calibrate, or a GPU "
             "cluster's (machines/*.json): the plan gets "
             "estimated_step_seconds on that machine (docs/StepTime.md, "
             "docs/Machines.md)"),
    cl::value_desc("MACHINE.json"), cl::cat(category));

cl::opt<cli::Flag<cli::PositiveNumber>> flopsFlag(
    "tflops",
    cl::desc("With --topology: one worker's speed in TFLOP/s for the "
             "compute estimate (default 100)"),
    cl::value_desc("TFLOPS"), cl::init(100.0), cl::cat(category));

cl::opt<cli::Flag<cli::NonNegativeNumber>> timeLimit(
    "time-limit",
    cl::desc("Stop trying further factorings of K after this many seconds "
             "(the best plan so far is kept)"),
    cl::value_desc("SECONDS"), cl::init(0.0), cl::cat(category));

/// --levels F1xF2x...: one factoring of K, outermost level first.
struct LevelsSpec {
  using Type = SmallVector<unsigned, 4>;
  static constexpr const char *valueName = "F1xF2x...";
  static std::string parse(StringRef text, SmallVector<unsigned, 4> &levels) {
    SmallVector<StringRef, 4> parts;
    text.split(parts, 'x');
    levels.clear();
    for (StringRef part : parts) {
      unsigned f = 0;
      if (part.getAsInteger(10, f) || f < 2 || f > MaxWorkers)
        return "expects factors of at least 2 joined by 'x' (2x4), got '" +
               text.str() + "'";
      levels.push_back(f);
    }
    return "";
  }
};

cl::opt<cli::Flag<LevelsSpec>> levelsFlag(
    "levels",
    cl::desc("Search only this factoring of K into levels, outermost first "
             "(default: the search's candidates, docs/Planner.md)"),
    cl::cat(category));

cl::opt<cl::boolOrDefault> refine(
    "refine",
    cl::desc("Refine the recursive search's plans: re-decide each level with "
             "the others fixed, over every worker (default: on up to "
             "16 workers; --refine=false for the paper's search alone)"),
    cl::cat(category));

cl::opt<bool> refineSkip(
    "refine-skip-unchanged",
    cl::desc("Refinement skips a window of levels whose outside is unchanged "
             "since its last solve (default on; =false solves it again, for "
             "tests: the plan must be the same)"),
    cl::init(true), cl::Hidden, cl::cat(category));

cl::opt<bool> quiet("quiet", cl::desc("No progress lines on stderr"),
                    cl::cat(category));

cl::list<std::string> printAfter(
    "print-after",
    cl::desc("Print the result of planner pass PASS after each run of it "
             "(coarsen, search, refine, lower, or all; comma-separated or "
             "repeated), on stderr or in --print-after-file"),
    cl::value_desc("PASS"), cl::CommaSeparated, cl::cat(category));

cl::opt<std::string> printAfterFile(
    "print-after-file",
    cl::desc("Write --print-after's dumps to FILE instead of stderr"),
    cl::value_desc("FILE"), cl::cat(category));

cl::opt<bool> verifyMode(
    "verify",
    cl::desc("Check PLAN.json against GRAPH: coverage, steps and the cost "
             "model's numbers (tofu-plan --verify PLAN.json GRAPH)"),
    cl::cat(category));

cl::opt<std::string> outputFile("o", cl::desc("Write output to FILE"),
                                cl::value_desc("FILE"), cl::init("-"),
                                cl::cat(category));

llvm::raw_ostream &error() { return llvm::WithColor::error(llvm::errs(), "tofu-plan"); }


/// The graph, verified and bound to its operators; null after diagnostics.
struct LoadedGraph {
  std::unique_ptr<graph::Graph> graph;
  std::unique_ptr<planner::PlanningProblem> problem;
};

/// The standard operator library: <prefix>/share/tofu/specs next to an
/// installed tofu-plan, else the source tree's.
std::string getDefaultSpecsDir() {
  static int anchor;
  std::string exe = llvm::sys::fs::getMainExecutable("tofu-plan", &anchor);
  llvm::SmallString<256> dir(llvm::sys::path::parent_path(
      llvm::sys::path::parent_path(exe)));
  llvm::sys::path::append(dir, "share", "tofu", "specs");
  return llvm::sys::fs::is_directory(dir) ? dir.str().str() : TOFU_SPECS_DIR;
}

bool loadProblem(StringRef path, graph::SpecLibrary &specs,
                 DiagnosticEngine &diags, LoadedGraph &out) {
  out.graph = graph::readModelFile(path, diags);
  if (!out.graph ||
      !specs.loadFor(*out.graph, noDefaultSpecs ? "" : getDefaultSpecsDir(),
                     specFiles, diags) ||
      !graph::verifyGraph(*out.graph, specs, diags))
    return false;
  out.problem = planner::PlanningProblem::build(*out.graph, specs, diags);
  return out.problem != nullptr;
}

/// The instrumentation --print-after asks for, writing to `file` when
/// --print-after-file names one; null without --print-after. False after
/// a usage error.
bool makeInstrumentation(
    std::unique_ptr<planner::PassInstrumentation> &instrumentation,
    std::unique_ptr<llvm::ToolOutputFile> &file) {
  if (printAfter.empty()) {
    if (printAfterFile.getNumOccurrences()) {
      error() << "--print-after-file goes with --print-after\n";
      return false;
    }
    return true;
  }
  if (verifyMode || baseline != BaselineChoice::None) {
    error() << "--print-after prints the search's passes; "
            << (verifyMode ? "--verify" : "--baseline") << " runs none\n";
    return false;
  }
  llvm::raw_ostream *os = &llvm::errs();
  if (!printAfterFile.empty()) {
    std::error_code ec;
    file = std::make_unique<llvm::ToolOutputFile>(printAfterFile, ec,
                                                  llvm::sys::fs::OF_Text);
    if (ec) {
      error() << "cannot write '" << printAfterFile << "': " << ec.message()
              << "\n";
      return false;
    }
    file->keep();
    os = &file->os();
  }
  instrumentation = std::make_unique<planner::PassInstrumentation>(*os);
  for (StringRef name : printAfter) {
    if (name == "all") {
      instrumentation->enablePrintAfterAll();
      continue;
    }
    auto pass = planner::lookupPlannerPass(name);
    if (!pass) {
      error() << "--print-after: unknown pass '" << name
              << "' (expected coarsen, search, refine, lower or all)\n";
      return false;
    }
    instrumentation->enablePrintAfter(*pass);
  }
  return true;
}

int runVerify(DiagnosticEngine &diags) {
  if (positional.size() != 2) {
    error() << "--verify takes PLAN.json GRAPH\n";
    return BadUsage;
  }
  if (!printAfter.empty()) {
    error() << "--print-after prints the search's passes; --verify runs "
               "none\n";
    return BadUsage;
  }
  auto buffer = llvm::MemoryBuffer::getFileOrSTDIN(positional[0]);
  if (!buffer) {
    error() << "cannot read '" << positional[0]
            << "': " << buffer.getError().message() << "\n";
    return BadInput;
  }
  auto p = plan::readPlanJSON((*buffer)->getBuffer());
  if (!p) {
    error() << positional[0] << ": " << llvm::toString(p.takeError()) << "\n";
    return BadInput;
  }
  graph::SpecLibrary specs;
  LoadedGraph loaded;
  if (!loadProblem(positional[1], specs, diags, loaded))
    return BadInput;
  // A plan made for another graph is one error; the checks below assume
  // the plan matches.
  if (llvm::Error err = planner::checkPlanMatchesGraph(*loaded.graph, *p)) {
    error() << "the plan does not match the graph: "
            << llvm::toString(std::move(err)) << "\n";
    return BadInput;
  }
  // A compact plan's layouts, checked against the graph's shapes; regions
  // are derived from them where read (docs/PlanFormat.md).
  if (llvm::Error err = plan::checkLayouts(
          *p, loaded.problem->getTensors().size(),
          [&](unsigned t) { return loaded.problem->getShape(t); })) {
    error() << positional[0] << ": " << llvm::toString(std::move(err)) << "\n";
    return BadInput;
  }
  // A plan that recomputes is the plan of the rewritten graph
  // (tofu/Planner/Recompute.h).
  const planner::PlanningProblem *problem = loaded.problem.get();
  llvm::Optional<planner::RecomputedPlan> recomputed;
  if (!p->recompute.empty()) {
    auto prepared = planner::prepareRecomputedPlan(*loaded.graph, specs, *p);
    if (!prepared) {
      error() << positional[0] << ": " << llvm::toString(prepared.takeError())
              << "\n";
      return BadInput;
    }
    recomputed = std::move(*prepared);
    problem = recomputed->problem.get();
  }
  planner::CostReport report;
  if (!planner::verifyPlan(*problem, recomputed ? recomputed->plan : *p,
                           llvm::errs(), report))
    return BadInput;
  llvm::outs() << positional[0] << ": valid plan for " << p->workers
               << " workers: every tensor covered, comm_bytes "
               << report.commBytes << " recomputed";
  if (!p->recompute.empty())
    llvm::outs() << " (" << p->recompute.size()
                 << " activations recomputed in the backward pass)";
  llvm::outs() << "\n";
  return Success;
}

/// `path` made absolute, with symbolic links and dots resolved where it
/// exists.
llvm::SmallString<256> getCanonicalPath(StringRef path) {
  llvm::SmallString<256> result;
  if (llvm::sys::fs::real_path(path, result)) {
    result = path;
    llvm::sys::fs::make_absolute(result);
    llvm::sys::path::remove_dots(result, /*remove_dot_dot=*/true);
  }
  return result;
}

/// The plan JSON's "graph" field: the input graph's path relative to the
/// folder of the -o file, when the input is a graph JSON file and -o names a
/// file; empty otherwise.
std::string getGraphField() {
  StringRef input = positional[0];
  if (outputFile == "-" || input == "-" ||
      llvm::sys::path::extension(input).equals_insensitive(".onnx"))
    return "";
  StringRef outDir = llvm::sys::path::parent_path(outputFile);
  llvm::SmallString<256> from = getCanonicalPath(outDir.empty() ? "." : outDir);
  llvm::SmallString<256> to = getCanonicalPath(input);
  auto f = llvm::sys::path::begin(from), fe = llvm::sys::path::end(from);
  auto t = llvm::sys::path::begin(to), te = llvm::sys::path::end(to);
  while (f != fe && t != te && *f == *t)
    ++f, ++t;
  llvm::SmallString<256> relative;
  for (; f != fe; ++f)
    llvm::sys::path::append(relative, llvm::sys::path::Style::posix, "..");
  for (; t != te; ++t)
    llvm::sys::path::append(relative, llvm::sys::path::Style::posix, *t);
  return std::string(relative);
}

/// Sets `p`'s estimate, or says why there is none.
bool setEstimate(llvm::Expected<plan::StepEstimate> estimate, plan::Plan &p) {
  if (!estimate) {
    error() << "--machine " << machineFlag << ": "
            << llvm::toString(estimate.takeError()) << "\n";
    return false;
  }
  p.estimate = std::move(*estimate);
  return true;
}

/// Sets `p`'s estimate on a GPU cluster (docs/Machines.md): the fsdp
/// baseline of a transformer as ZeRO-3's step (recorded in "zero_3"), any
/// other plan by its bytes per level on the cluster's links.
bool estimateOnCluster(const planner::PlanningProblem &problem,
                       const planner::GpuCluster &cluster, plan::Plan &p,
                       bool fsdp) {
  if (fsdp) {
    if (auto shape = planner::getTransformerShape(problem)) {
      auto zero = planner::estimateZero3(*shape, p.workers, cluster);
      if (!zero) {
        error() << "--machine " << machineFlag << ": "
                << llvm::toString(zero.takeError()) << "\n";
        return false;
      }
      p.estimate = plan::StepEstimate();
      p.estimate->computeSeconds = zero->computeSeconds;
      p.estimate->communicationSeconds = zero->seconds - zero->computeSeconds;
      p.extraFields.push_back(
          {"zero_3", planner::formatEstimateRecord(*shape, *zero, nullptr,
                                                    cluster.name)});
      llvm::WithColor::note(llvm::errs(), "tofu-plan")
          << "the fsdp baseline's step is ZeRO-3's, estimated from the "
             "graph's transformer on "
          << cluster.name << ": " << planner::formatNumber(zero->seconds)
          << " s, " << planner::formatNumber(zero->flopsPerGPU / 1e12)
          << " TFLOP/s per GPU (Eq. 3)\n";
      return true;
    } else {
      llvm::consumeError(shape.takeError());
    }
  }
  return setEstimate(planner::estimateStep(
                         problem, p,
                         planner::getClusterTopology(cluster, p.workers)),
                     p);
}

/// Sets `p`'s estimate on `machine`, the ops' kinds of kernel from the
/// kernel generator (docs/StepTime.md); on a GPU cluster's file,
/// estimateOnCluster.
bool estimateOnMachine(const planner::PlanningProblem &problem,
                       graph::SpecLibrary &specs,
                       const planner::Machine &machine, plan::Plan &p,
                       bool fsdp = false) {
  if (machine.cluster)
    return estimateOnCluster(problem, *machine.cluster, p, fsdp);
  auto kernels = codegen::emitGraphKernels(problem.getGraph(), specs);
  if (!kernels) {
    error() << llvm::toString(kernels.takeError()) << "\n";
    return false;
  }
  std::vector<std::string> kinds;
  for (int k : kernels->opKernel)
    kinds.push_back(k < 0 ? "" : codegen::getKernelKindName(
                                     kernels->kernels[k].kind));
  return setEstimate(
      planner::estimateStepOnMachine(problem, p, machine, kinds), p);
}

/// With --check-cpp: the boxes `compact`'s tables give are those of
/// lowerPlan; an error naming the first difference otherwise.
bool checkCompactPlan(const planner::PlanningProblem &problem,
                      const plan::Plan &p, const runtime::CompactPlan &compact) {
  auto lowered = lowering::lowerPlan(problem, p);
  if (!lowered) {
    error() << "cannot lower the plan: " << llvm::toString(lowered.takeError())
            << "\n";
    return false;
  }
  std::string difference;
  try {
    runtime::GeneratedTables tables(compact);
    difference = runtime::findPlanDifference(
        *lowered, runtime::buildExecutablePlan(tables.get()));
    if (difference.empty())
      llvm::errs() << "tofu-plan: --check-cpp: every box of " << p.workers
                   << " workers is the plan's (" << compact.plan.ops.size()
                   << " ops, " << compact.rules.size() << " op rules)\n";
  } catch (const runtime::RuntimeError &e) {
    difference = e.what();
  }
  if (!difference.empty()) {
    error() << "--check-cpp: the compiled plan's boxes differ from the "
               "plan's: "
            << difference << "\n";
    return false;
  }
  return true;
}

/// Writes the plan as layouts and op rules with the graph's kernels.
bool writeCpp(llvm::raw_ostream &os, const planner::PlanningProblem &problem,
              graph::SpecLibrary &specs, const plan::Plan &p) {
  auto lowered = lowering::lowerPlanCompact(problem, p);
  if (!lowered) {
    error() << "cannot lower the plan: " << llvm::toString(lowered.takeError())
            << "\n";
    return false;
  }
  if (checkCpp && !checkCompactPlan(problem, p, *lowered))
    return false;
  const graph::Graph &g = problem.getGraph();
  auto kernels = codegen::emitGraphKernels(g, specs);
  if (!kernels) {
    error() << llvm::toString(kernels.takeError()) << "\n";
    return false;
  }
  plan::CppPlanInput input;
  input.plan = &*lowered;
  input.kernelsSource = std::move(kernels->source);
  input.cppNamespace = cppNamespace;
  input.graphName = llvm::sys::path::filename(positional[0]).str();
  if (llvm::Error err = plan::writePlanCpp(os, g, input)) {
    error() << llvm::toString(std::move(err)) << "\n";
    return false;
  }
  return true;
}

/// Writes the output; `g` and `p` are what runs (for a plan that
/// recomputes, the rewritten graph and its plan), `json` the plan as
/// written (the graph's own ops and tensors, and `recompute`).
int writeOutput(const graph::Graph &g, const plan::Plan &p,
                const plan::Plan &json, const SummaryInput &summary,
                graph::SpecLibrary &specs) {
  std::error_code ec;
  llvm::ToolOutputFile out(outputFile, ec, llvm::sys::fs::OF_Text);
  if (ec) {
    error() << "cannot write '" << outputFile << "': " << ec.message() << "\n";
    return BadInput;
  }
  switch (emitKind) {
  case EmitKind::Plan:
    plan::writePlanJSON(out.os(), json, getGraphField());
    break;
  case EmitKind::Summary:
    printPlanSummary(out.os(), summary);
    break;
  case EmitKind::Dot:
    plan::writePlanDot(out.os(), g, p);
    break;
  case EmitKind::Cpp:
    if (!writeCpp(out.os(), *summary.problem, specs, p))
      return BadInput;
    break;
  }
  out.keep();
  return Success;
}

/// --baseline=megatron-3d: the plan is Megatron's tensor parallelism over
/// groups of T workers and data parallelism over the rest (the planner has
/// no pipeline stages yet), its step Megatron-LM's 3D configuration
/// simulated on the cluster (docs/Machines.md), recorded in "megatron_3d".
int runMegatron3D(const planner::PlanningProblem &problem,
                  const graph::Graph &g, const planner::GpuCluster &cluster,
                  graph::SpecLibrary &specs, unsigned workers) {
  auto shape = planner::getTransformerShape(problem);
  if (!shape) {
    error() << "--baseline=megatron-3d: " << llvm::toString(shape.takeError())
            << "\n";
    return BadInput;
  }
  auto config = planner::getMegatron3DConfig(
      *shape, cluster, workers, tensorParallelFlag.value,
      pipelineParallelFlag.value, microbatchSizeFlag.value);
  if (!config) {
    error() << "--baseline=megatron-3d: "
            << llvm::toString(config.takeError()) << "\n";
    return BadUsage;
  }
  // Groups of T workers: megatron-dp's default groups are gcd(K, 8), else
  // a topology of K / T nodes of T (T divides 8, so T < K here).
  unsigned t = config->tensor;
  llvm::Optional<plan::Topology> groups;
  if (t > 1 && t != planner::getMegatronGroup(workers, llvm::None)) {
    groups = planner::getClusterTopology(cluster, workers);
    groups->factors = {workers / t, t};
    groups->bandwidths = {cluster.links[1].busBandwidth,
                          cluster.links[0].busBandwidth};
  }
  std::vector<runtime::WorkerPeak> peaks;
  auto p = planner::planBaseline(problem,
                                 t > 1 ? planner::BaselineKind::MegatronDP
                                       : planner::BaselineKind::DataParallel,
                                 workers, groups, &peaks);
  if (!p) {
    error() << llvm::toString(p.takeError()) << "\n";
    return BadInput;
  }
  p->topology = llvm::None;
  planner::ParallelStepEstimate est =
      planner::estimateMegatron3D(*shape, *config, cluster);
  p->estimate = plan::StepEstimate();
  p->estimate->computeSeconds = est.computeSeconds;
  p->estimate->communicationSeconds = est.seconds - est.computeSeconds;
  p->extraFields.push_back(
      {"megatron_3d",
       planner::formatEstimateRecord(*shape, est, &*config, cluster.name)});
  llvm::WithColor::note(llvm::errs(), "tofu-plan")
      << "--baseline=megatron-3d: an estimate, not a plan of pipeline "
         "stages: TP "
      << t << " x PP " << config->pipeline << " x DP " << config->data << ", "
      << config->microbatches << " microbatches of " << config->microbatchSize
      << ", simulated on " << cluster.name << ": "
      << planner::formatNumber(est.seconds) << " s a step, "
      << planner::formatNumber(est.flopsPerGPU / 1e12)
      << " TFLOP/s per GPU (Eq. 3); the plan's layout is TP x DP over "
      << workers << " workers\n";
  SummaryInput summary;
  summary.graphName = llvm::sys::path::filename(positional[0]).str();
  summary.problem = &problem;
  summary.what = "the megatron-3d baseline";
  summary.plan = &*p;
  summary.peaks = &peaks;
  return writeOutput(g, *p, *p, summary, specs);
}

int runPlan(DiagnosticEngine &diags) {
  if (positional.size() != 1) {
    error() << "expected one graph, got " << positional.size()
            << " (to check a plan: --verify PLAN.json GRAPH)\n";
    return BadUsage;
  }
  if (!workersFlag.getNumOccurrences()) {
    error() << "--workers K is required\n";
    return BadUsage;
  }
  llvm::Optional<unsigned> workers = workersFlag.value;
  if (!plan::isCppNamespaceName(cppNamespace)) {
    error() << "--cpp-namespace expects identifiers joined by '::', got '"
            << cppNamespace << "'\n";
    return BadUsage;
  }
  planner::PlannerOptions options;
  options.workers = *workers;
  options.search = searchKind;
  options.timeLimitSeconds = timeLimit.value;
  if (levelsFlag.getNumOccurrences()) {
    options.levels = levelsFlag.value;
    uint64_t product = 1;
    for (unsigned f : options.levels)
      product = std::min<uint64_t>(product * f, uint64_t(MaxWorkers) + 1);
    if (product != *workers) {
      error() << "--levels " << plan::formatLevels(options.levels)
              << " has " << product << " workers, but --workers is "
              << *workers << "\n";
      return BadUsage;
    }
  }
  if (searchKind == planner::SearchKind::Exact &&
      (memoryFlag.getNumOccurrences() || !topologyFlag.empty())) {
    error() << "--search=exact minimises comm_bytes without a budget: with "
            << (memoryFlag.getNumOccurrences() ? "--memory" : "--topology")
            << " it could not call its plan the optimum; use the default "
               "search (--search=recursive)\n";
    return BadUsage;
  }
  bool megatron3D = baseline == BaselineChoice::Megatron3D;
  for (const cl::Option *flag :
       {static_cast<const cl::Option *>(&tensorParallelFlag),
        static_cast<const cl::Option *>(&pipelineParallelFlag),
        static_cast<const cl::Option *>(&microbatchSizeFlag)})
    if (flag->getNumOccurrences() && !megatron3D) {
      error() << "--" << flag->ArgStr
              << " applies to --baseline=megatron-3d only\n";
      return BadUsage;
    }
  if (megatron3D && machineFlag.empty()) {
    error() << "--baseline=megatron-3d simulates its step on a GPU cluster: "
               "give --machine (machines/dgx-a100-80gb.json)\n";
    return BadUsage;
  }
  if (peakMemoryFlag.getNumOccurrences() && baseline != BaselineChoice::None) {
    error() << "--peak-memory applies to the search's plan, not to "
               "--baseline (a baseline's layout is fixed)\n";
    return BadUsage;
  }
  if (refine != cl::BOU_UNSET)
    options.refine = refine == cl::BOU_TRUE;
  else
    options.refine = *workers <= planner::MaxWorkersRefinedByDefault;
  options.skipUnchangedWindows = refineSkip;
  // Only the summary shows what refinement gained.
  options.measureUnrefined = emitKind == EmitKind::Summary;
  options.progress = quiet ? nullptr : &llvm::errs();
  std::unique_ptr<planner::PassInstrumentation> instrumentation;
  std::unique_ptr<llvm::ToolOutputFile> dumpFile;
  if (!makeInstrumentation(instrumentation, dumpFile))
    return BadUsage;
  options.instrumentation = instrumentation.get();
  if (memoryFlag.getNumOccurrences())
    options.memoryBytes = memoryFlag.value;
  if (!topologyFlag.empty()) {
    auto topology = planner::parseTopology(topologyFlag);
    if (!topology) {
      error() << llvm::toString(topology.takeError()) << "\n";
      return BadUsage;
    }
    if (plan::getNumWorkers(topology->factors) != *workers) {
      error() << "--topology " << topologyFlag << " has "
              << plan::getNumWorkers(topology->factors)
              << " workers, but --workers is " << *workers << "\n";
      return BadUsage;
    }
    topology->flops = flopsFlag.value * 1e12;
    options.topology = std::move(*topology);
  }
  std::unique_ptr<planner::Machine> machine;
  if (!machineFlag.empty()) {
    if (!topologyFlag.empty()) {
      error() << "--machine and --topology exclude each other (a machine "
                 "file describes the machine the plan runs on)\n";
      return BadUsage;
    }
    machine = planner::readMachineFile(machineFlag, diags);
    if (!machine)
      return BadInput;
    if (megatron3D && !machine->cluster) {
      error() << "--baseline=megatron-3d needs a GPU cluster's machine file "
                 "(with \"cluster\", docs/Machines.md); " << machineFlag
              << " is a calibration's\n";
      return BadUsage;
    }
  }
  graph::SpecLibrary specs;
  LoadedGraph loaded;
  if (!loadProblem(positional[0], specs, diags, loaded))
    return BadInput;
  const planner::PlanningProblem &problem = *loaded.problem;
  if (megatron3D)
    return runMegatron3D(problem, *loaded.graph, *machine->cluster, specs,
                         *workers);

  SummaryInput summary;
  summary.graphName = llvm::sys::path::filename(positional[0]).str();
  summary.problem = &problem;
  // The baselines are plans of their own when asked for, and the summary's
  // points of comparison; other outputs do not need them.
  // The Megatron baseline applies to graphs with linear layers; the
  // summary shows it for those.
  bool summarize = emitKind == EmitKind::Summary;
  bool hasLinears = llvm::any_of(planner::getMegatronTensorDims(problem),
                                 [](int dim) { return dim >= 0; });
  // megatron-dp is listed where it differs from megatron: groups smaller
  // than K.
  constexpr unsigned NumBaselines = 5;
  llvm::Optional<plan::Plan> baselines[NumBaselines];
  // The chosen baseline's peaks, for its summary.
  std::vector<runtime::WorkerPeak> baselinePeaks;
  const planner::BaselineKind kinds[NumBaselines] = {
      planner::BaselineKind::DataParallel, planner::BaselineKind::Replicate,
      planner::BaselineKind::Megatron, planner::BaselineKind::Fsdp,
      planner::BaselineKind::MegatronDP};
  const BaselineChoice choices[NumBaselines] = {
      BaselineChoice::DataParallel, BaselineChoice::Replicate,
      BaselineChoice::Megatron, BaselineChoice::Fsdp,
      BaselineChoice::MegatronDP};
  unsigned group = planner::getMegatronGroup(*workers, options.topology);
  for (unsigned b = 0; b != NumBaselines; ++b) {
    bool summarized =
        kinds[b] == planner::BaselineKind::Megatron ? hasLinears
        : kinds[b] == planner::BaselineKind::MegatronDP
            ? hasLinears && group > 1 && group < *workers
            : true;
    bool wanted = baseline == choices[b] || (summarize && summarized);
    if (!wanted)
      continue;
    auto p = planner::planBaseline(
        problem, kinds[b], *workers, options.topology,
        baseline == choices[b] ? &baselinePeaks : nullptr);
    if (!p) {
      error() << llvm::toString(p.takeError()) << "\n";
      return BadInput;
    }
    baselines[b] = std::move(*p);
  }
  summary.dataParallel = baselines[0] ? &*baselines[0] : nullptr;
  summary.replicated = baselines[1] ? &*baselines[1] : nullptr;
  summary.megatron = baselines[2] ? &*baselines[2] : nullptr;
  summary.fsdp = baselines[3] ? &*baselines[3] : nullptr;
  summary.megatronDP = baselines[4] ? &*baselines[4] : nullptr;

  if (baseline != BaselineChoice::None) {
    static const char *const names[NumBaselines] = {
        "the data-parallel baseline", "the replicate baseline",
        "the Megatron baseline", "the fsdp baseline",
        "the megatron-dp baseline"};
    unsigned b = std::find(std::begin(choices), std::end(choices), baseline) -
                 std::begin(choices);
    summary.what = names[b];
    summary.plan = &*baselines[b];
    summary.peaks = &baselinePeaks;
    if (machine &&
        !estimateOnMachine(problem, specs, *machine, *baselines[b],
                           baseline == BaselineChoice::Fsdp))
      return BadInput;
    return writeOutput(*loaded.graph, *summary.plan, *summary.plan, summary,
                       specs);
  }
  planner::PlannerReport report;
  auto p = planner::planGraph(problem, options, report);
  if (!p) {
    error() << llvm::toString(p.takeError()) << "\n";
    return BadInput;
  }
  // Every approximation the search made, one line each (also in the
  // plan's "search" object).
  for (const auto &approximation : report.approximations)
    llvm::WithColor::note(llvm::errs(), "tofu-plan")
        << approximation.message << "\n";
  summary.what = searchKind == planner::SearchKind::Exact
                     ? "the exact optimum"
                     : "the recursive search's plan";
  planner::RecomputeReport recomputeReport;
  if (peakMemoryFlag.getNumOccurrences()) {
    std::vector<std::string> tried;
    auto fitted = planner::fitPeakBudgetJointly(
        problem, specs, options, report, std::move(*p), peakMemoryFlag.value,
        recomputeReport, recomputeChains, tried);
    if (!fitted) {
      error() << llvm::toString(fitted.takeError()) << "\n";
      return BadInput;
    }
    // Another plan than the search's: say what was tried (also in the
    // plan's "search" object).
    if (!tried.empty())
      for (const std::string &line : tried)
        llvm::WithColor::note(llvm::errs(), "tofu-plan")
            << "--peak-memory: tried " << line << "\n";
    p = std::move(*fitted);
    summary.recompute = &recomputeReport;
  }
  summary.report = &report;
  // The search predicted its plan's peaks; a plan --peak-memory changed
  // has its own, which the summary predicts.
  if (!peakMemoryFlag.getNumOccurrences())
    summary.peaks = &report.peaks;
  // A plan that recomputes runs as the rewritten graph's plan: the summary,
  // Graphviz and C++ show that; the plan JSON is the graph's own.
  llvm::Optional<planner::RecomputedPlan> recomputed;
  if (!p->recompute.empty()) {
    auto prepared = planner::prepareRecomputedPlan(*loaded.graph, specs, *p);
    if (!prepared) {
      error() << llvm::toString(prepared.takeError()) << "\n";
      return BadInput;
    }
    recomputed = std::move(*prepared);
    summary.problem = recomputed->problem.get();
  }
  const graph::Graph &runGraph =
      recomputed ? *recomputed->rewritten.graph : *loaded.graph;
  plan::Plan &runPlan = recomputed ? recomputed->plan : *p;
  summary.plan = &runPlan;
  if (machine &&
      !estimateOnMachine(*summary.problem, specs, *machine, runPlan))
    return BadInput;
  if (recomputed)
    p->estimate = runPlan.estimate;
  return writeOutput(runGraph, runPlan, *p, summary, specs);
}

} // namespace

int main(int argc, char **argv) {
  llvm::InitLLVM initLLVM(argc, argv);
  std::string overview =
      "tofu-plan: partition a training graph across K workers, minimising "
      "the bytes moved (docs/CostModel.md), and write the plan.\n\n"
      "  tofu-plan GRAPH --workers K [--emit=plan|summary|dot|cpp]\n"
      "  tofu-plan --verify PLAN.json GRAPH\n\n"
      "The planner's passes (--print-after=PASS, docs/Planner.md, "
      "\"Passes\"):\n";
  for (const planner::PlannerPassInfo &pass : planner::getPlannerPasses())
    overview += "  " + std::string(pass.name) +
                std::string(10 - std::strlen(pass.name), ' ') +
                pass.description + "\n";
  overview += "\nExit status: 0 success, 1 bad input (diagnostics on "
              "stderr), 2 bad usage.\n";
  if (!cli::parseToolCommandLine(argc, argv, {&category}, overview))
    return BadUsage;
  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags(srcMgr);
  return verifyMode ? runVerify(diags) : runPlan(diags);
}
