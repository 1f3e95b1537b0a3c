//===- ParamValue.h - A param value bound at a use --------------*- C++ -*-===//
//
// This file declares ParamValue, the value of one operator param at a use:
// an integer or a real. Graphs carry them (`"params": {"stride": 2, "eps":
// 1e-05}`), the Instantiator binds them to an operator's typed params, and
// the evaluator reads them.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TDL_PARAMVALUE_H
#define TOFU_TDL_PARAMVALUE_H

#include "llvm/ADT/Optional.h"
#include "llvm/ADT/StringRef.h"

#include <cstdint>
#include <string>
#include <utility>

namespace tofu {
namespace tdl {

/// One param value bound at a use.
struct ParamValue {
  bool isReal = false;
  int64_t intValue = 0;
  double realValue = 0;

  static ParamValue ofInt(int64_t v) { return {false, v, double(v)}; }
  static ParamValue ofReal(double v) { return {true, 0, v}; }
  /// Parses a command-line value: an integer if `text` is one, else a real;
  /// None if it is neither.
  static llvm::Optional<ParamValue> parse(llvm::StringRef text);
  /// The value as a double, whichever kind it is.
  double asReal() const { return isReal ? realValue : double(intValue); }
  /// The integer value, if this is an integer or an integral real.
  llvm::Optional<int64_t> getAsInteger() const;
  /// Same kind and value (NaN equals NaN, so a graph round-trips).
  bool operator==(const ParamValue &rhs) const;
  bool operator!=(const ParamValue &rhs) const { return !(*this == rhs); }
};

/// A named param value, as given at a use (a graph's `params`).
using NamedParamValue = std::pair<std::string, ParamValue>;

} // namespace tdl
} // namespace tofu

#endif // TOFU_TDL_PARAMVALUE_H
