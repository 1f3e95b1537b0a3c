//===- EmitKernel.h - tdlc's --emit=cpp-kernel ------------------*- C++ -*-===//
//
// This file declares the part of tdlc that prints the generated C++ kernel
// of one operator instance (lib/CodeGen) at the shapes and params of the
// instance flags, with element types from --dtype/--out-dtype.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TOOLS_TDLC_EMITKERNEL_H
#define TOFU_TOOLS_TDLC_EMITKERNEL_H

#include "tofu/TDL/AST.h"
#include "tofu/TDL/Instantiate.h"

#include "tofu/CodeGen/KernelEmitter.h"

#include "llvm/Support/CommandLine.h"

namespace tofu {

/// The category of the kernel flags, for --help.
llvm::cl::OptionCategory &getKernelCategory();

/// Prints the kernel of the selected operator (`ops`, the overloads of one
/// name) instantiated at the flags' shapes and params, after the prelude
/// unless --no-prelude, as C++ or CUDA (`target`). Returns tdlc's exit
/// status.
int emitCppKernel(llvm::raw_ostream &os, tdl::Instantiator &instantiator,
                  ArrayRef<const tdl::OpDecl *> ops,
                  codegen::KernelTarget target = codegen::KernelTarget::Cpp);

} // namespace tofu

#endif // TOFU_TOOLS_TDLC_EMITKERNEL_H
