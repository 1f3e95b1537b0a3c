//===- ReferenceKernels.h - Kernels built on the TDL evaluator --*- C++ -*-===//
//
// This file declares the reference KernelProvider of tofu-run: each op's
// concrete TDL operator compiled by the evaluator (eval::CompiledOp) and run
// over a worker's iteration box with CompiledOp::runBox, converting the
// runtime's typed boxes to and from doubles. Slow, but it is the semantics
// every generated kernel must match (runtime/include/tofu/Runtime/Kernel.h).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TOOLS_TOFU_RUN_REFERENCEKERNELS_H
#define TOFU_TOOLS_TOFU_RUN_REFERENCEKERNELS_H

#include "tofu/Eval/Evaluator.h"
#include "tofu/Graph/Graph.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Runtime/Executor.h"

namespace tofu {

/// One compiled evaluator program per graph op, by op index.
class ReferenceKernels : public runtime::KernelProvider {
public:
  /// Compiles every op of `g` (which bound as a PlanningProblem), or only
  /// those `wanted` accepts; an error names the first op that cannot be
  /// compiled.
  static llvm::Expected<std::unique_ptr<ReferenceKernels>>
  create(const graph::Graph &g, graph::SpecLibrary &specs,
         llvm::function_ref<bool(unsigned op)> wanted = nullptr);

  /// Runs op `kernel`'s program; throws RuntimeError for an op that was
  /// not compiled.
  void run(unsigned kernel, const runtime::KernelCall &call) override;

private:
  std::vector<std::unique_ptr<eval::CompiledOp>> ops;
};

} // namespace tofu

#endif // TOFU_TOOLS_TOFU_RUN_REFERENCEKERNELS_H
