//===- Coverage.h - tdlc's --coverage -------------------------*- C++ -*-===//
//
// This file declares tdlc's --coverage mode: checks that an operator
// library covers every op of tofu graphs (docs/OperatorLibrary.md,
// "Coverage").
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TOOLS_TDLC_COVERAGE_H
#define TOFU_TOOLS_TDLC_COVERAGE_H

#include "tofu/TDL/AST.h"

#include "llvm/Support/CommandLine.h"
#include "llvm/Support/SourceMgr.h"
#include "llvm/Support/raw_ostream.h"

namespace tofu {

/// The graphs named by --coverage (empty: the mode is off).
bool coverageRequested();

/// Instantiates every op of every graph given with --coverage against
/// `library` and reports op types without a spec, instances no overload
/// accepts, and output shapes that differ from the graph's. Returns the
/// exit status: 0 all covered, 1 otherwise (or a graph was unreadable).
int runCoverage(llvm::raw_ostream &os, const tdl::Module &library,
                const llvm::SourceMgr &srcMgr);

llvm::cl::OptionCategory &getCoverageCategory();

} // namespace tofu

#endif // TOFU_TOOLS_TDLC_COVERAGE_H
