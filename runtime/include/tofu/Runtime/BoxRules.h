//===- BoxRules.h - Every worker's boxes from layouts and steps -*- C++ -*-===//
//
// This file declares the box rules of a plan (docs/CostModel.md, the
// contract's "Workers and levels"): the even split, worker digits, a
// worker's part of a box under one split per level (a tensor's stored box
// from its layout, an op's iteration box from its steps), and an op's input
// and output boxes from its iteration box by the op's access rule (OpRule:
// per read of an input, per dimension, the index as a postfix program over
// intervals, whose leaves are affine forms; the paper's <l, u, c> intervals
// with the analysis's exact clipping). Standard library only: a compiled
// plan (GeneratedPlan.h) holds layouts and rules, and the runtime derives
// every worker's boxes with these functions at start; the LLVM side
// (lib/Lowering) encodes the rules from the operator analysis
// (analysis::computeWorkerRegions is the reference they equal).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_RUNTIME_BOXRULES_H
#define TOFU_RUNTIME_BOXRULES_H

#include "tofu/Runtime/ExecutablePlan.h"
#include "tofu/Runtime/IndexIntervals.h"

#include <algorithm>
#include <cstdint>
#include <vector>

namespace tofu {
namespace runtime {

/// A level's split that splits nothing (a `replicate` step).
constexpr unsigned NoSplit = ~0u;

/// Part `c` of `n` of [lo, hi) (n >= 1, c < n): the project's one even
/// split (analysis::getEvenPart, the planner's, calls it). Sizes differ by at most one, larger parts first; a part may be
/// empty.
inline void getEvenPart(std::int64_t &lo, std::int64_t &hi, unsigned n,
                        unsigned c) {
  std::int64_t extent = hi > lo ? hi - lo : 0, q, r;
  // Levels are mostly 2-way: a power of two divides by a shift (the same
  // quotient and remainder, extent being >= 0) instead of a division. Every
  // worker's region is derived where it is read; this took GPT-3's plan at
  // K = 256 from 8.80/8.71 s to 8.60/8.53 s of CPU (two alternating runs,
  // when it was analysis::getEvenPart, which calls this).
  if ((n & (n - 1)) == 0) {
    unsigned shift = __builtin_ctz(n);
    q = extent >> shift;
    r = extent & std::int64_t(n - 1);
  } else {
    q = extent / n;
    r = extent % n;
  }
  std::int64_t base = lo;
  lo = base + std::int64_t(c) * q + std::min<std::int64_t>(c, r);
  hi = base + std::int64_t(c + 1) * q + std::min<std::int64_t>(c + 1, r);
}

/// Worker `w`'s digit per level of `levels` (outermost, most significant,
/// first: `w = ((c1 * f2 + c2) * f3 + c3) ...`).
void getWorkerDigits(const std::vector<unsigned> &levels, unsigned w,
                     std::vector<unsigned> &digits);

/// `box` with, for each level l from the outermost, dimension `splits[l]`
/// replaced by its even part `digits[l]` of `levels[l]`; a split that is
/// not a dimension of the box (NoSplit, or a layout's replicate) leaves it.
void applyWorkerPart(Box &box, const std::vector<unsigned> &levels,
                     const std::vector<unsigned> &splits,
                     const std::vector<unsigned> &digits);

/// How one op derives a worker's boxes: its index variables' extents, the
/// variable each level splits (or reduces), and its reads. Encoded as one
/// array of integers (encode/decodeOpRule) in compiled plans.
struct OpRule {
  /// One instruction of an index's postfix program (IndexIntervals.h).
  struct Inst {
    IndexOp op = IndexOp::Affine;
    /// The constant of MulConst, Div and Rem.
    std::int64_t k = 0;
    /// An Affine leaf: `constant + sum coef * var` over `terms`, (var,
    /// coef) pairs.
    std::int64_t constant = 0;
    std::vector<std::pair<unsigned, std::int64_t>> terms;
  };
  /// One dimension of one read.
  struct Index {
    IndexKind kind = IndexKind::Whole;
    std::vector<Inst> insts;
  };
  /// One tensor read in the operator's body.
  struct Read {
    /// The input position read.
    unsigned tensor = 0;
    /// The variables in scope at the read: if one has an empty range, the
    /// read does not happen.
    std::uint64_t scopeMask = 0;
    /// One per dimension of the input.
    std::vector<Index> dims;
  };

  /// Per index variable (KernelCall order), its extent.
  std::vector<std::int64_t> extents;
  /// Per level, the variable that level's step splits or reduces, or
  /// NoSplit (replicate).
  std::vector<unsigned> levelVars;
  /// The output box is the first `outputRank` variables' ranges.
  unsigned outputRank = 0;
  /// Per input position the operator declares, the shape reads clip to.
  std::vector<std::vector<std::int64_t>> inputShapes;
  std::vector<Read> reads;
};

/// `rule` as one array of integers (the form compiled plans hold).
std::vector<std::int64_t> encodeOpRule(const OpRule &rule);
/// The rule encodeOpRule wrote at `data`; throws RuntimeError if it is
/// malformed (a count out of range, an index whose program pops an empty
/// stack or goes deeper than MaxIndexStack).
OpRule decodeOpRule(const std::int64_t *data);

/// Worker `digits`'s iteration box under `rule` (levels as the plan's).
Box getIterationBox(const OpRule &rule, const std::vector<unsigned> &levels,
                    const std::vector<unsigned> &digits);

/// The output box and, per input position (`inputRanks.size()` of them),
/// the box read of it from `iteration`: the bounding box of the reads,
/// clipped to the input; [0, 0) in every dimension where nothing is read.
void getShareBoxes(const OpRule &rule, const Box &iteration,
                   const std::vector<unsigned> &inputRanks, OpShare &share);

} // namespace runtime
} // namespace tofu

#endif // TOFU_RUNTIME_BOXRULES_H
