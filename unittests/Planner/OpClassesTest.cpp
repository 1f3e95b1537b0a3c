//===- OpClassesTest.cpp - Ops and tensors a plan treats alike ------------===//
//
// Tests computeOpClasses on searched plans of the repository's gpt-2l (two
// identical layers) and rnn-2l: every op of a class has every worker's
// share, stored input and output regions and partial flag equal to the
// first op of its class (what every use of the classes relies on), every
// tensor of a class has the first's shape, element size and regions; the
// two layers share classes, and ops of other shapes or steps do not.
//
//===----------------------------------------------------------------------===//

#include "Planner/PlannerTestUtils.h"
#include "tofu/Plan/Layouts.h"
#include "tofu/Planner/CostModel.h"
#include "tofu/Planner/OpClasses.h"

#include "gtest/gtest.h"

using namespace tofu;
using namespace tofu::planner;

namespace {

struct ClassedPlan {
  testing::AssertionResult load(const ModelCase &c) {
    testing::AssertionResult loaded = m.load(c.model);
    if (!loaded)
      return loaded;
    auto planned = m.plan(c.workers);
    if (!planned)
      return testing::AssertionFailure() << llvm::toString(planned.takeError());
    p = std::move(*planned);
    if (llvm::Error err = resolvePlanSteps(*m.problem, p, steps))
      return testing::AssertionFailure() << llvm::toString(std::move(err));
    return testing::AssertionSuccess();
  }
  int findOp(StringRef name) const {
    for (unsigned i = 0; i != p.ops.size(); ++i)
      if (p.ops[i].name == name)
        return i;
    return -1;
  }

