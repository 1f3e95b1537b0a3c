//===- SearchSpace.cpp - Decisions and their cost tables ------------------===//
//
// This file implements the construction of one search's factor graph: the
// decision tuples of every op and tensor, their regions on the measured
// workers, and the cost tables between them.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/SearchSpace.h"
#include "tofu/Planner/CostModel.h"

using namespace tofu;
using namespace tofu::planner;
using analysis::Region;

std::vector<SmallVector<unsigned, 4>>
planner::getAllWorkers(ArrayRef<unsigned> levels) {
  std::vector<SmallVector<unsigned, 4>> workers(plan::getNumWorkers(levels));
  for (unsigned w = 0, e = workers.size(); w != e; ++w)
    plan::getWorkerDigits(levels, w, workers[w]);
  return workers;
}

SearchSpace::SearchSpace(const PlanningProblem &problem, SearchFrame frame)
    : problem(problem), frame(std::move(frame)) {}

SmallVector<uint8_t, 4>
SearchSpace::getFixedPart(ArrayRef<uint8_t> tuple) const {
  SmallVector<uint8_t, 4> fixed(tuple.begin(), tuple.begin() + frame.firstFree);
  fixed.append(tuple.begin() + getEndFree(), tuple.end());
  return fixed;
}

SmallVector<uint8_t, 4>
SearchSpace::getPriorFixedPart(ArrayRef<uint8_t> prior) const {
  SmallVector<uint8_t, 4> fixed;
  for (unsigned l = 0, e = frame.levels.size(); l != e; ++l)
    if (l < frame.firstFree || l >= getEndFree())
      fixed.push_back(prior[l]);
  return fixed;
}

std::vector<SmallVector<uint8_t, 4>>
SearchSpace::enumerateFreeTuples(ArrayRef<uint8_t> fixed, unsigned radix) const {
  unsigned first = frame.firstFree, end = getEndFree();
  SmallVector<uint8_t, 4> tuple(frame.levels.size(), 0);
  for (unsigned l = 0, e = tuple.size(); l != e; ++l)
    if (l < first || l >= end)
      tuple[l] = fixed[l];
  std::vector<SmallVector<uint8_t, 4>> tuples;
  while (true) {
    tuples.push_back(tuple);
    // Count through the free digits, the last one fastest.
    unsigned k = end;
    while (k != first && ++tuple[k - 1] == radix)
      tuple[--k] = 0;
    if (k == first)
      return tuples;
  }
}

bool SearchSpace::unevenParts(ArrayRef<analysis::Range> full,
                              ArrayRef<uint8_t> dims,
                              llvm::function_ref<int(uint8_t)> getDim) const {
  SmallVector<analysis::Range, 8> part(full.begin(), full.end());
  // Per dimension, the number of parts the levels so far cut it into.
  SmallVector<int64_t, 8> ways(full.size(), 1);
  for (unsigned l = 0, e = getEndFree(); l != e; ++l) {
    int d = getDim(dims[l]);
    if (d < 0)
      continue;
    int64_t extent = part[d].hi - part[d].lo;
    part[d] = analysis::getEvenPart(part[d], frame.levels[l], 0);
    ways[d] *= frame.levels[l];
    if (l < frame.firstFree)
      continue;
    // Uneven beyond kMaxPartOverShare: part / (whole / ways) > num / den.
    int64_t whole = full[d].hi - full[d].lo;
    if (extent < int64_t(frame.levels[l]) ||
        (frame.balanceShares &&
         (part[d].hi - part[d].lo) * ways[d] * kMaxPartOverShare.second >
             whole * kMaxPartOverShare.first))
      return true;
  }
  return false;
}

void SearchSpace::keepBalancedTuples(
    std::vector<SmallVector<uint8_t, 4>> &domain,
    llvm::function_ref<bool(ArrayRef<uint8_t>)> belowFactor,
    llvm::function_ref<bool(ArrayRef<uint8_t>)> divides) const {
  // Only where some tuple divides at every free level without leaving a
  // worker an empty part: otherwise the shapes do not allow balance.
  auto balanced = [&](ArrayRef<uint8_t> tuple) {
    return !belowFactor(tuple) && divides(tuple);
  };
  if (frame.balanceParts && llvm::any_of(domain, balanced))
    llvm::erase_if(domain, [&](ArrayRef<uint8_t> tuple) {
      return belowFactor(tuple);
    });
}

