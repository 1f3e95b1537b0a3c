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

class PlannedPeaksTest : public testing::TestWithParam<ModelCase> {};

TEST_P(PlannedPeaksTest, EqualTheReference) {
  const ModelCase &c = GetParam();
  LoadedModel m;
  ASSERT_TRUE(m.load(c.model));
  const std::unique_ptr<PlanningProblem> &problem = m.problem;
  auto p = m.plan(c.workers);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  std::vector<SmallVector<uint8_t, 4>> steps;
  ASSERT_FALSE(bool(resolvePlanSteps(*problem, *p, steps)));

  auto planned = predictPlanPeaks(*problem, *p, steps);
  ASSERT_TRUE(bool(planned)) << llvm::toString(planned.takeError());
  auto exec =
      buildExecutablePlan(*problem, *p, steps, UnexecutedTypes::Placeholder);
  ASSERT_TRUE(bool(exec)) << llvm::toString(exec.takeError());
  std::vector<runtime::WorkerPeak> reference = runtime::predictPeaks(
      *exec, runtime::buildSchedule(*exec), getTensorMemory(*problem));

  ASSERT_EQ(planned->size(), c.workers);
  ASSERT_EQ(reference.size(), c.workers);
  for (unsigned w = 0; w != c.workers; ++w) {
    EXPECT_GT((*planned)[w].bytes, 0) << "worker " << w;
    EXPECT_EQ((*planned)[w].bytes, reference[w].bytes) << "worker " << w;
    EXPECT_EQ((*planned)[w].uses, reference[w].uses) << "worker " << w;
  }
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

} // namespace
