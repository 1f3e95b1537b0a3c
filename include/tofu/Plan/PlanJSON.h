//===- PlanJSON.h - Plan JSON files -----------------------------*- C++ -*-===//
//
// This file declares the reader and writer of plan JSON (docs/PlanFormat.md):
// `{"format": "tofu-plan", "version": 1, ["graph",] "workers", "levels", "comm_bytes",
// "resident_bytes_per_worker", "peak_bytes_per_worker", "ops": [{"name",
// "steps"}], "tensors": [{"name", "workers": [{"region"}]}]}`.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_PLAN_PLANJSON_H
#define TOFU_PLAN_PLANJSON_H

#include "tofu/Plan/Plan.h"

#include "llvm/Support/Error.h"
#include "llvm/Support/raw_ostream.h"

namespace tofu {
namespace plan {

/// Writes `p` as one JSON document; a non-empty `graphPath` is written as
/// its `"graph"` field (the graph's path relative to the plan's folder).
void writePlanJSON(llvm::raw_ostream &os, const Plan &p,
                   StringRef graphPath = {});

/// Parses plan JSON; the error says what is malformed and where (a JSON
/// path such as `tensors[3].workers[1].region`).
llvm::Expected<Plan> readPlanJSON(StringRef text);

} // namespace plan
} // namespace tofu

#endif // TOFU_PLAN_PLANJSON_H