void SearchSpace::buildOpDomain(unsigned i) {
  const ProblemOp &op = problem.getOp(i);
  ArrayRef<uint8_t> fixed;
  if (frame.prior)
    fixed = frame.prior->opSteps[i];
  auto &domain = opDomains[i];
  for (auto &tuple : enumerateFreeTuples(fixed, op.getNumSteps()))
    if (!mixesReplicateAndReduce(op, tuple))
      domain.push_back(std::move(tuple));
  SmallVector<analysis::Range, 8> full;
  analysis::getFullBox(op.binding, full);
  auto getVar = [&](uint8_t s) {
    return s < op.strategies.size() ? int(op.strategies[s].var) : -1;
  };
  keepBalancedTuples(
      domain,
      [&](ArrayRef<uint8_t> steps) {
        return unevenParts(full, steps, getVar);
      },
      [&](ArrayRef<uint8_t> steps) {
        for (unsigned l = frame.firstFree, e = getEndFree(); l != e; ++l)
          if (getVar(steps[l]) < 0)
            return false;
        return true;
      });
}

void SearchSpace::buildTensorDomain(
    unsigned t, std::vector<SmallVector<uint8_t, 4>> &domain) const {
  unsigned rank = problem.getTensor(t).rank;
  ArrayRef<uint8_t> fixed;
  if (frame.prior)
    fixed = frame.prior->tensorDims[t];
  unsigned radix = rank == 0 ? 1 : rank + (frame.replicateTensors ? 1 : 0);
  domain = enumerateFreeTuples(fixed, radix);
  int pinned = frame.pinnedTensorDims ? (*frame.pinnedTensorDims)[t] : -1;
  if (rank != 0 && pinned < 0) {
    SmallVector<analysis::Range, 8> full;
    for (int64_t extent : problem.getShape(t))
      full.push_back({0, extent});
    auto getDim = [&](uint8_t d) { return d < rank ? int(d) : -1; };
    keepBalancedTuples(
        domain,
        [&](ArrayRef<uint8_t> dims) {
          return unevenParts(full, dims, getDim);
        },
        [&](ArrayRef<uint8_t> dims) {
          for (unsigned l = frame.firstFree, e = getEndFree(); l != e; ++l)
            if (dims[l] >= rank)
              return false;
          return true;
        });
  }
  if (pinned < 0 || rank == 0)
    return;
  llvm::erase_if(domain, [&](ArrayRef<uint8_t> tuple) {
    for (unsigned l = frame.firstFree, e = getEndFree(); l != e; ++l)
      if (tuple[l] != pinned)
        return true;
    return false;
  });
}

void SearchSpace::computeTensorRegions(
    unsigned t, ArrayRef<SmallVector<uint8_t, 4>> domain,
    std::vector<std::vector<Region>> &regions) const {
  regions.resize(domain.size());
  for (unsigned b = 0, e = regions.size(); b != e; ++b) {
    regions[b].resize(frame.workers.size());
    for (unsigned w = 0, n = frame.workers.size(); w != n; ++w)
      getTensorRegion(problem.getShape(t), frame.levels, domain[b],
                      frame.workers[w], regions[b][w]);
  }
}

unsigned SearchSpace::getTensorKind(unsigned t) {
  ArrayRef<int64_t> shape = problem.getShape(t);
  int pinned = frame.pinnedTensorDims ? (*frame.pinnedTensorDims)[t] : -1;
  SmallVector<uint8_t, 4> fixed;
  if (frame.prior)
    fixed = getPriorFixedPart(frame.prior->tensorDims[t]);
  auto [it, inserted] = kindOf.try_emplace(
      {SmallVector<int64_t, 4>(shape.begin(), shape.end()), pinned, fixed},
      kindDomains.size());
  if (inserted) {
    kindDomains.emplace_back();
    buildTensorDomain(t, kindDomains.back());
    kindRegions.emplace_back();
    if (kindDomains.back().size() <= 65535)
      computeTensorRegions(t, kindDomains.back(), kindRegions.back());
  }
  return it->second;
}

