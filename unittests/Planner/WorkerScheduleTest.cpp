//===- WorkerScheduleTest.cpp - One worker's schedule against all ---------===//
//
// Tests that runtime::buildWorkerSchedule, what one MPI rank builds, holds
// exactly the pieces of the whole schedule (runtime::buildSchedule) whose
// source or destination is its worker, in the same order, worker by worker,
// on searched plans of the repository's models at even and uneven K: so
// two ranks list the pieces between them alike and together move the
// plan's bytes. Each worker's schedule is built from the plan as its rank
// lowers it (buildExecutablePlan with that worker: the whole plan's entries
// but the other workers' iteration boxes, left empty).
//
//===----------------------------------------------------------------------===//

#include "Planner/PlannerTestUtils.h"
#include "tofu/Planner/CostModel.h"
#include "tofu/Planner/Executable.h"
#include "tofu/Runtime/Error.h"
#include "tofu/Runtime/Schedule.h"

#include "gtest/gtest.h"

using namespace tofu;
using namespace tofu::planner;
using runtime::Piece;

namespace {

/// The pieces of `all` whose source or destination is `w`.
std::vector<Piece> involving(const std::vector<Piece> &all, unsigned w) {
  std::vector<Piece> out;
  for (const Piece &piece : all)
    if (piece.src == w || piece.dst == w)
      out.push_back(piece);
  return out;
}

/// "src->dst [lo,hi)x... slot" per piece, for readable failures.
std::vector<std::string> describe(const std::vector<Piece> &pieces) {
  std::vector<std::string> out;
  for (const Piece &piece : pieces)
    out.push_back(std::to_string(piece.src) + "->" + std::to_string(piece.dst) +
                  " " + piece.box.format() + " slot " +
                  std::to_string(piece.slot));
  return out;
}

/// models/`model` loaded into `m`, planned for `workers` into `p` and
/// lowered as the runtime runs it into `exec`; a failure names the step.
testing::AssertionResult lower(LoadedModel &m, const char *model,
                               unsigned workers, plan::Plan &p,
                               runtime::ExecutablePlan &exec) {
  if (testing::AssertionResult loaded = m.load(model); !loaded)
    return loaded;
  auto planned = m.plan(workers);
  if (!planned)
    return testing::AssertionFailure() << llvm::toString(planned.takeError());
  p = std::move(*planned);
  std::vector<SmallVector<uint8_t, 4>> steps;
  if (llvm::Error err = resolvePlanSteps(*m.problem, p, steps))
    return testing::AssertionFailure() << llvm::toString(std::move(err));
  auto lowered =
      buildExecutablePlan(*m.problem, p, steps, UnexecutedTypes::Placeholder);
  if (!lowered)
    return testing::AssertionFailure() << llvm::toString(lowered.takeError());
  exec = std::move(*lowered);
  return testing::AssertionSuccess();
}

class WorkerScheduleTest : public testing::TestWithParam<ModelCase> {};

TEST_P(WorkerScheduleTest, HoldsTheWorkersPiecesOfTheWholeSchedule) {
  const ModelCase &c = GetParam();
  LoadedModel m;
  plan::Plan p;
  runtime::ExecutablePlan exec;
  ASSERT_TRUE(lower(m, c.model, c.workers, p, exec));
  runtime::Schedule whole = runtime::buildSchedule(exec);
  EXPECT_EQ(whole.worker, -1);
  ASSERT_GT(whole.getTotalBytes(), 0);

  std::vector<SmallVector<uint8_t, 4>> steps;
  ASSERT_FALSE(bool(resolvePlanSteps(*m.problem, p, steps)));
  int64_t sent = 0;
  for (unsigned w = 0; w != c.workers; ++w) {
    auto rank = buildExecutablePlan(*m.problem, p, steps,
                                    UnexecutedTypes::Placeholder, int(w));
    ASSERT_TRUE(bool(rank)) << llvm::toString(rank.takeError());
    // The rank's plan: the whole plan's boxes, but only worker w's
    // iteration boxes.
    ASSERT_EQ(rank->tensors.size(), exec.tensors.size());
    for (unsigned t = 0, e = exec.tensors.size(); t != e; ++t)
      EXPECT_EQ(rank->tensors[t].stored, exec.tensors[t].stored)
          << "tensor " << t << " worker " << w;
    ASSERT_EQ(rank->ops.size(), exec.ops.size());
    for (unsigned i = 0, e = exec.ops.size(); i != e; ++i)
      for (unsigned v = 0; v != c.workers; ++v) {
        const runtime::OpShare &a = exec.ops[i].workers[v],
                               &b = rank->ops[i].workers[v];
        EXPECT_EQ(b.inputs, a.inputs) << "op " << i << " worker " << v;
        EXPECT_EQ(b.output, a.output) << "op " << i << " worker " << v;
        if (v == w)
          EXPECT_EQ(b.iteration, a.iteration) << "op " << i;
        else
          EXPECT_EQ(b.iteration.getRank(), 0u) << "op " << i << " worker " << v;
      }
    runtime::Schedule mine = runtime::buildWorkerSchedule(*rank, w);
    EXPECT_EQ(mine.worker, int(w));
    ASSERT_EQ(mine.ops.size(), whole.ops.size());
    for (unsigned i = 0, e = whole.ops.size(); i != e; ++i) {
      const runtime::OpSchedule &a = whole.ops[i], &b = mine.ops[i];
      EXPECT_EQ(describe(b.fetch), describe(involving(a.fetch, w)))
          << "op " << i << " worker " << w;
      EXPECT_EQ(describe(b.reduce), describe(involving(a.reduce, w)))
          << "op " << i << " worker " << w;
      EXPECT_EQ(describe(b.deliver), describe(involving(a.deliver, w)))
          << "op " << i << " worker " << w;
      for (const std::vector<Piece> *phase : {&b.fetch, &b.reduce, &b.deliver})
        for (const Piece &piece : *phase)
          if (piece.src == w && piece.dst != w) {
            unsigned t = phase == &b.fetch ? exec.ops[i].inputs[piece.slot]
                                           : exec.ops[i].output;
            sent += piece.box.getVolume() *
                    runtime::getElementSize(exec.tensors[t].type);
          }
    }
    EXPECT_EQ(describe(mine.nextStep), describe(involving(whole.nextStep, w)))
        << "worker " << w;
    for (const Piece &piece : mine.nextStep)
      if (piece.src == w && piece.dst != w)
        sent += piece.box.getVolume() *
                runtime::getElementSize(exec.tensors[piece.slot].type);
  }
  // What the workers send in their own schedules is the plan's bytes.
  EXPECT_EQ(sent, whole.getTotalBytes());
  auto report = evaluatePlan(*m.problem, p);
  ASSERT_TRUE(bool(report)) << llvm::toString(report.takeError());
  EXPECT_EQ(sent, report->commBytes);
}

INSTANTIATE_TEST_SUITE_P(
    Models, WorkerScheduleTest,
    testing::Values(ModelCase{"mlp.json", 3}, ModelCase{"mlp.json", 16},
                    ModelCase{"gpt-2l.json", 5}, ModelCase{"gpt-2l.json", 8},
                    ModelCase{"rnn-2l.json", 7}, ModelCase{"resnet18.json", 6}),
    getModelCaseName);

TEST(WorkerScheduleErrorTest, AWorkerOutsideThePlanIsAnError) {
  LoadedModel m;
  plan::Plan p;
  runtime::ExecutablePlan exec;
  ASSERT_TRUE(lower(m, "mlp.json", 2, p, exec));
  try {
    runtime::buildWorkerSchedule(exec, 2);
    FAIL() << "worker 2 of 2 was accepted";
  } catch (const runtime::RuntimeError &e) {
    EXPECT_STREQ(e.what(), "worker 2 is not one of the plan's 2");
  }
}

} // namespace