  LoadedModel m;
  plan::Plan p;
  std::vector<SmallVector<uint8_t, 4>> steps;
};

/// True if tensors `a` and `b` of `p` have the same region on every worker.
bool haveEqualRegions(const plan::Plan &p, unsigned a, unsigned b) {
  analysis::Region ra, rb;
  for (unsigned w = 0; w != p.workers; ++w) {
    bool ha = plan::getStoredRegion(p, p.tensors[a], w, ra);
    bool hb = plan::getStoredRegion(p, p.tensors[b], w, rb);
    if (ha != hb || (ha && ra != rb))
      return false;
  }
  return true;
}

/// True if ops `a` and `b` have equal shares on every worker.
bool haveEqualShares(const PlanningProblem &problem, const plan::Plan &p,
                     ArrayRef<SmallVector<uint8_t, 4>> steps, unsigned a,
                     unsigned b) {
  SmallVector<unsigned, 8> digits;
  SmallVector<analysis::Range, 8> boxA, boxB;
  analysis::WorkerRegions ra, rb;
  for (unsigned w = 0; w != p.workers; ++w) {
    plan::getWorkerDigits(p.levels, w, digits);
    computeOpShare(problem.getOp(a), p.levels, steps[a], digits, boxA, ra);
    computeOpShare(problem.getOp(b), p.levels, steps[b], digits, boxB, rb);
    if (boxA != boxB || ra.output != rb.output || ra.partial != rb.partial ||
        ra.inputs != rb.inputs)
      return false;
  }
  return true;
}

class OpClassesTest : public testing::TestWithParam<ModelCase> {};

TEST_P(OpClassesTest, ClassesShareBoxesAndRegions) {
  ClassedPlan c;
  ASSERT_TRUE(c.load(GetParam()));
  const PlanningProblem &problem = *c.m.problem;
  OpClasses classes = computeOpClasses(problem, c.p, c.steps);
  ASSERT_EQ(classes.tensorClass.size(), problem.getTensors().size());
  ASSERT_EQ(classes.opClass.size(), problem.getOps().size());

  std::vector<int> firstTensor(classes.numTensorClasses, -1);
  for (unsigned t = 0; t != classes.tensorClass.size(); ++t) {
    int &first = firstTensor[classes.tensorClass[t]];
    if (first < 0) {
      first = t;
      continue;
    }
    EXPECT_EQ(problem.getShape(t), problem.getShape(first)) << "tensor " << t;
    EXPECT_EQ(problem.getTensor(t).elementSize,
              problem.getTensor(first).elementSize)
        << "tensor " << t;
    EXPECT_TRUE(haveEqualRegions(c.p, t, first)) << "tensor " << t;
  }

  std::vector<int> firstOp(classes.numOpClasses, -1);
  unsigned repeated = 0;
  for (unsigned i = 0; i != classes.opClass.size(); ++i) {
    int &first = firstOp[classes.opClass[i]];
    if (first < 0) {
      first = i;
      continue;
    }
    ++repeated;
    const ProblemOp &op = problem.getOp(i), &firstOpOf = problem.getOp(first);
    EXPECT_TRUE(haveEqualShares(problem, c.p, c.steps, i, first))
        << c.p.ops[i].name << " and " << c.p.ops[first].name;
    EXPECT_EQ(isPartialShare(op, c.steps[i]),
              isPartialShare(firstOpOf, c.steps[first]));
    ASSERT_EQ(op.inputs.size(), firstOpOf.inputs.size());
    for (unsigned pos = 0; pos != op.inputs.size(); ++pos)
      EXPECT_TRUE(haveEqualRegions(c.p, op.inputs[pos], firstOpOf.inputs[pos]))
          << c.p.ops[i].name << " input " << pos;
    EXPECT_TRUE(haveEqualRegions(c.p, op.output, firstOpOf.output))
        << c.p.ops[i].name;
  }
  // The second layer repeats the first: most of its ops are in a class of
  // an op before them.
  EXPECT_GT(repeated, problem.getOps().size() / 4);
}

INSTANTIATE_TEST_SUITE_P(Models, OpClassesTest,
                         testing::Values(ModelCase{"gpt-2l.json", 4},
                                         ModelCase{"gpt-2l.json", 6},
                                         ModelCase{"gpt-2l.json", 16},
                                         ModelCase{"rnn-2l.json", 8}),
                         getModelCaseName);

TEST(OpClassesKeys, LayersShareOtherShapesAndStepsDoNot) {
  ClassedPlan c;
  ASSERT_TRUE(c.load(ModelCase{"gpt-2l.json", 8}));
  const PlanningProblem &problem = *c.m.problem;
  int fc1 = c.findOp("blocks.0.fc1.addmm"), fc1Next = c.findOp("blocks.1.fc1.addmm");
  int fc2 = c.findOp("blocks.0.fc2.addmm");
  ASSERT_GE(fc1, 0);
  ASSERT_GE(fc1Next, 0);
  ASSERT_GE(fc2, 0);
  // The search gives the two layers' fc1 the same steps and layouts here.
  ASSERT_EQ(c.steps[fc1], c.steps[fc1Next]);
  OpClasses classes = computeOpClasses(problem, c.p, c.steps);
  EXPECT_EQ(classes.opClass[fc1], classes.opClass[fc1Next]);
  EXPECT_EQ(classes.tensorClass[problem.getOp(fc1).output],
            classes.tensorClass[problem.getOp(fc1Next).output]);
  // fc2 is the same operator on other shapes.
  EXPECT_NE(classes.opClass[fc1], classes.opClass[fc2]);

  // Other steps for the second layer's fc1: another class, and other
  // shares on some worker.
  unsigned replicate = problem.getOp(fc1Next).getReplicateStep();
  ASSERT_NE(c.steps[fc1Next][0], replicate);
  c.steps[fc1Next][0] = replicate;
  OpClasses changed = computeOpClasses(problem, c.p, c.steps);
  EXPECT_NE(changed.opClass[fc1], changed.opClass[fc1Next]);
  EXPECT_FALSE(haveEqualShares(problem, c.p, c.steps, fc1, fc1Next));

  // Another layout for its output tensor: another tensor class, and so
  // another op class.
  c.steps[fc1Next] = c.steps[fc1];
  plan::TensorPlan &out = c.p.tensors[problem.getOp(fc1Next).output];
  ASSERT_TRUE(out.layout.hasValue());
  ASSERT_TRUE(out.regions.empty());
  uint8_t &dim = (*out.layout)[0];
  dim = dim == plan::kReplicateDim ? 0 : plan::kReplicateDim;
  OpClasses relaid = computeOpClasses(problem, c.p, c.steps);
  EXPECT_NE(relaid.tensorClass[problem.getOp(fc1).output],
            relaid.tensorClass[problem.getOp(fc1Next).output]);
  EXPECT_NE(relaid.opClass[fc1], relaid.opClass[fc1Next]);
}

} // namespace