void SearchSpace::computeOpRegions(unsigned i, OpRegions &regions) const {
  const ProblemOp &op = problem.getOp(i);
  regions.resize(opDomains[i].size());
  SmallVector<analysis::Range, 8> box;
  for (unsigned a = 0, e = regions.size(); a != e; ++a) {
    regions[a].resize(frame.workers.size());
    for (unsigned w = 0, n = frame.workers.size(); w != n; ++w) {
      getOpBox(op, frame.levels, opDomains[i][a], frame.workers[w], box);
      analysis::computeWorkerRegions(op.binding, box, regions[a][w]);
    }
  }
}

SearchSpace::OpTables
SearchSpace::computeOpTables(unsigned i, const OpRegions &opRegions) const {
  const ProblemOp &op = problem.getOp(i);
  unsigned numWorkers = frame.workers.size(), na = opDomains[i].size();
  OpTables tables;
  for (unsigned pos = 0, e = op.inputs.size(); pos != e; ++pos) {
    unsigned t = op.inputs[pos];
    double scale = frame.weight * problem.getTensor(t).elementSize;
    unsigned nb = getTensorDomain(t).size();
    std::vector<double> table(na * nb);
    for (unsigned a = 0; a != na; ++a)
      for (unsigned b = 0; b != nb; ++b) {
        int64_t elements = 0;
        for (unsigned w = 0; w != numWorkers; ++w)
          elements += countFetched(opRegions[a][w].inputs[pos],
                                   &getTensorRegions(t)[b][w]);
        table[a * nb + b] = scale * elements;
      }
    tables.push_back(std::move(table));
  }
  unsigned t = op.output;
  const ProblemTensor &out = problem.getTensor(t);
  double scale = frame.weight * out.elementSize;
  unsigned nb = getTensorDomain(t).size();
  std::vector<double> table(na * nb);
  SmallVector<Region, 8> computed(numWorkers);
  SmallVector<HeldRegion, 8> held(numWorkers);
  for (unsigned a = 0; a != na; ++a) {
    bool partial = false;
    for (uint8_t s : opDomains[i][a])
      partial |= op.isReduceStep(s);
    for (unsigned w = 0; w != numWorkers; ++w)
      computed[w] = opRegions[a][w].output;
    for (unsigned b = 0; b != nb; ++b) {
      for (unsigned w = 0; w != numWorkers; ++w)
        held[w] = &getTensorRegions(t)[b][w];
      table[a * nb + b] =
          scale * countProduced(computed, held, partial, out.rank);
    }
  }
  tables.push_back(std::move(table));
  return tables;
}

std::vector<int64_t> SearchSpace::getOpTableKey(unsigned i) const {
  const ProblemOp &op = problem.getOp(i);
  std::vector<int64_t> key;
  auto append = [&](ArrayRef<int64_t> values) {
    key.push_back(values.size());
    key.insert(key.end(), values.begin(), values.end());
  };
  key.push_back(int64_t(reinterpret_cast<uintptr_t>(op.analysis)));
  key.push_back(op.inputs.size());
  for (unsigned pos = 0, e = op.inputs.size(); pos != e; ++pos)
    append(op.binding.getInputShape(pos));
  append(op.binding.getOutputShape());
  append(op.binding.getParams());
  key.push_back(op.strategies.size());
  for (const analysis::Strategy &s : op.strategies)
    key.insert(key.end(), {int64_t(s.kind), s.var, int64_t(s.reducer)});
  SmallVector<uint8_t, 4> fixed = getFixedPart(opDomains[i][0]);
  key.push_back(fixed.size());
  key.insert(key.end(), fixed.begin(), fixed.end());
  for (unsigned t : op.inputs)
    key.insert(key.end(), {tensorKinds[t], problem.getTensor(t).elementSize});
  key.insert(key.end(),
             {tensorKinds[op.output], problem.getTensor(op.output).elementSize});
  return key;
}

