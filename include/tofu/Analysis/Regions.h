//===- Regions.h - Concrete regions of partitioned operators ----*- C++ -*-===//
//
// This file declares the concrete side of the analysis, the part the
// planner calls thousands of times: given a Binding and, for one worker,
// a box of index-variable ranges, the region of the output the worker
// computes and the region of every input it reads (the bounding box of its
// reads, clipped to the tensor: reads outside are zero padding). Strategies
// are instantiated for any number of workers owning any parts of the
// partitioned variable's range, even or not. The computation does no heap
// allocation once the caller's WorkerRegions have been sized (reuse them).
//
//===----------------------------------------------------------------------===//

#ifndef TOFU_ANALYSIS_REGIONS_H
#define TOFU_ANALYSIS_REGIONS_H

#include "tofu/Analysis/Binding.h"

namespace tofu {
namespace analysis {

/// A half-open range of integers [lo, hi); empty when lo >= hi.
struct Range {
  int64_t lo = 0;
  int64_t hi = 0;
  bool empty() const { return lo >= hi; }
  int64_t size() const { return empty() ? 0 : hi - lo; }
  bool operator==(const Range &rhs) const { return lo == rhs.lo && hi == rhs.hi; }
  bool operator!=(const Range &rhs) const { return !(*this == rhs); }
};

/// One range per dimension. A region with an empty range holds nothing;
/// computed regions that hold nothing are all `[0, 0)`. Regions of rank up
/// to 4 live inline.
using Region = SmallVector<Range, 4>;

/// What one worker computes and reads. Up to 8 inputs of rank up to 4 live
/// inline, so that a fresh WorkerRegions (a worker count that grows again
/// after shrinking) costs no heap allocation.
struct WorkerRegions {
  /// The output region the worker writes.
  Region output;
  /// True if the worker's output holds partial values to be reduced.
  bool partial = false;
  /// The region of each input tensor (by position) the worker reads.
  SmallVector<Region, 8> inputs;
};

/// Computes the regions of a worker that owns `box` (one range per index
/// variable, by id), each range within the variable's extent (Binding
/// checked that the index arithmetic over the full extents fits in
/// int64_t). `box` ranges of output variables give the output region. The
/// binding must have its output shape. No heap allocation once `out` has
/// held regions of these ranks.
void computeWorkerRegions(const Binding &binding, ArrayRef<Range> box,
                          WorkerRegions &out);

/// The closed interval of values index program `prog` takes over `box`, or
/// the interval [0, dimExtent - 1] where it is analysed as the whole
/// dimension. Returns false if the program reads nothing (an empty range).
bool evaluateIndexInterval(const Binding &binding, const IndexProgram &prog,
                           ArrayRef<Range> box, int64_t dimExtent,
                           int64_t &lo, int64_t &hi);

/// The outcome of a checked interval evaluation.
enum class IndexEval {
  /// The interval is in `lo`, `hi`.
  Ok,
  /// A variable of the index has an empty range: nothing is read.
  Empty,
  /// The index is analysed as the whole dimension.
  Whole,
  /// A bound went beyond ±MaxIndexMagnitude.
  Overflow,
};

/// As evaluateIndexInterval, with every step of the arithmetic checked
/// against ±MaxIndexMagnitude, for ranges not known to be within a
/// Binding's extents (shape inference searching for an extent) and for
/// Binding's own check of its extents.
IndexEval evaluateIndexIntervalChecked(const Binding &binding,
                                       const IndexProgram &prog,
                                       ArrayRef<Range> box, int64_t &lo,
                                       int64_t &hi);

/// Fills `box` with the full range of every index variable.
void getFullBox(const Binding &binding, llvm::SmallVectorImpl<Range> &box);

/// Instantiates `strategy` for `parts.size()` workers, worker `w` owning
/// `parts[w]` of the strategy variable's range (any sizes, any number).
/// `out` is resized to the number of workers.
void instantiateStrategy(const Binding &binding, const Strategy &strategy,
                         ArrayRef<Range> parts,
                         llvm::SmallVectorImpl<WorkerRegions> &out);

/// Part `c` (0-based) of `n` of range `r`: the project's one even split.
/// The parts are contiguous, their sizes differ by at most one, the larger
/// ones first (for n = 2: [lo, lo + ceil(E/2)) and [lo + ceil(E/2), hi));
/// a part may be empty. The planner nests it per level (a worker's part of
/// its group's part), the analysis and the runtime's boxes follow it.
Range getEvenPart(Range r, unsigned n, unsigned c);

/// Splits [0, extent) into `n` parts: part `w` is getEvenPart([0, extent),
/// n, w).
void splitEvenly(int64_t extent, unsigned n, llvm::SmallVectorImpl<Range> &parts);

/// Splits [0, sum(sizes)) into contiguous parts of the given sizes.
void splitBySizes(ArrayRef<int64_t> sizes, llvm::SmallVectorImpl<Range> &parts);

} // namespace analysis
} // namespace tofu

#endif // TOFU_ANALYSIS_REGIONS_H
