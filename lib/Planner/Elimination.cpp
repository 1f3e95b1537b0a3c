//===- Elimination.cpp - Exact min-sum search by variable elimination -----===//
//
// This file implements variable elimination over dense cost tables with a
// greedy smallest-table-first order, and the backward pass that recovers
// every decision.
//
//===----------------------------------------------------------------------===//

#include "tofu/Planner/Elimination.h"

#include "llvm/ADT/STLExtras.h"

#include <algorithm>
#include <cassert>
#include <limits>
#include <queue>

using namespace tofu;
using namespace tofu::planner;

unsigned FactorGraph::addVariable(unsigned domain) {
  assert(domain >= 1 && domain <= 65535 && "bad domain");
  domains.push_back(domain);
  unary.emplace_back(domain, 0.0);
  varFactors.emplace_back();
  return domains.size() - 1;
}

void FactorGraph::addUnary(unsigned var, ArrayRef<double> costs) {
  for (unsigned x = 0, e = domains[var]; x != e; ++x)
    unary[var][x] += costs[x];
}

void FactorGraph::addPairwise(unsigned a, unsigned b, ArrayRef<double> costs) {
  assert(a != b && "a pairwise table needs two decisions");
  unsigned da = domains[a], db = domains[b];
  if (a < b) {
    addFactor({a, b}, std::vector<double>(costs.begin(), costs.end()));
    return;
  }
  std::vector<double> swapped(da * db);
  for (unsigned x = 0; x != da; ++x)
    for (unsigned y = 0; y != db; ++y)
      swapped[y * da + x] = costs[x * db + y];
  addFactor({b, a}, std::move(swapped));
}

void FactorGraph::addFactor(SmallVector<unsigned, 4> vars,
                            std::vector<double> table) {
  auto it = factorByScope.find(vars);
  if (it != factorByScope.end() && factors[it->second].alive) {
    Factor &old = factors[it->second];
    if (it->second >= numGiven || numGiven == ~0u) {
      // Building, or a table made while eliminating: sum into it.
      for (size_t i = 0, e = table.size(); i != e; ++i)
        old.table[i] += table[i];
      return;
    }
    // Keep the caller's table intact: the new one absorbs it.
    for (size_t i = 0, e = table.size(); i != e; ++i)
      table[i] += old.table[i];
    old.alive = false;
  }
  unsigned id = factors.size();
  for (unsigned v : vars)
    varFactors[v].push_back(id);
  factorByScope[vars] = id;
  factors.push_back(Factor{std::move(vars), std::move(table), true});
}

uint64_t FactorGraph::eliminationCost(unsigned var,
                                      SmallVectorImpl<unsigned> &scope) {
  // Each neighbour once (marked with this call's stamp), then sorted: the
  // size is multiplied out in ascending order, as its cap is.
  scope.clear();
  if (mark.size() != domains.size())
    mark.assign(domains.size(), 0);
  if (++stamp == 0) {
    std::fill(mark.begin(), mark.end(), 0);
    stamp = 1;
  }
  mark[var] = stamp;
  // Tables eliminated or sliced away stay dead: drop them from the list
  // (keeping the live ones' order, which eliminate's sums follow), so a
  // decision many tables once touched is not walked again in full.
  llvm::erase_if(varFactors[var],
                 [&](unsigned f) { return !factors[f].alive; });
  for (unsigned f : varFactors[var]) {
    for (unsigned v : factors[f].vars)
      if (mark[v] != stamp) {
        mark[v] = stamp;
        scope.push_back(v);
      }
  }
  std::sort(scope.begin(), scope.end());
  uint64_t size = domains[var];
  for (unsigned v : scope) {
    size *= domains[v];
    if (size > (uint64_t(1) << 40))
      return size;
  }
  return size;
}