std::vector<double> SearchSpace::computeNextStepTable(unsigned t) const {
  unsigned target = problem.getTensor(t).updates;
  unsigned numWorkers = frame.workers.size();
  double scale = frame.weight * problem.getTensor(target).elementSize;
  unsigned np = getTensorDomain(target).size(), no = getTensorDomain(t).size();
  std::vector<double> table(np * no);
  SmallVector<HeldRegion, 8> param(numWorkers), updated(numWorkers);
  for (unsigned a = 0; a != np; ++a)
    for (unsigned b = 0; b != no; ++b) {
      for (unsigned w = 0; w != numWorkers; ++w) {
        param[w] = &getTensorRegions(target)[a][w];
        updated[w] = &getTensorRegions(t)[b][w];
      }
      table[a * no + b] = scale * countNextStep(param, updated);
    }
  return table;
}

void SearchSpace::addTable(unsigned a, unsigned b, std::vector<double> table,
                           unsigned times) {
  if (times != 1)
    for (double &c : table)
      c *= times;
  if (a != b) {
    graph.addPairwise(a, b, table);
    return;
  }
  // Both sides are one tied decision: only the diagonal can happen.
  unsigned n = graph.getDomain(a);
  std::vector<double> diagonal(n);
  for (unsigned x = 0; x != n; ++x)
    diagonal[x] = table[x * n + x];
  graph.addUnary(a, diagonal);
}

void SearchSpace::addStoragePrices(unsigned t) {
  if (frame.bytePrice == 0)
    return;
  unsigned n = getTensorDomain(t).size();
  std::vector<double> prices(n);
  for (unsigned b = 0; b != n; ++b) {
    int64_t most = 0;
    for (const Region &region : getTensorRegions(t)[b])
      most = std::max(most, plan::getVolume(region));
    prices[b] = frame.bytePrice * most * problem.getTensor(t).elementSize;
  }
  graph.addUnary(tensorVars[t], prices);
}

unsigned SearchSpace::getTensorVar(unsigned t) {
  unsigned cls = frame.coarsening ? frame.coarsening->tensorClass[t] : t;
  auto [it, inserted] =
      tensorVarOf.try_emplace({cls, getFixedPart(getTensorDomain(t)[0])}, 0);
  if (inserted)
    it->second = graph.addVariable(getTensorDomain(t).size());
  return it->second;
}

unsigned SearchSpace::getOpVar(unsigned i) {
  unsigned cls = frame.coarsening ? frame.coarsening->opClass[i] : i;
  auto [it, inserted] =
      opVarOf.try_emplace({cls, getFixedPart(opDomains[i][0])}, 0);
  if (inserted)
    it->second = graph.addVariable(opDomains[i].size());
  return it->second;
}

