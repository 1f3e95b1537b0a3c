//===- WorkModel.h - How much work an op's share is -------------*- C++ -*-===//
//
// This file declares WorkModel, the count of "work points" of an op's
// kernel over an iteration box, which both step-time estimates use (the
// `--topology` one in Topology.h, the calibrated one in StepTime.h): the
// body once per output element, and each reduction once per combination of
// the index variables it uses (a reduction that does not depend on an
// output variable is hoisted out of its loop, as a kernel generator does).
// A one-hot reduction, `Sum(lambda k: select(T[..] == v, e, 0))`, is how TDL
// writes gathers and scatter-adds (embedding and loss backwards): a kernel
// reads each element once instead, so such an op counts the elements it
// reads and writes.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_WORKMODEL_H
#define TOFU_PLANNER_WORKMODEL_H

#include "tofu/Planner/PlanningProblem.h"

#include "llvm/ADT/STLFunctionalExtras.h"

namespace tofu {
namespace planner {

class WorkModel {
public:
  explicit WorkModel(const ProblemOp &op);
  /// The work points of the op's kernel over `box` (one range per index
  /// variable, output variables first).
  double getPoints(ArrayRef<analysis::Range> box) const;
  /// The elements the kernel reads and writes over `box`: its output
  /// region plus the region of each input it reads.
  double getElements(ArrayRef<analysis::Range> box) const;
  /// For a kernel routed to BLAS, which calls one GEMM per batch element
  /// of the box (codegen's gemm and convolution kinds): the elements one
  /// call reads and writes, times the calls. The batch variables of a
  /// `convolution` are the one of its first input's dimension 0 (the
  /// image), those of a GEMM the ones indexing every input and the output.
  double getGemmElements(ArrayRef<analysis::Range> box,
                         bool convolution) const;

private:
  const ProblemOp &op;
  bool oneHot = false;
  /// Per reduction, the index variables its body uses (its own included).
  std::vector<SmallVector<unsigned, 4>> reductionVars;
};

/// Per op of `p` and per worker, `seconds(i, work, box)` of the op's
/// iteration box on that worker. Errors: an op's steps do not resolve.
llvm::Expected<std::vector<std::vector<double>>> getWorkerOpSeconds(
    const PlanningProblem &problem, const plan::Plan &p,
    llvm::function_ref<double(unsigned op, const WorkModel &work,
                              ArrayRef<analysis::Range> box)>
        seconds);

/// The compute time of the most loaded worker of `p` (the --topology
/// estimate's): getWorkerOpSeconds summed per worker.
llvm::Expected<double> getBusiestWorkerSeconds(
    const PlanningProblem &problem, const plan::Plan &p,
    llvm::function_ref<double(unsigned op, const WorkModel &work,
                              ArrayRef<analysis::Range> box)>
        seconds);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_WORKMODEL_H
