//===- Npy.h - NumPy .npy tensor files --------------------------*- C++ -*-===//
//
// This file declares the reader and writer of the tensor file format that
// tdl-eval uses: NumPy's .npy format, version 1.0 (`numpy.save` writes it,
// `numpy.load` reads it). A file is the magic `\x93NUMPY`, the version
// bytes 1 0, a little-endian uint16 header length, a Python dict literal
// `{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }` padded with
// spaces and a newline to a multiple of 64 bytes, then the raw
// little-endian elements in C order. Written: f32 (`<f4`), f64 (`<f8`), i64
// (`<i8`), i32 (`<i4`), i8 (`|i1`) and bool (`|b1`), with f16 and bf16
// tensors stored as f32; read: the same, version 1.0 or 2.0 (uint32 header
// length). Fortran order and other dtypes are errors.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_EVAL_NPY_H
#define TOFU_EVAL_NPY_H

#include "tofu/Eval/Tensor.h"

#include "llvm/Support/Error.h"

#include <string>

namespace tofu {
namespace eval {

/// Decodes the .npy bytes `bytes`; `name` is used in error messages.
llvm::Expected<Tensor> parseNpy(StringRef bytes, StringRef name);
/// Reads the .npy file at `path`.
llvm::Expected<Tensor> readNpy(StringRef path);

/// Encodes `tensor` as .npy bytes, rounding each element to its dtype
/// (f16 and bf16 tensors are stored as f32: .npy has no bf16).
std::string formatNpy(const Tensor &tensor);
/// Writes `tensor` to the .npy file at `path` ("-" for standard output).
llvm::Error writeNpy(StringRef path, const Tensor &tensor);

} // namespace eval
} // namespace tofu

#endif // TOFU_EVAL_NPY_H
