//===- BoxRules.cpp - Every worker's boxes from layouts and steps ---------===//
//
// This file implements the box rules of BoxRules.h: worker parts, the
// encoding of op rules, and the interval evaluation of an op's reads over
// an iteration box (as analysis::computeWorkerRegions does it over a
// Binding: the same steps, with the coefficients' values in the rule).
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/BoxRules.h"

#include "tofu/Runtime/Error.h"

#include <algorithm>
#include <limits>

using namespace tofu;
using namespace tofu::runtime;

void runtime::getWorkerDigits(const std::vector<unsigned> &levels, unsigned w,
                              std::vector<unsigned> &digits) {
  digits.resize(levels.size());
  for (unsigned l = levels.size(); l-- != 0;) {
    digits[l] = w % levels[l];
    w /= levels[l];
  }
}

void runtime::applyWorkerPart(Box &box, const std::vector<unsigned> &levels,
                              const std::vector<unsigned> &splits,
                              const std::vector<unsigned> &digits) {
  for (unsigned l = 0, e = std::min(splits.size(), levels.size()); l != e;
       ++l) {
    unsigned d = splits[l];
    if (d < box.getRank())
      getEvenPart(box.lo[d], box.hi[d], levels[l], digits[l]);
  }
}

Box runtime::getIterationBox(const OpRule &rule,
                             const std::vector<unsigned> &levels,
                             const std::vector<unsigned> &digits) {
  Box box = Box::whole(rule.extents);
  applyWorkerPart(box, levels, rule.levelVars, digits);
  return box;
}

//===----------------------------------------------------------------------===//
// Encoding: [numVars, extents..., numLevels, levelVars... (-1: none),
// outputRank, numInputs, (rank, shape...)..., numReads, reads...]; a read
// is [tensor, scopeMask, numDims, one index per dimension]; an index [kind,
// numInsts, insts...]; an instruction [op, then k (MulConst, Div, Rem) or
// constant, numTerms, (var, coef)... (Affine)].
//===----------------------------------------------------------------------===//

std::vector<std::int64_t> runtime::encodeOpRule(const OpRule &rule) {
  std::vector<std::int64_t> out;
  auto list = [&](const std::vector<std::int64_t> &values) {
    out.push_back(values.size());
    out.insert(out.end(), values.begin(), values.end());
  };
  list(rule.extents);
  out.push_back(rule.levelVars.size());
  for (unsigned v : rule.levelVars)
    out.push_back(v == NoSplit ? -1 : std::int64_t(v));
  out.push_back(rule.outputRank);
  out.push_back(rule.inputShapes.size());
  for (const auto &shape : rule.inputShapes)
    list(shape);
  out.push_back(rule.reads.size());
  for (const OpRule::Read &read : rule.reads) {
    out.push_back(read.tensor);
    out.push_back(std::int64_t(read.scopeMask));
    out.push_back(read.dims.size());
    for (const OpRule::Index &index : read.dims) {
      out.push_back(index.kind);
      out.push_back(index.insts.size());
      for (const OpRule::Inst &inst : index.insts) {
        out.push_back(inst.op);
        if (inst.op != OpRule::Inst::Affine) {
          if (inst.op == OpRule::Inst::MulConst ||
              inst.op == OpRule::Inst::Div || inst.op == OpRule::Inst::Rem)
            out.push_back(inst.k);
          continue;
        }
        out.push_back(inst.constant);
        out.push_back(inst.terms.size());
        for (auto [var, coef] : inst.terms) {
          out.push_back(var);
          out.push_back(coef);
        }
      }
    }
  }
  return out;
}

namespace {
/// Reads an encoded rule, checking every count it takes.
class RuleReader {
public:
  explicit RuleReader(const std::int64_t *data) : data(data) {}
  std::int64_t next() { return data[at++]; }
  /// A count or index in [0, limit).
  unsigned count(std::int64_t limit = 1 << 20) {
    std::int64_t n = next();
    if (n < 0 || n >= limit)
      throw RuntimeError("generated plan: a malformed op rule (entry " +
                         std::to_string(at - 1) + " is " + std::to_string(n) +
                         ")");
    return unsigned(n);
  }

private:
  const std::int64_t *data;
  std::size_t at = 0;
};
} // namespace