bool FactorGraph::eliminate(unsigned var, uint64_t maxTableEntries) {
  SmallVector<unsigned, 4> scope;
  uint64_t size = eliminationCost(var, scope);
  if (size > maxTableEntries)
    return false;
  stats.largestTable = std::max(stats.largestTable, size);
  SmallVector<unsigned, 8> live;
  for (unsigned f : varFactors[var])
    if (factors[f].alive)
      live.push_back(f);
  // Strides of each live factor for the scope's decisions and for `var`.
  unsigned n = scope.size();
  std::vector<uint64_t> strides(live.size() * (n + 1), 0);
  for (unsigned i = 0, e = live.size(); i != e; ++i) {
    const Factor &f = factors[live[i]];
    uint64_t stride = 1;
    for (unsigned k = f.vars.size(); k-- != 0;) {
      unsigned v = f.vars[k];
      unsigned pos = v == var ? n
                              : std::lower_bound(scope.begin(), scope.end(), v) -
                                    scope.begin();
      strides[i * (n + 1) + pos] = stride;
      stride *= domains[v];
    }
  }
  uint64_t entries = size / domains[var];
  std::vector<double> table(entries);
  Record record{var, scope, std::vector<uint16_t>(entries)};
  // Walks the scope's entries in order (last decision fastest), keeping
  // each live table's offset for the current entry up to date instead of
  // recomputing it; the sum for each choice of `var` adds the tables in
  // the same order as always, so the result is the same to the bit.
  unsigned numLive = live.size(), dx = domains[var];
  SmallVector<const double *, 8> data(numLive);
  SmallVector<uint64_t, 8> varStride(numLive), base(numLive, 0);
  for (unsigned i = 0; i != numLive; ++i) {
    data[i] = factors[live[i]].table.data();
    varStride[i] = strides[i * (n + 1) + n];
  }
  SmallVector<unsigned, 4> digit(n, 0);
  const double *own = unary[var].data();
  for (uint64_t j = 0; j != entries; ++j) {
    double best = std::numeric_limits<double>::infinity();
    unsigned arg = 0;
    for (unsigned x = 0; x != dx; ++x) {
      double c = own[x];
      for (unsigned i = 0; i != numLive; ++i)
        c += data[i][base[i] + x * varStride[i]];
      if (c < best) {
        best = c;
        arg = x;
      }
    }
    table[j] = best;
    record.best[j] = arg;
    for (unsigned k = n; k-- != 0;) {
      if (++digit[k] < domains[scope[k]]) {
        for (unsigned i = 0; i != numLive; ++i)
          base[i] += strides[i * (n + 1) + k];
        break;
      }
      for (unsigned i = 0; i != numLive; ++i)
        base[i] -= uint64_t(digit[k] - 1) * strides[i * (n + 1) + k];
      digit[k] = 0;
    }
  }
  for (unsigned f : live) {
    factors[f].alive = false;
    if (f >= numGiven)
      std::vector<double>().swap(factors[f].table);
  }
  eliminated[var] = true;
  ++stats.eliminated;
  records.push_back(std::move(record));
  if (n == 0)
    constant += table[0];
  else if (n == 1)
    addUnary(scope[0], table);
  else
    addFactor(scope, std::move(table));
  return true;
}

