//===- GeneratedPlan.h - Plans compiled into a training binary --*- C++ -*-===//
//
// This file declares what a source written by `tofu-plan --emit=cpp`
// defines, and how a training program runs it: the lowered plan as constant
// tables (GeneratedPlan), the op kernels of the graph as a KernelInfo table,
// and the rebuilding of the runtime's ExecutablePlan from those tables.
// LinkedPlan.h runs one.
//
// A generated source defines, in the namespace given by tofu-plan's
// --cpp-namespace (default `tofu_plan`), one function
//
//   const tofu::runtime::GeneratedPlan &getGeneratedPlan();
//
// Declare it with TOFU_DECLARE_PLAN(NS). Everything else in the source has
// internal linkage, so several plans link into one binary. docs/Linking.md
// is the user guide.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_GENERATEDPLAN_H
#define TOFU_RUNTIME_GENERATEDPLAN_H

#include "tofu/Runtime/Executor.h"

#include <chrono>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace tofu {
namespace runtime {

/// A box in a generated table: {rank, lo[0..rank), hi[0..rank)}.
using GeneratedBox = const std::int64_t *;

/// One tensor of a generated plan (see TensorInfo).
struct GeneratedTensor {
  const char *name;
  /// The graph's role: "input", "param", "state", "output", ...
  const char *role;
  ElementType type;
  unsigned rank;
  const std::int64_t *shape;
  bool graphInput;
  bool persistent;
  int updates;
  /// Per worker, the stored box or null.
  const GeneratedBox *stored;
};

/// One worker's share of an op (see OpShare).
struct GeneratedShare {
  GeneratedBox iteration;
  /// One box per input of the op.
  const GeneratedBox *inputs;
  GeneratedBox output;
};

/// One op of a generated plan (see OpInfo).
struct GeneratedOp {
  const char *name;
  const char *type;
  unsigned numInputs;
  const unsigned *inputs;
  unsigned output;
  unsigned kernel;
  bool partial;
  Reducer reducer;
  /// One share per worker.
  const GeneratedShare *workers;
  /// Per input, OpInfo::pointwise (null: none known).
  const bool *pointwise = nullptr;
};

/// Everything `tofu-plan --emit=cpp` generates for one plan.
struct GeneratedPlan {
  /// The graph file the plan was made from, as tofu-plan was given it.
  const char *graphName;
  unsigned workers;
  unsigned numTensors;
  const GeneratedTensor *tensors;
  unsigned numOps;
  const GeneratedOp *ops;
  std::int64_t commBytes;
  /// One entry per worker.
  const std::int64_t *peakBytesPerWorker;
  /// The op kernels, one per op in graph order (`fn` null where an op has
  /// no kernel; running such an op throws RuntimeError).
  unsigned numKernels;
  const KernelInfo *kernels;
};

/// The ExecutablePlan of `generated`, checked with validatePlan (throws
/// RuntimeError if the tables are inconsistent).
ExecutablePlan buildExecutablePlan(const GeneratedPlan &generated);

/// The index of tensor `name` of `generated`, or -1.
int lookupTensor(const GeneratedPlan &generated, const std::string &name);

} // namespace runtime
} // namespace tofu

/// Declares the plan a generated source defines in namespace `NS` (which
/// may be nested: `a::b`).
#define TOFU_DECLARE_PLAN(NS)                                                  \
  namespace NS {                                                               \
  const ::tofu::runtime::GeneratedPlan &getGeneratedPlan();                    \
  }

#endif // TOFU_RUNTIME_GENERATEDPLAN_H