OpRule runtime::decodeOpRule(const std::int64_t *data) {
  if (!data)
    throw RuntimeError("generated plan: an op has no rule");
  RuleReader in(data);
  OpRule rule;
  rule.extents.resize(in.count(65));
  for (std::int64_t &extent : rule.extents)
    extent = in.next();
  rule.levelVars.resize(in.count(64));
  for (unsigned &v : rule.levelVars) {
    std::int64_t var = in.next();
    v = var < 0 ? NoSplit : unsigned(var);
  }
  rule.outputRank = in.count(rule.extents.size() + 1);
  rule.inputShapes.resize(in.count());
  for (auto &shape : rule.inputShapes) {
    shape.resize(in.count());
    for (std::int64_t &extent : shape)
      extent = in.next();
  }
  rule.reads.resize(in.count());
  for (OpRule::Read &read : rule.reads) {
    read.tensor = in.count(rule.inputShapes.size());
    read.scopeMask = std::uint64_t(in.next());
    read.dims.resize(in.count(rule.inputShapes[read.tensor].size() + 1));
    for (OpRule::Index &index : read.dims) {
      index.kind = OpRule::Index::Kind(in.count(OpRule::Index::Whole + 1));
      index.insts.resize(in.count());
      for (OpRule::Inst &inst : index.insts) {
        inst.op = OpRule::Inst::Op(in.count(OpRule::Inst::Rem + 1));
        if (inst.op == OpRule::Inst::MulConst ||
            inst.op == OpRule::Inst::Div || inst.op == OpRule::Inst::Rem)
          inst.k = in.next();
        if (inst.op != OpRule::Inst::Affine)
          continue;
        inst.constant = in.next();
        inst.terms.resize(in.count());
        for (auto &[var, coef] : inst.terms) {
          var = in.count(rule.extents.size());
          coef = in.next();
        }
      }
      if (index.kind != OpRule::Index::Whole && index.insts.empty())
        throw RuntimeError("generated plan: an op rule's index has no "
                           "instructions");
    }
  }
  return rule;
}

//===----------------------------------------------------------------------===//
// Interval evaluation (analysis::computeWorkerRegions, lib/Analysis/
// Regions.cpp, with the coefficients' values in the rule).
//===----------------------------------------------------------------------===//

