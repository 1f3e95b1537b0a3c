//===- Version.cpp - The toolchain version --------------------------------===//
//
// This file implements the --version text of the Tofu tools.
//
//===----------------------------------------------------------------------===//

#include "tofu/Support/Version.h"

#include "llvm/Support/raw_ostream.h"

const char *tofu::getTofuVersion() { return "0.1.0"; }

void tofu::printToolVersion(llvm::raw_ostream &os) {
  os << "Tofu toolchain version " << getTofuVersion() << '\n';
}
