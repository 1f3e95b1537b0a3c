//===- OperatorAnalysis.h - The symbolic analysis of one operator -*- C++ -*-===//
//
// This file declares OperatorAnalysis, built once per checked OpDecl: every
// tensor read compiled to index programs (IndexProgram.h), the extents of
// the reduction variables, and the operator's basic partition-n-reduce
// strategies (one `split` per output variable, one `reduce` per reduction
// variable whose reducer the surrounding body distributes over). Nothing in
// it depends on shapes or param values; Binding.h binds those, and
// Regions.h computes concrete regions from the two, cheaply and without
// allocating.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_ANALYSIS_OPERATORANALYSIS_H
#define TOFU_ANALYSIS_OPERATORANALYSIS_H

#include "tofu/Analysis/IndexProgram.h"
#include "tofu/TDL/AST.h"

#include "llvm/Support/Error.h"

#include <string>
#include <vector>

namespace tofu {
namespace analysis {

/// A basic strategy for partition-n-reduce.
struct Strategy {
  enum class Kind { Split, Reduce };
  Kind kind;
  /// The index variable partitioned (IndexVarDecl id).
  unsigned var;
  /// For Reduce: how the workers' partial outputs combine.
  tdl::Reducer reducer = tdl::Reducer::Sum;
};

/// Returns "split" or "reduce".
StringRef getStrategyKindName(Strategy::Kind kind);

/// One tensor read of the body, analysed.
struct ReadAnalysis {
  const tdl::TensorReadExpr *expr;
  /// Position of the tensor read.
  unsigned tensor;
  /// One program per dimension.
  SmallVector<IndexProgram, 4> dims;
  /// Bit `v` set for every index variable in scope at the read (the output
  /// variables and those of the enclosing reductions): if one of them has an
  /// empty range, the read does not happen.
  uint64_t scopeMask = 0;
};

/// Something the analysis could not do exactly, for the user.
struct AnalysisNote {
  SMLoc loc;
  std::string message;
};

/// The symbolic analysis of one operator.
class OperatorAnalysis {
public:
  /// Analyses a checked, concrete operator. Fails if it is generic (it must
  /// be instantiated first) or outside what the analysis represents (more
  /// than 64 index variables, or more than 16383 tensors or params).
  static llvm::Expected<OperatorAnalysis> analyze(const tdl::OpDecl &op);

  const tdl::OpDecl &getOp() const { return *op; }
  unsigned getNumVars() const { return numVars; }
  unsigned getNumTensors() const { return op->getTensors().size(); }
  unsigned getNumParams() const { return op->getParams().size(); }
  unsigned getOutputRank() const { return op->getOutputRank(); }
  /// The tensor's rank, or -1 if it is never read.
  int getTensorRank(unsigned tensor) const;

  /// The basic strategies, splits in output order then reduces in source
  /// order.
  ArrayRef<Strategy> getStrategies() const { return strategies; }
  ArrayRef<ReadAnalysis> getReads() const { return reads; }
  ArrayRef<AnalysisNote> getNotes() const { return notes; }

  ArrayRef<Poly> getCoefficients() const { return compiler.coefficients; }
  ArrayRef<AffineForm> getAffineForms() const { return compiler.affineForms; }
  ArrayRef<const tdl::Expr *> getOpaqueExprs() const {
    return compiler.opaqueExprs;
  }
  /// The coefficient slot holding the explicit extent (`ky < 2`, or an
  /// output variable's `z < 1`) of variable `var`, a polynomial over params;
  /// None for variables without one.
  llvm::Optional<unsigned> getExtentSlot(unsigned var) const {
    return extentSlots[var] < 0 ? llvm::Optional<unsigned>()
                                : unsigned(extentSlots[var]);
  }

  /// The most coefficient * variable products (and constants) any index
  /// program sums: over its affine leaves, terms + 1. Every bound of an
  /// index is then at most this times the largest coefficient times the
  /// largest extent, which lets Binding skip its overflow check when that
  /// product is small. 0 if some program multiplies an interval by a
  /// coefficient (`(i / 2) * k`), where the bound does not hold.
  unsigned getIndexWeight() const { return indexWeight; }

private:
  OperatorAnalysis() = default;
  void computeIndexWeight();
  void analyzeReads();
  void analyzeExtents();
  void discoverStrategies();

  const tdl::OpDecl *op = nullptr;
  unsigned numVars = 0;
  IndexCompiler compiler;
  std::vector<ReadAnalysis> reads;
  std::vector<Strategy> strategies;
  std::vector<AnalysisNote> notes;
  /// Coefficient slot of each variable's explicit extent, or -1.
  std::vector<int> extentSlots;
  unsigned indexWeight = 0;
};

} // namespace analysis
} // namespace tofu

#endif // TOFU_ANALYSIS_OPERATORANALYSIS_H