bool SearchSpace::build() {
  unsigned numOps = problem.getOps().size();
  unsigned numTensors = problem.getTensors().size();
  opDomains.assign(numOps, {});
  tensorKinds.assign(numTensors, 0);
  for (unsigned t = 0; t != numTensors; ++t) {
    tensorKinds[t] = getTensorKind(t);
    if (getTensorDomain(t).size() > 65535)
      return false;
    tensorVars.push_back(getTensorVar(t));
    addStoragePrices(t);
  }
  // Ops of one decision whose tensors are of the same decisions have the
  // same tables: compute them once, add them once per op.
  std::map<SmallVector<unsigned, 8>, std::pair<const OpTables *, unsigned>>
      bundles;
  // Ops of equal table keys (the same computation over tensors of the same
  // kinds) have the same tables whatever their decisions: compute them once.
  std::map<std::vector<int64_t>, OpTables> tablesOf;
  // Ops of one class (same operator, shapes and params) with the same
  // fixed levels have the same domain, as getOpVar assumes: build it once.
  std::map<std::pair<unsigned, SmallVector<uint8_t, 4>>, unsigned> domainOf;
  OpRegions regions;
  for (unsigned i = 0; i != numOps; ++i) {
    if (frame.coarsening && frame.prior) {
      auto [it, inserted] = domainOf.try_emplace(
          {frame.coarsening->opClass[i],
           getPriorFixedPart(frame.prior->opSteps[i])},
          i);
      if (inserted)
        buildOpDomain(i);
      else
        opDomains[i] = opDomains[it->second];
    } else {
      buildOpDomain(i);
    }
    if (opDomains[i].size() > 65535)
      return false;
    opVars.push_back(getOpVar(i));
    const ProblemOp &op = problem.getOp(i);
    SmallVector<unsigned, 8> key{opVars[i], tensorVars[op.output]};
    for (unsigned t : op.inputs)
      key.push_back(tensorVars[t]);
    auto [it, inserted] = bundles.try_emplace(key);
    ++it->second.second;
    if (!inserted)
      continue;
    auto [cached, fresh] = tablesOf.try_emplace(getOpTableKey(i));
    if (fresh) {
      computeOpRegions(i, regions);
      cached->second = computeOpTables(i, regions);
    }
    it->second.first = &cached->second;
  }
  // A bundle's key is its op decision, its output's, then its inputs'; its
  // tables are its inputs' then its output's.
  for (auto &[key, bundle] : bundles) {
    const OpTables &tables = *bundle.first;
    for (unsigned j = 0, e = tables.size(); j != e; ++j)
      addTable(key[0], j + 1 == e ? key[1] : key[2 + j], tables[j],
               bundle.second);
  }
  std::map<std::pair<unsigned, unsigned>, std::pair<unsigned, unsigned>> updates;
  for (unsigned t = 0; t != numTensors; ++t) {
    int target = problem.getTensor(t).updates;
    if (target < 0 || unsigned(target) == t)
      continue;
    auto [it, inserted] =
        updates.try_emplace({tensorVars[target], tensorVars[t]}, t, 0);
    ++it->second.second;
  }
  for (auto &[vars, use] : updates)
    addTable(vars.first, vars.second, computeNextStepTable(use.first),
             use.second);
  return true;
}

void SearchSpace::apply(ArrayRef<unsigned> choice, Assignment &out) const {
  for (unsigned i = 0, e = opVars.size(); i != e; ++i)
    out.opSteps[i] = opDomains[i][choice[opVars[i]]];
  for (unsigned t = 0, e = tensorVars.size(); t != e; ++t)
    out.tensorDims[t] = getTensorDomain(t)[choice[tensorVars[t]]];
}

llvm::Error planner::solveFrame(const PlanningProblem &problem, SearchFrame frame,
                              const SearchSettings &settings,
                              Assignment &assignment, SearchStats &stats,
                              double *cost) {
  frame.replicateTensors = settings.replicateTensors;
  frame.bytePrice = settings.bytePrice;
  if (!frame.coarsening)
    frame.coarsening = settings.coarsening;
  if (!settings.pinnedTensorDims.empty())
    frame.pinnedTensorDims = &settings.pinnedTensorDims;
  SearchSpace space(problem, std::move(frame));
  if (!space.build())
    return llvm::createStringError(llvm::inconvertibleErrorCode(),
                                   "a decision has more than 65535 choices");
  std::vector<unsigned> choice;
  double optimum = 0;
  FactorGraph &graph = space.getFactorGraph();
  if (!graph.minimize(choice, optimum, settings.maxTableEntries,
                      settings.allowConditioning))
    return llvm::createStringError(
        llvm::inconvertibleErrorCode(),
        "the elimination needs a table of more than " +
            Twine(settings.maxTableEntries) + " entries");
  stats.decisions += space.getNumDecisions();
  stats.largestTable = std::max(stats.largestTable, graph.getStats().largestTable);
  stats.conditioned += graph.getStats().conditioned;
  space.apply(choice, assignment);
  if (cost)
    *cost = optimum;
  return llvm::Error::success();
}

Assignment planner::makeUndecided(const PlanningProblem &problem,
                                      ArrayRef<unsigned> levels) {
  Assignment a;
  a.levels.assign(levels.begin(), levels.end());
  a.opSteps.resize(problem.getOps().size());
  a.tensorDims.resize(problem.getTensors().size());
  return a;
}
