//===- OperatorFilter.cpp - Keep only some operators of a TDL source ------===//
//
// This file implements keepOperators: a scan of the source at the level of
// comments, identifiers and the `;` that ends every definition (TDL has no
// other `;` and no string literals), blanking the definitions not kept.
//
//===----------------------------------------------------------------------===//

#include "tofu/TDL/OperatorFilter.h"

#include "llvm/ADT/StringExtras.h"

using namespace tofu;

namespace {

bool isIdentChar(char c) { return llvm::isAlnum(c) || c == '_'; }

/// The end of the comment that starts at `i` (the newline, or the end).
size_t skipComment(StringRef s, size_t i) {
  size_t end = s.find('\n', i);
  return end == StringRef::npos ? s.size() : end;
}

/// The offset just past the `;` that ends the definition whose name ends
/// at `i`, or npos if there is none.
size_t findDefinitionEnd(StringRef s, size_t i) {
  while (i < s.size()) {
    if (s[i] == '#')
      i = skipComment(s, i);
    else if (s[i] == ';')
      return i + 1;
    else
      ++i;
  }
  return StringRef::npos;
}

} // namespace

std::string tdl::keepOperators(StringRef source,
                               llvm::function_ref<bool(StringRef)> keep,
                               bool &keptAny) {
  std::string out = source.str();
  keptAny = false;
  size_t i = 0;
  while (i < source.size()) {
    char c = source[i];
    if (c == '#') {
      i = skipComment(source, i);
      continue;
    }
    if (!isIdentChar(c)) {
      ++i;
      continue;
    }
    size_t start = i;
    while (i < source.size() && isIdentChar(source[i]))
      ++i;
    if (source.slice(start, i) != "op")
      return out; // not a definition: the parser reports it
    size_t nameStart = i;
    while (nameStart < source.size() && llvm::isSpace(source[nameStart]))
      ++nameStart;
    size_t nameEnd = nameStart;
    while (nameEnd < source.size() && isIdentChar(source[nameEnd]))
      ++nameEnd;
    size_t end = findDefinitionEnd(source, nameEnd);
    if (nameEnd == nameStart || end == StringRef::npos)
      return out;
    if (keep(source.slice(nameStart, nameEnd))) {
      keptAny = true;
    } else {
      for (size_t k = start; k != end; ++k)
        if (out[k] != '\n')
          out[k] = ' ';
    }
    i = end;
  }
  return out;
}
