//===- BatchNormStats.cpp - A batch norm's inverse deviation in one pass --===//
//
// This file implements runBatchNormInvStd (BatchNormStats.h) with the
// generated kernel's arithmetic: double sums in (n, h, w) order, the
// divisions by M and M * M, 1 / sqrt, rounded to f32 once.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/BatchNormStats.h"

#include <cmath>

using namespace tofu::runtime;

bool tofu::runtime::runBatchNormInvStd(const BatchNormInvStd &b,
                                       const KernelCall &call) {
  if (call.numInputs != 1 || call.inputs[0].type != ElementType::F32 ||
      call.inputs[0].rank != 4 || call.output.type != ElementType::F32 ||
      call.output.rank != 1)
    return false;
  for (std::size_t v = 0; v != b.varExtents.size(); ++v)
    if (call.varLo[1 + v] > 0 || call.varHi[1 + v] < b.varExtents[v])
      return false;
  const BoxView &x = call.inputs[0];
  const std::int64_t c0 = call.varLo[0], c1 = call.varHi[0];
  if (c0 >= c1)
    return true;
  for (unsigned d : {0u, 2u, 3u})
    if (x.lo[d] > 0 || x.lo[d] + x.extent[d] < b.shape[d])
      return false;
  if (c0 < x.lo[1] || c1 > x.lo[1] + x.extent[1])
    return false;
  const std::int64_t N = b.shape[0], H = b.shape[2], W = b.shape[3];
  const std::int64_t sW = 1, sH = x.extent[3], sC = sH * x.extent[2],
                     sN = sC * x.extent[1];
  const float *data = static_cast<const float *>(x.data) - x.lo[0] * sN -
                      x.lo[2] * sH - x.lo[3] * sW;
  float *out = static_cast<float *>(call.output.data) - call.output.lo[0];
  const double M = double(N * H * W), MM = double(N * H * W * (N * H * W));
  for (std::int64_t c = c0; c < c1; ++c) {
    const float *plane = data + (c - x.lo[1]) * sC;
    double squares = 0.0, sum = 0.0;
    for (std::int64_t n = 0; n < N; ++n)
      for (std::int64_t h = 0; h < H; ++h) {
        const float *row = plane + n * sN + h * sH;
        for (std::int64_t w = 0; w < W; ++w) {
          double v = double(row[w]);
          squares += v * v;
          sum += v;
        }
      }
    out[c] = float(1.0 / std::sqrt(squares / M - sum * sum / MM + b.epsilon));
  }
  return true;
}
