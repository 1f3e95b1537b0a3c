//===- TDLTestUtils.h - Parse TDL snippets in unit tests --------*- C++ -*-===//

#ifndef TOFU_UNITTESTS_TDL_TDLTESTUTILS_H
#define TOFU_UNITTESTS_TDL_TDLTESTUTILS_H

#include "tofu/Support/Diagnostics.h"
#include "tofu/TDL/Parser.h"
#include "tofu/TDL/Sema.h"

#include "llvm/Support/MemoryBuffer.h"

#include <string>

namespace tofu {
namespace tdl {

/// Parses (and optionally checks) TDL source held in memory, collecting the
/// diagnostics as "LINE:COL: message" strings instead of printing them.
struct ParsedSource {
  explicit ParsedSource(StringRef source, bool runSema = true) {
    srcMgr.setDiagHandler(
        [](const llvm::SMDiagnostic &d, void *ctx) {
          if (d.getKind() != llvm::SourceMgr::DK_Error)
            return;
          static_cast<ParsedSource *>(ctx)->errors.push_back(
              (Twine(d.getLineNo()) + ":" + Twine(d.getColumnNo() + 1) +
               ": " + d.getMessage())
                  .str());
        },
        this);
    unsigned id = srcMgr.AddNewSourceBuffer(
        llvm::MemoryBuffer::getMemBufferCopy(source, "test.tdl"), SMLoc());
    DiagnosticEngine diags(srcMgr);
    parseBuffer(id, diags, module);
    if (runSema && !diags.hasErrors())
      checkModule(module, diags);
  }

  const OpDecl &op(StringRef name) const { return *module.lookupOp(name); }

  llvm::SourceMgr srcMgr;
  Module module;
  std::vector<std::string> errors;
};

} // namespace tdl
} // namespace tofu

#endif // TOFU_UNITTESTS_TDL_TDLTESTUTILS_H
