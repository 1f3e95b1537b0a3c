//===- StepTime.cpp - A plan's step time on a measured machine ------------===//
//
// This file implements the calibrated step-time estimate (StepTime.h).
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/StepTime.h"
#include "tofu/Planner/Assignment.h"
#include "tofu/Planner/CostModel.h"
#include "tofu/Planner/WorkModel.h"

#include <algorithm>

using namespace tofu;
using namespace tofu::planner;

llvm::Expected<plan::StepEstimate>
planner::estimateStepOnMachine(const PlanningProblem &problem,
                               const plan::Plan &p, const Machine &machine,
                               ArrayRef<std::string> opKinds) {
  if (p.workers != machine.workers)
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the machine file was measured with " + Twine(machine.workers) +
            " workers computing at once, the plan has " + Twine(p.workers) +
            " (run tofu-calibrate --workers " + Twine(p.workers) + ")");
  auto costs = evaluatePlan(problem, p);
  if (!costs)
    return costs.takeError();
  plan::StepEstimate estimate;
  estimate.levelBytes.push_back(costs->commBytes);
  // Communication: comm_bytes over the workers' links, each byte also
  // packed and unpacked, and one latency per op that moves bytes.
  unsigned messages = 0;
  for (const plan::OpCost &cost : costs->ops)
    messages += cost.total() > 0;
  int64_t nextStep = 0;
  for (int64_t bytes : costs->nextStepBytes)
    nextStep += bytes;
  messages += nextStep > 0;
  double perWorker = double(costs->commBytes) / p.workers;
  estimate.communicationSeconds =
      perWorker / machine.transportBandwidth +
      2 * perWorker / machine.memoryBandwidth +
      messages * machine.transportLatency;
  // Compute: per worker, the sum of its calls' times.
  auto busiest = getBusiestWorkerSeconds(
      problem, p,
      [&](unsigned i, const WorkModel &work, ArrayRef<analysis::Range> box) {
        StringRef kind = i < opKinds.size() && !opKinds[i].empty()
                             ? StringRef(opKinds[i])
                             : StringRef("elementwise");
        StringRef type =
            problem.getGraph().getOp(problem.getOp(i).graphOp).type;
        // GEMM-routed kernels' speed depends on their GEMMs' shape: points
        // over the elements of the GEMM calls (about the narrowest side).
        double elements =
            kind == "gemm" || kind == "convolution"
                ? work.getGemmElements(box, kind == "convolution")
                : 0;
        return machine.getOpSeconds(type, kind, work.getPoints(box),
                                    elements);
      });
  if (!busiest)
    return busiest.takeError();
  estimate.computeSeconds = *busiest;
  return estimate;
}
