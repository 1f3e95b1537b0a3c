//===- DeviceGemm.cpp - A contraction as library GEMM calls ---------------===//
//
// This file implements planGemm (DeviceGemm.h): for every batch element of
// the iteration box, the row-major GEMM of the box's rows i, columns j and
// clamped reduction range k, each operand addressed at its first element;
// a batch element whose operands lie one stride (the same for A, B and C)
// after those of the previous batch's last element joins that batch. A
// bias (GemmBias) is addressed the same way, its index 0 where it
// broadcasts, its row and column strides those of the variables i and j.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/DeviceGemm.h"
#include "tofu/Runtime/Box.h"

#include <algorithm>

using namespace tofu::runtime;

namespace {

/// The element offset of `index` (one value per dimension) in `view`.
std::int64_t offsetOf(const BoxView &view, const std::vector<std::int64_t> &index) {
  std::int64_t offset = 0;
  for (unsigned d = 0; d != view.rank; ++d)
    offset = offset * view.extent[d] + (index[d] - view.lo[d]);
  return offset;
}

/// The values of `vars` at `values` (by variable).
std::vector<std::int64_t> at(const std::vector<unsigned> &vars,
                             const std::vector<std::int64_t> &values) {
  std::vector<std::int64_t> index;
  for (unsigned v : vars)
    index.push_back(values[v]);
  return index;
}

/// The element stride of output variable `v` in the bias `view`: the sum
/// of the row-major strides of the dimensions `vars` reads at v.
std::int64_t strideOf(const BoxView &view, const std::vector<int> &vars,
                      unsigned v) {
  std::int64_t stride = 0, inner = 1;
  for (unsigned d = view.rank; d-- > 0;) {
    if (vars[d] == int(v))
      stride += inner;
    inner *= view.extent[d];
  }
  return stride;
}

/// The bias's index at `values` (by variable): 0 where it broadcasts.
std::vector<std::int64_t> biasIndex(const std::vector<int> &vars,
                                    const std::vector<std::int64_t> &values) {
  std::vector<std::int64_t> index;
  for (int v : vars)
    index.push_back(v < 0 ? 0 : values[v]);
  return index;
}

} // namespace

std::vector<GemmCall> tofu::runtime::planGemm(const DeviceGemm &g,
                                              const KernelCall &call) {
  std::vector<GemmCall> calls;
  unsigned rank = g.aVars.size(), iv = rank - 2, jv = rank - 1;
  for (unsigned v = 0; v != rank; ++v)
    if (call.varHi[v] <= call.varLo[v])
      return calls;
  std::int64_t k0 = std::max<std::int64_t>(call.varLo[g.kVar], 0),
               k1 = std::min(call.varHi[g.kVar], g.kExtent);
  // The value of every variable at a GEMM's first element.
  std::vector<std::int64_t> values(std::max(rank, g.kVar + 1), 0);
  for (unsigned v = 0; v != rank; ++v)
    values[v] = call.varLo[v];
  values[g.kVar] = k0;
  const BoxView &a = call.inputs[g.a], &b = call.inputs[g.b], &c = call.output;
  std::int64_t size = getElementSize(c.type);
  std::vector<unsigned> outVars(rank);
  for (unsigned v = 0; v != rank; ++v)
    outVars[v] = v;
  const BoxView *bias = g.bias ? &call.inputs[g.bias->input] : nullptr;
  // The element offsets of the last batch element planned.
  std::int64_t lastA = 0, lastB = 0, lastC = 0, lastF = 0;
  while (true) {
    std::int64_t offA = offsetOf(a, at(g.aVars, values)),
                 offB = offsetOf(b, at(g.bVars, values)),
                 offC = offsetOf(c, at(outVars, values)),
                 offF = bias ? offsetOf(*bias, biasIndex(g.bias->vars, values)) : 0;
    GemmCall *prev = calls.empty() ? nullptr : &calls.back();
    std::int64_t dA = offA - lastA, dB = offB - lastB, dC = offC - lastC,
                 dF = offF - lastF;
    if (prev && dC > 0 &&
        (prev->batch == 1 || (dA == prev->strideA && dB == prev->strideB &&
                              dC == prev->strideC && dF == prev->strideFill))) {
      prev->strideA = dA;
      prev->strideB = dB;
      prev->strideC = dC;
      prev->strideFill = dF;
      ++prev->batch;
    } else {
      GemmCall gemm;
      gemm.m = call.varHi[iv] - call.varLo[iv];
      gemm.n = call.varHi[jv] - call.varLo[jv];
      gemm.k = std::max<std::int64_t>(k1 - k0, 0);
      gemm.transA = g.transA;
      gemm.transB = g.transB;
      gemm.a = static_cast<const char *>(a.data) + offA * size;
      gemm.b = static_cast<const char *>(b.data) + offB * size;
      gemm.c = static_cast<char *>(c.data) + offC * size;
      gemm.lda = a.extent[rank - 1];
      gemm.ldb = b.extent[rank - 1];
      gemm.ldc = c.extent[rank - 1];
      gemm.alpha = g.alpha;
      if (bias) {
        gemm.fill = static_cast<const char *>(bias->data) + offF * size;
        gemm.fillRow = strideOf(*bias, g.bias->vars, iv);
        gemm.fillCol = strideOf(*bias, g.bias->vars, jv);
        gemm.fillScale = g.bias->scale;
      }
      calls.push_back(gemm);
    }
    lastA = offA;
    lastB = offB;
    lastC = offC;
    lastF = offF;
    // The next batch element, last batch variable fastest.
    unsigned v = iv;
    while (v != 0) {
      --v;
      if (++values[v] < call.varHi[v])
        break;
      values[v] = call.varLo[v];
      if (v == 0)
        return calls;
    }
    if (iv == 0)
      return calls;
  }
}
