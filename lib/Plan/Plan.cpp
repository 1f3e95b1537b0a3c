//===- Plan.cpp - The partition plan IR -----------------------------------===//
//
// This file implements the small pieces of arithmetic every user of a plan
// needs: step spellings, worker digits, and the volumes of regions, their
// intersections and unions (the even split of a range is
// analysis::getEvenPart).
//
//===----------------------------------------------------------------------===//

#include "tofu/Plan/Plan.h"

#include <algorithm>
#include <cassert>

using namespace tofu;
using namespace tofu::plan;

std::string plan::formatStep(const Step &step) {
  switch (step.kind) {
  case Step::Kind::Split:
    return "split:" + step.var;
  case Step::Kind::Reduce:
    return "reduce:" + step.var;
  case Step::Kind::Replicate:
    return "replicate";
  }
  return "";
}

llvm::Optional<Step> plan::parseStep(StringRef text) {
  if (text == "replicate")
    return Step::replicate();
  auto [kind, var] = text.split(':');
  if (var.empty() || !text.contains(':'))
    return llvm::None;
  if (kind == "split")
    return Step::split(var);
  if (kind == "reduce")
    return Step::reduce(var);
  return llvm::None;
}

std::string plan::formatLevels(ArrayRef<unsigned> levels) {
  std::string text;
  for (unsigned f : levels)
    text += (text.empty() ? "" : "x") + std::to_string(f);
  return text.empty() ? "1" : text;
}

unsigned plan::getNumWorkers(ArrayRef<unsigned> levels) {
  unsigned k = 1;
  for (unsigned f : levels)
    k *= f;
  return k;
}

void plan::getWorkerDigits(ArrayRef<unsigned> levels, unsigned w,
                           SmallVectorImpl<unsigned> &digits) {
  digits.resize(levels.size());
  for (unsigned l = levels.size(); l-- != 0;) {
    digits[l] = w % levels[l];
    w /= levels[l];
  }
}

unsigned plan::nextWorkerDigits(ArrayRef<unsigned> levels,
                                llvm::MutableArrayRef<unsigned> digits) {
  // The innermost level counts fastest; the carry stops at the highest
  // level that changed.
  unsigned l = levels.size();
  while (l-- != 0 && ++digits[l] == levels[l])
    digits[l] = 0;
  assert(l < levels.size() && "the last worker has no next one");
  return l;
}

int64_t plan::getVolume(ArrayRef<Range> region) {
  int64_t v = 1;
  for (const Range &r : region)
    v *= r.size();
  return v;
}

int64_t plan::getIntersectionVolume(ArrayRef<Range> a, ArrayRef<Range> b) {
  int64_t v = 1;
  for (unsigned d = 0, e = a.size(); d != e && v; ++d) {
    int64_t lo = std::max(a[d].lo, b[d].lo), hi = std::min(a[d].hi, b[d].hi);
    v *= hi > lo ? hi - lo : 0;
  }
  return v;
}

/// Sorts `ids` by their regions' ranges from `dim` on and drops every
/// region equal there to the one before it: it adds nothing to the union of
/// those dimensions (K workers' regions repeat where a level replicates).
static void dropRepeatedRegions(ArrayRef<Region> regions,
                                SmallVectorImpl<unsigned> &ids, unsigned dim) {
  auto tail = [&](unsigned i) {
    return ArrayRef<Range>(regions[i]).drop_front(dim);
  };
  auto less = [&](unsigned a, unsigned b) {
    return std::lexicographical_compare(
        tail(a).begin(), tail(a).end(), tail(b).begin(), tail(b).end(),
        [](const Range &x, const Range &y) {
          return std::make_pair(x.lo, x.hi) < std::make_pair(y.lo, y.hi);
        });
  };
  llvm::sort(ids, less);
  ids.erase(std::unique(ids.begin(), ids.end(),
                        [&](unsigned a, unsigned b) {
                          return !less(a, b) && !less(b, a);
                        }),
            ids.end());
}

/// The union volume of `regions[ids]` over dimensions [dim, rank): a sweep
/// over the breakpoints of dimension `dim`, recursing on each slab; `ids`
/// is reordered.
static int64_t unionVolumeFrom(ArrayRef<Region> regions,
                               SmallVectorImpl<unsigned> &ids, unsigned dim,
                               unsigned rank) {
  if (ids.empty())
    return 0;
  if (dim == rank)
    return 1;
  dropRepeatedRegions(regions, ids, dim);
  SmallVector<int64_t, 16> cuts;
  for (unsigned i : ids) {
    cuts.push_back(regions[i][dim].lo);
    cuts.push_back(regions[i][dim].hi);
  }
  llvm::sort(cuts);
  cuts.erase(std::unique(cuts.begin(), cuts.end()), cuts.end());
  // The regions open at a cut (begun at or before it, not yet ended; `ids`
  // is in order of their starts) are kept as the sweep passes them, so each
  // interval costs the regions over it, not all of them (K^2 for K
  // workers' parts before). Neighbouring intervals over the same regions
  // share one union of the rest.
  int64_t total = 0, inner = 0;
  SmallVector<unsigned, 16> open, previous, active;
  unsigned next = 0;
  for (unsigned c = 0; c + 1 < cuts.size(); ++c) {
    while (next != ids.size() && regions[ids[next]][dim].lo <= cuts[c])
      open.push_back(ids[next++]);
    llvm::erase_if(open,
                   [&](unsigned i) { return regions[i][dim].hi <= cuts[c]; });
    if (open.empty())
      continue;
    if (open != previous) {
      previous = open;
      active = open;
      inner = unionVolumeFrom(regions, active, dim + 1, rank);
    }
    total += (cuts[c + 1] - cuts[c]) * inner;
  }
  return total;
}

int64_t plan::getUnionVolume(ArrayRef<Region> regions, unsigned rank) {
  SmallVector<unsigned, 16> ids;
  for (unsigned i = 0, e = regions.size(); i != e; ++i)
    if (getVolume(regions[i]) != 0)
      ids.push_back(i);
  return unionVolumeFrom(regions, ids, 0, rank);
}
