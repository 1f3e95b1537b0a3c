//===- CharLM.h - The charlm example's text, batches and init -----*- C++ -*-===//
//
// This file declares the rules of the charlm example (docs/Linking.md, "The
// charlm example") that make every run train alike: the batch of a step as a
// function of the step number alone (reference.py implements the same rule
// in Python), and the deterministic initial value of every element of a
// parameter or state tensor as a function of the tensor's name, shape and
// the element's index. Both are evaluated per box, so a process computes only
// the shards its workers store.
//
//===----------------------------------------------------------------------===//

#ifndef CHARLM_CHARLM_H
#define CHARLM_CHARLM_H

#include "tofu/Runtime/Box.h"
#include "tofu/Runtime/Executor.h"

#include <cstdint>
#include <string>
#include <vector>

namespace charlm {

/// SplitMix64's finaliser of `x` + the golden gamma (Steele, Lea and Flood,
/// 2014): a well-mixed 64-bit value of any counter.
std::uint64_t splitmix64(std::uint64_t x);

/// The bytes of the file at `path`; throws tofu::runtime::RuntimeError
/// naming it if it cannot be read.
std::vector<unsigned char> readText(const std::string &path);

/// Where row `row` of step `step`'s batch starts in a text of `textSize`
/// bytes with context `seq`: splitmix64(step * 2^32 + row) mod (textSize -
/// seq). The row's tokens are the `seq` bytes there, its targets the `seq`
/// bytes one further on. Needs textSize > seq.
std::uint64_t getBatchOffset(std::int64_t step, std::int64_t row,
                             std::size_t textSize, std::int64_t seq);

/// The box `box` of step `step`'s tokens (`shift` 0) or targets (`shift`
/// 1), an i64 tensor [rows, seq] of `text`'s bytes, as a dense host tensor.
tofu::runtime::HostTensor
makeBatchShard(const std::vector<unsigned char> &text, std::int64_t step,
               const tofu::runtime::Box &box, std::int64_t seq, unsigned shift);

/// The initial value of element `index` (row-major) of the f32 tensor
/// `name` of shape `shape` and graph role `role` ("param" or "state"):
/// - `*.attn.mask`: -inf above the diagonal, 0 on and below it;
/// - any other state (Adam's moments `*.adam_m`, `*.adam_v`, and its step
///   count `adam.step`): 0;
/// - a parameter of rank 1: 1 if its name ends in `.weight` (a layer norm's
///   gain), else 0 (biases);
/// - any other parameter: uniform in [-b, b), b = 1/sqrt(last dimension),
///   from splitmix64(fnv1a64(name) + index) (its top 53 bits as a fraction).
float getInitialValue(const std::string &name, const std::string &role,
                      const std::vector<std::int64_t> &shape,
                      std::int64_t index);

/// The box `box` of tensor `name` (f32, `shape`, `role`) at its initial
/// values (getInitialValue), as a dense host tensor.
tofu::runtime::HostTensor
makeInitialShard(const std::string &name, const std::string &role,
                 const std::vector<std::int64_t> &shape,
                 const tofu::runtime::Box &box);

} // namespace charlm

#endif // CHARLM_CHARLM_H
