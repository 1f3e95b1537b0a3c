//===- BoxRulesTest.cpp - Every worker's boxes from layouts and rules -----===//
//
// Tests the box rules (BoxRules.h) and their use by buildExecutablePlan on
// tables as tofu-plan writes them (layouts and op rules, no per-worker
// boxes): the even split and worker numbering of docs/CostModel.md, the
// compact-layout example of docs/PlanFormat.md, an op rule's shares, the
// one-worker form an MPI rank derives, malformed rules, and
// findPlanDifference, which tofu-plan --check-cpp relies on.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/BoxRules.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/GeneratedPlan.h"

#include "gtest/gtest.h"

using namespace tofu::runtime;

namespace {

TEST(BoxRulesTest, EvenPartsAreLargerFirst) {
  std::vector<std::string> parts;
  for (unsigned c = 0; c != 3; ++c) {
    std::int64_t lo = 1, hi = 8;
    getEvenPart(lo, hi, 3, c);
    parts.push_back(std::to_string(lo) + "-" + std::to_string(hi));
  }
  EXPECT_EQ(parts, (std::vector<std::string>{"1-4", "4-6", "6-8"}));
  std::int64_t lo = 2, hi = 3;
  getEvenPart(lo, hi, 4, 3);
  EXPECT_EQ(lo, hi); // An empty part.
}

TEST(BoxRulesTest, LayoutsSplitInNestedParts) {
  // docs/PlanFormat.md: levels [2, 4], an [8, 16] tensor split:0 then
  // split:1; worker 5 has digits 1, 1.
  std::vector<unsigned> levels{2, 4}, digits;
  getWorkerDigits(levels, 5, digits);
  EXPECT_EQ(digits, (std::vector<unsigned>{1, 1}));
  Box box = Box::whole({8, 16});
  applyWorkerPart(box, levels, {0, 1}, digits);
  EXPECT_EQ(box.format(), "[4,8)x[4,8)");
  // One dimension at both levels: nested parts; NoSplit keeps the box.
  box = Box::whole({8, 16});
  applyWorkerPart(box, levels, {1, 1}, digits);
  EXPECT_EQ(box.format(), "[0,8)x[10,12)");
  box = Box::whole({8, 16});
  applyWorkerPart(box, levels, {NoSplit, NoSplit}, digits);
  EXPECT_EQ(box.format(), "[0,8)x[0,16)");
}

/// y[i] = x[i + 1] over i < 4, x of 5, split on i at one 2-way level.
OpRule shiftRule() {
  OpRule rule;
  rule.extents = {4};
  rule.levelVars = {0};
  rule.outputRank = 1;
  rule.inputShapes = {{5}};
  OpRule::Inst leaf;
  leaf.constant = 1;
  leaf.terms = {{0, 1}};
  OpRule::Index index;
  index.kind = tofu::runtime::IndexKind::Affine;
  index.insts = {leaf};
  rule.reads = {OpRule::Read{0, 1, {index}}};
  return rule;
}

TEST(BoxRulesTest, RulesGiveShares) {
  OpRule rule = decodeOpRule(encodeOpRule(shiftRule()).data());
  std::vector<unsigned> digits{1};
  Box iteration = getIterationBox(rule, {2}, digits);
  EXPECT_EQ(iteration.format(), "[2,4)");
  OpShare share;
  getShareBoxes(rule, iteration, {1}, share);
  EXPECT_EQ(share.output.format(), "[2,4)");
  ASSERT_EQ(share.inputs.size(), 1u);
  EXPECT_EQ(share.inputs[0].format(), "[3,5)");
  // An empty iteration range reads nothing: [0, 0).
  iteration.hi[0] = iteration.lo[0];
  getShareBoxes(rule, iteration, {1}, share);
  EXPECT_EQ(share.inputs[0].format(), "[0,0)");
}

TEST(BoxRulesTest, MalformedRulesAreErrors) {
  std::vector<std::int64_t> encoded = encodeOpRule(shiftRule());
  encoded[0] = -1; // A negative variable count.
  EXPECT_THROW(decodeOpRule(encoded.data()), RuntimeError);
  EXPECT_THROW(decodeOpRule(nullptr), RuntimeError);
  // An index that adds with one value on the stack does not evaluate.
  OpRule rule = shiftRule();
  OpRule::Inst add;
  add.op = IndexOp::Add;
  rule.reads[0].dims[0].kind = IndexKind::DivMod;
  rule.reads[0].dims[0].insts.push_back(add);
  EXPECT_THROW(decodeOpRule(encodeOpRule(rule).data()), RuntimeError);
  rule.reads[0].dims[0].insts.insert(rule.reads[0].dims[0].insts.begin(),
                                     rule.reads[0].dims[0].insts[0]);
  EXPECT_EQ(decodeOpRule(encodeOpRule(rule).data()).reads[0].dims[0].insts.size(),
            3u);
}

/// x (5, split in halves), y = shift(x) (4, split in halves), as tofu-plan
/// writes them.
CompactPlan makeCompact() {
  CompactPlan compact;
  compact.graphName = "shift.json";
  compact.levels = {2};
  compact.plan.workers = 2;
  compact.plan.peakBytesPerWorker = {16, 16};
  TensorInfo x, y;
  x.name = "x";
  x.shape = {5};
  x.graphInput = x.persistent = true;
  y.name = "y";
  y.shape = {4};
  y.persistent = true;
  compact.plan.tensors = {x, y};
  compact.roles = {"input", "output"};
  compact.layouts = {std::vector<std::uint8_t>{0},
                     std::vector<std::uint8_t>{0}};
  OpInfo op;
  op.name = "shift";
  op.type = "shift";
  op.inputs = {0};
  op.output = 1;
  compact.plan.ops = {op};
  compact.rules = {encodeOpRule(shiftRule())};
  compact.opRules = {0};
  return compact;
}

TEST(BoxRulesTest, TablesDeriveEveryWorkersBoxes) {
  CompactPlan compact = makeCompact();
  GeneratedTables tables(compact);
  ExecutablePlan plan = buildExecutablePlan(tables.get());
  ASSERT_EQ(plan.tensors.size(), 2u);
  EXPECT_EQ(plan.tensors[0].stored[0]->format(), "[0,3)");
  EXPECT_EQ(plan.tensors[0].stored[1]->format(), "[3,5)");
  const OpShare &second = plan.ops[0].workers[1];
  EXPECT_EQ(second.iteration.format(), "[2,4)");
  EXPECT_EQ(second.inputs[0].format(), "[3,5)");
  EXPECT_EQ(second.output.format(), "[2,4)");
  // A rank's own plan: the other worker's iteration box is left empty,
  // everything else is the whole plan's.
  ExecutablePlan rank = buildExecutablePlan(tables.get(), 1);
  EXPECT_EQ(rank.ops[0].workers[0].iteration.getRank(), 0u);
  EXPECT_EQ(rank.ops[0].workers[0].inputs[0].format(), "[1,3)");
  EXPECT_EQ(rank.ops[0].workers[1].iteration.format(), "[2,4)");
}

TEST(BoxRulesTest, ListedBoxesStayAsListed) {
  // A tensor whose plan lists its regions keeps them.
  CompactPlan compact = makeCompact();
  compact.layouts[0].reset();
  compact.plan.tensors[0].stored = {Box{{0}, {5}}, Box{{0}, {5}}};
  GeneratedTables tables(compact);
  ExecutablePlan plan = buildExecutablePlan(tables.get());
  EXPECT_EQ(plan.tensors[0].stored[1]->format(), "[0,5)");
  EXPECT_EQ(plan.tensors[1].stored[1]->format(), "[2,4)");
}

TEST(BoxRulesTest, InconsistentTablesAreErrors) {
  CompactPlan compact = makeCompact();
  compact.levels = {3}; // 3 workers' levels for 2 workers.
  GeneratedTables tables(compact);
  EXPECT_THROW(buildExecutablePlan(tables.get()), RuntimeError);
}

TEST(BoxRulesTest, FindsTheFirstDifference) {
  CompactPlan compact = makeCompact();
  GeneratedTables tables(compact);
  ExecutablePlan expected = buildExecutablePlan(tables.get());
  EXPECT_EQ(findPlanDifference(expected, expected), "");
  ExecutablePlan stored = expected;
  stored.tensors[0].stored[1]->lo[0] = 2;
  EXPECT_EQ(findPlanDifference(expected, stored),
            "tensor 'x': worker 1 stores [2,5), not [3,5)");
  ExecutablePlan read = expected;
  read.ops[0].workers[0].inputs[0].hi[0] = 4;
  EXPECT_EQ(findPlanDifference(expected, read),
            "op 'shift': worker 0 reads [1,4) of input 0, not [1,3)");
  ExecutablePlan computed = expected;
  computed.ops[0].workers[1].output.lo[0] = 1;
  EXPECT_EQ(findPlanDifference(expected, computed),
            "op 'shift': worker 1 computes [1,4), not [2,4)");
  ExecutablePlan iterated = expected;
  iterated.ops[0].workers[1].iteration = Box();
  EXPECT_EQ(findPlanDifference(expected, iterated),
            "op 'shift': worker 1 iterates over [], not [2,4)");
  // A rule that reads elsewhere gives another plan.
  compact.rules[0] = encodeOpRule([] {
    OpRule rule = shiftRule();
    rule.reads[0].dims[0].insts[0].constant = 0;
    return rule;
  }());
  GeneratedTables changed(compact);
  EXPECT_EQ(findPlanDifference(expected, buildExecutablePlan(changed.get())),
            "op 'shift': worker 0 reads [0,2) of input 0, not [1,3)");
}

} // namespace
