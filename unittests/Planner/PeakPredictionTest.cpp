//===- PeakPredictionTest.cpp - The planner's peaks against the reference -===//
//
// Tests that the peaks the planner records (predictPlanPeaks: boxes derived
// one op at a time, messages counted on a grid of the boxes, staging only
// the first message of each size, the replay's SizeFreeList) are, worker by
// worker and use by use, what the reference form gives: runtime::predictPeaks
// over the whole executable plan and its Schedule, every message staged;
// and so does the PlanBoxes form with every fetch row grouped (minRowCells
// 1 and 4: the path an all-gather takes at large K). Searched plans of the repository's MLP and gpt-2l at even and uneven K,
// so that any speed-up of the planner's form that changes a peak fails here.
//
//===----------------------------------------------------------------------===//

#include "Planner/PlannerTestUtils.h"
#include "Runtime/BuiltBoxes.h"
#include "tofu/Planner/CostModel.h"
#include "tofu/Planner/Executable.h"
#include "tofu/Planner/Planner.h"
#include "tofu/Runtime/Schedule.h"
#include "tofu/Runtime/StepMemory.h"

#include "gtest/gtest.h"

using namespace tofu;
using namespace tofu::planner;

namespace {

/// Expects predictPlanPeaks of `p` to be the reference form's peaks,
/// worker by worker and use by use, and returns the reference's (empty on
/// failure).
std::vector<runtime::WorkerPeak>
expectReferencePeaks(const PlanningProblem &problem, const plan::Plan &p,
                     llvm::Optional<runtime::ExecutablePlan> &exec) {
  std::vector<SmallVector<uint8_t, 4>> steps;
  if (llvm::Error err = resolvePlanSteps(problem, p, steps)) {
    ADD_FAILURE() << llvm::toString(std::move(err));
    return {};
  }
  auto planned = predictPlanPeaks(problem, p, steps);
  if (!planned) {
    ADD_FAILURE() << llvm::toString(planned.takeError());
    return {};
  }
  auto built =
      buildExecutablePlan(problem, p, steps, UnexecutedTypes::Placeholder);
  if (!built) {
    ADD_FAILURE() << llvm::toString(built.takeError());
    return {};
  }
  exec = std::move(*built);
  std::vector<runtime::WorkerPeak> reference = runtime::predictPeaks(
      *exec, runtime::buildSchedule(*exec), getTensorMemory(problem));
  EXPECT_EQ(planned->size(), p.workers);
  EXPECT_EQ(reference.size(), p.workers);
  for (unsigned w = 0; w != p.workers && w != planned->size() &&
                       w != reference.size();
       ++w) {
    EXPECT_GT((*planned)[w].bytes, 0) << "worker " << w;
    EXPECT_EQ((*planned)[w].bytes, reference[w].bytes) << "worker " << w;
    EXPECT_EQ((*planned)[w].uses, reference[w].uses) << "worker " << w;
  }
  return reference;
}

class PlannedPeaksTest : public testing::TestWithParam<ModelCase> {};

TEST_P(PlannedPeaksTest, EqualTheReference) {
  const ModelCase &c = GetParam();
  LoadedModel m;
  ASSERT_TRUE(m.load(c.model));
  const std::unique_ptr<PlanningProblem> &problem = m.problem;
  auto p = m.plan(c.workers);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  llvm::Optional<runtime::ExecutablePlan> exec;
  std::vector<runtime::WorkerPeak> reference =
      expectReferencePeaks(*problem, *p, exec);
  ASSERT_EQ(reference.size(), c.workers);
  // The grouped reduce and fetch staging (StepMemory.h, minRowCells) with
  // every destination whose box covers 1 or 4 cells grouped, so that the
  // grouped path runs on these small plans too (the planner groups from
  // kMinRowCells cells, an all-gather's at large K).
  runtime::test::BuiltBoxes built(*exec);
  for (std::size_t minRowCells : {std::size_t(1), std::size_t(4)}) {
    std::vector<runtime::WorkerPeak> grouped = runtime::predictPeaks(
        *exec, c.workers, built, getTensorMemory(*problem), 1, minRowCells);
    ASSERT_EQ(grouped.size(), c.workers);
    for (unsigned w = 0; w != c.workers; ++w) {
      EXPECT_EQ(grouped[w].bytes, reference[w].bytes)
          << "worker " << w << ", rows from " << minRowCells << " cells";
      EXPECT_EQ(grouped[w].uses, reference[w].uses)
          << "worker " << w << ", rows from " << minRowCells << " cells";
    }
  }
  // The plan's recorded peaks are that prediction.
  EXPECT_EQ(p->peakBytesPerWorker.size(), c.workers);
  for (unsigned w = 0; w != c.workers && w != p->peakBytesPerWorker.size(); ++w)
    EXPECT_EQ(p->peakBytesPerWorker[w], reference[w].bytes) << "worker " << w;
}

INSTANTIATE_TEST_SUITE_P(
    Models, PlannedPeaksTest,
    testing::Values(ModelCase{"mlp.json", 3}, ModelCase{"mlp.json", 16},
                    ModelCase{"mlp.json", 64}, ModelCase{"gpt-2l.json", 5},
                    ModelCase{"gpt-2l.json", 8}, ModelCase{"gpt-2l.json", 24},
                    ModelCase{"rnn-2l.json", 7}, ModelCase{"resnet18.json", 6}),
    getModelCaseName);

// The planner predicts an op class's part once (OpClasses.h): a plan whose
// second gpt-2l layer differs from the first in its ops' steps, or in one
// tensor's layout, must still get the reference's peaks.
TEST(EditedPlanPeaksTest, EditedLayerEqualsTheReference) {
  LoadedModel m;
  ASSERT_TRUE(m.load("gpt-2l.json"));
  auto p = m.plan(8);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  auto find = [&](StringRef name) {
    for (unsigned i = 0; i != p->ops.size(); ++i)
      if (p->ops[i].name == name)
        return int(i);
    return -1;
  };
  int fc1 = find("blocks.0.fc1.addmm"), fc1Next = find("blocks.1.fc1.addmm");
  ASSERT_GE(fc1, 0);
  ASSERT_GE(fc1Next, 0);
  ASSERT_TRUE(p->ops[fc1].steps == p->ops[fc1Next].steps);
  llvm::Optional<runtime::ExecutablePlan> exec;
  std::vector<runtime::WorkerPeak> searched =
      expectReferencePeaks(*m.problem, *p, exec);

  // The second layer's ops replicated (its tensors' layouts kept): its
  // workers compute whole outputs, which changes what they hold at their
  // peaks.
  plan::Plan searchedPlan = *p;
  for (plan::OpPlan &op : p->ops)
    if (StringRef(op.name).startswith("blocks.1."))
      for (plan::Step &step : op.steps)
        step = plan::Step::replicate();
  std::vector<runtime::WorkerPeak> replicated =
      expectReferencePeaks(*m.problem, *p, exec);
  ASSERT_EQ(replicated.size(), searched.size());
  bool changed = false;
  for (unsigned w = 0; w != searched.size(); ++w)
    changed |= replicated[w].bytes != searched[w].bytes ||
               replicated[w].uses != searched[w].uses;
  EXPECT_TRUE(changed);

  // Its fc1's output replicated, with the searched steps.
  *p = searchedPlan;
  plan::TensorPlan &out = p->tensors[m.problem->getOp(fc1Next).output];
  ASSERT_TRUE(out.layout.hasValue());
  for (uint8_t &dim : *out.layout)
    dim = plan::kReplicateDim;
  expectReferencePeaks(*m.problem, *p, exec);
}

} // namespace
