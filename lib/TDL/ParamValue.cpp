//===- ParamValue.cpp - A param value bound at a use ----------------------===//
//
// This file implements the comparisons and conversions of ParamValue.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/ParamValue.h"

#include <cmath>

using namespace tofu::tdl;

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
