//===- Shape.cpp - Concrete tensor shapes ---------------------------------===//
//
// This file implements the helpers of Shape.h.
//
//===----------------------------------------------------------------------===//

#include "tofu/Support/Shape.h"

#include "llvm/ADT/StringExtras.h"

using namespace tofu;

int64_t tofu::getNumElements(ArrayRef<int64_t> shape) {
  int64_t n = 1;
  for (int64_t extent : shape)
    n *= extent;
  return n;
}

std::string tofu::formatShape(ArrayRef<int64_t> shape) {
  if (shape.empty())
    return "scalar";
  return llvm::join(llvm::map_range(shape,
                                    [](int64_t e) { return std::to_string(e); }),
                    "x");
}

bool tofu::parseShape(StringRef text, Shape &shape) {
  shape.clear();
  if (text == "scalar")
    return true;
  if (text.empty())
    return false;
  SmallVector<StringRef, 4> parts;
  text.split(parts, 'x');
  for (StringRef part : parts) {
    int64_t extent;
    if (part.empty() || part.getAsInteger(10, extent) || extent < 0)
      return false;
    shape.push_back(extent);
  }
  return true;
}
