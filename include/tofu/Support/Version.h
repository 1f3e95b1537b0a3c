//===- Version.h - The toolchain version ------------------------*- C++ -*-===//
//
// This file declares the version every Tofu tool prints for --version.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_SUPPORT_VERSION_H
#define TOFU_SUPPORT_VERSION_H

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tofu {

/// The toolchain version, "MAJOR.MINOR.PATCH".
const char *getTofuVersion();

/// Prints "Tofu toolchain version VERSION"; install with
/// `llvm::cl::SetVersionPrinter` so --version does not print LLVM's.
void printToolVersion(llvm::raw_ostream &os);

} // namespace tofu

#endif // TOFU_SUPPORT_VERSION_H
