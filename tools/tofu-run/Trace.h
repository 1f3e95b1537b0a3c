//===- Trace.h - tofu-run --trace's file ------------------------*- C++ -*-===//
//
// This file declares writeTrace, which writes one step's spans of this
// process's workers (Executor::getTrace: kernels, receive waits, sends) as
// JSON for utils/wait-trace.py (docs/Runtime.md, "Where the waits are").
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TOOLS_TOFU_RUN_TRACE_H
#define TOFU_TOOLS_TOFU_RUN_TRACE_H

#include "tofu/Runtime/ExecutablePlan.h"
#include "tofu/Runtime/Executor.h"

#include <string>
#include <vector>

namespace tofu {

/// The file process `rank` of `processes` writes for --trace FILE: FILE
/// itself for one process, FILE.<rank> for several.
std::string getTraceFile(const std::string &file, unsigned rank,
                         unsigned processes);

/// Writes `events` of `plan`'s step to `file`: {"workers": K, "ops": [op
/// names], "events": [{"kind", "worker", "op", "phase", "peer", "start",
/// "end"}]}. Returns an error message, empty on success.
std::string writeTrace(const std::string &file,
                       const runtime::ExecutablePlan &plan,
                       const std::vector<runtime::TraceEvent> &events);

} // namespace tofu

#endif // TOFU_TOOLS_TOFU_RUN_TRACE_H
