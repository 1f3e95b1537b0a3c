//===- OperatorFilter.h - Keep only some operators of a TDL source -*- C++ -*-===//
//
// This file declares keepOperators, which blanks out the definitions of the
// operators a client does not need before the source is parsed. A tool that
// checks one graph needs the overloads of the graph's op types only, and
// parsing the whole standard library (thousands of generated overloads)
// would dominate its run time; blanking with spaces keeps every line and
// column, so diagnostics about the kept definitions point where they did.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_TDL_OPERATORFILTER_H
#define TOFU_TDL_OPERATORFILTER_H

#include "tofu/Support/LLVM.h"

#include "llvm/ADT/STLFunctionalExtras.h"

#include <string>

namespace tofu {
namespace tdl {

/// `source` with each definition `op NAME ... ;` for which `keep(NAME)` is
/// false replaced by spaces (newlines kept). `keptAny` says whether any
/// definition was kept. Text that does not scan as a list of definitions
/// (an `op` without a name or a `;`) is left as it is from there on, for
/// the parser to report.
std::string keepOperators(StringRef source,
                          llvm::function_ref<bool(StringRef)> keep,
                          bool &keptAny);

} // namespace tdl
} // namespace tofu

#endif // TOFU_TDL_OPERATORFILTER_H
