//===- GraphTestUtils.h - Read graphs and specs in unit tests ---*- C++ -*-===//

#ifndef TOFU_UNITTESTS_GRAPH_GRAPHTESTUTILS_H
#define TOFU_UNITTESTS_GRAPH_GRAPHTESTUTILS_H

#include "tofu/Graph/GraphReader.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Graph/Verifier.h"
#include "tofu/Support/Diagnostics.h"

#include "llvm/Support/MemoryBuffer.h"

#include <memory>
#include <string>
#include <vector>

namespace tofu {
namespace graph {

/// A SourceMgr whose diagnostics are collected as "LINE:COL: kind: message"
/// (or "message" without a location) instead of printed.
struct Collector {
  Collector() {
    srcMgr.setDiagHandler(
        [](const llvm::SMDiagnostic &d, void *ctx) {
          std::string kind = d.getKind() == llvm::SourceMgr::DK_Error ? "error"
                             : d.getKind() == llvm::SourceMgr::DK_Note
                                 ? "note"
                                 : "warning";
          std::string text = d.getLineNo() > 0
                                 ? std::to_string(d.getLineNo()) + ":" +
                                       std::to_string(d.getColumnNo() + 1) +
                                       ": "
                                 : "";
          static_cast<Collector *>(ctx)->messages.push_back(
              text + kind + ": " + d.getMessage().str());
        },
        this);
  }

  std::unique_ptr<Graph> read(StringRef json) {
    unsigned id = srcMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(json, "test.json"), SMLoc());
    return readGraph(id, diags);
  }

  llvm::SourceMgr srcMgr;
  DiagnosticEngine diags{srcMgr};
  std::vector<std::string> messages;
};

} // namespace graph
} // namespace tofu

#endif // TOFU_UNITTESTS_GRAPH_GRAPHTESTUTILS_H
