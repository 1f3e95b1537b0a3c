//===- GraphWriter.cpp - Write the Graph IR as tofu-graph JSON ------------===//
//
// This file implements the tofu-graph writer and its number spelling.
//
//===----------------------------------------------------------------------===//

#include "tofu/Graph/GraphWriter.h"

#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

using namespace tofu;
using namespace tofu::graph;

std::string graph::formatReal(double value) {
  // Shortest round-tripping mantissa, then Python's repr layout: fixed
  // notation for decimal exponents in [-4, 16), scientific otherwise.
  char buf[40];
  int precision = 1;
  for (; precision < 17; ++precision) {
    snprintf(buf, sizeof(buf), "%.*e", precision - 1, value);
    if (std::strtod(buf, nullptr) == value)
      break;
  }
  snprintf(buf, sizeof(buf), "%.*e", precision - 1, value);
  std::string text = buf;
  std::string sign;
  if (text[0] == '-') {
    sign = "-";
    text.erase(0, 1);
  }
  size_t ePos = text.find('e');
  int exponent = std::atoi(text.c_str() + ePos + 1);
  std::string digits;
  for (char c : text.substr(0, ePos))
    if (c != '.')
      digits.push_back(c);
  while (digits.size() > 1 && digits.back() == '0')
    digits.pop_back();
  if (exponent >= -4 && exponent < 16) {
    if (exponent < 0)
      return sign + "0." + std::string(-exponent - 1, '0') + digits;
    std::string whole = digits.substr(0, std::min<size_t>(digits.size(),
                                                          exponent + 1));
    whole.append(exponent + 1 - whole.size(), '0');
    std::string frac = digits.size() > size_t(exponent + 1)
                           ? digits.substr(exponent + 1)
                           : "0";
    return sign + whole + "." + frac;
  }
  std::string mantissa = digits.substr(0, 1);
  if (digits.size() > 1)
    mantissa += "." + digits.substr(1);
  char exp[16];
  snprintf(exp, sizeof(exp), "e%c%02d", exponent < 0 ? '-' : '+',
           std::abs(exponent));
  return sign + mantissa + exp;
}

void graph::writeJSONString(llvm::raw_ostream &os, StringRef s) {
  os << '"';
  for (unsigned char c : s) {
    switch (c) {
    case '"': os << "\\\""; break;
    case '\\': os << "\\\\"; break;
    case '\n': os << "\\n"; break;
    case '\t': os << "\\t"; break;
    case '\r': os << "\\r"; break;
    case '\b': os << "\\b"; break;
    case '\f': os << "\\f"; break;
    default:
      if (c < 0x20)
        os << llvm::format("\\u%04x", c);
      else
        os << c;
    }
  }
  os << '"';
}

void graph::writeParamValue(llvm::raw_ostream &os, const ParamValue &value) {
  if (!value.isReal)
    os << value.intValue;
  else if (std::isnan(value.realValue))
    os << "\"nan\"";
  else if (std::isinf(value.realValue))
    os << (value.realValue > 0 ? "\"inf\"" : "\"-inf\"");
  else
    os << formatReal(value.realValue);
}

namespace {

void writeExtras(llvm::raw_ostream &os, ArrayRef<ExtraField> extras) {
  for (const ExtraField &field : extras) {
    os << ", ";
    writeJSONString(os, field.key);
    os << ": " << field.json;
  }
}

void writeNames(llvm::raw_ostream &os, ArrayRef<TensorRef> refs) {
  os << '[';
  for (size_t i = 0; i != refs.size(); ++i) {
    if (i)
      os << ", ";
    writeJSONString(os, refs[i].name);
  }
  os << ']';
}

void writeTensor(llvm::raw_ostream &os, const Tensor &t) {
  os << "{\"name\": ";
  writeJSONString(os, t.name);
  os << ", \"shape\": [";
  for (size_t i = 0; i != t.shape.size(); ++i)
    os << (i ? ", " : "") << t.shape[i];
  os << "], \"dtype\": \"" << getDTypeName(t.dtype) << "\", \"role\": ";
  writeJSONString(os, t.roleName);
  writeExtras(os, t.extras);
  os << '}';
}

void writeOp(llvm::raw_ostream &os, const Op &op) {
  os << "{\"name\": ";
  writeJSONString(os, op.name);
  os << ", \"type\": ";
  writeJSONString(os, op.type);
  os << ", \"inputs\": ";
  writeNames(os, op.inputs);
  os << ", \"outputs\": ";
  writeNames(os, op.outputs);
  os << ", \"params\": {";
  for (size_t i = 0; i != op.params.size(); ++i) {
    os << (i ? ", " : "");
    writeJSONString(os, op.params[i].first);
    os << ": ";
    writeParamValue(os, op.params[i].second);
  }
  os << '}';
  if (op.hasGroup) {
    os << ", \"group\": ";
    writeJSONString(os, op.group);
  }
  writeExtras(os, op.extras);
  os << '}';
}

} // namespace

void graph::writeGraph(llvm::raw_ostream &os, const Graph &g) {
  os << "{\"format\": \"tofu-graph\", \"version\": 1";
  writeExtras(os, g.extras);
  os << ",\n \"tensors\": [\n";
  for (unsigned i = 0, e = g.getNumTensors(); i != e; ++i) {
    os << "  ";
    writeTensor(os, g.getTensor(i));
    os << (i + 1 != e ? ",\n" : "\n");
  }
  os << " ],\n \"ops\": [\n";
  for (unsigned i = 0, e = g.getNumOps(); i != e; ++i) {
    os << "  ";
    writeOp(os, g.getOp(i));
    os << (i + 1 != e ? ",\n" : "\n");
  }
  os << " ]\n}\n";
}
