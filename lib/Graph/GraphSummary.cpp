//===- GraphSummary.cpp - A readable overview of a graph ------------------===//
//
// This file implements the graph summary: counts, per-role sizes and the
// op type histogram (most frequent first, ties by name).
//
//===----------------------------------------------------------------------===//

#include "tofu/Graph/GraphSummary.h"
#include "tofu/Support/ByteSize.h"

#include "llvm/ADT/StringMap.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <algorithm>
#include <map>

using namespace tofu;
using namespace tofu::graph;

namespace {
struct RoleTotals {
  unsigned tensors = 0;
  int64_t elements = 0;
  int64_t bytes = 0;
};

int64_t saturatingAdd(int64_t a, int64_t b) {
  return a > INT64_MAX - b ? INT64_MAX : a + b;
}

} // namespace

void graph::printSummary(llvm::raw_ostream &os, const Graph &g) {
  llvm::StringMap<unsigned> typeCounts;
  for (const Op &op : g.getOps())
    ++typeCounts[op.type];
  std::map<std::string, RoleTotals> roles;
  for (const Tensor &t : g.getTensors()) {
    RoleTotals &r = roles[t.roleName];
    ++r.tensors;
    r.elements = saturatingAdd(r.elements, t.getNumElements());
    r.bytes = saturatingAdd(r.bytes, t.getNumBytes());
  }
  os << "ops: " << g.getNumOps() << " (" << typeCounts.size()
     << " types), tensors: " << g.getNumTensors() << '\n';
  os << "role              tensors         elements              bytes\n";
  for (const auto &[role, r] : roles)
    os << llvm::format("%-12s %8u %16lld %18lld", role.c_str(), r.tensors,
                       (long long)r.elements, (long long)r.bytes)
       << "  (" << formatByteSize(r.bytes) << ")\n";
  std::vector<std::pair<std::string, unsigned>> types;
  for (const auto &entry : typeCounts)
    types.emplace_back(entry.getKey().str(), entry.getValue());
  std::sort(types.begin(), types.end(), [](const auto &a, const auto &b) {
    return a.second != b.second ? a.second > b.second : a.first < b.first;
  });
  os << "op types:\n";
  for (const auto &[type, count] : types)
    os << llvm::format("  %6u  ", count) << type << '\n';
}
