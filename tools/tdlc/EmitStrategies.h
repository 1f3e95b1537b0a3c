//===- EmitStrategies.h - tdlc's --emit=strategies ---------------*- C++ -*-===//
//
// This file declares the part of tdlc that prints partition strategies:
// its flags (--shape, --out-shape, --param, --workers) and the emitter.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TOOLS_TDLC_EMITSTRATEGIES_H
#define TOFU_TOOLS_TDLC_EMITSTRATEGIES_H

#include "tofu/TDL/AST.h"

#include "llvm/Support/CommandLine.h"

namespace tofu {

/// The category of the strategy flags, for --help.
llvm::cl::OptionCategory &getStrategiesCategory();

/// Prints the strategies of `ops` (operators of `module`) as text or JSON:
/// symbolic, or concrete when shapes or params were given; a generic or
/// overloaded operator is instantiated first. Returns tdlc's exit status.
int emitStrategies(llvm::raw_ostream &os, const tdl::Module &module,
                   ArrayRef<const tdl::OpDecl *> ops, bool json);

} // namespace tofu

#endif // TOFU_TOOLS_TDLC_EMITSTRATEGIES_H
