//===- ONNXConstant.cpp - Constant tensor values of an ONNX model ---------===//
//
// This file implements reading the value of a constant ONNX tensor
// (initializers, Constant nodes: raw or typed data of the integer, boolean
// and real element types) into a ConstValue, and writing a ConstValue back
// as a TensorProto.
//
//===----------------------------------------------------------------------===//

#include "ONNXConstant.h"

#include <cstring>

using namespace tofu;
using namespace tofu::graph;
using namespace tofu::graph::onnximport;

bool ConstValue::isRealType(int elemType) {
  return elemType == onnx::TensorProto::FLOAT ||
         elemType == onnx::TensorProto::DOUBLE ||
         elemType == onnx::TensorProto::FLOAT16 ||
         elemType == onnx::TensorProto::BFLOAT16;
}

double ConstValue::getReal(size_t i) const {
  return isReal() ? reals[i] : double(ints[i]);
}

int64_t ConstValue::getInt(size_t i) const {
  return isReal() ? int64_t(reals[i]) : ints[i];
}

void ConstValue::resize(size_t n) {
  if (isReal())
    reals.assign(n, 0);
  else
    ints.assign(n, 0);
}

void ConstValue::set(size_t i, double real, int64_t integer) {
  if (isReal())
    reals[i] = real;
  else
    ints[i] = integer;
}

namespace {

template <typename T>
void fromRaw(const std::string &raw, std::vector<T> &out) {
  out.resize(raw.size() / sizeof(T));
  std::memcpy(out.data(), raw.data(), out.size() * sizeof(T));
}

template <typename From, typename To>
void widenAll(const std::vector<From> &from, std::vector<To> &to) {
  to.assign(from.begin(), from.end());
}

/// The values of an integer tensor narrower than 64 bits: raw data of `T`,
/// or the int32_data field.
template <typename T>
void smallInts(const onnx::TensorProto &t, std::vector<int64_t> &out) {
  if (t.has_raw_data()) {
    std::vector<T> v;
    fromRaw(t.raw_data(), v);
    widenAll(v, out);
  } else {
    out.assign(t.int32_data().begin(), t.int32_data().end());
  }
}

} // namespace

bool onnximport::readConstant(const onnx::TensorProto &t, ConstValue &out) {
  out = ConstValue();
  out.elemType = t.data_type();
  out.shape.assign(t.dims().begin(), t.dims().end());
  if (t.data_location() == onnx::TensorProto::EXTERNAL)
    return false;
  const std::string &raw = t.raw_data();
  bool hasRaw = t.has_raw_data();
  switch (t.data_type()) {
  case onnx::TensorProto::FLOAT:
    if (hasRaw) {
      std::vector<float> v;
      fromRaw(raw, v);
      widenAll(v, out.reals);
    } else {
      out.reals.assign(t.float_data().begin(), t.float_data().end());
    }
    break;
  case onnx::TensorProto::DOUBLE:
    if (hasRaw)
      fromRaw(raw, out.reals);
    else
      out.reals.assign(t.double_data().begin(), t.double_data().end());
    break;
  case onnx::TensorProto::INT64:
    if (hasRaw)
      fromRaw(raw, out.ints);
    else
      out.ints.assign(t.int64_data().begin(), t.int64_data().end());
    break;
  case onnx::TensorProto::INT32:
    smallInts<int32_t>(t, out.ints);
    break;
  case onnx::TensorProto::BOOL:
  case onnx::TensorProto::UINT8:
    smallInts<uint8_t>(t, out.ints);
    break;
  case onnx::TensorProto::INT8:
    smallInts<int8_t>(t, out.ints);
    break;
  default:
    return false;
  }
  return out.size() == size_t(getNumElements(out.shape));
}

onnx::TensorProto onnximport::writeConstant(const ConstValue &c,
                                            StringRef name) {
  onnx::TensorProto t;
  t.set_name(name.str());
  for (int64_t d : c.shape)
    t.add_dims(d);
  int type = c.elemType;
  // Real types tofu has no exact writer for are kept as floats.
  if (type == onnx::TensorProto::FLOAT16 || type == onnx::TensorProto::BFLOAT16)
    type = onnx::TensorProto::FLOAT;
  t.set_data_type(type);
  for (size_t i = 0, e = c.size(); i != e; ++i) {
    switch (type) {
    case onnx::TensorProto::FLOAT: t.add_float_data(float(c.reals[i])); break;
    case onnx::TensorProto::DOUBLE: t.add_double_data(c.reals[i]); break;
    case onnx::TensorProto::INT64: t.add_int64_data(c.ints[i]); break;
    default: t.add_int32_data(int32_t(c.ints[i])); break;
    }
  }
  return t;
}

const onnx::AttributeProto *onnximport::findAttr(const onnx::NodeProto &node,
                                                 StringRef name) {
  for (const auto &attr : node.attribute())
    if (attr.name() == name)
      return &attr;
  return nullptr;
}

bool onnximport::readConstantNode(const onnx::NodeProto &node,
                                  ConstValue &out) {
  for (const auto &attr : node.attribute()) {
    out = ConstValue();
    if (attr.name() == "value" && attr.has_t())
      return readConstant(attr.t(), out);
    if (attr.name() == "value_int") {
      out.elemType = onnx::TensorProto::INT64;
      out.ints = {attr.i()};
      return true;
    }
    if (attr.name() == "value_ints") {
      out.elemType = onnx::TensorProto::INT64;
      out.ints.assign(attr.ints().begin(), attr.ints().end());
      out.shape = {int64_t(out.ints.size())};
      return true;
    }
    if (attr.name() == "value_float") {
      out.reals = {attr.f()};
      return true;
    }
    if (attr.name() == "value_floats") {
      out.reals.assign(attr.floats().begin(), attr.floats().end());
      out.shape = {int64_t(out.reals.size())};
      return true;
    }
  }
  return false;
}
