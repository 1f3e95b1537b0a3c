//===- TestKernels.h - Hand-written kernels of the runtime's tests -*- C++ -*-===//
//
// This file defines the kernels and values the runtime's unit tests share:
// an f32 matmul and an f32 scaling, both over KernelCall boxes, a
// two-worker matmul plan with a partial (reduce) share, the chain plan of
// the device executor's tests (K = 1, 2, 4) with its kernels and inputs,
// and a deterministic f32 tensor.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_UNITTESTS_RUNTIME_TESTKERNELS_H
#define TOFU_UNITTESTS_RUNTIME_TESTKERNELS_H

#include "tofu/Runtime/Executor.h"

#include <cstring>
#include <optional>

namespace tofu {
namespace runtime {
namespace test {

inline float &at(const BoxView &v, std::int64_t i, std::int64_t j) {
  return static_cast<float *>(v.data)[(i - v.lo[0]) * v.extent[1] +
                                       (j - v.lo[1])];
}

/// h[i,j] = Sum_k x[i,k] * w[k,j] over f32 boxes.
inline void matmul(const KernelCall &call) {
  const BoxView &x = call.inputs[0], &w = call.inputs[1], &h = call.output;
  for (std::int64_t i = call.varLo[0]; i < call.varHi[0]; ++i)
    for (std::int64_t j = call.varLo[1]; j < call.varHi[1]; ++j) {
      float acc = 0;
      for (std::int64_t k = call.varLo[2]; k < call.varHi[2]; ++k)
        acc += at(x, i, k) * at(w, k, j);
      at(h, i, j) = acc;
    }
}

/// y[i,j] = 0.5 * x[i,j] - 1 over f32 boxes.
inline void scale(const KernelCall &call) {
  for (std::int64_t i = call.varLo[0]; i < call.varHi[0]; ++i)
    for (std::int64_t j = call.varLo[1]; j < call.varHi[1]; ++j)
      at(call.output, i, j) = 0.5f * at(call.inputs[0], i, j) - 1.0f;
}

inline Box box(std::vector<std::int64_t> lo, std::vector<std::int64_t> hi) {
  return Box{std::move(lo), std::move(hi)};
}

/// x[M,N] @ w[N,P] on two workers: x split by rows, w by columns, h by
/// rows; the op reduces over k (worker c takes half of the k range).
inline ExecutablePlan makeReducePlan(std::int64_t m, std::int64_t n, std::int64_t p) {
  ExecutablePlan plan;
  plan.workers = 2;
  auto tensor = [&](std::string name, std::vector<std::int64_t> shape,
                    std::vector<std::optional<Box>> stored) {
    TensorInfo t;
    t.name = std::move(name);
    t.shape = std::move(shape);
    t.stored = std::move(stored);
    t.persistent = true;
    return t;
  };
  plan.tensors.push_back(tensor("x", {m, n},
                                {box({0, 0}, {m / 2, n}),
                                 box({m / 2, 0}, {m, n})}));
  plan.tensors[0].graphInput = true;
  plan.tensors.push_back(tensor("w", {n, p},
                                {box({0, 0}, {n, p / 2}),
                                 box({0, p / 2}, {n, p})}));
  plan.tensors[1].graphInput = true;
  plan.tensors.push_back(tensor("h", {m, p},
                                {box({0, 0}, {m / 2, p}),
                                 box({m / 2, 0}, {m, p})}));
  OpInfo op;
  op.name = "mm";
  op.inputs = {0, 1};
  op.output = 2;
  op.partial = true;
  for (std::int64_t c = 0; c != 2; ++c) {
    std::int64_t k0 = c * n / 2, k1 = (c + 1) * n / 2;
    op.workers.push_back(OpShare{box({0, 0, k0}, {m, p, k1}),
                                 {box({0, k0}, {m, k1}), box({k0, 0}, {k1, p})},
                                 box({0, 0}, {m, p})});
  }
  plan.ops.push_back(op);
  return plan;
}

/// The chain plan's sizes.
inline constexpr std::int64_t M = 8, N = 6, P = 8;

/// [c * n / k, (c + 1) * n / k).
inline std::pair<std::int64_t, std::int64_t> part(std::int64_t n, unsigned k,
                                           unsigned c) {
  return {c * n / k, (c + 1) * n / k};
}

/// h = x @ w (rows split); y = scale(h) (h stored by columns, y on worker 0
/// only); w2 = scale(w) (w by rows, w2 by columns; w2 updates w); z = x @ w2
/// reduced over k (partial, z by rows).
inline ExecutablePlan makeChainPlan(unsigned k) {
  ExecutablePlan plan;
  plan.workers = k;
  auto rows = [&](std::int64_t r, std::int64_t c, unsigned w) {
    auto [lo, hi] = part(r, k, w);
    return box({lo, 0}, {hi, c});
  };
  auto cols = [&](std::int64_t r, std::int64_t c, unsigned w) {
    auto [lo, hi] = part(c, k, w);
    return box({0, lo}, {r, hi});
  };
  auto tensor = [&](std::string name, std::int64_t r, std::int64_t c,
                    auto layout, bool persistent) {
    TensorInfo t;
    t.name = std::move(name);
    t.shape = {r, c};
    t.persistent = persistent;
    for (unsigned w = 0; w != k; ++w)
      t.stored.push_back(layout(r, c, w));
    plan.tensors.push_back(t);
  };
  auto onZero = [](std::int64_t r, std::int64_t c,
                   unsigned w) -> std::optional<Box> {
    if (w)
      return std::nullopt;
    return box({0, 0}, {r, c});
  };
  tensor("x", M, N, rows, true);
  tensor("w", N, P, rows, true);
  tensor("h", M, P, cols, false);
  tensor("y", M, P, onZero, true);
  tensor("w2", N, P, cols, true);
  tensor("z", M, P, rows, true);
  plan.tensors[0].graphInput = plan.tensors[1].graphInput = true;
  plan.tensors[4].updates = 1;

  auto op = [&](std::string name, unsigned kernel, std::vector<unsigned> in,
                unsigned out) {
    OpInfo o;
    o.name = std::move(name);
    o.kernel = kernel;
    o.inputs = std::move(in);
    o.output = out;
    plan.ops.push_back(o);
    return &plan.ops.back();
  };
  plan.ops.reserve(4);
  OpInfo *mm = op("mm", 0, {0, 1}, 2);
  OpInfo *scaleH = op("scale-h", 1, {2}, 3);
  OpInfo *scaleW = op("scale-w", 1, {1}, 4);
  OpInfo *mmK = op("mm-k", 0, {0, 4}, 5);
  mmK->partial = true;
  for (unsigned c = 0; c != k; ++c) {
    auto [r0, r1] = part(M, k, c);
    auto [c0, c1] = part(P, k, c);
    auto [k0, k1] = part(N, k, c);
    mm->workers.push_back(OpShare{box({r0, 0, 0}, {r1, P, N}),
                                  {box({r0, 0}, {r1, N}), box({0, 0}, {N, P})},
                                  box({r0, 0}, {r1, P})});
    scaleH->workers.push_back(OpShare{box({r0, 0}, {r1, P}),
                                      {box({r0, 0}, {r1, P})},
                                      box({r0, 0}, {r1, P})});
    scaleW->workers.push_back(OpShare{box({0, c0}, {N, c1}),
                                      {box({0, c0}, {N, c1})},
                                      box({0, c0}, {N, c1})});
    mmK->workers.push_back(OpShare{box({0, 0, k0}, {M, P, k1}),
                                   {box({0, k0}, {M, k1}), box({k0, 0}, {k1, P})},
                                   box({0, 0}, {M, P})});
  }
  return plan;
}

/// An f32 tensor of `shape` with small repeating values.
inline HostTensor iota(std::vector<std::int64_t> shape, float scale) {
  HostTensor t{ElementType::F32, shape, {}};
  std::int64_t n = Box::whole(shape).getVolume();
  t.data.resize(n * 4);
  for (std::int64_t i = 0; i != n; ++i) {
    float v = scale * float(i % 7 - 3);
    std::memcpy(t.data.data() + i * 4, &v, 4);
  }
  return t;
}

/// The chain plan's kernels: 0 "mm", 1 "scale".
inline KernelTable makeChainKernels() {
  return KernelTable({KernelInfo{"mm", matmul, nullptr, 3},
                      KernelInfo{"scale", scale, nullptr, 2}});
}

/// Sets the chain plan's graph inputs x (tensor 0) and w (tensor 1).
inline void setChainInputs(StepExecutor &e) {
  e.setInput(0, iota({M, N}, 0.5f));
  e.setInput(1, iota({N, P}, 0.25f));
}

/// The product of the f32 matrices x[m,n] and w[n,p], row-major.
inline std::vector<float> product(const HostTensor &x, const HostTensor &w,
                                  int m, int n, int p) {
  const float *xs = reinterpret_cast<const float *>(x.data.data());
  const float *ws = reinterpret_cast<const float *>(w.data.data());
  std::vector<float> h(m * p, 0.0f);
  for (int i = 0; i != m; ++i)
    for (int j = 0; j != p; ++j)
      for (int k = 0; k != n; ++k)
        h[i * p + j] += xs[i * n + k] * ws[k * p + j];
  return h;
}

} // namespace test
} // namespace runtime
} // namespace tofu

#endif // TOFU_UNITTESTS_RUNTIME_TESTKERNELS_H
