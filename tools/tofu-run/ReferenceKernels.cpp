//===- ReferenceKernels.cpp - Kernels built on the TDL evaluator ----------===//
//
// This file implements ReferenceKernels: compiling each op's instance and
// running one kernel call through the evaluator in double precision.
//
//===----------------------------------------------------------------------===//

#include "ReferenceKernels.h"

#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/Half.h"

#include <fmt/format.h>

#include <cstring>

using namespace tofu;
using runtime::BoxView;
using runtime::ElementType;

llvm::Expected<std::unique_ptr<ReferenceKernels>>
ReferenceKernels::create(const graph::Graph &g, graph::SpecLibrary &specs,
                         llvm::function_ref<bool(unsigned op)> wanted) {
  std::unique_ptr<ReferenceKernels> kernels(new ReferenceKernels);
  kernels->ops.resize(g.getNumOps());
  for (unsigned i = 0, e = g.getNumOps(); i != e; ++i) {
    if (wanted && !wanted(i))
      continue;
    const graph::Op &op = g.getOp(i);
    SmallVector<Shape, 4> inputShapes = g.getInputShapes(op);
    const graph::Tensor &out = g.getTensor(op.getOutput());
    auto instance = specs.instantiate(g, op);
    if (!instance)
      return instance.takeError();
    SmallVector<double, 4> values;
    for (const tdl::ParamValue &v : (*instance)->params)
      values.push_back(v.asReal());
    auto compiled = eval::CompiledOp::compile(*(*instance)->op, inputShapes,
                                              values, out.shape);
    if (!compiled)
      return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                     "op '" + op.name + "': " +
                                         llvm::toString(compiled.takeError()));
    kernels->ops[i] =
        std::make_unique<eval::CompiledOp>(std::move(*compiled));
  }
  return kernels;
}

template <typename T> static void toDoubles(const void *src, double *dst, int64_t n) {
  const T *in = static_cast<const T *>(src);
  for (int64_t i = 0; i != n; ++i)
    dst[i] = double(in[i]);
}

template <typename T> static void fromDoubles(const double *src, void *dst, int64_t n) {
  T *out = static_cast<T *>(dst);
  for (int64_t i = 0; i != n; ++i)
    out[i] = T(src[i]);
}

static int64_t getVolume(const BoxView &view) {
  int64_t n = 1;
  for (unsigned d = 0; d != view.rank; ++d)
    n *= view.extent[d];
  return n;
}

static void convertIn(const BoxView &view, std::vector<double> &out) {
  int64_t n = getVolume(view);
  out.resize(n);
  if (!n)
    return;
  switch (view.type) {
  case ElementType::F32: return toDoubles<float>(view.data, out.data(), n);
  case ElementType::F64: return toDoubles<double>(view.data, out.data(), n);
  case ElementType::I64: return toDoubles<int64_t>(view.data, out.data(), n);
  case ElementType::I32: return toDoubles<int32_t>(view.data, out.data(), n);
  case ElementType::I8: return toDoubles<int8_t>(view.data, out.data(), n);
  case ElementType::Bool: return toDoubles<uint8_t>(view.data, out.data(), n);
  case ElementType::F16: return toDoubles<runtime::F16>(view.data, out.data(), n);
  case ElementType::BF16: return toDoubles<runtime::BF16>(view.data, out.data(), n);
  }
}

static void convertOut(const std::vector<double> &in, const BoxView &view) {
  int64_t n = in.size();
  switch (view.type) {
  case ElementType::F32: return fromDoubles<float>(in.data(), view.data, n);
  case ElementType::F64: return fromDoubles<double>(in.data(), view.data, n);
  case ElementType::I64: return fromDoubles<int64_t>(in.data(), view.data, n);
  case ElementType::I32: return fromDoubles<int32_t>(in.data(), view.data, n);
  case ElementType::I8: return fromDoubles<int8_t>(in.data(), view.data, n);
  case ElementType::F16: return fromDoubles<runtime::F16>(in.data(), view.data, n);
  case ElementType::BF16: return fromDoubles<runtime::BF16>(in.data(), view.data, n);
  case ElementType::Bool:
    for (int64_t i = 0; i != n; ++i)
      static_cast<uint8_t *>(view.data)[i] = in[i] != 0;
    return;
  }
}

void ReferenceKernels::run(unsigned kernel, const runtime::KernelCall &call) {
  if (kernel >= ops.size() || !ops[kernel])
    throw runtime::RuntimeError(fmt::format("no kernel {}", kernel));
  const eval::CompiledOp &op = *ops[kernel];
  std::vector<std::vector<double>> values(call.numInputs);
  SmallVector<eval::BoxArg, 4> args;
  for (unsigned p = 0; p != call.numInputs; ++p) {
    const BoxView &view = call.inputs[p];
    convertIn(view, values[p]);
    args.push_back({values[p].data(), ArrayRef<int64_t>(view.lo, view.rank),
                    ArrayRef<int64_t>(view.extent, view.rank)});
  }
  const BoxView &outView = call.output;
  std::vector<double> out(getVolume(outView), 0.0);
  unsigned numVars = op.getNumVars();
  op.runBox(args,
            {out.data(), ArrayRef<int64_t>(outView.lo, outView.rank),
             ArrayRef<int64_t>(outView.extent, outView.rank)},
            ArrayRef<int64_t>(call.varLo, numVars),
            ArrayRef<int64_t>(call.varHi, numVars));
  convertOut(out, outView);
}