unsigned FactorGraph::conditionHub(SmallVectorImpl<unsigned> &neighbours) {
  unsigned hub = ~0u;
  size_t most = 0;
  SmallVector<unsigned, 8> scope;
  for (unsigned v = 0, e = domains.size(); v != e; ++v) {
    if (eliminated[v])
      continue;
    eliminationCost(v, scope);
    if (hub == ~0u || scope.size() > most) {
      hub = v;
      most = scope.size();
    }
  }
  eliminationCost(hub, neighbours);
  // The greedy choice: own cost plus the best each table can do with it.
  std::vector<double> score = unary[hub];
  SmallVector<unsigned, 8> live;
  for (unsigned f : varFactors[hub])
    if (factors[f].alive)
      live.push_back(f);
  for (unsigned f : live) {
    const Factor &factor = factors[f];
    uint64_t stride = 1;
    for (unsigned k = factor.vars.size(); k-- != 0 && factor.vars[k] != hub;)
      stride *= domains[factor.vars[k]];
    std::vector<double> best(domains[hub],
                             std::numeric_limits<double>::infinity());
    // Entry j has the hub's value (j / stride) % domain: the same walk in
    // order, without a division per entry.
    const double *entry = factor.table.data();
    for (uint64_t o = 0, e = factor.table.size() / (stride * domains[hub]);
         o != e; ++o)
      for (unsigned x = 0, d = domains[hub]; x != d; ++x)
        for (uint64_t in = 0; in != stride; ++in, ++entry)
          best[x] = std::min(best[x], *entry);
    for (unsigned x = 0, d = domains[hub]; x != d; ++x)
      score[x] += best[x];
  }
  unsigned value = std::min_element(score.begin(), score.end()) - score.begin();
  // Slice every table at the chosen value.
  for (unsigned f : live) {
    Factor &factor = factors[f];
    SmallVector<unsigned, 4> rest;
    uint64_t stride = 1, hubStride = 1;
    for (unsigned k = factor.vars.size(); k-- != 0;) {
      if (factor.vars[k] == hub)
        hubStride = stride;
      stride *= domains[factor.vars[k]];
    }
    for (unsigned v : factor.vars)
      if (v != hub)
        rest.push_back(v);
    std::vector<double> sliced;
    uint64_t outer = factor.table.size() / (hubStride * domains[hub]);
    for (uint64_t o = 0; o != outer; ++o)
      for (uint64_t in = 0; in != hubStride; ++in)
        sliced.push_back(
            factor.table[(o * domains[hub] + value) * hubStride + in]);
    factor.alive = false;
    if (rest.empty())
      constant += sliced[0];
    else if (rest.size() == 1)
      addUnary(rest[0], sliced);
    else
      addFactor(rest, std::move(sliced));
  }
  eliminated[hub] = true;
  ++stats.conditioned;
  records.push_back(Record{hub, {}, {uint16_t(value)}});
  return hub;
}

bool FactorGraph::minimize(std::vector<unsigned> &choice, double &cost,
                           uint64_t maxTableEntries, bool allowConditioning) {
  numGiven = factors.size();
  givenUnary = unary;
  eliminated.assign(domains.size(), false);
  using Entry = std::pair<uint64_t, unsigned>;
  std::priority_queue<Entry, std::vector<Entry>, std::greater<Entry>> queue;
  SmallVector<unsigned, 8> scope;
  for (unsigned v = 0, e = domains.size(); v != e; ++v)
    queue.push({eliminationCost(v, scope), v});
  while (!queue.empty()) {
    auto [size, var] = queue.top();
    queue.pop();
    if (eliminated[var])
      continue;
    uint64_t now = eliminationCost(var, scope);
    if (now != size) {
      queue.push({now, var});
      continue;
    }
    SmallVector<unsigned, 8> neighbours(scope.begin(), scope.end());
    if (!eliminate(var, maxTableEntries)) {
      if (!allowConditioning)
        return false;
      // Fix the hub; its neighbours (this decision among them, perhaps)
      // get cheaper to eliminate.
      SmallVector<unsigned, 8> touched;
      conditionHub(touched);
      touched.push_back(var);
      for (unsigned v : touched)
        if (!eliminated[v])
          queue.push({eliminationCost(v, scope), v});
      continue;
    }
    for (unsigned v : neighbours)
      queue.push({eliminationCost(v, scope), v});
  }
  choice.assign(domains.size(), 0);
  for (auto it = records.rbegin(), e = records.rend(); it != e; ++it) {
    uint64_t index = 0;
    for (unsigned v : it->scope)
      index = index * domains[v] + choice[v];
    choice[it->var] = it->best[index];
  }
  cost = evaluate(choice);
  return true;
}

double FactorGraph::evaluate(ArrayRef<unsigned> choice) const {
  double total = 0;
  const auto &units = numGiven == ~0u ? unary : givenUnary;
  for (unsigned v = 0, e = domains.size(); v != e; ++v)
    total += units[v][choice[v]];
  unsigned given = numGiven == ~0u ? factors.size() : numGiven;
  for (unsigned f = 0; f != given; ++f) {
    if (factors[f].table.empty())
      continue;
    uint64_t index = 0;
    for (unsigned v : factors[f].vars)
      index = index * domains[v] + choice[v];
    total += factors[f].table[index];
  }
  return total;
}
