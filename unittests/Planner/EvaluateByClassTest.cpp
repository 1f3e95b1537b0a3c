//===- EvaluateByClassTest.cpp - A plan's costs computed once per class ---===//
//
// evaluatePlan computes each op class's fetch and produce terms and each
// tensor class's stored bytes once (OpClasses.h). Listing every tensor's
// regions makes each tensor, and so each op reading or writing it, a class
// of its own: the same plan with listed regions is evaluated op by op and
// tensor by tensor, and must give the same report to the byte.
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

/// `p` with every tensor's regions listed (each tensor a class of its own).
plan::Plan listRegions(const plan::Plan &p) {
  plan::Plan listed = p;
  analysis::Region region;
  for (unsigned t = 0, e = p.tensors.size(); t != e; ++t) {
    std::vector<llvm::Optional<analysis::Region>> &regions =
        listed.tensors[t].regions;
    regions.clear();
    for (unsigned w = 0; w != p.workers; ++w)
      regions.push_back(plan::getStoredRegion(p, p.tensors[t], w, region)
                            ? llvm::Optional<analysis::Region>(region)
                            : llvm::None);
  }
  return listed;
}

class EvaluateByClassTest : public testing::TestWithParam<ModelCase> {};

TEST_P(EvaluateByClassTest, SameReportAsOpByOp) {
  LoadedModel m;
  ASSERT_TRUE(m.load(GetParam().model));
  auto p = m.plan(GetParam().workers);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  std::vector<SmallVector<uint8_t, 4>> steps;
  ASSERT_FALSE(bool(resolvePlanSteps(*m.problem, *p, steps)));
  plan::Plan listed = listRegions(*p);
  // The test means something only where the compact plan shares classes
  // and the listed one does not.
  OpClasses shared = computeOpClasses(*m.problem, *p, steps);
  OpClasses own = computeOpClasses(*m.problem, listed, steps);
  ASSERT_LT(shared.numOpClasses, p->ops.size());
  ASSERT_EQ(own.numTensorClasses, p->tensors.size());

  auto byClass = evaluatePlan(*m.problem, *p, Peaks::Skip);
  auto byOp = evaluatePlan(*m.problem, listed, Peaks::Skip);
  ASSERT_TRUE(bool(byClass)) << llvm::toString(byClass.takeError());
  ASSERT_TRUE(bool(byOp)) << llvm::toString(byOp.takeError());
  EXPECT_EQ(byClass->commBytes, byOp->commBytes);
  EXPECT_EQ(byClass->nextStepBytes, byOp->nextStepBytes);
  EXPECT_EQ(byClass->residentBytesPerWorker, byOp->residentBytesPerWorker);
  EXPECT_EQ(byClass->largestBuffersPerWorker, byOp->largestBuffersPerWorker);
  ASSERT_EQ(byClass->ops.size(), byOp->ops.size());
  for (unsigned i = 0; i != byOp->ops.size(); ++i) {
    EXPECT_EQ(byClass->ops[i].fetchBytes, byOp->ops[i].fetchBytes)
        << p->ops[i].name;
    EXPECT_EQ(byClass->ops[i].produceBytes, byOp->ops[i].produceBytes)
        << p->ops[i].name;
  }
}

INSTANTIATE_TEST_SUITE_P(Models, EvaluateByClassTest,
                         testing::Values(ModelCase{"gpt-2l.json", 6},
                                         ModelCase{"gpt-2l.json", 16},
                                         ModelCase{"rnn-2l.json", 8},
                                         ModelCase{"resnet18.json", 4}),
                         getModelCaseName);

} // namespace
