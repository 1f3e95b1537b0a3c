//===- StoredRegionsTest.cpp - A worker's region, listed or derived -------===//
//
// plan::getStoredRegion, the one accessor through which every reader takes
// a worker's stored region: on hand-written tensors (a layout alone, a
// listed region with nulls, both), then on planned models, whose plans
// hold layouts alone: the cost model's numbers and the predicted peaks
// must be the same when the same plan lists every worker's region
// instead.
//
//===----------------------------------------------------------------------===//

#include "Planner/PlannerTestUtils.h"
#include "tofu/Analysis/Layout.h"
#include "tofu/Plan/Layouts.h"
#include "tofu/Planner/CostModel.h"
#include "tofu/Planner/Planner.h"

#include "gtest/gtest.h"

using namespace tofu;
using namespace tofu::planner;
using analysis::Range;
using analysis::Region;

namespace {

/// Levels 2 x 4 and an [8, 16] tensor split on dimension 0 at level 1 and
/// dimension 1 at level 2 (docs/PlanFormat.md's example).
plan::Plan examplePlan() {
  plan::Plan p;
  p.levels = {2, 4};
  p.workers = 8;
  plan::TensorPlan &t = p.tensors.emplace_back();
  t.name = "x";
  t.layout.emplace();
  t.layout->push_back(0);
  t.layout->push_back(1);
  t.shape = {8, 16};
  return p;
}

TEST(StoredRegionTest, DerivedFromTheLayout) {
  plan::Plan p = examplePlan();
  Region r;
  // Worker 5 has digits (1, 1): rows [4, 8), columns [4, 8).
  ASSERT_TRUE(plan::getStoredRegion(p, p.tensors[0], 5, r));
  EXPECT_EQ(r, Region({{4, 8}, {4, 8}}));
  // Worker 2, digits (0, 2): rows [0, 4), columns [8, 12); the same by
  // digits.
  ASSERT_TRUE(plan::getStoredRegion(p, p.tensors[0], 2, r));
  EXPECT_EQ(r, Region({{0, 4}, {8, 12}}));
  unsigned digits[] = {0, 2};
  Region byDigits;
  ASSERT_TRUE(plan::getStoredRegion(p.tensors[0], p.levels, digits, byDigits));
  EXPECT_EQ(byDigits, r);
  EXPECT_EQ(plan::getStoredVolume(p.tensors[0], p.levels, digits), 16);
  EXPECT_TRUE(plan::hasStoredRegions(p.tensors[0], 8));
  // Nothing is listed: the plan holds no per-worker regions.
  EXPECT_TRUE(p.tensors[0].regions.empty());
}

TEST(StoredRegionTest, ReplicatedAndUnevenLevels) {
  plan::Plan p = examplePlan();
  // Replicated at level 1, rows split 4 ways at level 2 of a 6-row
  // tensor: parts of 2, 2, 1, 1 rows, larger first.
  (*p.tensors[0].layout)[0] = plan::kReplicateDim;
  (*p.tensors[0].layout)[1] = 0;
  p.tensors[0].shape = {6, 3};
  Region r;
  ASSERT_TRUE(plan::getStoredRegion(p, p.tensors[0], 1, r));
  EXPECT_EQ(r, Region({{2, 4}, {0, 3}}));
  ASSERT_TRUE(plan::getStoredRegion(p, p.tensors[0], 7, r));
  EXPECT_EQ(r, Region({{5, 6}, {0, 3}}));
  // Worker 5 (digits 1, 1) stores what worker 1 does.
  Region r5;
  ASSERT_TRUE(plan::getStoredRegion(p, p.tensors[0], 5, r5));
  EXPECT_EQ(r5, Region({{2, 4}, {0, 3}}));
}

TEST(StoredRegionTest, ListedRegionsComeFirst) {
  plan::Plan p = examplePlan();
  plan::TensorPlan &t = p.tensors[0];
  // A list that says otherwise than the layout is what the accessor gives
  // (checkLayouts refuses such a plan; see below).
  t.regions.assign(8, Region({{0, 8}, {0, 16}}));
  t.regions[3] = llvm::None;
  Region r = {{1, 2}};
  EXPECT_FALSE(plan::getStoredRegion(p, t, 3, r));
  EXPECT_EQ(r, Region({{1, 2}})) << "left as it was";
  unsigned digits[] = {0, 3};
  EXPECT_EQ(plan::getStoredVolume(t, p.levels, digits), 0);
  ASSERT_TRUE(plan::getStoredRegion(p, t, 5, r));
  EXPECT_EQ(r, Region({{0, 8}, {0, 16}}));
  EXPECT_TRUE(plan::hasStoredRegions(t, 8));
  EXPECT_FALSE(plan::hasStoredRegions(t, 16));
  t.layout.reset();
  EXPECT_TRUE(plan::hasStoredRegions(t, 8));
  t.regions.clear();
  EXPECT_FALSE(plan::hasStoredRegions(t, 8)) << "neither list nor layout";
}

TEST(StoredRegionTest, CheckLayoutsRecordsShapesAndRefusesDisagreement) {
  plan::Plan p = examplePlan();
  p.tensors[0].shape.clear();
  int64_t shape[] = {8, 16};
  auto shapeOf = [&](unsigned) { return ArrayRef<int64_t>(shape); };
  ASSERT_FALSE(bool(plan::checkLayouts(p, 1, shapeOf)));
  EXPECT_TRUE(llvm::equal(p.tensors[0].shape, shape));
  EXPECT_TRUE(p.tensors[0].regions.empty()) << "no list is made";
  // A listed region that is not the layout's names the worker.
  for (unsigned w = 0; w != 8; ++w) {
    Region r;
    analysis::getLayoutRegion(shape, p.levels, *p.tensors[0].layout, w, r);
    p.tensors[0].regions.emplace_back(r);
  }
  ASSERT_FALSE(bool(plan::checkLayouts(p, 1, shapeOf)));
  p.tensors[0].regions[6] = Region({{4, 8}, {0, 4}});
  llvm::Error err = plan::checkLayouts(p, 1, shapeOf);
  ASSERT_TRUE(bool(err));
  std::string message = llvm::toString(std::move(err));
  EXPECT_NE(message.find("worker 6's region [[4,8],[0,4]] is not its "
                         "layout's [[4,8],[8,12]]"),
            std::string::npos)
      << message;
}

/// forEachStoredRegion gives, worker by worker in order, what
/// getStoredRegion gives each worker alone: on uneven parts (extents the
/// levels do not divide, some smaller than a level), a dimension split at
/// two levels, replicated levels, fewer steps than levels, and a list with
/// nulls.
TEST(StoredRegionTest, ForEachIsEveryWorkersRegion) {
  plan::Plan p;
  p.levels = {3, 2, 5, 2};
  p.workers = 60;
  const uint8_t R = plan::kReplicateDim;
  std::vector<std::vector<uint8_t>> layouts = {
      {0, 1, 2, 0}, {2, R, 0, 2}, {R, R, R, R}, {1, 1, 1, 1},
      {0, 2, R, 1}, {R, 0, 0, R}, {2, 1},       {}};
  for (unsigned i = 0, e = layouts.size(); i != e; ++i) {
    const std::vector<uint8_t> &layout = layouts[i];
    plan::TensorPlan t;
    t.name = "x";
    t.layout.emplace(layout.begin(), layout.end());
    t.shape = {7, 13, 4};
    unsigned next = 0;
    plan::forEachStoredRegion(t, p.levels, [&](unsigned w, const Region *r) {
      ASSERT_EQ(w, next++);
      ASSERT_NE(r, nullptr);
      Region expected;
      ASSERT_TRUE(plan::getStoredRegion(p, t, w, expected));
      EXPECT_EQ(*r, expected) << "worker " << w << " of layout " << i;
    });
    EXPECT_EQ(next, 60u);
  }
  // Listed regions, nulls included, as listed.
  plan::Plan q = examplePlan();
  plan::TensorPlan &t = q.tensors[0];
  for (unsigned w = 0; w != 8; ++w)
    t.regions.emplace_back(Region({{w, w + 1}, {0, 16}}));
  t.regions[3] = llvm::None;
  unsigned next = 0;
  plan::forEachStoredRegion(t, q.levels, [&](unsigned w, const Region *r) {
    ASSERT_EQ(w, next++);
    if (w == 3) {
      EXPECT_EQ(r, nullptr);
      return;
    }
    ASSERT_NE(r, nullptr);
    EXPECT_EQ(*r, Region({{w, w + 1}, {0, 16}}));
  });
  EXPECT_EQ(next, 8u);
}

/// forEachOpShare gives, worker by worker in order, computeOpShare's box
/// and regions (plan::forEachWorkerPart's walk with op steps): every op of
/// ResNet-18 (convolutions have 7 variables) under levels 3 x 2 x 2 with
/// steps that cycle through its strategies and replicate, so a variable is
/// split at two levels, unevenly, or at none.
TEST(StoredRegionTest, ForEachOpShareIsEveryWorkersShare) {
  LoadedModel m;
  ASSERT_TRUE(m.load("resnet18.json"));
  const SmallVector<unsigned, 3> levels = {3, 2, 2};
  unsigned checked = 0, sameBoxes = 0;
  for (const ProblemOp &op : m.problem->getOps()) {
    unsigned numSteps = op.getNumSteps();
    SmallVector<uint8_t, 3> steps;
    for (unsigned l = 0; l != levels.size(); ++l)
      steps.push_back(uint8_t((checked + l * (l + 1) / 2) % numSteps));
    unsigned next = 0;
    forEachOpShare(op, levels, steps,
                   [&](unsigned w, ArrayRef<Range> box,
                       const analysis::WorkerRegions &regions, bool same) {
                     ASSERT_EQ(w, next++);
                     SmallVector<unsigned, 3> digits;
                     plan::getWorkerDigits(levels, w, digits);
                     SmallVector<Range, 8> expectedBox;
                     analysis::WorkerRegions expected;
                     computeOpShare(op, levels, steps, digits, expectedBox,
                                    expected);
                     EXPECT_EQ(Region(box.begin(), box.end()),
                               Region(expectedBox.begin(), expectedBox.end()))
                         << "op " << checked << " worker " << w;
                     EXPECT_EQ(regions.output, expected.output);
                     EXPECT_EQ(regions.partial, expected.partial);
                     EXPECT_EQ(regions.inputs, expected.inputs);
                     sameBoxes += same;
                   });
    EXPECT_EQ(next, 12u);
    ++checked;
  }
  EXPECT_GT(checked, 100u);
  // Replicated levels do occur (a box the previous worker's).
  EXPECT_GT(sameBoxes, 0u);
}

class LayoutOnlyPlanTest : public testing::TestWithParam<ModelCase> {};

/// A planned plan holds layouts alone, and costs the same (bytes, resident
/// and predicted peak bytes, per op) as the same plan with every worker's
/// region listed.
TEST_P(LayoutOnlyPlanTest, CostsAsTheListedPlan) {
  const ModelCase &c = GetParam();
  LoadedModel m;
  ASSERT_TRUE(m.load(c.model));
  const std::unique_ptr<PlanningProblem> &problem = m.problem;
  auto p = m.plan(c.workers);
  ASSERT_TRUE(bool(p)) << llvm::toString(p.takeError());
  ASSERT_EQ(p->workers, c.workers);

  plan::Plan listed = *p;
  for (unsigned t = 0, e = p->tensors.size(); t != e; ++t) {
    const plan::TensorPlan &tensor = p->tensors[t];
    EXPECT_TRUE(tensor.regions.empty()) << tensor.name;
    ASSERT_TRUE(tensor.layout) << tensor.name;
    plan::TensorPlan &l = listed.tensors[t];
    l.layout.reset();
    l.shape.clear();
    for (unsigned w = 0; w != c.workers; ++w) {
      Region r;
      analysis::getLayoutRegion(problem->getShape(t), p->levels,
                                *tensor.layout, w, r);
      l.regions.emplace_back(r);
    }
  }
  auto compact = evaluatePlan(*problem, *p);
  ASSERT_TRUE(bool(compact)) << llvm::toString(compact.takeError());
  auto full = evaluatePlan(*problem, listed);
  ASSERT_TRUE(bool(full)) << llvm::toString(full.takeError());
  EXPECT_GT(full->commBytes, 0);
  EXPECT_EQ(compact->commBytes, full->commBytes);
  EXPECT_EQ(compact->residentBytesPerWorker, full->residentBytesPerWorker);
  EXPECT_EQ(compact->largestBuffersPerWorker, full->largestBuffersPerWorker);
  EXPECT_EQ(compact->peakBytesPerWorker, full->peakBytesPerWorker);
  EXPECT_EQ(compact->nextStepBytes, full->nextStepBytes);
  ASSERT_EQ(compact->ops.size(), full->ops.size());
  for (unsigned i = 0, e = full->ops.size(); i != e; ++i) {
    EXPECT_EQ(compact->ops[i].fetchBytes, full->ops[i].fetchBytes) << i;
    EXPECT_EQ(compact->ops[i].produceBytes, full->ops[i].produceBytes) << i;
  }
  // The planner's recorded numbers are these.
  EXPECT_EQ(p->commBytes, full->commBytes);
  EXPECT_EQ(p->peakBytesPerWorker, full->peakBytesPerWorker);
}

INSTANTIATE_TEST_SUITE_P(
    Models, LayoutOnlyPlanTest,
    testing::Values(ModelCase{"gpt-2l.json", 8},
                    ModelCase{"resnet18.json", 4},
                    ModelCase{"mlp.json", 16}),
    getModelCaseName);

} // namespace
