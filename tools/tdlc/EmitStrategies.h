//===- EmitStrategies.h - tdlc's --emit=strategies ---------------*- C++ -*-===//
//
// This file declares the part of tdlc that prints partition strategies:
// its flags (--shape, --out-shape, --param, --workers) and the emitter,
// and the instantiation of a selected operator at those flags.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TOOLS_TDLC_EMITSTRATEGIES_H
#define TOFU_TOOLS_TDLC_EMITSTRATEGIES_H

#include "tofu/TDL/AST.h"
#include "tofu/TDL/Instantiate.h"

#include "llvm/Support/CommandLine.h"

namespace tofu {

/// The category of the strategy flags, for --help.
llvm::cl::OptionCategory &getStrategiesCategory();

/// True if --shape, --out-shape or --param was given.
bool hasConcreteArgs();

/// The shapes of the flags, as instantiateSelected parsed them.
struct InstanceShapes {
  SmallVector<Shape, 4> inputs;
  /// --out-shape, if given.
  Shape output;
  bool hasOutput = false;
};

/// Instantiates the selected operator (`ops`, the overloads of one name) at
/// the shapes and params of the flags, for `--emit=ir --shape ...`. Null,
/// with the error printed and `status` set to tdlc's exit status, on
/// failure. `shapes`, if given, receives the shapes of the flags.
const tdl::Instance *instantiateSelected(tdl::Instantiator &instantiator,
                                         ArrayRef<const tdl::OpDecl *> ops,
                                         int &status,
                                         InstanceShapes *shapes = nullptr);

/// Prints the strategies of `ops` (operators of `module`) as text or JSON:
/// symbolic, or concrete when shapes or params were given; a generic or
/// overloaded operator is instantiated first. Returns tdlc's exit status.
int emitStrategies(llvm::raw_ostream &os, const tdl::Module &module,
                   ArrayRef<const tdl::OpDecl *> ops, bool json);

} // namespace tofu

#endif // TOFU_TOOLS_TDLC_EMITSTRATEGIES_H
