//===- Inputs.cpp - Values of a graph's inputs for tofu-run ---------------===//
//
// This file implements reading .npy inputs, drawing seeded random inputs
// and converting host tensors to doubles for comparisons.
//
//===----------------------------------------------------------------------===//

#include "Inputs.h"

#include "tofu/Eval/Npy.h"
#include "tofu/Lowering/PlanLowering.h"
#include "tofu/Runtime/Half.h"

#include "llvm/Support/JSON.h"

#include <algorithm>
#include <cmath>
#include <cstring>

using namespace tofu;
using runtime::ElementType;
using runtime::HostTensor;

template <typename T>
static void store(HostTensor &out, const std::vector<double> &values) {
  out.data.resize(values.size() * sizeof(T));
  for (size_t i = 0, e = values.size(); i != e; ++i) {
    T v = T(values[i]);
    std::memcpy(out.data.data() + i * sizeof(T), &v, sizeof(T));
  }
}

static HostTensor makeHost(ElementType type, ArrayRef<int64_t> shape,
                           const std::vector<double> &values) {
  HostTensor out{type, std::vector<int64_t>(shape.begin(), shape.end()), {}};
  switch (type) {
  case ElementType::F32: store<float>(out, values); break;
  case ElementType::F64: store<double>(out, values); break;
  case ElementType::I64: store<int64_t>(out, values); break;
  case ElementType::I32: store<int32_t>(out, values); break;
  case ElementType::I8: store<int8_t>(out, values); break;
  case ElementType::Bool: store<uint8_t>(out, values); break;
  case ElementType::F16: store<runtime::F16>(out, values); break;
  case ElementType::BF16: store<runtime::BF16>(out, values); break;
  }
  return out;
}

template <typename T>
static void load(const HostTensor &in, std::vector<double> &values) {
  size_t n = in.data.size() / sizeof(T);
  values.resize(n);
  for (size_t i = 0; i != n; ++i) {
    T v;
    std::memcpy(&v, in.data.data() + i * sizeof(T), sizeof(T));
    values[i] = double(v);
  }
}

std::vector<double> tofu::toDoubles(const HostTensor &value) {
  std::vector<double> values;
  switch (value.type) {
  case ElementType::F32: load<float>(value, values); break;
  case ElementType::F64: load<double>(value, values); break;
  case ElementType::I64: load<int64_t>(value, values); break;
  case ElementType::I32: load<int32_t>(value, values); break;
  case ElementType::I8: load<int8_t>(value, values); break;
  case ElementType::Bool: load<uint8_t>(value, values); break;
  case ElementType::F16: load<runtime::F16>(value, values); break;
  case ElementType::BF16: load<runtime::BF16>(value, values); break;
  }
  return values;
}

llvm::Expected<HostTensor> tofu::readInputFile(const graph::Graph &g,
                                               unsigned t, StringRef path) {
  const graph::Tensor &tensor = g.getTensor(t);
  auto value = eval::readNpy(path);
  if (!value)
    return value.takeError();
  auto fail = [&](const Twine &what) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   path + ": " + what + " but tensor '" +
                                       tensor.name + "' is " +
                                       getDTypeName(tensor.dtype) + " " +
                                       formatShape(tensor.shape));
  };
  if (value->getShape() != ArrayRef<int64_t>(tensor.shape))
    return fail("the array has shape " + formatShape(value->getShape()));
  if (value->getDType() != tensor.dtype)
    return fail("the array has dtype " + getDTypeName(value->getDType()));
  auto type = lowering::getElementType(tensor.dtype);
  if (!type)
    return type.takeError();
  return makeHost(*type, tensor.shape,
                  std::vector<double>(value->getData().begin(),
                                      value->getData().end()));
}

static bool isInteger(DType dtype) {
  return dtype == DType::I64 || dtype == DType::I32 || dtype == DType::I8;
}