namespace {

using Inst = OpRule::Inst;
using Index = OpRule::Index;

std::int64_t floorDiv(std::int64_t a, std::int64_t b) {
  std::int64_t q = a / b;
  return (a % b != 0 && ((a < 0) != (b < 0))) ? q - 1 : q;
}
std::int64_t floorMod(std::int64_t a, std::int64_t b) {
  return a - floorDiv(a, b) * b;
}
std::int64_t ceilDiv(std::int64_t a, std::int64_t b) {
  return -floorDiv(-a, b);
}
bool isEmpty(const Box &box, unsigned v) { return box.lo[v] >= box.hi[v]; }

/// The closed interval of an affine leaf over `box`; false if a variable it
/// uses has an empty range.
bool evalAffine(const Inst &leaf, const Box &box, std::int64_t &lo,
                std::int64_t &hi) {
  lo = hi = leaf.constant;
  for (auto [var, c] : leaf.terms) {
    if (isEmpty(box, var))
      return false;
    std::int64_t a = c * box.lo[var], b = c * (box.hi[var] - 1);
    lo += std::min(a, b);
    hi += std::max(a, b);
  }
  return true;
}

enum class Eval { Ok, Empty, Whole };

Eval runIndex(const Index &index, const Box &box, std::int64_t &outLo,
              std::int64_t &outHi) {
  if (index.kind == Index::Whole)
    return Eval::Whole;
  if (index.kind == Index::Affine)
    return evalAffine(index.insts[0], box, outLo, outHi) ? Eval::Ok
                                                         : Eval::Empty;
  std::vector<std::int64_t> lo, hi;
  for (const Inst &inst : index.insts) {
    switch (inst.op) {
    case Inst::Affine:
      lo.emplace_back();
      hi.emplace_back();
      if (!evalAffine(inst, box, lo.back(), hi.back()))
        return Eval::Empty;
      break;
    case Inst::Add:
    case Inst::Sub: {
      if (lo.size() < 2)
        throw RuntimeError("generated plan: an op rule's index pops an "
                           "empty stack");
      std::int64_t l2 = lo.back(), h2 = hi.back();
      lo.pop_back();
      hi.pop_back();
      if (inst.op == Inst::Add) {
        lo.back() += l2;
        hi.back() += h2;
      } else {
        lo.back() -= h2;
        hi.back() -= l2;
      }
      break;
    }
    default:
      if (lo.empty())
        throw RuntimeError("generated plan: an op rule's index pops an "
                           "empty stack");
      if (inst.op == Inst::Neg) {
        std::swap(lo.back(), hi.back());
        lo.back() = -lo.back();
        hi.back() = -hi.back();
      } else if (inst.op == Inst::MulConst) {
        std::int64_t a = inst.k * lo.back(), b = inst.k * hi.back();
        lo.back() = std::min(a, b);
        hi.back() = std::max(a, b);
      } else {
        std::int64_t k = inst.k;
        if (k <= 0)
          return Eval::Whole;
        std::int64_t qlo = floorDiv(lo.back(), k), qhi = floorDiv(hi.back(), k);
        if (inst.op == Inst::Div) {
          lo.back() = qlo;
          hi.back() = qhi;
        } else if (qlo == qhi) {
          lo.back() = floorMod(lo.back(), k);
          hi.back() = floorMod(hi.back(), k);
        } else {
          lo.back() = 0;
          hi.back() = k - 1;
        }
      }
      break;
    }
  }
  if (lo.empty())
    throw RuntimeError("generated plan: an op rule's index leaves nothing");
  outLo = lo[0];
  outHi = hi[0];
  return Eval::Ok;
}

/// Narrows [lo, hi], the clipped interval of a strided affine leaf, to the
/// first and last values it really takes there (Regions.cpp's
/// tightenStrided); false if it takes none.
bool tightenStrided(const Inst &leaf, const Box &box, std::int64_t &lo,
                    std::int64_t &hi) {
  std::int64_t c = 0, yLo = 0, yHi = 0;
  std::int64_t tLo = leaf.constant, tHi = tLo;
  for (auto [var, k] : leaf.terms) {
    std::int64_t rLo = box.lo[var], rHi = box.hi[var];
    if (k > 1 || k < -1) {
      if (c != 0)
        return true;
      c = k < 0 ? -k : k;
      yLo = k < 0 ? 1 - rHi : rLo;
      yHi = k < 0 ? -rLo : rHi - 1;
      continue;
    }
    std::int64_t a = k * rLo, b = k * (rHi - 1);
    tLo += std::min(a, b);
    tHi += std::max(a, b);
  }
  if (c == 0 || tHi - tLo + 1 >= c)
    return true;
  std::int64_t top = std::min(yHi, floorDiv(hi - tLo, c));
  std::int64_t bottom = std::max(yLo, ceilDiv(lo - tHi, c));
  if (top < yLo || bottom > yHi)
    return false;
  std::int64_t newHi = std::min(c * top + tHi, hi);
  std::int64_t newLo = std::max(c * bottom + tLo, lo);
  if (newLo > newHi)
    return false;
  lo = newLo;
  hi = newHi;
  return true;
}

/// Narrows the upper bound of a `(affine) % k` that wrapped once
/// (Regions.cpp's tightenWrappedRem).
void tightenWrappedRem(const Index &index, const Box &box,
                       std::int64_t dimExtent, std::int64_t &hi) {
  if (index.insts.size() != 2 || index.insts[0].op != Inst::Affine ||
      index.insts[1].op != Inst::Rem)
    return;
  std::int64_t k = index.insts[1].k, a, b;
  if (k <= 0 || !evalAffine(index.insts[0], box, a, b) ||
      floorDiv(a, k) + 1 != floorDiv(b, k))
    return;
  hi = floorMod(a, k) <= dimExtent - 1
           ? std::min(k - 1, dimExtent - 1)
           : std::min(floorMod(b, k), dimExtent - 1);
}

/// The range [lo, hi) of a dimension of `dimExtent` that `index` reads over
/// `box`; false if it reads nothing.
bool clipIndex(const Index &index, const Box &box, std::int64_t dimExtent,
               std::int64_t &outLo, std::int64_t &outHi) {
  std::int64_t lo, hi;
  switch (runIndex(index, box, lo, hi)) {
  case Eval::Empty:
    return false;
  case Eval::Whole:
    outLo = 0;
    outHi = dimExtent;
    return dimExtent > 0;
  case Eval::Ok:
    break;
  }
  std::int64_t clippedLo = std::max<std::int64_t>(lo, 0);
  std::int64_t clippedHi = std::min(hi, dimExtent - 1);
  if (clippedLo > clippedHi)
    return false;
  if (clippedLo != lo || clippedHi != hi) {
    if (index.kind != Index::Affine)
      tightenWrappedRem(index, box, dimExtent, clippedHi);
    else if (!tightenStrided(index.insts[0], box, clippedLo, clippedHi))
      return false;
  }
  outLo = clippedLo;
  outHi = clippedHi + 1;
  return true;
}

bool anyEmpty(std::uint64_t mask, const Box &box) {
  for (unsigned v = 0, e = box.getRank(); v != e; ++v)
    if ((mask >> v & 1) && isEmpty(box, v))
      return true;
  return false;
}

} // namespace

