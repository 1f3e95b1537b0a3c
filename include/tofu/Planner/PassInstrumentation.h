//===- PassInstrumentation.h - The planner's named passes -------*- C++ -*-===//
//
// This file declares the planner's passes by name and what runs after each:
// the driver (Planner.h) runs `coarsen` once per graph, then for every
// factoring of K (and every memory price) `search`, `refine` and `lower`.
// A PassInstrumentation prints a pass's result after it runs where it was
// asked to (tofu-plan --print-after=PASS, as MLIR's --mlir-print-ir-after),
// so that each stage of a plan can be read and tested on its own
// (docs/Planner.md, "Passes").
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLANNER_PASSINSTRUMENTATION_H
#define TOFU_PLANNER_PASSINSTRUMENTATION_H

#include "tofu/Planner/Assignment.h"
#include "tofu/Planner/Coarsening.h"

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/STLFunctionalExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/raw_ostream.h"

namespace tofu {
namespace planner {

/// The planner's passes, in the order they run.
enum class PlannerPass {
  /// Repeated structure's classes (Coarsening.h), once per graph.
  Coarsen,
  /// One factoring's assignment from the recursive or exact search.
  Search,
  /// That assignment re-decided level by level (refineLevels); runs only
  /// for the recursive search with refinement on and several levels.
  Refine,
  /// The assignment as a plan with the cost model's numbers.
  Lower,
};

struct PlannerPassInfo {
  PlannerPass pass;
  const char *name;
  const char *description;
};

/// Every pass, in order, with its name and a line for --help.
ArrayRef<PlannerPassInfo> getPlannerPasses();
/// The pass named `name`, or None.
llvm::Optional<PlannerPass> lookupPlannerPass(StringRef name);
StringRef getPlannerPassName(PlannerPass pass);

/// Prints the result of the passes asked for after each run of them on
/// one stream, each dump headed by the pass and the unit it ran on:
///   // -----// After search (levels 2x2) //----- //
class PassInstrumentation {
public:
  explicit PassInstrumentation(llvm::raw_ostream &os) : os(os) {}

  void enablePrintAfter(PlannerPass pass) { printed[unsigned(pass)] = true; }
  void enablePrintAfterAll();
  bool printsAfter(PlannerPass pass) const { return printed[unsigned(pass)]; }

  /// Called after `pass` ran on `unit` ("graph", "levels 2x2"): prints its
  /// result with `print` if the pass was asked for.
  void runAfterPass(PlannerPass pass, const llvm::Twine &unit,
                    llvm::function_ref<void(llvm::raw_ostream &)> print);

private:
  llvm::raw_ostream &os;
  bool printed[4] = {false, false, false, false};
};

/// The coarsen pass's result: the classes of more than one member, or that
/// every op and tensor decides alone (`coarse` null).
void printCoarsening(llvm::raw_ostream &os, const PlanningProblem &problem,
                     const Coarsening *coarse);

/// The search and refine passes' result: every op's step and every
/// tensor's layout step at each level.
void printAssignment(llvm::raw_ostream &os, const PlanningProblem &problem,
                     const Assignment &assignment);

} // namespace planner
} // namespace tofu

#endif // TOFU_PLANNER_PASSINSTRUMENTATION_H
