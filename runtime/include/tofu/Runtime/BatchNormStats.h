//===- BatchNormStats.h - A batch norm's inverse deviation in one pass -*- C++ -*-===//
//
// This file declares the CPU runtime's own loop for a training batch
// norm's third output, native_batch_norm__2 (and the _noweight_nobias
// variant) on an [N, C, H, W] input: per channel
//   rsqrt(Sum(x * x) / M - Sum(x) * Sum(x) / (M * M) + eps),  M = N H W,
// as specs/norm.tdl defines it. The generated kernel makes three passes
// over the channel (one per Sum, the two equal sums each computed); this
// loop makes one, accumulating both sums in double in the kernel's order
// (n, then h, then w), so the value is the generated kernel's bit for bit.
// The input gradient (native_batch_norm_backward__0) likewise sums its two
// per-channel sums in one pass instead of two. Both cover f32 boxes whose
// reduction variables are whole; any other call is declined, and the
// caller runs the generated kernel.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_BATCHNORMSTATS_H
#define TOFU_RUNTIME_BATCHNORMSTATS_H

#include "tofu/Runtime/Kernel.h"

#include <cstdint>
#include <vector>

namespace tofu {
namespace runtime {

/// One op instance: the input's shape, epsilon, and the extent of each of
/// its kernel's reduction variables (the KernelCall variables after the
/// channel's).
struct BatchNormInvStd {
  std::int64_t shape[4] = {};
  double epsilon = 0;
  std::vector<std::int64_t> varExtents;
};

/// Computes `call` of `b`'s kernel and returns true, or returns false
/// without writing anything when the call is not covered (types other than
/// f32, a reduction variable not whole, an input box not holding the whole
/// (N, H, W) of its channels).
bool runBatchNormInvStd(const BatchNormInvStd &b, const KernelCall &call);

/// Where a box was and what it covered: its data, rank, lo and extent.
struct BoxKey {
  const void *data = nullptr;
  unsigned rank = 0;
  std::int64_t lo[4] = {}, extent[4] = {};
  BoxKey() = default;
  explicit BoxKey(const BoxView &v);
  /// The same data pointer, rank, lo and extent as `v`.
  bool matches(const BoxView &v) const;
};

/// Per channel Sum(x) and Sum(x x) of channels [c0, c1) that a mean call
/// (native_batch_norm__1, training = 1) summed, and the input box it read:
/// the same batch norm's inverse deviation, the call right after it, takes
/// them instead of reading the input again.
struct BatchNormMoments {
  std::int64_t c0 = 0, c1 = 0;
  std::vector<double> sum, squares;
  BoxKey input;
};

/// Computes the mean call `call` (input x; `b` as for the inverse deviation,
/// its epsilon unused, `varExtents` the mean kernel's reduction variables')
/// per channel float(Sum(x) / M), the generated kernel's value bit for bit,
/// summing Sum(x x) in the same pass, and records both in `moments`; false
/// without writing anything on a call not covered (as runBatchNormInvStd).
bool runBatchNormMean(const BatchNormInvStd &b, const KernelCall &call,
                      BatchNormMoments &moments);

/// Computes the inverse deviation call `call` of `b` from `moments`, bit for
/// bit runBatchNormInvStd's value; false without writing anything when
/// `moments` do not cover it (another input box, channels outside [c0, c1),
/// a reduction variable not whole, types other than f32).
bool runBatchNormInvStdFromMoments(const BatchNormInvStd &b,
                                   const BatchNormMoments &moments,
                                   const KernelCall &call);

/// native_batch_norm_backward__0 (train = 1) on rank 4: the input's
/// gradient (grad_out - S1 / M - (x - mean) invstd^2 S2 / M) invstd weight,
/// S1 = Sum(grad_out), S2 = Sum((x - mean) grad_out) per channel. The
/// generated kernel sums S1 and S2 in two passes before the element pass;
/// this loop sums both in one, with the same arithmetic. `varExtents`: the
/// extents of the kernel's variables after the four output ones.
struct BatchNormBackwardInput {
  std::int64_t shape[4] = {};
  std::vector<std::int64_t> varExtents;
};

/// Computes `call` (inputs grad_out, input, weight, save_mean, save_invstd)
/// and returns true, or returns false without writing anything when the
/// call is not covered (types other than f32, a reduction variable not
/// whole, a box of grad_out or input not holding the whole (N, H, W) of
/// the channels).
bool runBatchNormBackwardInput(const BatchNormBackwardInput &b,
                               const KernelCall &call);

/// The per-channel sums S1 = Sum(grad_out) and S2 = Sum((x - mean)
/// grad_out) of channels [c0, c1) one input gradient call computed, and
/// the grad_out, input and save_mean boxes it read. The same batch norm's
/// weight and bias gradients (native_batch_norm_backward__1 =
/// Sum((x - mean) grad_out) invstd = S2 invstd, native_batch_norm_backward__2
/// = Sum(grad_out) = S1, each summed in the same order) take them instead
/// of summing again.
struct BatchNormSums {
  std::int64_t c0 = 0, c1 = 0;
  std::vector<double> s1, s2;
  BoxKey gradOut, input, mean;
};

/// Like runBatchNormBackwardInput, and on success records the sums and
/// boxes in `sums`.
bool runBatchNormBackwardInput(const BatchNormBackwardInput &b,
                               const KernelCall &call, BatchNormSums &sums);

/// native_batch_norm_backward__1 (train = 1, inputs grad_out, input,
/// save_mean, save_invstd) or __2 (input grad_out) of a rank-4 input:
/// `weight` tells which; `varExtents`: the extents of the kernel's
/// variables after the channel's.
struct BatchNormParamGrad {
  bool weight = true;
  std::vector<std::int64_t> varExtents;
};

/// Computes `call` of `g` from `sums` and returns true: the weight gradient
/// float(S2 * invstd[c]), the bias gradient float(S1), per channel, bit
/// for bit the generated kernel's values. Returns false without writing
/// anything when `sums` do not cover the call: another grad_out, input or
/// save_mean box (data, lo or extent), channels outside [c0, c1), a
/// reduction variable not whole, types other than f32.
bool runBatchNormParamGradFromSums(const BatchNormParamGrad &g,
                                   const BatchNormSums &sums,
                                   const KernelCall &call);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_BATCHNORMSTATS_H
