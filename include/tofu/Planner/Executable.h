//===- Executable.h - A plan as the runtime executes it ---------*- C++ -*-===//
//
// This file declares the construction of the runtime's ExecutablePlan from
// a plan of a bound graph: every tensor's stored box per worker and every
// op's iteration box, input boxes and output box per worker, computed by
// the functions the cost model charges (computeOpShare), and which tensors
// live through the step. The cost model predicts the runtime's peak memory
// on it (runtime::predictPeaks) and lib/Lowering hands it to the runtime,
// so both see one plan.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_EXECUTABLE_H
#define TOFU_PLANNER_EXECUTABLE_H

#include "tofu/Planner/PlanningProblem.h"
#include "tofu/Runtime/BoxRules.h"
#include "tofu/Runtime/ExecutablePlan.h"
#include "tofu/Runtime/StepMemory.h"

#include "llvm/Support/Error.h"

namespace tofu {
namespace planner {

/// The runtime's element type of `dtype`; an error for f16 and bf16, which
/// the runtime does not execute yet.
llvm::Expected<runtime::ElementType> getRuntimeElementType(DType dtype);

/// What to do with a tensor of a type the runtime does not execute.
enum class UnexecutedTypes {
  /// Fail, naming the tensor.
  Fail,
  /// Give it type f32 (for runtime::predictPeaks, which takes element
  /// sizes from getTensorMemory).
  Placeholder,
};

/// `p` for `problem`'s graph as the runtime executes it; `steps` are the
/// plan's steps resolved by resolvePlanSteps. commBytes and
/// peakBytesPerWorker are left empty. With `worker` one of the plan's
/// workers (the one an MPI rank runs), the other workers' iteration boxes
/// are left empty (rank 0): only a worker's own kernels read its iteration
/// box; everything else is the whole plan's.
llvm::Expected<runtime::ExecutablePlan>
buildExecutablePlan(const PlanningProblem &problem, const plan::Plan &p,
                    ArrayRef<SmallVector<uint8_t, 4>> steps,
                    UnexecutedTypes unexecuted, int worker = -1);

/// buildExecutablePlan without the boxes: every tensor and op with no
/// stored boxes and no shares (what runtime::buildExecutablePlan derives
/// them into from layouts and op rules).
llvm::Expected<runtime::ExecutablePlan>
buildExecutableSkeleton(const PlanningProblem &problem, const plan::Plan &p,
                        ArrayRef<SmallVector<uint8_t, 4>> steps,
                        UnexecutedTypes unexecuted);

/// The runtime's rule for `op`'s shares under `steps` (one per level of
/// `numLevels`): its variables' extents, the variable each level splits,
/// and its reads with the binding's coefficients (runtime::OpRule). The
/// boxes runtime::getShareBoxes derives from it are computeOpShare's.
runtime::OpRule getOpRule(const ProblemOp &op, ArrayRef<uint8_t> steps,
                          unsigned numLevels);

/// Per worker, the peak its pool measures in the runtime's first step of
/// `p` (runtime::predictPeaks), with the boxes buildExecutablePlan gives
/// derived once per op class (computeOpClasses) and each op's messages
/// counted from a grid of its boxes: memory grows with K x classes and
/// time with K x ops for the replay, never with a whole schedule. An error
/// if the plan is not executable (its regions leave a tensor uncovered, or
/// lie outside it).
llvm::Expected<std::vector<runtime::WorkerPeak>>
predictPlanPeaks(const PlanningProblem &problem, const plan::Plan &p,
                 ArrayRef<SmallVector<uint8_t, 4>> steps);

/// Per tensor, its element size and what its stored boxes hold
/// (parameters and their next values, optimizer state and its next values,
/// gradients, everything else as activations).
std::vector<runtime::TensorMemory> getTensorMemory(const PlanningProblem &problem);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_EXECUTABLE_H
