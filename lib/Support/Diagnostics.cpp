//===- Diagnostics.cpp - Source-located error reporting -------------------===//
//
// This file implements DiagnosticEngine on top of llvm::SourceMgr.
//
//===----------------------------------------------------------------------===//

#include "tofu/Support/Diagnostics.h"

#include "llvm/Support/raw_ostream.h"

using namespace tofu;

void DiagnosticEngine::report(SMLoc loc, llvm::SourceMgr::DiagKind kind,
                              const Twine &msg) {
  // A location-less diagnostic is printed as `error: msg` (SourceMgr would
  // say `<unknown>:0:`). So is one whose location lies in another
  // SourceMgr's buffers (a checked instance of an operator keeps the
  // library's locations).
  // A handler installed on the SourceMgr (tests, the Instantiator's
  // collection of an instance's errors) sees it too.
  if (!loc.isValid() || !srcMgr.FindBufferContainingLoc(loc)) {
    llvm::SMDiagnostic diag(StringRef(), kind, msg.str());
    if (llvm::SourceMgr::DiagHandlerTy handler = srcMgr.getDiagHandler())
      handler(diag, srcMgr.getDiagContext());
    else
      diag.print(/*ProgName=*/nullptr, llvm::errs());
    return;
  }
  srcMgr.PrintMessage(loc, kind, msg);
}

void DiagnosticEngine::error(SMLoc loc, const Twine &msg) {
  if (numErrors >= errorLimit) {
    suppressingNotes = true;
    return;
  }
  suppressingNotes = false;
  report(loc, llvm::SourceMgr::DK_Error, msg);
  if (++numErrors == errorLimit)
    llvm::errs() << "error: too many errors emitted (limit " << errorLimit
                 << "), stopping now\n";
}

void DiagnosticEngine::warning(SMLoc loc, const Twine &msg) {
  if (numErrors >= errorLimit)
    return;
  suppressingNotes = false;
  report(loc, llvm::SourceMgr::DK_Warning, msg);
}

void DiagnosticEngine::note(SMLoc loc, const Twine &msg) {
  if (suppressingNotes)
    return;
  report(loc, llvm::SourceMgr::DK_Note, msg);
}
