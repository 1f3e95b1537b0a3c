//===- Error.h - The runtime's errors ---------------------------*- C++ -*-===//
//
// This file declares RuntimeError, the exception every runtime failure
// throws: a bad plan, a missing input, a worker that failed, a receive that
// waited past its bound. The message names what is wrong.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_ERROR_H
#define TOFU_RUNTIME_ERROR_H

#include <stdexcept>
#include <string>

namespace tofu {
namespace runtime {

/// A runtime failure with a message for people.
class RuntimeError : public std::runtime_error {
public:
  explicit RuntimeError(const std::string &message)
      : std::runtime_error(message) {}
};

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_ERROR_H
