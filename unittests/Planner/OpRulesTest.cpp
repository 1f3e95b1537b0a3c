//===- OpRulesTest.cpp - The runtime's op rules against the analysis ------===//
//
// A compiled plan derives every worker's share from an op rule
// (runtime::OpRule, BoxRules.h) that planner::getOpRule encodes from the
// operator analysis; both evaluate the one interval rule of
// tofu/Runtime/IndexIntervals.h (checked against brute force by
// unittests/Analysis/PropertyTest.cpp and RegionsTest.cpp), so what this
// checks is the rule's encoding: for every op of every bundled model and
// of test/Plan/Inputs/box-rules.json, at random iteration boxes (empty
// ranges included, not only even parts), the rule's boxes after an
// encode/decode round trip are the analysis's (computeWorkerRegions, as
// the cost model charges them); the reads cover every kind of index
// (affine, strided, `/` and `%`, the whole dimension); and a rule with one
// coefficient changed gives other boxes somewhere.
//
//===----------------------------------------------------------------------===//

#include "Planner/PlannerTestUtils.h"

#include "tofu/Planner/CostModel.h"
#include "tofu/Planner/Executable.h"

#include "gtest/gtest.h"

#include <random>

using namespace tofu;
using namespace tofu::planner;
using runtime::Box;
using runtime::OpRule;

