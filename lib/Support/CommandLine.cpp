//===- CommandLine.cpp - A Tofu tool's command line -----------------------===//
//
// This file implements parseToolCommandLine, the command-line start every
// Tofu tool shares.
//
//===----------------------------------------------------------------------===//

#include "tofu/Support/CommandLine.h"
#include "tofu/Support/Version.h"

#include "llvm/Support/raw_ostream.h"

using namespace tofu;

bool cli::parseToolCommandLine(
    int argc, const char *const *argv,
    ArrayRef<const llvm::cl::OptionCategory *> categories,
    StringRef overview) {
  llvm::cl::HideUnrelatedOptions(categories);
  llvm::cl::SetVersionPrinter(printToolVersion);
  return llvm::cl::ParseCommandLineOptions(argc, argv, overview,
                                           &llvm::errs());
}
