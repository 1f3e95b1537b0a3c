//===- Diagnostics.h - Source-located error reporting -----------*- C++ -*-===//
//
// This file declares DiagnosticEngine, the one path by which every Tofu
// component reports problems in user input. Messages are rendered by
// llvm::SourceMgr as `FILE:LINE:COL: error: message`, followed by the source
// line and a caret. The engine counts errors so that a phase can keep going
// after the first one and the tool can exit with status 1 at the end.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_SUPPORT_DIAGNOSTICS_H
#define TOFU_SUPPORT_DIAGNOSTICS_H

#include "tofu/Support/LLVM.h"
#include "llvm/Support/SourceMgr.h"

namespace tofu {

/// Reports located diagnostics through a SourceMgr and counts errors.
///
/// After `getErrorLimit()` errors, further errors are dropped and a single
/// "too many errors" note is printed; `shouldStop()` tells a phase to bail.
class DiagnosticEngine {
public:
  explicit DiagnosticEngine(llvm::SourceMgr &srcMgr, unsigned errorLimit = 20)
      : srcMgr(srcMgr), errorLimit(errorLimit) {}

  void error(SMLoc loc, const Twine &msg);
  void warning(SMLoc loc, const Twine &msg);
  void note(SMLoc loc, const Twine &msg);

  unsigned getNumErrors() const { return numErrors; }
  bool hasErrors() const { return numErrors != 0; }
  /// True once the error limit has been reached.
  bool shouldStop() const { return numErrors >= errorLimit; }
  unsigned getErrorLimit() const { return errorLimit; }

  llvm::SourceMgr &getSourceMgr() { return srcMgr; }

private:
  void report(SMLoc loc, llvm::SourceMgr::DiagKind kind, const Twine &msg);

  llvm::SourceMgr &srcMgr;
  unsigned errorLimit;
  unsigned numErrors = 0;
  /// Notes attached to a dropped error are dropped too.
  bool suppressingNotes = false;
};

} // namespace tofu

#endif // TOFU_SUPPORT_DIAGNOSTICS_H
