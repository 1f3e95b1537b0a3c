//===- OperatorSummary.h - One-line summaries of operators -------*- C++ -*-===//
//
// This file declares what `tdlc --emit=summary` prints per operator: its
// signature and its basic strategies, taken from the operator analysis
// (OperatorAnalysis::getStrategies), so that the summary and
// `--emit=strategies` never disagree.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_ANALYSIS_OPERATORSUMMARY_H
#define TOFU_ANALYSIS_OPERATORSUMMARY_H

#include "tofu/TDL/AST.h"

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tofu {
namespace analysis {

/// Prints one line for the checked operator `op`: its signature with tensor
/// ranks, then its strategies as `split: VAR...` and `reduce: VAR(REDUCER)...`
/// in OperatorAnalysis::getStrategies order. A generic operator, whose
/// strategies depend on the instance, is marked `(generic)` instead; an
/// operator the analysis rejects shows why.
void printOperatorSummary(llvm::raw_ostream &os, const tdl::OpDecl &op);

} // namespace analysis
} // namespace tofu

#endif // TOFU_ANALYSIS_OPERATORSUMMARY_H
