//===- SearchSpaceTest.cpp - Cost tables against the cost model -----------===//
//
// Tests SearchSpace's tables: measured over every worker without
// coarsening, the factor graph's value of any choice is the comm bytes
// evaluatePlan gives the plan the choice applies to. The models have ops
// of equal shapes that differ in operator or params, and a small graph has
// ops that differ in a param or an element size alone: tables shared
// between ops that compute differently (a table key missing what tells
// them apart) give some choice a wrong value.
//
//===----------------------------------------------------------------------===//

#include "Planner/PlannerTestUtils.h"
#include "tofu/Planner/CostModel.h"
#include "tofu/Planner/SearchSpace.h"

#include "gtest/gtest.h"

#include <random>

using namespace tofu;
using namespace tofu::planner;

namespace {

/// Builds the search space of `problem` over every worker of `workers`
/// (tensors split along `pinned` dimensions where given) and checks
/// `trials` random choices against evaluatePlan.
void expectTablesMatchCostModel(const PlanningProblem &problem,
                                unsigned workers, unsigned trials,
                                const std::vector<int> *pinned = nullptr) {
  SearchFrame frame;
  frame.levels = getPrimeFactors(workers);
  frame.workers = getAllWorkers(frame.levels);
  frame.pinnedTensorDims = pinned;
  SearchSpace space(problem, frame);
  ASSERT_TRUE(space.build());
  const FactorGraph &graph = space.getFactorGraph();
  std::mt19937 random(1);
  for (unsigned trial = 0; trial != trials; ++trial) {
    std::vector<unsigned> choice(graph.getNumVariables());
    for (unsigned v = 0; v != choice.size(); ++v)
      choice[v] = random() % graph.getDomain(v);
    Assignment a = makeUndecided(problem, frame.levels);
    space.apply(choice, a);
    llvm::Expected<CostReport> costs =
        evaluatePlan(problem, materializePlan(problem, a));
    ASSERT_TRUE(bool(costs)) << llvm::toString(costs.takeError());
    EXPECT_DOUBLE_EQ(graph.evaluate(choice), double(costs->commBytes))
        << "choice " << trial;
  }
}

// Two slices of one shape and operator that differ in their start alone
// (one reads across the halves of x's columns, the other within them), two
// relus of one shape that differ in their element size alone, and a relu
// and a transpose of one shape and params.
TEST(SearchSpaceTest, EqualShapesOfOtherOpsParamsOrSizesDoNotShare) {
  LoadedModel m;
  ASSERT_TRUE(m.loadText("slices.json", R"({"format": "tofu-graph", "version": 1,
 "tensors": [
  {"name": "x", "shape": [8, 16], "dtype": "f32", "role": "input"},
  {"name": "a", "shape": [8, 8], "dtype": "f32", "role": "output"},
  {"name": "b", "shape": [8, 8], "dtype": "f32", "role": "output"},
  {"name": "y", "shape": [8, 8], "dtype": "f32", "role": "input"},
  {"name": "z", "shape": [8, 8], "dtype": "f64", "role": "input"},
  {"name": "ry", "shape": [8, 8], "dtype": "f32", "role": "output"},
  {"name": "ty", "shape": [8, 8], "dtype": "f32", "role": "output"},
  {"name": "rz", "shape": [8, 8], "dtype": "f64", "role": "output"}],
 "ops": [
  {"name": "a", "type": "slice_Tensor", "inputs": ["x"], "outputs": ["a"],
   "params": {"dim": 1, "start": 0, "end": 8, "step": 1}},
  {"name": "b", "type": "slice_Tensor", "inputs": ["x"], "outputs": ["b"],
   "params": {"dim": 1, "start": 4, "end": 12, "step": 1}},
  {"name": "ry", "type": "relu", "inputs": ["y"], "outputs": ["ry"], "params": {}},
  {"name": "rz", "type": "relu", "inputs": ["z"], "outputs": ["rz"], "params": {}},
  {"name": "ty", "type": "t", "inputs": ["y"], "outputs": ["ty"], "params": {}}]})"));
  expectTablesMatchCostModel(*m.problem, 2, 64);
}

// Two relus of one shape and element size whose inputs are pinned to
// different dimensions (as the Megatron baseline pins its weights): their
// inputs are of different kinds.
TEST(SearchSpaceTest, EqualShapesOverOtherTensorKindsDoNotShare) {
  LoadedModel m;
  ASSERT_TRUE(m.loadText("pinned.json", R"({"format": "tofu-graph", "version": 1,
 "tensors": [
  {"name": "y1", "shape": [8, 8], "dtype": "f32", "role": "input"},
  {"name": "y2", "shape": [8, 8], "dtype": "f32", "role": "input"},
  {"name": "r1", "shape": [8, 8], "dtype": "f32", "role": "output"},
  {"name": "r2", "shape": [8, 8], "dtype": "f32", "role": "output"}],
 "ops": [
  {"name": "r1", "type": "relu", "inputs": ["y1"], "outputs": ["r1"], "params": {}},
  {"name": "r2", "type": "relu", "inputs": ["y2"], "outputs": ["r2"], "params": {}}]})"));
  std::vector<int> pinned = {0, 1, -1, -1};
  expectTablesMatchCostModel(*m.problem, 2, 64, &pinned);
}

class SearchSpaceTest : public testing::TestWithParam<ModelCase> {};

TEST_P(SearchSpaceTest, TablesMatchTheCostModel) {
  LoadedModel m;
  ASSERT_TRUE(m.load(GetParam().model));
  expectTablesMatchCostModel(*m.problem, GetParam().workers, 16);
}

INSTANTIATE_TEST_SUITE_P(Models, SearchSpaceTest,
                         testing::Values(ModelCase{"rnn-2l.json", 4},
                                         ModelCase{"gpt-2l.json", 4},
                                         ModelCase{"mlp.json", 6}),
                         getModelCaseName);

} // namespace