void runtime::getShareBoxes(const OpRule &rule, const Box &iteration,
                            const std::vector<unsigned> &inputRanks,
                            OpShare &share) {
  if (iteration.getRank() != rule.extents.size() ||
      rule.outputRank > iteration.getRank())
    throw RuntimeError("an iteration box of rank " +
                       std::to_string(iteration.getRank()) + " for an op of " +
                       std::to_string(rule.extents.size()) + " variables");
  share.output.lo.assign(iteration.lo.begin(),
                         iteration.lo.begin() + rule.outputRank);
  share.output.hi.assign(iteration.hi.begin(),
                         iteration.hi.begin() + rule.outputRank);
  unsigned numInputs =
      std::max<std::size_t>(inputRanks.size(), rule.inputShapes.size());
  share.inputs.resize(numInputs);
  constexpr std::int64_t Max = std::numeric_limits<std::int64_t>::max();
  constexpr std::int64_t Min = std::numeric_limits<std::int64_t>::min();
  for (unsigned pos = 0; pos != numInputs; ++pos) {
    // A position the operator does not declare has no reads.
    unsigned rank = pos < rule.inputShapes.size()
                        ? rule.inputShapes[pos].size()
                        : inputRanks[pos];
    share.inputs[pos].lo.assign(rank, pos < rule.inputShapes.size() ? Max : 0);
    share.inputs[pos].hi.assign(rank, pos < rule.inputShapes.size() ? Min : 0);
  }
  std::vector<std::int64_t> bounds;
  for (const OpRule::Read &read : rule.reads) {
    if (anyEmpty(read.scopeMask, iteration))
      continue;
    const std::vector<std::int64_t> &shape = rule.inputShapes[read.tensor];
    unsigned rank = read.dims.size();
    bounds.resize(2 * rank);
    bool reads = true;
    for (unsigned d = 0; d != rank && reads; ++d)
      reads = clipIndex(read.dims[d], iteration, shape[d], bounds[2 * d],
                        bounds[2 * d + 1]);
    if (!reads)
      continue;
    Box &region = share.inputs[read.tensor];
    for (unsigned d = 0; d != rank; ++d) {
      region.lo[d] = std::min(region.lo[d], bounds[2 * d]);
      region.hi[d] = std::max(region.hi[d], bounds[2 * d + 1]);
    }
  }
  // An input nothing was read from is [0, 0) in every dimension; an empty
  // range is [lo, lo) (planner::assignRuntimeBox).
  for (Box &box : share.inputs) {
    if (box.getRank() && box.lo[0] > box.hi[0]) {
      std::fill(box.lo.begin(), box.lo.end(), 0);
      std::fill(box.hi.begin(), box.hi.end(), 0);
    }
    for (unsigned d = 0, e = box.getRank(); d != e; ++d)
      box.hi[d] = std::max(box.lo[d], box.hi[d]);
  }
  for (unsigned d = 0, e = share.output.getRank(); d != e; ++d)
    share.output.hi[d] = std::max(share.output.lo[d], share.output.hi[d]);
}
