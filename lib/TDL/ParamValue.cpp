//===- ParamValue.cpp - A param value bound at a use ----------------------===//
//
// This file implements the parsing, comparisons and conversions of
// ParamValue.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/ParamValue.h"

#include <cmath>

using namespace tofu::tdl;

llvm::Optional<ParamValue> ParamValue::parse(llvm::StringRef text) {
  int64_t integer;
  if (!text.getAsInteger(10, integer))
    return ofInt(integer);
  double real;
  if (!text.getAsDouble(real))
    return ofReal(real);
  return llvm::None;
}

llvm::Optional<int64_t> ParamValue::getAsInteger() const {
  if (!isReal)
    return intValue;
  double whole;
  if (!std::isfinite(realValue) || std::modf(realValue, &whole) != 0.0 ||
      whole < -9.2e18 || whole > 9.2e18)
    return llvm::None;
  return int64_t(whole);
}

bool ParamValue::operator==(const ParamValue &rhs) const {
  if (isReal != rhs.isReal)
    return false;
  if (!isReal)
    return intValue == rhs.intValue;
  if (std::isnan(realValue))
    return std::isnan(rhs.realValue);
  return realValue == rhs.realValue;
}
