//===- GeneratedPlan.h - Plans compiled into a training binary --*- C++ -*-===//
//
// This file declares what a source written by `tofu-plan --emit=cpp`
// defines, and how a training program runs it: the plan as constant tables
// (GeneratedPlan: per tensor its layout, per op its rule, no per-worker
// boxes), the op kernels of the graph as a KernelInfo table, and the
// rebuilding of the runtime's ExecutablePlan from those tables, every
// worker's boxes derived by the box rules (BoxRules.h). LinkedPlan.h runs
// one.
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
#include <optional>
#include <string>
#include <vector>

namespace tofu {
namespace runtime {

/// A box in a generated table: {rank, lo[0..rank), hi[0..rank)}.
using GeneratedBox = const std::int64_t *;

/// A layout step that splits no dimension (docs/PlanFormat.md, "Compact
/// layouts": `replicate`).
constexpr std::uint8_t GeneratedReplicate = 255;

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
  /// Per worker, the stored box or null, where `layout` is null (tables
  /// written by hand, or a plan that lists regions).
  const GeneratedBox *stored;
  /// Per level of the plan, the dimension that level splits (or
  /// GeneratedReplicate): every worker's stored box is derived from it
  /// (BoxRules.h). What tofu-plan writes.
  const std::uint8_t *layout = nullptr;
};

/// One worker's share of an op (see OpShare), in tables that list them.
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
  /// One share per worker, where `rule` is null (tables written by hand).
  const GeneratedShare *workers;
  /// Per input, OpInfo::pointwise (null: none known).
  const bool *pointwise = nullptr;
  /// The op's rule (runtime::encodeOpRule): its variables' extents, the
  /// variable each level splits, and the affine maps from an iteration box
  /// to the boxes it reads; every worker's share is derived from it. Ops
  /// of one class share one array. What tofu-plan writes.
  const std::int64_t *rule = nullptr;
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
  /// The plan's level factors, outermost first (none for one worker),
  /// which layouts and rules split by.
  unsigned numLevels = 0;
  const unsigned *levels = nullptr;
};

/// The ExecutablePlan of `generated`: every worker's stored boxes and op
/// shares derived from the layouts and op rules (BoxRules.h), checked with
/// validatePlan (throws RuntimeError if the tables are inconsistent). With
/// `worker` one of the plan's workers (the one an MPI rank runs), the
/// other workers' iteration boxes are left empty (rank 0), as
/// planner::buildExecutablePlan leaves them: only a worker's own kernels
/// read its iteration box.
ExecutablePlan buildExecutablePlan(const GeneratedPlan &generated,
                                   int worker = -1);

/// A plan as a generated source holds it, in owned memory: what
/// `tofu-plan --emit=cpp` writes out as tables (lib/PlanEmit) and what
/// GeneratedTables views as a GeneratedPlan without compiling it.
struct CompactPlan {
  /// The tensors and ops without derived boxes: no op has shares, and only
  /// a tensor without a layout has its stored boxes (listed).
  ExecutablePlan plan;
  /// Per tensor, the graph's role.
  std::vector<std::string> roles;
  std::vector<unsigned> levels;
  /// Per tensor, its layout (one GeneratedTensor::layout step per level),
  /// or none where its stored boxes are listed.
  std::vector<std::optional<std::vector<std::uint8_t>>> layouts;
  /// The distinct op rules (encodeOpRule), one per op class, and per op
  /// the index of its rule.
  std::vector<std::vector<std::int64_t>> rules;
  std::vector<unsigned> opRules;
  std::string graphName;
};

/// The tables of `compact` as a generated source defines them, pointing
/// into `compact` (which must outlive them), with no kernels.
class GeneratedTables {
public:
  explicit GeneratedTables(const CompactPlan &compact);
  GeneratedTables(const GeneratedTables &) = delete;
  GeneratedTables &operator=(const GeneratedTables &) = delete;
  const GeneratedPlan &get() const { return generated; }

private:
  std::vector<std::vector<std::int64_t>> boxes;
  std::vector<std::vector<GeneratedBox>> stored;
  std::vector<std::unique_ptr<bool[]>> pointwise;
  std::vector<GeneratedTensor> tensors;
  std::vector<GeneratedOp> ops;
  GeneratedPlan generated;
};

/// The first difference between the boxes (stored, iteration, input and
/// output, per worker) and the tensors and ops of `expected` and `actual`,
/// as a sentence; empty if they are equal.
std::string findPlanDifference(const ExecutablePlan &expected,
                               const ExecutablePlan &actual);

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
