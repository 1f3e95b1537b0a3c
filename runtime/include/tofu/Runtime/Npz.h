//===- Npz.h - NumPy arrays and archives ------------------------*- C++ -*-===//
//
// This file declares the runtime's reader and writer of NumPy's formats:
// one array as .npy (format 1.0/2.0/3.0, little-endian, C order), and an
// archive of named arrays as .npz (a ZIP of .npy members, as numpy.savez
// writes it: stored, not compressed; ZIP64 records are read). The runtime
// needs them without LLVM: training programs read initial weights from
// PyTorch and write theirs back (Checkpoint.h).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_NPZ_H
#define TOFU_RUNTIME_NPZ_H

#include "tofu/Runtime/Executor.h"

#include <string>
#include <utility>
#include <vector>

namespace tofu {
namespace runtime {

/// One named array of an archive (the member's name without ".npy").
using NamedArray = std::pair<std::string, HostTensor>;

/// The .npy encoding of `array`.
Bytes encodeNpy(const HostTensor &array);
/// The array .npy bytes `data` hold; `what` names them in errors. Throws
/// RuntimeError on a malformed header, a dtype the runtime has no element
/// type for, Fortran order, or too few bytes.
HostTensor decodeNpy(const unsigned char *data, std::size_t size,
                     const std::string &what);

/// The arrays of the archive at `path`, in the archive's order. Throws
/// RuntimeError naming the file and the member on anything malformed or
/// compressed.
std::vector<NamedArray> readNpz(const std::string &path);
/// Writes `arrays` as an uncompressed archive at `path` (via a temporary
/// file renamed into place). Throws RuntimeError.
void writeNpz(const std::string &path, const std::vector<NamedArray> &arrays);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_NPZ_H
