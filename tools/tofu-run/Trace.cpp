//===- Trace.cpp - tofu-run --trace's file --------------------------------===//
//
// This file implements writeTrace: one step's spans as JSON.
//
//===----------------------------------------------------------------------===//

#include "Trace.h"

#include "llvm/Support/FormatVariadic.h"
#include "llvm/Support/JSON.h"
#include "llvm/Support/raw_ostream.h"

using namespace tofu;

std::string tofu::getTraceFile(const std::string &file, unsigned rank,
                               unsigned processes) {
  return processes == 1 ? file : file + "." + std::to_string(rank);
}

std::string tofu::writeTrace(const std::string &file,
                             const runtime::ExecutablePlan &plan,
                             const std::vector<runtime::TraceEvent> &events) {
  static const char *const kinds[] = {"kernel", "wait", "send"};
  static const char *const phases[] = {"fetch", "reduce", "deliver",
                                       "next_step"};
  llvm::json::Array ops, spans;
  for (const runtime::OpInfo &op : plan.ops)
    ops.push_back(op.name);
  for (const runtime::TraceEvent &e : events) {
    llvm::json::Object span{{"kind", kinds[e.kind]},
                            {"worker", int64_t(e.worker)},
                            {"op", int64_t(e.op)},
                            {"start", e.start},
                            {"end", e.end}};
    if (e.kind != runtime::TraceEvent::Kernel) {
      span["phase"] = e.phase < 4 ? phases[e.phase] : "unknown";
      span["peer"] = int64_t(e.peer);
    }
    spans.push_back(std::move(span));
  }
  llvm::json::Object trace{{"workers", int64_t(plan.workers)},
                           {"ops", std::move(ops)},
                           {"events", std::move(spans)}};
  std::error_code ec;
  llvm::raw_fd_ostream os(file, ec);
  if (ec)
    return "cannot write '" + file + "': " + ec.message();
  os << llvm::formatv("{0}", llvm::json::Value(std::move(trace))) << "\n";
  return "";
}
