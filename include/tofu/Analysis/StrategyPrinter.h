//===- StrategyPrinter.h - Text and JSON renderings of strategies -*- C++ -*-===//
//
// This file declares what `tdlc --emit=strategies` prints: an operator's
// strategies with each worker's output region and input regions, either
// symbolic (SymbolicRegions.h) or concrete (Regions.h), as text or as the
// JSON of the tool interface contract. Regions are half-open `[lo, hi)`.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_ANALYSIS_STRATEGYPRINTER_H
#define TOFU_ANALYSIS_STRATEGYPRINTER_H

#include "tofu/Analysis/Binding.h"

namespace llvm {
class raw_ostream;
namespace json {
class OStream;
} // namespace json
} // namespace llvm

namespace tofu {
namespace analysis {

/// How the output shape of a concrete rendering was obtained.
enum class OutputShapeSource { Given, Inferred };

/// Prints the symbolic regions of every strategy for `numWorkers` workers.
void printSymbolicStrategies(llvm::raw_ostream &os,
                             const OperatorAnalysis &analysis,
                             unsigned numWorkers);
/// Prints the concrete regions of every strategy for `numWorkers` workers
/// splitting evenly.
void printConcreteStrategies(llvm::raw_ostream &os, const Binding &binding,
                             OutputShapeSource source, unsigned numWorkers);

/// Writes one operator object of the contract's strategies JSON, with
/// symbolic bounds as strings and `"symbolic": true`.
void writeSymbolicStrategiesJSON(llvm::json::OStream &json,
                                 const OperatorAnalysis &analysis,
                                 unsigned numWorkers);
/// Writes one operator object of the contract's concrete strategies JSON.
void writeConcreteStrategiesJSON(llvm::json::OStream &json,
                                 const Binding &binding,
                                 OutputShapeSource source, unsigned numWorkers);

} // namespace analysis
} // namespace tofu

#endif // TOFU_ANALYSIS_STRATEGYPRINTER_H
