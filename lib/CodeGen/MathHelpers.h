//===- MathHelpers.h - The kernel prelude's numeric builtins ----*- C++ -*-===//
//
// The `tdl_<Id>` helpers of the kernel prelude (MathBuiltins.def), with exp,
// erf and tanh in a C++ unit as branch-free forms a loop vectorizes
// (MathHelpers.cpp, docs/CodeGen.md "Vectorized exp and erf").
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_LIB_CODEGEN_MATHHELPERS_H
#define TOFU_LIB_CODEGEN_MATHHELPERS_H

#include <string>

namespace tofu {
namespace codegen {

/// The prelude's text (inside namespace tofu_kg, after `inf`): the vector
/// forms `vexp`, `verf` and `vtanh`, the macros TOFU_KG_EXP, TOFU_KG_ERF,
/// TOFU_KG_TANH and TOFU_KG_WIDE, and one `tdl_<Id>` helper per numeric
/// builtin.
std::string getMathHelpers();

/// Whether a kernel's body text calls a helper with a vector form (exp, erf,
/// sigmoid, tanh): such a kernel is marked TOFU_KG_WIDE, and a C++ sum over
/// such a body is computed in blocks (KernelBuilder::lowerReduce).
bool callsVectorForms(const std::string &body);

} // namespace codegen
} // namespace tofu

#endif // TOFU_LIB_CODEGEN_MATHHELPERS_H
