//===- GeneratedPlanTest.cpp - Plans compiled into a program --------------===//
//
// Tests buildExecutablePlan and LinkedPlan on tables written as
// `tofu-plan --emit=cpp` writes them (docs/PlanFormat.md): two workers,
// y = 2 * x split in halves, then loss = Sum(y) as partial sums reduced
// across the workers.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/GeneratedPlan.h"

#include "gtest/gtest.h"

using namespace tofu::runtime;

namespace {

/// y[i] = 2 * x[i] over the iteration box.
void twice(const KernelCall &call) {
  const float *x = static_cast<const float *>(call.inputs[0].data);
  float *y = static_cast<float *>(call.output.data);
  for (std::int64_t i = call.varLo[0]; i < call.varHi[0]; ++i)
    y[i - call.output.lo[0]] = 2 * x[i - call.inputs[0].lo[0]];
}

/// loss = Sum_i y[i] over the box of i.
void sum(const KernelCall &call) {
  const float *y = static_cast<const float *>(call.inputs[0].data);
  float total = 0;
  for (std::int64_t i = call.varLo[0]; i < call.varHi[0]; ++i)
    total += y[i - call.inputs[0].lo[0]];
  *static_cast<float *>(call.output.data) = total;
}

const char *const iVar[] = {"i"};
const KernelInfo kernels[] = {{"twice", twice, iVar, 1},
                              {"sum", sum, iVar, 1}};

const std::int64_t lowHalf[] = {1, 0, 2}, highHalf[] = {1, 2, 4};
const std::int64_t whole[] = {1, 0, 4}, scalar[] = {0};
const std::int64_t shape4[] = {4}, shape0[] = {0};
const GeneratedBox halves[] = {lowHalf, highHalf};
const GeneratedBox scalars[] = {scalar, scalar};
const GeneratedTensor tensors[] = {
    {"x", "input", ElementType::F32, 1, shape4, true, true, -1, halves},
    {"y", "activation", ElementType::F32, 1, shape4, false, false, -1, halves},
    {"loss", "output", ElementType::F32, 0, shape0, false, true, -1, scalars}};
const unsigned twiceInputs[] = {0}, sumInputs[] = {1};
const GeneratedBox lowIn[] = {lowHalf}, highIn[] = {highHalf};
const GeneratedShare twiceShares[] = {{lowHalf, lowIn, lowHalf},
                                      {highHalf, highIn, highHalf}};
const GeneratedShare sumShares[] = {{lowHalf, lowIn, scalar},
                                    {highHalf, highIn, scalar}};
const GeneratedOp ops[] = {
    {"twice", "mul", 1, twiceInputs, 1, 0, false, Reducer::Sum, twiceShares},
    {"loss", "sum", 1, sumInputs, 2, 1, true, Reducer::Sum, sumShares}};
const std::int64_t peaks[] = {24, 24};

GeneratedPlan makeGenerated() {
  return GeneratedPlan{"test.json", 2, 3, tensors, 2, ops, 8, peaks, 2,
                       kernels};
}

TEST(GeneratedPlanTest, RebuildsTheExecutablePlan) {
  ExecutablePlan plan = buildExecutablePlan(makeGenerated());
  ASSERT_EQ(plan.workers, 2u);
  ASSERT_EQ(plan.tensors.size(), 3u);
  EXPECT_EQ(plan.tensors[0].name, "x");
  EXPECT_TRUE(plan.tensors[0].graphInput);
  EXPECT_EQ(plan.tensors[0].shape, std::vector<std::int64_t>{4});
  ASSERT_TRUE(plan.tensors[0].stored[1].has_value());
  EXPECT_EQ(plan.tensors[0].stored[1]->format(), "[2,4)");
  EXPECT_TRUE(plan.tensors[2].shape.empty());
  ASSERT_EQ(plan.ops.size(), 2u);
  EXPECT_TRUE(plan.ops[1].partial);
  EXPECT_EQ(plan.ops[1].kernel, 1u);
  EXPECT_EQ(plan.ops[1].workers[1].iteration.format(), "[2,4)");
  EXPECT_EQ(plan.ops[1].workers[1].inputs[0].format(), "[2,4)");
  EXPECT_EQ(plan.ops[1].workers[0].output.getRank(), 0u);
  EXPECT_EQ(plan.commBytes, 8);
  EXPECT_EQ(plan.peakBytesPerWorker, (std::vector<std::int64_t>{24, 24}));
  EXPECT_EQ(lookupTensor(makeGenerated(), "y"), 1);
  EXPECT_EQ(lookupTensor(makeGenerated(), "z"), -1);
}

TEST(GeneratedPlanTest, RejectsInconsistentTables) {
  // The second worker's x would lie outside the tensor.
  const std::int64_t outside[] = {1, 2, 6};
  const GeneratedBox bad[] = {lowHalf, outside};
  GeneratedTensor badTensors[] = {tensors[0], tensors[1], tensors[2]};
  badTensors[0].stored = bad;
  GeneratedPlan generated = makeGenerated();
  generated.tensors = badTensors;
  EXPECT_THROW(buildExecutablePlan(generated), RuntimeError);
}

TEST(GeneratedPlanTest, LinkedPlanRunsAStep) {
  GeneratedPlan generated = makeGenerated();
  LinkedPlan linked(generated);
  EXPECT_EQ(linked.getLoss(), 2u);
  EXPECT_EQ(linked.getTensorsOfRole("input"), std::vector<unsigned>{0});
  linked.setInput("x", std::vector<float>{1, 2, 3, 4});
  StepResult result = linked.runStep();
  EXPECT_EQ(linked.getLossValue(), 20.0);
  // The partial sum one worker sends the other, and the result back.
  EXPECT_EQ(result.movedBytes, 8);
  EXPECT_EQ(linked.gatherFloats("x"), (std::vector<float>{1, 2, 3, 4}));
}

TEST(GeneratedPlanTest, LinkedPlanNamesWhatIsWrong) {
  GeneratedPlan generated = makeGenerated();
  LinkedPlan linked(generated);
  try {
    linked.getTensor("z");
    FAIL() << "no error for a missing tensor";
  } catch (const RuntimeError &e) {
    EXPECT_STREQ(e.what(), "the plan of 'test.json' has no tensor 'z'");
  }
  try {
    linked.setInput("x", std::vector<float>{1, 2, 3});
    FAIL() << "no error for a wrong element count";
  } catch (const RuntimeError &e) {
    EXPECT_STREQ(e.what(), "tensor 'x' has 4 elements, got 3");
  }
  try {
    linked.setInput("x", std::vector<std::int64_t>{1, 2, 3, 4});
    FAIL() << "no error for a wrong element type";
  } catch (const RuntimeError &e) {
    EXPECT_STREQ(e.what(), "tensor 'x' is f32, not i64");
  }
}

} // namespace
