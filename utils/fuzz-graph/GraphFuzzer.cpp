//===- GraphFuzzer.cpp - libFuzzer target over the graph reader+verifier ---===//
//
// This file implements a libFuzzer entry point that feeds each input to the
// tofu-graph reader and, when it reads, to the structural and spec
// verifiers against the standard library (specs/, parsed once). Any crash,
// hang, leak or sanitizer report is a bug: a malformed file must only ever
// produce diagnostics. Diagnostics are discarded to keep the run fast.
// Built with -DTOFU_BUILD_FUZZERS=ON by clang (docs/GraphFormat.md,
// "Robustness").
//
//===----------------------------------------------------------------------===//

#include "tofu/Graph/GraphReader.h"
#include "tofu/Graph/GraphWriter.h"
#include "tofu/Graph/SpecLibrary.h"
#include "tofu/Graph/Verifier.h"
#include "tofu/Support/Diagnostics.h"

#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/raw_ostream.h"

#include <cstdint>
#include <cstdlib>

using namespace tofu;
using namespace tofu::graph;

namespace {
void discard(const llvm::SMDiagnostic &, void *) {}

SpecLibrary &getSpecs() {
  static llvm::SourceMgr *srcMgr = [] {
    auto *mgr = new llvm::SourceMgr();
    mgr->setDiagHandler(discard);
    return mgr;
  }();
  static SpecLibrary *specs = [] {
    auto *lib = new SpecLibrary();
    DiagnosticEngine diags(*srcMgr);
    lib->addDirectory(TOFU_SPECS_DIR, diags);
    if (!lib->check(diags) || lib->empty()) {
      llvm::errs() << "fuzzer: the specs in " TOFU_SPECS_DIR " do not load\n";
      std::abort();
    }
    return lib;
  }();
  return *specs;
}
} // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  SpecLibrary &specs = getSpecs();
  llvm::SourceMgr srcMgr;
  srcMgr.setDiagHandler(discard);
  DiagnosticEngine diags(srcMgr, /*errorLimit=*/1000);
  unsigned id = srcMgr.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(
          llvm::StringRef(reinterpret_cast<const char *>(data), size),
          "fuzz.json"),
      llvm::SMLoc());
  std::unique_ptr<Graph> g = readGraph(id, diags);
  if (!g)
    return 0;
  // A graph that reads must write and read back.
  std::string text;
  llvm::raw_string_ostream os(text);
  writeGraph(os, *g);
  os.flush();
  if (verifyStructure(*g, diags))
    verifySpecs(*g, specs, diags);
  specs.clearInstances();
  llvm::SourceMgr again;
  again.setDiagHandler(discard);
  DiagnosticEngine diags2(again);
  unsigned id2 = again.AddNewSourceBuffer(
      llvm::MemoryBuffer::getMemBufferCopy(text, "again.json"), llvm::SMLoc());
  if (!readGraph(id2, diags2)) {
    llvm::errs() << "fuzzer: the writer's output does not read back\n";
    std::abort();
  }
  return 0;
}
