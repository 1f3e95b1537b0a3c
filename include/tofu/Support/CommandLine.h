//===- CommandLine.h - Checked values of llvm::cl options -------*- C++ -*-===//
//
// This file declares option values that llvm::cl parses and checks while it
// reads the command line, so that a malformed value is an error of the
// command line like an unknown option: llvm::cl prints
// `TOOL: for the --NAME option: MESSAGE` and ParseCommandLineOptions fails
// (every tool then exits 2, bad usage). A value kind is a small struct
// (`Spec`) with the parsed type, a value name for --help and a parse
// function; `cl::opt<cli::Flag<Spec>>` is then an option of that kind, its
// value `.value`:
//
//   struct WorkersSpec {
//     using Type = unsigned;
//     static constexpr const char *valueName = "K";
//     static std::string parse(StringRef text, unsigned &value); // "" if ok
//   };
//   cl::opt<cli::Flag<WorkersSpec>> workers("workers", ...);
//
// The specs every tool shares (counts in a range, byte sizes, positive and
// non-negative numbers) are below.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_SUPPORT_COMMANDLINE_H
#define TOFU_SUPPORT_COMMANDLINE_H

#include "tofu/Support/LLVM.h"

#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/Twine.h"
#include "llvm/Support/CommandLine.h"

#include <cmath>
#include <cstdint>
#include <limits>
#include <string>

namespace tofu {
namespace cli {

/// The start of every Tofu tool's command line: hides the options outside
/// `categories` (LLVM's own), installs the Tofu --version
/// (printToolVersion) and parses `argv` with `overview` for --help,
/// errors on stderr. False on a usage error (the tool exits 2).
bool parseToolCommandLine(
    int argc, const char *const *argv,
    ArrayRef<const llvm::cl::OptionCategory *> categories,
    StringRef overview);

/// The value of an option of kind `Spec` (see the file comment).
template <class Spec> struct Flag {
  typename Spec::Type value{};
  Flag() = default;
  Flag(typename Spec::Type value) : value(value) {}
};

/// An unsigned integer in [Min, Max] (decimal digits only).
template <unsigned Min, unsigned Max> struct UnsignedInRange {
  using Type = unsigned;
  static constexpr const char *valueName = "N";
  static std::string parse(StringRef text, unsigned &value) {
    if (text.getAsInteger(10, value) || value < Min || value > Max) {
      std::string range = Max == std::numeric_limits<unsigned>::max()
                              ? "of at least " + std::to_string(Min)
                              : "from " + std::to_string(Min) + " to " +
                                    std::to_string(Max);
      return "expects an integer " + range + ", got '" + text.str() + "'";
    }
    return "";
  }
};

/// A positive byte count with an optional K, M or G suffix (powers of 1024):
/// `4096`, `512M`, `2g`.
struct ByteSize {
  using Type = int64_t;
  static constexpr const char *valueName = "BYTES[K|M|G]";
  static std::string parse(StringRef text, int64_t &value) {
    StringRef digits = text;
    int64_t scale = 1;
    if (!digits.empty()) {
      char unit = llvm::toLower(digits.back());
      scale = unit == 'k'   ? int64_t(1) << 10
              : unit == 'm' ? int64_t(1) << 20
              : unit == 'g' ? int64_t(1) << 30
                            : 1;
      if (scale != 1)
        digits = digits.drop_back();
    }
    uint64_t count = 0;
    if (digits.getAsInteger(10, count) || count == 0 ||
        count > uint64_t(INT64_MAX / scale))
      return "expects a positive byte count with an optional K, M or G "
             "suffix, got '" +
             text.str() + "'";
    value = int64_t(count) * scale;
    return "";
  }
};

/// A finite number, positive (`AllowZero` false) or non-negative.
template <bool AllowZero> struct Number {
  using Type = double;
  static constexpr const char *valueName = "NUMBER";
  static std::string parse(StringRef text, double &value) {
    // StringRef::getAsDouble accepts only a whole, well-formed number.
    if (text.getAsDouble(value) || !std::isfinite(value) || value < 0 ||
        (!AllowZero && value == 0))
      return std::string("expects a ") +
             (AllowZero ? "non-negative" : "positive") + " number, got '" +
             text.str() + "'";
    return "";
  }
};
using PositiveNumber = Number<false>;
using NonNegativeNumber = Number<true>;

} // namespace cli
} // namespace tofu

namespace llvm {
namespace cl {

/// Parses a cli::Flag<Spec> with Spec::parse (CommandLine.h of tofu).
template <class Spec>
class parser<tofu::cli::Flag<Spec>>
    : public basic_parser<tofu::cli::Flag<Spec>> {
public:
  using Value = tofu::cli::Flag<Spec>;
  using OptVal = typename basic_parser<Value>::OptVal;

  parser(Option &o) : basic_parser<Value>(o) {}

  /// Returns true on error, after llvm::cl's message naming the option.
  bool parse(Option &o, StringRef, StringRef arg, Value &result) {
    std::string message = Spec::parse(arg, result.value);
    if (message.empty())
      return false;
    return o.error(message);
  }
  StringRef getValueName() const override { return Spec::valueName; }
  void printOptionDiff(const Option &o, const Value &, const OptVal &,
                       size_t globalWidth) const {
    this->printOptionNoValue(o, globalWidth);
  }
};

} // namespace cl
} // namespace llvm

#endif // TOFU_SUPPORT_COMMANDLINE_H
