//===- SymbolicRegions.h - Regions as functions of the extents --*- C++ -*-===//
//
// This file declares the symbolic side of the analysis, the paper's form:
// the same index programs evaluated over Poly intervals instead of
// integers, with each output variable over [0, |v|) and the partitioned
// variable over [w |v| / n, (w + 1) |v| / n) for worker w of n. `|v|` is a
// variable's extent, `|T.d|` the extent of dimension d of tensor T. A
// reduction variable whose extent is a param expression ranges over that
// expression. Params are assumed non-negative here (stride, pad, window)
// to decide the sign of a coefficient; a coefficient of unknown sign, and
// `/` or `%` by a non-constant, give the whole dimension. `/` by a constant
// is shown as exact division and `%` by k as [0, k), both marked inexact.
// Symbolic regions are not clipped to the tensors: that needs the shapes,
// and the concrete side (Regions.h) does it.
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_ANALYSIS_SYMBOLICREGIONS_H
#define TOFU_ANALYSIS_SYMBOLICREGIONS_H

#include "tofu/Analysis/OperatorAnalysis.h"

#include <string>

namespace llvm {
class raw_ostream;
} // namespace llvm

namespace tofu {
namespace analysis {

/// A half-open symbolic range [lo, hi).
struct SymRange {
  Poly lo, hi;
  /// False if `/` or `%` made the bounds approximate.
  bool exact = true;
  bool operator==(const SymRange &rhs) const {
    return lo == rhs.lo && hi == rhs.hi && exact == rhs.exact;
  }
};

using SymRegion = SmallVector<SymRange, 4>;

/// What one worker computes and reads, symbolically. A tensor read in ways
/// whose bounding box cannot be decided symbolically keeps one region per
/// distinct read.
struct SymbolicWorker {
  SymRegion output;
  bool partial = false;
  SmallVector<SmallVector<SymRegion, 1>, 4> inputs;
};

/// Symbolic regions of `strategy` split evenly among `numWorkers` workers.
void computeSymbolicStrategy(const OperatorAnalysis &analysis,
                             const Strategy &strategy, unsigned numWorkers,
                             llvm::SmallVectorImpl<SymbolicWorker> &out);

/// The printed name of a Poly atom of `analysis`: a param's name, `|v|`,
/// `|T.d|`, or a parenthesised constant expression.
std::string getAtomName(const OperatorAnalysis &analysis, Atom atom);

/// Prints `p` with getAtomName.
void printPoly(llvm::raw_ostream &os, const OperatorAnalysis &analysis,
               const Poly &p);

} // namespace analysis
} // namespace tofu

#endif // TOFU_ANALYSIS_SYMBOLICREGIONS_H