/// The integer range rule of Inputs.h: the smallest extent of the floating
/// tensors read by the ops consuming `t`, following integer outputs.
static int64_t getIndexBound(const graph::Graph &g, unsigned t) {
  int64_t bound = INT64_MAX;
  std::vector<unsigned> work{t};
  std::vector<bool> seen(g.getNumTensors(), false);
  seen[t] = true;
  while (!work.empty()) {
    unsigned cur = work.back();
    work.pop_back();
    for (unsigned user : g.getUsers(cur)) {
      const graph::Op &op = g.getOp(user);
      for (const graph::TensorRef &ref : op.inputs) {
        const graph::Tensor &in = g.getTensor(ref.index);
        if (isInteger(in.dtype) || in.dtype == DType::Bool)
          continue;
        for (int64_t extent : in.shape)
          bound = std::min(bound, extent);
      }
      int out = op.getOutput();
      if (out >= 0 && isInteger(g.getTensor(out).dtype) && !seen[out]) {
        seen[out] = true;
        work.push_back(out);
      }
    }
  }
  return bound == INT64_MAX ? 2 : std::max<int64_t>(bound, 1);
}

llvm::Expected<llvm::Optional<HostTensor>>
tofu::readValueField(const graph::Graph &g, unsigned t) {
  const graph::Tensor &tensor = g.getTensor(t);
  const graph::ExtraField *field = nullptr;
  for (const graph::ExtraField &extra : tensor.extras)
    if (extra.key == "value")
      field = &extra;
  if (!field)
    return llvm::None;
  auto fail = [&](const llvm::Twine &why) {
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "tensor '" + tensor.name +
                                       "': its \"value\" " + why);
  };
  llvm::Expected<llvm::json::Value> parsed = llvm::json::parse(field->json);
  if (!parsed)
    return fail("is not JSON: " + llvm::toString(parsed.takeError()));
  const llvm::json::Array *list = parsed->getAsArray();
  if (!list)
    return fail("is not a list of numbers");
  if (int64_t(list->size()) != tensor.getNumElements())
    return fail("has " + llvm::Twine(list->size()) +
                " elements for a tensor of " +
                llvm::Twine(tensor.getNumElements()));
  std::vector<double> values;
  for (const llvm::json::Value &v : *list) {
    // Reals as params are written: "inf", "-inf" and "nan" are strings.
    llvm::Optional<double> number = v.getAsNumber();
    if (llvm::Optional<llvm::StringRef> text = v.getAsString())
      number = *text == "inf"    ? llvm::Optional<double>(INFINITY)
               : *text == "-inf" ? llvm::Optional<double>(-INFINITY)
               : *text == "nan"  ? llvm::Optional<double>(NAN)
                                 : llvm::None;
    else if (llvm::Optional<bool> flag = v.getAsBoolean())
      number = *flag ? 1.0 : 0.0;
    if (!number)
      return fail("holds an element that is not a number");
    values.push_back(*number);
  }
  auto type = lowering::getElementType(tensor.dtype);
  if (!type)
    return type.takeError();
  return llvm::Optional<HostTensor>(makeHost(*type, tensor.shape, values));
}

HostTensor tofu::makeRandomInput(const graph::Graph &g, unsigned t,
                                 std::mt19937_64 &rng) {
  const graph::Tensor &tensor = g.getTensor(t);
  std::vector<double> values(tensor.getNumElements());
  if (isInteger(tensor.dtype)) {
    std::uniform_int_distribution<int64_t> dist(0, getIndexBound(g, t) - 1);
    for (double &v : values)
      v = double(dist(rng));
  } else if (tensor.dtype == DType::Bool) {
    std::uniform_int_distribution<int> dist(0, 1);
    for (double &v : values)
      v = dist(rng);
  } else {
    // Optimizer state (Adam's second moments) must not be negative.
    std::uniform_real_distribution<double> dist(
        tensor.role == graph::Role::State ? 0.0 : -0.1, 0.1);
    for (double &v : values)
      v = dist(rng);
  }
  auto type = lowering::getElementType(tensor.dtype);
  return makeHost(type ? *type : (llvm::consumeError(type.takeError()),
                                  ElementType::F32),
                  tensor.shape, values);
}
