//===- StepTime.cpp - A plan's step time on a measured machine ------------===//
//
// This file implements the calibrated step-time estimate (StepTime.h): it
// writes each worker's step as the executor runs it (runtime::Executor's
// runOp and runNextStep, over the runtime's own schedule and in-place
// rules), prices every action on the machine, and simulates the workers
// sharing the machine's cores (StepSimulation.h).
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/StepTime.h"
#include "tofu/Planner/CostModel.h"
#include "tofu/Planner/Executable.h"
#include "tofu/Planner/StepSimulation.h"
#include "tofu/Planner/WorkModel.h"
#include "tofu/Runtime/Executor.h"
#include "tofu/Runtime/InPlaceUpdates.h"
#include "tofu/Runtime/Schedule.h"
#include "tofu/Runtime/StepMemory.h"

#include <algorithm>

using namespace tofu;
using namespace tofu::planner;
using runtime::Piece;

namespace {

/// Builds every worker's actions, op by op, in the executor's order.
class StepWriter {
public:
  StepWriter(const runtime::ExecutablePlan &plan,
             const std::vector<runtime::TensorMemory> &memory,
             const Machine &machine)
      : plan(plan), memory(memory), machine(machine), programs(plan.workers) {
    // The in-place rule (InPlaceUpdates.h), with the graph's element sizes.
    std::vector<bool> candidates = runtime::getInPlaceCandidates(
        plan, runtime::computeLastUse(plan),
        [&](unsigned t) { return memory[t].elementSize; });
    inPlace.assign(plan.workers, std::vector<bool>(plan.tensors.size()));
    for (unsigned w = 0; w != plan.workers; ++w)
      for (unsigned t = 0, e = plan.tensors.size(); t != e; ++t)
        inPlace[w][t] = candidates[t] &&
                        runtime::isUpdatedInPlace(
                            plan.tensors[plan.tensors[t].updates].stored[w],
                            plan.tensors[t].stored[w]);
  }

  /// Op `i`: copy the local parts of input boxes not read in place, fetch,
  /// compute (`kernelSeconds` per worker), combine partial values at their
  /// roots, copy the local part of an output not written in place, deliver.
  void addOp(unsigned i, const runtime::OpSchedule &sched,
             ArrayRef<double> kernelSeconds) {
    const runtime::OpInfo &op = plan.ops[i];
    auto inputSize = [&](const Piece &piece) {
      return memory[op.inputs[piece.slot]].elementSize;
    };
    auto outputSize = [&](const Piece &) {
      return memory[op.output].elementSize;
    };
    std::vector<double> local(plan.workers, 0);
    for (const Piece &piece : sched.fetch)
      if (piece.src == piece.dst &&
          !readsInPlace(plan, i, piece.slot, piece.dst))
        local[piece.dst] += piece.box.getVolume() * inputSize(piece);
    addCopies(local);
    addMessages(sched.fetch, inputSize);
    for (unsigned w = 0; w != plan.workers; ++w)
      if (!op.workers[w].output.isEmpty())
        programs[w].push_back(StepAction::compute(kernelSeconds[w]));
    if (op.partial)
      addMessages(sched.reduce, outputSize);
    std::fill(local.begin(), local.end(), 0);
    // An output not computed into the buffer it is delivered in is copied
    // there (InPlaceUpdates.h, getOutputPlace).
    std::vector<bool> direct(plan.workers);
    for (unsigned w = 0; w != plan.workers; ++w)
      direct[w] = runtime::getOutputPlace(plan, i, w, inPlace[w]).direct;
    for (const Piece &piece : sched.deliver)
      if (piece.src == piece.dst && !direct[piece.dst])
        local[piece.dst] += piece.box.getVolume() * outputSize(piece);
    addCopies(local);
    addMessages(sched.deliver, outputSize);
  }

  /// After the last op: each updated tensor into its parameter's layout,
  /// a new buffer per parameter (local parts copied, others received),
  /// except where it was written in place.
  void addNextStep(const std::vector<Piece> &pieces) {
    auto updateSize = [&](const Piece &piece) {
      return memory[piece.slot].elementSize;
    };
    std::vector<double> local(plan.workers, 0);
    for (const Piece &piece : pieces)
      if (piece.src == piece.dst && !inPlace[piece.dst][piece.slot])
        local[piece.dst] += piece.box.getVolume() * updateSize(piece);
    addCopies(local);
    addMessages(pieces, updateSize);
  }

  SimulatedStep simulate() const {
    return simulateStep(programs, numMessages, machine.hardwareThreads,
                        machine.transportLatency);
  }

private:
  double copySeconds(double bytes) const {
    return bytes / machine.memoryBandwidth;
  }

