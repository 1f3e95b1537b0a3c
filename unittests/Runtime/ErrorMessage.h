//===- ErrorMessage.h - The message a runtime check throws ------*- C++ -*-===//
//
// Shared by the runtime's unit tests that check a rule's exact message.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_UNITTESTS_RUNTIME_ERRORMESSAGE_H
#define TOFU_UNITTESTS_RUNTIME_ERRORMESSAGE_H

#include "tofu/Runtime/Error.h"

#include <string>

namespace tofu::runtime {

/// The message `check` throws, or "" if it throws nothing.
template <typename Fn> std::string getError(Fn check) {
  try {
    check();
  } catch (const RuntimeError &e) {
    return e.what();
  }
  return "";
}

} // namespace tofu::runtime

#endif
