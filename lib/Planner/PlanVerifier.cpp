//===- PlanVerifier.cpp - Check a plan against its graph ------------------===//
//
// This file implements the plan verifier: structure and steps through the
// cost model's own checks, coverage of each tensor by its regions by the
// runtime's rule (runtime::checkBoxesCover), and the claimed numbers
// against the recomputed ones.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/PlanVerifier.h"
#include "tofu/Plan/Layouts.h"
#include "tofu/Planner/OpClasses.h"
#include "tofu/Runtime/ExecutablePlan.h"

#include "llvm/Support/WithColor.h"

using namespace tofu;
using namespace tofu::planner;

namespace {

class Verifier {
public:
  Verifier(const PlanningProblem &problem, const plan::Plan &p,
           llvm::raw_ostream &errs, StringRef tool, bool exactPeaks)
      : problem(problem), p(p), errs(errs), tool(tool),
        exactPeaks(exactPeaks) {}

  bool run(CostReport &report);

private:
  llvm::raw_ostream &error() {
    ++numErrors;
    return llvm::WithColor::error(errs, tool);
  }
  void checkCoverage();
  void checkNumbers(const CostReport &report);
  void checkPeakBound(const CostReport &report);
  void checkPerWorker(StringRef field, ArrayRef<int64_t> claimed,
                      ArrayRef<int64_t> computed);

  const PlanningProblem &problem;
  const plan::Plan &p;
  llvm::raw_ostream &errs;
  StringRef tool;
  bool exactPeaks;
  unsigned numErrors = 0;
};

} // namespace

/// Every tensor covered by its regions, by the runtime's rule (as
/// runtime::validatePlan applies it to the lowered plan). Tensors of one
/// class (OpClasses.h) have the same shape and regions: a class found
/// covered is not checked again, so the work grows with K times the
/// classes, not K times the tensors.
void Verifier::checkCoverage() {
  OpClasses classes = computeTensorClasses(problem, p);
  std::vector<bool> covered(classes.numTensorClasses);
  std::vector<runtime::Box> boxes;
  std::vector<const runtime::Box *> held;
  analysis::Region region;
  for (unsigned t = 0, e = p.tensors.size(); t != e; ++t) {
    unsigned c = classes.tensorClass[t];
    if (covered[c])
      continue;
    boxes.clear();
    for (unsigned w = 0; w != p.workers; ++w)
      if (plan::getStoredRegion(p, p.tensors[t], w, region))
        boxes.push_back(toRuntimeBox(region));
    held.clear();
    for (const runtime::Box &box : boxes)
      held.push_back(&box);
    ArrayRef<int64_t> shape = problem.getShape(t);
    if (llvm::Error err = applyRuntimeRule([&] {
          runtime::checkBoxesCover("the regions of tensor '" +
                                       p.tensors[t].name + "'",
                                   held, {shape.begin(), shape.end()});
        }))
      error() << llvm::toString(std::move(err)) << "\n";
    else
      covered[c] = true;
  }
}

void Verifier::checkPerWorker(StringRef field, ArrayRef<int64_t> claimed,
                              ArrayRef<int64_t> computed) {
  if (claimed.size() != computed.size()) {
    error() << field << " has " << claimed.size() << " entries for "
            << computed.size() << " workers\n";
    return;
  }
  for (unsigned w = 0, e = claimed.size(); w != e; ++w)
    if (claimed[w] != computed[w]) {
      error() << field << "[" << w << "] is " << claimed[w]
              << ", but the cost model gives " << computed[w] << "\n";
      return;
    }
}

void Verifier::checkNumbers(const CostReport &report) {
  if (p.commBytes != report.commBytes)
    error() << "comm_bytes is " << p.commBytes
            << ", but the cost model gives " << report.commBytes << "\n";
  checkPerWorker("resident_bytes_per_worker", p.residentBytesPerWorker,
                 report.residentBytesPerWorker);
  // The peak is the project's estimate of what the runtime measures
  // (docs/CostModel.md): any plan's must lie within the contract's bound;
  // where it is to be measured against, it must be the estimate itself.
  if (exactPeaks)
    checkPerWorker("peak_bytes_per_worker", p.peakBytesPerWorker,
                   report.peakBytesPerWorker);
  else
    checkPeakBound(report);
}

void Verifier::checkPeakBound(const CostReport &report) {
  unsigned k = report.residentBytesPerWorker.size();
  if (p.peakBytesPerWorker.size() != k) {
    error() << "peak_bytes_per_worker has " << p.peakBytesPerWorker.size()
            << " entries for " << k << " workers\n";
    return;
  }
  for (unsigned w = 0; w != k; ++w) {
    int64_t bound = report.residentBytesPerWorker[w] +
                    report.largestBuffersPerWorker[w];
    if (p.peakBytesPerWorker[w] < 0 || p.peakBytesPerWorker[w] > bound) {
      error() << "peak_bytes_per_worker[" << w << "] is "
              << p.peakBytesPerWorker[w]
              << ", outside [0, resident + largest op buffers = " << bound
              << "]\n";
      return;
    }
  }
}

bool Verifier::run(CostReport &report) {
  auto costs = evaluatePlan(problem, p);
  if (!costs) {
    error() << "the plan does not match the graph: "
            << llvm::toString(costs.takeError()) << "\n";
    return false;
  }
  checkCoverage();
  checkNumbers(*costs);
  report = std::move(*costs);
  return numErrors == 0;
}

bool planner::verifyPlan(const PlanningProblem &problem, const plan::Plan &p,
                         llvm::raw_ostream &errs, CostReport &report,
                         StringRef tool, bool exactPeaks) {
  return Verifier(problem, p, errs, tool, exactPeaks).run(report);
}