  /// Handing `bytes` to the transport, as an action's seconds with every
  /// worker running (StepAction). tofu-calibrate timed the transport
  /// between two workers with the others idle, a core each: with more
  /// workers than cores, every worker running has cores / K of one, so
  /// the same bytes take K / cores times as long.
  double transportSeconds(double bytes) const {
    double stretch =
        std::max(1.0, double(plan.workers) /
                          std::max(machine.hardwareThreads, 1u));
    return bytes / machine.transportBandwidth * stretch;
  }

  void addCopies(ArrayRef<double> bytes) {
    for (unsigned w = 0; w != plan.workers; ++w)
      if (bytes[w] > 0)
        programs[w].push_back(StepAction::move(copySeconds(bytes[w])));
  }

  /// A phase's messages, each worker's sends first (the sender packs a
  /// message and hands it to the transport), then its receives (the
  /// receiver waits for a message, copies it out of the transport and
  /// unpacks it, or adds it into its partial value: as much memory
  /// traffic), each in getMessages' order. The executor takes its sends
  /// first where its pool ends the phase the same either way (on the
  /// bundled models every phase at K = 2, most at K = 4) and keeps
  /// getMessages' order otherwise (docs/StepTime.md).
  template <typename SizeFn>
  void addMessages(const std::vector<Piece> &pieces, SizeFn sizeOf) {
    std::vector<runtime::Message> messages =
        runtime::getMessages(pieces, sizeOf);
    unsigned first = numMessages;
    for (const runtime::Message &m : messages) {
      double bytes = m.bytes;
      programs[m.src].push_back(StepAction::move(
          copySeconds(bytes) + transportSeconds(bytes)));
      programs[m.src].push_back(StepAction::send(numMessages++));
    }
    for (unsigned i = 0, e = messages.size(); i != e; ++i) {
      const runtime::Message &m = messages[i];
      programs[m.dst].push_back(StepAction::receive(first + i));
      programs[m.dst].push_back(StepAction::move(2 * copySeconds(m.bytes)));
    }
  }

  const runtime::ExecutablePlan &plan;
  const std::vector<runtime::TensorMemory> &memory;
  const Machine &machine;
  std::vector<std::vector<StepAction>> programs;
  unsigned numMessages = 0;
  /// Per worker and tensor: a next value written over what it replaces.
  std::vector<std::vector<bool>> inPlace;
};

} // namespace

llvm::Expected<plan::StepEstimate>
planner::estimateStepOnMachine(const PlanningProblem &problem,
                               const plan::Plan &p, const Machine &machine,
                               ArrayRef<std::string> opKinds) {
  if (machine.cluster)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "a GPU cluster's machine file has no calibrated kernels: its plans "
        "are estimated by tofu-plan --machine (docs/Machines.md)");
  if (p.workers != machine.workers)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the machine file was measured with " + Twine(machine.workers) +
            " workers computing at once, the plan has " + Twine(p.workers) +
            " (run tofu-calibrate --workers " + Twine(p.workers) + ")");
  std::vector<SmallVector<uint8_t, 4>> steps;
  if (llvm::Error err = resolvePlanSteps(problem, p, steps))
    return std::move(err);
  auto executable =
      buildExecutablePlan(problem, p, steps, UnexecutedTypes::Placeholder);
  if (!executable)
    return executable.takeError();
  runtime::Schedule schedule;
  if (llvm::Error err = applyRuntimeRule(
          [&] { schedule = runtime::buildSchedule(*executable); }))
    return std::move(err);
  auto kernelSeconds = getWorkerOpSeconds(
      problem, p,
      [&](unsigned i, const WorkModel &work, ArrayRef<analysis::Range> box) {
        StringRef kind = i < opKinds.size() && !opKinds[i].empty()
                             ? StringRef(opKinds[i])
                             : StringRef("elementwise");
        StringRef type =
            problem.getGraph().getOp(problem.getOp(i).graphOp).type;
        // GEMM-routed kernels' speed depends on their GEMMs' shape: points
        // over the elements of the GEMM calls (about the narrowest side).
        double elements = kind == "gemm" || kind == "convolution"
                              ? work.getGemmElements(box, kind == "convolution")
                              : 0;
        return machine.getOpSeconds(type, kind, work.getPoints(box), elements);
      });
  if (!kernelSeconds)
    return kernelSeconds.takeError();

  std::vector<runtime::TensorMemory> memory = getTensorMemory(problem);
  StepWriter writer(*executable, memory, machine);
  for (unsigned i = 0, e = executable->ops.size(); i != e; ++i)
    writer.addOp(i, schedule.ops[i], (*kernelSeconds)[i]);
  writer.addNextStep(schedule.nextStep);
  SimulatedStep step = writer.simulate();

  plan::StepEstimate estimate;
  // The schedule moves each element as the cost model charges it: its
  // bytes between workers are the plan's comm_bytes (Schedule.h).
  estimate.levelBytes.push_back(schedule.getTotalBytes());
  estimate.computeSeconds =
      *std::max_element(step.computeSeconds.begin(), step.computeSeconds.end());
  estimate.communicationSeconds = step.seconds - estimate.computeSeconds;
  return estimate;
}
