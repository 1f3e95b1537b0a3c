//===- InPlaceUpdatesTest.cpp - Next values over what they replace -------===//
//
// Tests the in-place rule (InPlaceUpdates.h) on a two-worker optimizer
// step: m2 = scale(m) and w2 = scale(w), each the next value of what it
// reads. Both executors and predictPeaks, with the rule and without it
// (ExecutablePlan::inPlaceUpdates), and with the ops' reads marked
// pointwise or not (OpInfo::pointwise: computed straight into the
// replaced buffer or aside), give the peaks worked out by hand below, so
// the saving is what the rule promises; both executors count the values
// computed straight into what they replace; and over three steps the
// parameters and their next values hold the right values either way.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/DeviceExecutor.h"
#include "tofu/Runtime/InPlaceUpdates.h"
#include "tofu/Runtime/Schedule.h"
#include "tofu/Runtime/StepMemory.h"
#include "BuiltBoxes.h"
#include "TestKernels.h"

#include "gtest/gtest.h"

#include <chrono>

using namespace tofu::runtime;
using namespace tofu::runtime::test;

namespace {

/// m [4, 8] (state) and w [4, 8] (parameter), stored by rows on two
/// workers (64 bytes each per worker); op 0 computes m2 = scale(m), op 1
/// w2 = scale(w), both by rows. m2 is stored by rows; w2 by rows too, or
/// by columns when `w2ByColumns` (then w's next value changes layout).
ExecutablePlan makeUpdatePlan(bool w2ByColumns, bool inPlace,
                              bool pointwise = false) {
  ExecutablePlan plan;
  plan.workers = 2;
  plan.inPlaceUpdates = inPlace;
  auto rows = [](unsigned c) { return box({2 * c, 0}, {2 * c + 2, 8}); };
  auto cols = [](unsigned c) { return box({0, 4 * c}, {4, 4 * c + 4}); };
  auto tensor = [&](std::string name, bool byColumns) {
    TensorInfo t;
    t.name = std::move(name);
    t.shape = {4, 8};
    t.persistent = true;
    for (unsigned c = 0; c != 2; ++c)
      t.stored.push_back(byColumns ? cols(c) : rows(c));
    plan.tensors.push_back(t);
  };
  tensor("m", false);
  tensor("w", false);
  tensor("m2", false);
  tensor("w2", w2ByColumns);
  plan.tensors[0].graphInput = plan.tensors[1].graphInput = true;
  plan.tensors[2].updates = 0;
  plan.tensors[3].updates = 1;
  for (unsigned i = 0; i != 2; ++i) {
    OpInfo op;
    op.name = i ? "scale-w" : "scale-m";
    op.kernel = 1;
    op.inputs = {i};
    op.output = 2 + i;
    if (pointwise)
      op.pointwise = {true};
    for (unsigned c = 0; c != 2; ++c)
      op.workers.push_back(OpShare{rows(c), {rows(c)}, rows(c)});
    plan.ops.push_back(op);
  }
  return plan;
}

/// The peaks of both executors over three steps, each equal to
/// predictPeaks' (worker by worker) and the same on both workers, each
/// step computing `direct` next values straight into what they replace;
/// and m and w after the steps: three scalings of their first values.
std::int64_t runThreeSteps(const ExecutablePlan &plan, unsigned direct = 0) {
  KernelTable kernels = makeChainKernels();
  auto transport = createThreadTransport(2, std::chrono::seconds(10));
  Executor cpu(plan, kernels, *transport);
  auto device = createHostDevice(2, kernels);
  auto communicator = createHostCommunicator(*device);
  DeviceExecutor gpu(plan, *device, *communicator);
  HostTensor m = iota({4, 8}, 0.5f), w = iota({4, 8}, 0.25f);
  std::vector<std::int64_t> peaks(2, 0);
  for (StepExecutor *e : {static_cast<StepExecutor *>(&cpu),
                          static_cast<StepExecutor *>(&gpu)}) {
    e->setInput(0, m);
    e->setInput(1, w);
    for (unsigned s = 0; s != 3; ++s) {
      StepResult r = e->runStep();
      EXPECT_EQ(e->getNumDirectUpdates(), direct) << "step " << s;
      for (unsigned k = 0; k != 2; ++k)
        peaks[k] = std::max(peaks[k], r.peakBytesPerWorker[k]);
    }
    // The parameters and their next values after three steps.
    for (unsigned t = 0; t != 4; ++t) {
      HostTensor value = e->gather(t);
      const HostTensor &first = t % 2 ? w : m;
      for (unsigned i = 0; i != 32; ++i) {
        float x, expected;
        std::memcpy(&expected, first.data.data() + 4 * i, 4);
        for (unsigned s = 0; s != 3; ++s)
          expected = 0.5f * expected - 1.0f;
        std::memcpy(&x, value.data.data() + 4 * i, 4);
        EXPECT_EQ(x, expected) << plan.tensors[t].name << " element " << i;
      }
    }
  }
  std::vector<TensorMemory> tensors(4);
  tensors[0].use = tensors[2].use = MemoryUse::OptimizerState;
  tensors[1].use = tensors[3].use = MemoryUse::Parameter;
  std::vector<WorkerPeak> predicted =
      predictPeaks(plan, buildSchedule(plan), tensors, 3);
  BuiltBoxes boxes(plan);
  std::vector<WorkerPeak> fromBoxes = predictPeaks(plan, 2, boxes, tensors, 3);
  for (unsigned k = 0; k != 2; ++k) {
    EXPECT_EQ(predicted[k].bytes, peaks[k]) << "worker " << k;
    EXPECT_EQ(fromBoxes[k].bytes, peaks[k]) << "worker " << k;
    // Worker 1 mirrors worker 0.
    EXPECT_EQ(peaks[k], peaks[0]) << "worker " << k;
  }
  return peaks[0];
}

TEST(InPlaceUpdatesTest, TheRuleNeedsTheSameBoxAndADeadOldValue) {
  ExecutablePlan plan = makeUpdatePlan(/*w2ByColumns=*/true, true);
  std::vector<int> lastUse = computeLastUse(plan);
  for (unsigned w = 0; w != 2; ++w) {
    std::vector<bool> inPlace = getInPlaceUpdates(plan, lastUse, w);
    EXPECT_EQ(inPlace, (std::vector<bool>{false, false, true, false}));
  }
  // A reader of m after m2's producer keeps m2 out of m's buffer; w2 may
  // still go over w, which no op reads now.
  ExecutablePlan late = makeUpdatePlan(false, true);
  late.ops[1].inputs = {0};
  std::vector<bool> candidates = getInPlaceCandidates(
      late, computeLastUse(late), [](unsigned) { return 4u; });
  EXPECT_EQ(candidates, (std::vector<bool>{false, false, false, true}));
  // Nor does a next value of another element size.
  candidates = getInPlaceCandidates(plan, lastUse, [](unsigned t) {
    return t == 2 ? 2u : 4u;
  });
  EXPECT_EQ(candidates, (std::vector<bool>{false, false, false, true}));
  plan.inPlaceUpdates = false;
  EXPECT_EQ(getInPlaceUpdates(plan, lastUse, 0),
            (std::vector<bool>(4, false)));
}

// Both next values keep their parameters' layout. Per worker (64 bytes a
// box): without the rule, m and w (128), m2 and w2 computed into new
// buffers (256), then after the last op a new buffer for each parameter's
// next value (384: six copies). With it, each op computes into a workspace
// (m, w and one workspace: 192) whose result is then written into the
// parameter's buffer, and the workspace is released (128); after the last
// op nothing is allocated. The peak drops by three copies, 192 bytes.
TEST(InPlaceUpdatesTest, SameLayoutSavesThreeCopies) {
  std::int64_t without = runThreeSteps(makeUpdatePlan(false, false));
  std::int64_t with = runThreeSteps(makeUpdatePlan(false, true));
  EXPECT_EQ(without, 384);
  EXPECT_EQ(with, 192);
}

// The ops read m and w only at the element they write (pointwise): each
// next value is computed straight into the buffer of what it replaces, so
// not even a workspace is allocated. The peak is m and w, 128 bytes, and
// each step computes four values so (two per worker); without the rule
// nothing changes (384).
TEST(InPlaceUpdatesTest, PointwiseUpdatesNeedNoWorkspace) {
  EXPECT_EQ(runThreeSteps(makeUpdatePlan(false, true, true), 4), 128);
  EXPECT_EQ(runThreeSteps(makeUpdatePlan(false, false, true)), 384);
  ExecutablePlan aside = makeUpdatePlan(false, true, true);
  aside.directUpdates = false;
  EXPECT_EQ(runThreeSteps(aside), 192);
}

// Where the kernel may write over what it reads elsewhere, it does not.
TEST(InPlaceUpdatesTest, OnlyPointwiseReadsOfTheReplacedValue) {
  ExecutablePlan plan = makeUpdatePlan(false, true, true);
  std::vector<int> lastUse = computeLastUse(plan);
  std::vector<bool> inPlace = getInPlaceUpdates(plan, lastUse, 0);
  EXPECT_TRUE(writesOverReplaced(plan, 0, 0, inPlace));
  EXPECT_TRUE(writesOverReplaced(plan, 1, 0, inPlace));
  EXPECT_TRUE(getOutputPlace(plan, 1, 0, inPlace).direct);
  // Op 1 reads w at other elements: w2 is computed aside.
  plan.ops[1].pointwise = {false};
  EXPECT_FALSE(writesOverReplaced(plan, 1, 0, inPlace));
  EXPECT_FALSE(getOutputPlace(plan, 1, 0, inPlace).direct);
  // ... unless it reads a copy of w (a box other than the stored one).
  plan.ops[1].workers[0].inputs[0] = box({0, 0}, {4, 8});
  EXPECT_TRUE(writesOverReplaced(plan, 1, 0, inPlace));
  // Op 0, which fusion may run inside op 1, reads w at other elements.
  plan = makeUpdatePlan(false, true, true);
  plan.ops[0].inputs = {1};
  plan.ops[0].pointwise = {false};
  EXPECT_FALSE(writesOverReplaced(plan, 1, 0, inPlace));
  // A next value not written in place, or the switch off.
  plan = makeUpdatePlan(false, true, true);
  EXPECT_FALSE(writesOverReplaced(plan, 1, 0, {false, false, true, false}));
  // Not written in place, w2 goes straight into its own stored box.
  EXPECT_TRUE(getOutputPlace(plan, 1, 0, {false, false, true, false}).direct);
  plan.directUpdates = false;
  EXPECT_FALSE(writesOverReplaced(plan, 0, 0, inPlace));
}

// w2 stored by columns: only m2 is written in place. Without the rule:
// m, w (128); m2 new (192); w2's rows computed into a workspace (256), w2
// allocated (320), its delivery staged one 32-byte message at a time
// (352); the workspace released (256); after the last op new buffers for
// m and w (384) and the next step's 32-byte messages (416). With it: m2
// over m through a workspace (back to 128), w2's workspace (192, reusing
// m2's), w2 (256), staging (288), the workspace released (192); after the
// last op only w's new buffer (256) and the messages (288). Saved: m2's
// buffer and m's new one, 128 bytes.
TEST(InPlaceUpdatesTest, ChangedLayoutStillGetsItsBuffers) {
  std::int64_t without = runThreeSteps(makeUpdatePlan(true, false));
  std::int64_t with = runThreeSteps(makeUpdatePlan(true, true));
  EXPECT_EQ(without, 416);
  EXPECT_EQ(with, 288);
  // Pointwise, m2 goes straight over m on both workers; w2 still needs its
  // workspace at the peak, which stays 288.
  EXPECT_EQ(runThreeSteps(makeUpdatePlan(true, true, true), 2), 288);
}

} // namespace