namespace {

/// A random box within `extents`: per variable a random range, empty one
/// time in eight.
Box randomBox(ArrayRef<int64_t> extents, std::mt19937 &rng) {
  Box box;
  for (int64_t extent : extents) {
    int64_t a = extent ? int64_t(rng() % (extent + 1)) : 0;
    int64_t b = extent ? int64_t(rng() % (extent + 1)) : 0;
    if (rng() % 8 == 0)
      b = a;
    box.lo.push_back(std::min(a, b));
    box.hi.push_back(std::max(a, b));
  }
  return box;
}

/// The analysis's share of `op` over `box`, as the runtime's boxes.
runtime::OpShare analysedShare(const PlanningProblem &problem,
                               const ProblemOp &op, const Box &box) {
  SmallVector<analysis::Range, 8> ranges;
  for (unsigned v = 0; v != box.getRank(); ++v)
    ranges.push_back(analysis::Range{box.lo[v], box.hi[v]});
  analysis::WorkerRegions regions;
  analysis::computeWorkerRegions(op.binding, ranges, regions);
  runtime::OpShare share;
  share.output = toRuntimeBox(regions.output);
  for (unsigned pos = 0; pos != op.inputs.size(); ++pos) {
    if (pos < regions.inputs.size()) {
      share.inputs.push_back(toRuntimeBox(regions.inputs[pos]));
      continue;
    }
    unsigned rank = problem.getTensor(op.inputs[pos]).rank;
    share.inputs.push_back(Box{std::vector<int64_t>(rank, 0),
                               std::vector<int64_t>(rank, 0)});
  }
  return share;
}

runtime::OpShare ruleShare(const PlanningProblem &problem, const ProblemOp &op,
                           const OpRule &rule, const Box &box) {
  std::vector<unsigned> ranks;
  for (unsigned t : op.inputs)
    ranks.push_back(problem.getTensor(t).rank);
  runtime::OpShare share;
  runtime::getShareBoxes(rule, box, ranks, share);
  return share;
}

bool sameShare(const runtime::OpShare &a, const runtime::OpShare &b) {
  return a.output == b.output && a.inputs == b.inputs;
}

/// Counts of the index kinds a model's reads have.
struct Kinds {
  unsigned affine = 0, strided = 0, divMod = 0, whole = 0;
};

void countKinds(const OpRule &rule, Kinds &kinds) {
  for (const OpRule::Read &read : rule.reads)
    for (const OpRule::Index &index : read.dims) {
      kinds.affine += index.kind == tofu::runtime::IndexKind::Affine;
      kinds.divMod += index.kind == tofu::runtime::IndexKind::DivMod;
      kinds.whole += index.kind == tofu::runtime::IndexKind::Whole;
      if (index.kind == tofu::runtime::IndexKind::Affine)
        for (auto [var, coef] : index.insts[0].terms)
          kinds.strided += coef > 1 || coef < -1;
    }
}

/// test/Plan/Inputs/box-rules.json with its operators (box-rules.tdl):
/// strided reads clipped at the edges, a wrapping %, / and %, whole
/// dimensions, two strides at once.
testing::AssertionResult loadBoxRulesGraph(LoadedModel &m) {
  std::string inputs = std::string(TOFU_SOURCE_DIR) + "/test/Plan/Inputs/";
  m.graph = graph::readGraphFile(inputs + "box-rules.json", m.diags);
  if (!m.graph)
    return testing::AssertionFailure() << "cannot read box-rules.json";
  if (!m.specs.loadFor(*m.graph, std::string(TOFU_SOURCE_DIR) + "/specs",
                       {inputs + "box-rules.tdl"}, m.diags) ||
      !graph::verifyGraph(*m.graph, m.specs, m.diags))
    return testing::AssertionFailure() << "box-rules.json does not verify";
  m.problem = PlanningProblem::build(*m.graph, m.specs, m.diags);
  if (!m.problem)
    return testing::AssertionFailure() << "no planning problem";
  return testing::AssertionSuccess();
}

TEST(OpRulesTest, RulesGiveTheAnalysedBoxes) {
  Kinds kinds;
  std::mt19937 rng(2026);
  for (const char *name : {"box-rules.json", "mlp.json", "resnet18.json",
                           "resnet50.json", "gpt-2l.json", "rnn-2l.json"}) {
    LoadedModel m;
    ASSERT_TRUE(std::string(name) == "box-rules.json" ? loadBoxRulesGraph(m)
                                                      : m.load(name));
    // The small graph's boxes are all tried; a model's ops a few each.
    unsigned trials = std::string(name) == "box-rules.json" ? 2000 : 6;
    unsigned checked = 0;
    for (const ProblemOp &op : m.problem->getOps()) {
      OpRule rule = runtime::decodeOpRule(
          runtime::encodeOpRule(getOpRule(op, {}, 0)).data());
      countKinds(rule, kinds);
      for (unsigned trial = 0; trial != trials; ++trial) {
        Box box = trial == 0 ? Box::whole(rule.extents)
                             : randomBox(rule.extents, rng);
        runtime::OpShare expected = analysedShare(*m.problem, op, box);
        runtime::OpShare actual = ruleShare(*m.problem, op, rule, box);
        ASSERT_TRUE(sameShare(expected, actual))
            << name << ": op '" << m.graph->getOp(op.graphOp).name
            << "' over " << box.format();
        ++checked;
      }
    }
    EXPECT_GT(checked, 0u) << name;
  }
  EXPECT_GT(kinds.affine, 0u);
  EXPECT_GT(kinds.strided, 0u);
  EXPECT_GT(kinds.divMod, 0u);
  EXPECT_GT(kinds.whole, 0u);
}

TEST(OpRulesTest, AChangedCoefficientChangesSomeBox) {
  LoadedModel m;
  ASSERT_TRUE(m.load("resnet18.json"));
  std::mt19937 rng(7);
  unsigned caught = 0, changed = 0;
  for (const ProblemOp &op : m.problem->getOps()) {
    OpRule rule = getOpRule(op, {}, 0);
    // The first affine leaf with a term: its coefficient one larger.
    OpRule wrong = rule;
    bool found = false;
    for (OpRule::Read &read : wrong.reads)
      for (OpRule::Index &index : read.dims)
        if (!found && index.kind == tofu::runtime::IndexKind::Affine &&
            !index.insts[0].terms.empty()) {
          index.insts[0].terms[0].second += 1;
          found = true;
        }
    if (!found)
      continue;
    ++changed;
    for (unsigned trial = 0; trial != 20; ++trial) {
      Box box = randomBox(rule.extents, rng);
      if (!sameShare(analysedShare(*m.problem, op, box),
                     ruleShare(*m.problem, op, wrong, box))) {
        ++caught;
        break;
      }
    }
  }
  ASSERT_GT(changed, 0u);
  // Most changed rules read elsewhere over some box (a coefficient on a
  // variable of extent 1 changes nothing).
  EXPECT_GT(caught * 2, changed);
}

} // namespace
