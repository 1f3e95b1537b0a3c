//===- FusionTest.cpp - Chains of element-wise ops run as one -------------===//
//
// Tests the executor's fusion of element-wise chains (Fusion.h) on one
// worker: the links findFusableLinks picks, including its refusal of an op
// that reads, other than element for element, a value a later op of its
// chain writes over in place; a chain from a GEMM (FusionHints::
// epilogueLength), which ends with its epilogue kernels and writes over
// none of the GEMM's inputs in place; and a chain whose middle op has an input
// dying at it (kept for the chain's last op, a fresh intermediate's buffer
// released in its place), run fused and unfused: the same values, the same
// peak as predictPeaks', and the chain counted with its three ops.
//
//===----------------------------------------------------------------------===//

#include "tofu/Runtime/Fusion.h"
#include "tofu/Runtime/Schedule.h"
#include "tofu/Runtime/StepMemory.h"
#include "TestKernels.h"

#include "gtest/gtest.h"

#include <algorithm>
#include <chrono>
#include <cstring>

using namespace tofu::runtime;
using namespace tofu::runtime::test;

namespace {

constexpr std::int64_t Rows = 64, Cols = 32;

void add(const KernelCall &call) {
  for (std::int64_t i = call.varLo[0]; i < call.varHi[0]; ++i)
    for (std::int64_t j = call.varLo[1]; j < call.varHi[1]; ++j)
      at(call.output, i, j) = at(call.inputs[0], i, j) + at(call.inputs[1], i, j);
}

/// Kernel 0 scales (scale in TestKernels.h), kernel 1 adds; both
/// element-wise, reading every input at the output's own index.
KernelTable makeKernels() {
  return KernelTable({KernelInfo{"scale", scale, nullptr, 2},
                      KernelInfo{"add", add, nullptr, 2}});
}
FusionHints makeHints() {
  FusionHints hints;
  hints.elementwise = {true, true};
  hints.pointwise = {{true}, {true, true}};
  return hints;
}

/// One worker, every tensor [Rows, Cols] stored whole. `inputs` are the
/// graph inputs (persistent); ops are {kernel, inputs}, each writing a new
/// tensor, persistent where `persistent` says.
ExecutablePlan makePlan(unsigned inputs,
                        std::vector<std::pair<unsigned, std::vector<unsigned>>> ops,
                        std::vector<unsigned> persistent) {
  ExecutablePlan plan;
  plan.workers = 1;
  Box whole = box({0, 0}, {Rows, Cols});
  auto tensor = [&](std::string name, bool keep) {
    TensorInfo t;
    t.name = std::move(name);
    t.shape = {Rows, Cols};
    t.persistent = keep;
    t.stored = {whole};
    plan.tensors.push_back(t);
  };
  for (unsigned t = 0; t != inputs; ++t) {
    tensor("in" + std::to_string(t), true);
    plan.tensors.back().graphInput = true;
  }
  for (unsigned i = 0; i != ops.size(); ++i) {
    unsigned out = plan.tensors.size();
    tensor("t" + std::to_string(out),
           std::find(persistent.begin(), persistent.end(), out) !=
               persistent.end());
    OpInfo op;
    op.name = "op" + std::to_string(i);
    op.kernel = ops[i].first;
    op.inputs = ops[i].second;
    op.output = out;
    op.pointwise.assign(op.inputs.size(), true);
    op.workers.push_back(
        OpShare{whole, std::vector<Box>(op.inputs.size(), whole), whole});
    plan.ops.push_back(op);
  }
  return plan;
}

std::vector<bool> links(const ExecutablePlan &plan) {
  return findFusableLinks(plan, buildSchedule(plan), makeHints(),
                          computeLastUse(plan));
}

// x, y inputs; op0 u = scale(x), read two ops later; op1 t1 = scale(y);
// op2 t2 = add(t1, u), where u dies; op3 out = scale(t2). Links: op1 and
// op2 (op0's output is not read by op1).
ExecutablePlan makeChainPlan() {
  return makePlan(2, {{0, {0}}, {0, {1}}, {1, {3, 2}}, {0, {4}}}, {5});
}

TEST(FusionTest, ConsecutiveLinksFormAChain) {
  EXPECT_EQ(links(makeChainPlan()),
            (std::vector<bool>{false, true, true, false}));
  // An intermediate with a second reader is no link.
  ExecutablePlan shared =
      makePlan(1, {{0, {0}}, {0, {1}}, {1, {2, 1}}}, {3});
  EXPECT_EQ(links(shared), (std::vector<bool>{false, true, false}));
}

TEST(FusionTest, NoLinkReadsWhatALaterOpOfItsChainWritesOver) {
  // op0 a = scale(p), op1 b = scale(a), op2 p2 = add(b, p): p2 is p's next
  // value, which op2 may write over p. op0 reads p: a link only if it reads
  // p element for element (op1 reads no p; op2's own read is the in-place
  // rule's).
  for (bool pointwise : {true, false}) {
    ExecutablePlan plan = makePlan(1, {{0, {0}}, {0, {1}}, {1, {2, 0}}}, {3});
    plan.tensors[3].updates = 0;
    plan.ops[0].pointwise = {pointwise};
    EXPECT_EQ(links(plan), (std::vector<bool>{pointwise, true, false}))
        << (pointwise ? "pointwise" : "not pointwise");
  }
}

TEST(FusionTest, AGemmsChainEndsWithItsEpilogueAndKeepsItsInputs) {
  // Kernel 2 stands for a GEMM with epilogue kernels up to 3 ops
  // (FusionHints::epilogueLength). op0 g = gemm(x, y), op1 s = scale(g),
  // op2 o = add(s, x), op3 q = scale(o): links op0 and op1; op2 -> op3,
  // an element-wise link, would make the GEMM's chain 4 ops long.
  FusionHints hints = makeHints();
  hints.elementwise.push_back(false);
  hints.pointwise.push_back({false, false});
  hints.epilogueLength = {1, 1, 3};
  auto gemmLinks = [&](const ExecutablePlan &plan) {
    return findFusableLinks(plan, buildSchedule(plan), hints,
                            computeLastUse(plan));
  };
  ExecutablePlan plan =
      makePlan(2, {{2, {0, 1}}, {0, {2}}, {1, {3, 0}}, {0, {4}}}, {5});
  EXPECT_EQ(gemmLinks(plan), (std::vector<bool>{true, true, false, false}));
  // Without epilogue kernels the GEMM starts no chain.
  hints.epilogueLength.clear();
  EXPECT_EQ(gemmLinks(plan), (std::vector<bool>{false, true, true, false}));
  // o written over y in place: the GEMM, which reads y after its
  // epilogue's stores, starts no chain (o, y's next value, ends any).
  hints.epilogueLength = {1, 1, 3};
  plan.tensors[4].updates = 1;
  EXPECT_EQ(gemmLinks(plan), (std::vector<bool>{false, true, false, false}));
  // o written over x, read by the GEMM and by op2 itself, likewise.
  plan.tensors[4].updates = 0;
  EXPECT_EQ(gemmLinks(plan), (std::vector<bool>{false, true, false, false}));
}

TEST(FusionTest, AGemmsEpilogueRunsAtItWhereNothingBetweenNotices) {
  // Kernel 2 a GEMM with epilogue kernels up to 3 ops. x, y, w inputs;
  // op0 g = gemm(x, y); op1 u = scale(x); op2 s = scale(g); op3 o =
  // add(w, s), w's next value: the epilogue g, s, o runs at op0.
  FusionHints hints = makeHints();
  hints.elementwise.push_back(false);
  hints.pointwise.push_back({false, false});
  hints.epilogueLength = {1, 1, 3};
  auto epilogueAt = [&](const ExecutablePlan &plan) {
    return findEpiloguesAtGemm(plan, buildSchedule(plan), hints)[0];
  };
  auto make = [](std::vector<unsigned> op1, std::vector<unsigned> op2) {
    ExecutablePlan plan = makePlan(
        3, {{2, {0, 1}}, {0, op1}, {op2.size() == 1 ? 0u : 1u, op2},
            {1, {2, 5}}},
        {6});
    plan.tensors[6].updates = 2;
    return plan;
  };
  EXPECT_EQ(epilogueAt(make({0}, {3})), (std::vector<unsigned>{0, 2, 3}));
  // op1 reads w, which the epilogue writes over at op0.
  EXPECT_TRUE(epilogueAt(make({2}, {3})).empty());
  // op2 reads u, computed after the GEMM.
  EXPECT_TRUE(epilogueAt(make({0}, {3, 4})).empty());
  // o replaces nothing: its buffer does not exist at op0.
  ExecutablePlan fresh = make({0}, {3});
  fresh.tensors[6].updates = -1;
  EXPECT_TRUE(epilogueAt(fresh).empty());
  // Consecutive ops are findFusableLinks' chain, run at its last op.
  ExecutablePlan consecutive =
      makePlan(3, {{2, {0, 1}}, {0, {3}}, {1, {2, 4}}}, {5});
  consecutive.tensors[5].updates = 2;
  EXPECT_TRUE(epilogueAt(consecutive).empty());
}

TEST(FusionTest, AChainKeepsAnInputDyingInItAndThePeak) {
  ExecutablePlan plan = makeChainPlan();
  KernelTable kernels = makeKernels();
  std::vector<float> values[2];
  std::int64_t peaks[2];
  for (bool fuse : {false, true}) {
    auto transport = createThreadTransport(1, std::chrono::seconds(10));
    Executor executor(plan, kernels, *transport);
    if (fuse)
      executor.setFusion(makeHints());
    executor.setInput(0, iota({Rows, Cols}, 0.5f));
    executor.setInput(1, iota({Rows, Cols}, 0.25f));
    std::int64_t peak = 0;
    for (unsigned s = 0; s != 2; ++s)
      peak = std::max(peak, executor.runStep().peakBytesPerWorker[0]);
    EXPECT_EQ(executor.getNumFused(), fuse ? 1u : 0u);
    EXPECT_EQ(executor.getNumFusedOps(), fuse ? 3u : 0u);
    HostTensor out = executor.gather(5);
    values[fuse].resize(Rows * Cols);
    std::memcpy(values[fuse].data(), out.data.data(), out.data.size());
    peaks[fuse] = peak;
  }
  EXPECT_EQ(values[0], values[1]);
  // Element 8: x = -1, u = -1.5; y = -0.5, t1 = -1.25; t2 = -2.75;
  // out = -2.375 (iota: scale * (i % 7 - 3)).
  EXPECT_EQ(values[1][8], -2.375f);
  EXPECT_EQ(peaks[0], peaks[1]);
  std::vector<TensorMemory> tensors(plan.tensors.size());
  std::vector<WorkerPeak> predicted =
      predictPeaks(plan, buildSchedule(plan), tensors, 2);
  EXPECT_EQ(predicted[0].bytes, peaks[1]);
}

} // namespace
