//===- BoxRules.cpp - Every worker's boxes from layouts and steps ---------===//
//
// This file implements the box rules of BoxRules.h: worker parts, the
// encoding of op rules, and an op's boxes from its reads over an iteration
// box, by the interval rule of IndexIntervals.h that
// analysis::computeWorkerRegions applies over a Binding.
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

/// Whether instruction `op` has a constant operand.
static bool hasConstant(IndexOp op) {
  return op == IndexOp::MulConst || op == IndexOp::Div || op == IndexOp::Rem;
}

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
      out.push_back(std::int64_t(index.kind));
      out.push_back(index.insts.size());
      for (const OpRule::Inst &inst : index.insts) {
        out.push_back(std::int64_t(inst.op));
        if (inst.op != IndexOp::Affine) {
          if (hasConstant(inst.op))
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
      index.kind = IndexKind(in.count(unsigned(IndexKind::Whole) + 1));
      index.insts.resize(in.count());
      unsigned depth = 0;
      for (OpRule::Inst &inst : index.insts) {
        inst.op = IndexOp(in.count(unsigned(IndexOp::Rem) + 1));
        // The stack the interval rule evaluates it on.
        unsigned pops = inst.op == IndexOp::Affine                           ? 0
                        : inst.op == IndexOp::Add || inst.op == IndexOp::Sub ? 2
                                                                             : 1;
        if (depth < pops || (inst.op == IndexOp::Affine &&
                             depth == MaxIndexStack))
          throw RuntimeError("generated plan: an op rule's index does not "
                             "evaluate");
        depth += inst.op == IndexOp::Affine ? 1 : 1 - pops;
        if (hasConstant(inst.op))
          inst.k = in.next();
        if (inst.op != IndexOp::Affine)
          continue;
        inst.constant = in.next();
        inst.terms.resize(in.count());
        for (auto &[var, coef] : inst.terms) {
          var = in.count(rule.extents.size());
          coef = in.next();
        }
      }
      bool affine = index.insts.size() == 1 &&
                    index.insts[0].op == IndexOp::Affine;
      if ((index.kind != IndexKind::Whole && depth != 1) ||
          (index.kind == IndexKind::Affine && !affine))
        throw RuntimeError("generated plan: an op rule's index does not "
                           "evaluate");
    }
  }
  return rule;
}

//===----------------------------------------------------------------------===//
// Interval evaluation: the one rule of IndexIntervals.h, over a rule's
// coefficient values (the analysis evaluates it over a Binding's).
//===----------------------------------------------------------------------===//

namespace {

struct RuleLeaf {
  const OpRule::Inst &inst;
  std::int64_t constant() const { return inst.constant; }
  unsigned size() const { return inst.terms.size(); }
  unsigned var(unsigned i) const { return inst.terms[i].first; }
  std::int64_t coef(unsigned i) const { return inst.terms[i].second; }
};

struct RuleProgram {
  const OpRule::Index &index;
  IndexKind kind() const { return index.kind; }
  unsigned size() const { return index.insts.size(); }
  IndexOp op(unsigned i) const { return index.insts[i].op; }
  std::int64_t k(unsigned i) const { return index.insts[i].k; }
  RuleLeaf leaf(unsigned i) const { return {index.insts[i]}; }
};

struct BoxRanges {
  const Box &box;
  std::int64_t lo(unsigned v) const { return box.lo[v]; }
  std::int64_t hi(unsigned v) const { return box.hi[v]; }
};

bool anyEmpty(std::uint64_t mask, const Box &box) {
  for (unsigned v = 0, e = box.getRank(); v != e; ++v)
    if ((mask >> v & 1) && box.lo[v] >= box.hi[v])
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
      reads = intervals::clipIndex(RuleProgram{read.dims[d]},
                                   BoxRanges{iteration}, shape[d],
                                   bounds[2 * d], bounds[2 * d + 1]);
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
