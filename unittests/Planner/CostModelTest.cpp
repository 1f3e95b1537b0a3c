//===- CostModelTest.cpp - The cost terms against hand-computed values ----===//
//
// Each term of comm_bytes (docs/CostModel.md) on regions small enough to
// count by hand, then evaluatePlan on tiny graphs with plans written out
// region by region: the expected numbers are worked out in the comments,
// element by element, never computed by the code under test.
//
//===----------------------------------------------------------------------===//

#include "Graph/GraphTestUtils.h"
#include "tofu/Planner/CostModel.h"

#include "gtest/gtest.h"

using namespace tofu;
using namespace tofu::planner;
using analysis::Range;
using analysis::Region;

namespace {

/// A region from [lo, hi) pairs, one per dimension.
Region box(std::initializer_list<Range> ranges) { return Region(ranges); }

//===----------------------------------------------------------------------===//
// countFetched: |read| - |read intersect held|.
//===----------------------------------------------------------------------===//

TEST(CountFetchedTest, NothingHeldFetchesEverything) {
  // A 3x4 read, nothing stored: 12 elements.
  EXPECT_EQ(countFetched(box({{0, 3}, {0, 4}}), nullptr), 12);
}

TEST(CountFetchedTest, OverlapIsNotFetched) {
  // Read rows 0-3, columns 0-3 (16); held rows 2-5, columns 1-7: the
  // overlap is rows 2-3, columns 1-3 = 2 x 3 = 6; fetched 16 - 6 = 10.
  Region held = box({{2, 6}, {1, 8}});
  EXPECT_EQ(countFetched(box({{0, 4}, {0, 4}}), &held), 10);
  // Disjoint: all 16; contained: none.
  Region far = box({{10, 12}, {0, 4}});
  EXPECT_EQ(countFetched(box({{0, 4}, {0, 4}}), &far), 16);
  Region all = box({{0, 8}, {0, 8}});
  EXPECT_EQ(countFetched(box({{0, 4}, {0, 4}}), &all), 0);
}

TEST(CountFetchedTest, EmptyReadsAndScalars) {
  Region held = box({{0, 4}});
  EXPECT_EQ(countFetched(box({{2, 2}}), &held), 0);
  EXPECT_EQ(countFetched(box({{2, 2}}), nullptr), 0);
  // A scalar is one element: fetched unless held.
  Region scalar;
  EXPECT_EQ(countFetched(Region(), nullptr), 1);
  EXPECT_EQ(countFetched(Region(), &scalar), 0);
}

//===----------------------------------------------------------------------===//
// countProduced: per element e, with D(e) the workers storing it and S(e)
// those computing it: |D| - |D n S| if final; (|S| - 1) + |D| - [D n S
// nonempty] if partial.
//===----------------------------------------------------------------------===//

TEST(CountProducedTest, SplitOutputStoredWhereComputed) {
  // Rows 0-3 and 4-7 of an 8-vector, each stored where computed: 0.
  SmallVector<Region, 2> computed = {box({{0, 4}}), box({{4, 8}})};
  Region h0 = box({{0, 4}}), h1 = box({{4, 8}});
  SmallVector<HeldRegion, 2> held = {&h0, &h1};
  EXPECT_EQ(countProduced(computed, held, false, 1), 0);
}

TEST(CountProducedTest, ReplicatedDestinations) {
  // Computed split in halves, stored whole on both workers: every element
  // has D = {0, 1} and S = one of them, 1 transfer each: 8.
  SmallVector<Region, 2> computed = {box({{0, 4}}), box({{4, 8}})};
  Region whole = box({{0, 8}});
  SmallVector<HeldRegion, 2> held = {&whole, &whole};
  EXPECT_EQ(countProduced(computed, held, false, 1), 8);
  // Three workers store it whole, worker 0 alone computes it: D has 3
  // workers, S = {0}: 2 transfers per element, 16.
  SmallVector<Region, 3> one = {box({{0, 8}}), box({{0, 0}}), box({{0, 0}})};
  SmallVector<HeldRegion, 3> three = {&whole, &whole, &whole};
  EXPECT_EQ(countProduced(one, three, false, 1), 16);
  // Computed by workers 0 and 1 alike, half of it stored by worker 2
  // alone: one transfer per stored element, 4.
  SmallVector<Region, 3> twice = {box({{0, 8}}), box({{0, 8}}), box({{0, 0}})};
  Region firstHalf = box({{0, 4}});
  SmallVector<HeldRegion, 3> onlyW2 = {nullptr, nullptr, &firstHalf};
  EXPECT_EQ(countProduced(twice, onlyW2, false, 1), 4);
}

TEST(CountProducedTest, PartialOutputsStoredSplit) {
  // Both workers hold partial values of all 8 elements (a reduce step);
  // stored in halves: |S| = 2, |D| = 1, D in S: (2 - 1) + 1 - 1 = 1 per
  // element, 8 (a reduce-scatter).
  SmallVector<Region, 2> computed = {box({{0, 8}}), box({{0, 8}})};
  Region h0 = box({{0, 4}}), h1 = box({{4, 8}});
  SmallVector<HeldRegion, 2> held = {&h0, &h1};
  EXPECT_EQ(countProduced(computed, held, true, 1), 8);
  // Stored whole on both: (2 - 1) + 2 - 1 = 2 per element, 16 (an
  // all-reduce).
  Region whole = box({{0, 8}});
  SmallVector<HeldRegion, 2> both = {&whole, &whole};
  EXPECT_EQ(countProduced(computed, both, true, 1), 16);
}

TEST(CountProducedTest, PartialOutputsWithOverlappingDestinations) {
  // Workers 0 and 1 compute partial values of elements 0-5, worker 2
  // nothing. Stored: worker 0 elements 0-3, worker 1 elements 2-5, worker 2
  // elements 0-5. S = {0, 1} everywhere, so each element costs
  // 1 + |D| - 1 = |D|:
  //   elements 0-1: D = {0, 2}    -> 2 each, 4
  //   elements 2-3: D = {0, 1, 2} -> 3 each, 6
  //   elements 4-5: D = {1, 2}    -> 2 each, 4
  // in all 14.
  SmallVector<Region, 3> computed = {box({{0, 6}}), box({{0, 6}}),
                                     box({{0, 0}})};
  Region h0 = box({{0, 4}}), h1 = box({{2, 6}}), h2 = box({{0, 6}});
  SmallVector<HeldRegion, 3> held = {&h0, &h1, &h2};
  EXPECT_EQ(countProduced(computed, held, true, 1), 14);
  // Stored only by worker 2, which computed nothing: D and S do not meet,
  // (2 - 1) + 1 - 0 = 2 per element, 12.
  SmallVector<HeldRegion, 3> elsewhere = {nullptr, nullptr, &h2};
  EXPECT_EQ(countProduced(computed, elsewhere, true, 1), 12);
}

TEST(CountProducedTest, PartialTwoDimensional) {
  // A 2x4 output: worker 0 has partial values of columns 0-3 (all), worker
  // 1 of columns 2-3 only; worker 0 stores all of it. Columns 0-1: S = {0},
  // D = {0}: 0 + 1 - 1 = 0. Columns 2-3: S = {0, 1}: 1 + 1 - 1 = 1, over
  // 2 rows x 2 columns: 4.
  SmallVector<Region, 2> computed = {box({{0, 2}, {0, 4}}),
                                     box({{0, 2}, {2, 4}})};
  Region whole = box({{0, 2}, {0, 4}});
  SmallVector<HeldRegion, 2> held = {&whole, nullptr};
  EXPECT_EQ(countProduced(computed, held, true, 2), 4);
}

//===----------------------------------------------------------------------===//
// countNextStep: sum_w |H_w(P)| - |H_w(P) n H_w(o)|.
//===----------------------------------------------------------------------===//

TEST(CountNextStepTest, ReLayout) {
  // P 4x2 stored by rows (worker 0 rows 0-1, worker 1 rows 2-3), its update
  // by columns (worker 0 column 0, worker 1 column 1). Worker 0 keeps rows
  // 0-1 of column 0 (2 of its 4 elements) and receives 2; worker 1 too: 4.
  Region p0 = box({{0, 2}, {0, 2}}), p1 = box({{2, 4}, {0, 2}});
  Region u0 = box({{0, 4}, {0, 1}}), u1 = box({{0, 4}, {1, 2}});
  SmallVector<HeldRegion, 2> param = {&p0, &p1}, updated = {&u0, &u1};
  EXPECT_EQ(countNextStep(param, updated), 4);
  // Laid out alike: nothing moves.
  SmallVector<HeldRegion, 2> same = {&p0, &p1};
  EXPECT_EQ(countNextStep(param, same), 0);
  // The update stored only on worker 1: worker 0 receives its 4 elements,
  // worker 1 keeps its rows.
  Region all = box({{0, 4}, {0, 2}});
  SmallVector<HeldRegion, 2> onW1 = {nullptr, &all};
  EXPECT_EQ(countNextStep(param, onW1), 4);
  // P replicated on both, the update split by rows: each receives the 4
  // elements it does not hold.
  SmallVector<HeldRegion, 2> replicated = {&all, &all};
  EXPECT_EQ(countNextStep(replicated, same), 8);
}

//===----------------------------------------------------------------------===//
// evaluatePlan on tiny graphs.
//===----------------------------------------------------------------------===//

const char *const Specs = R"(
op mm(A, B) = lambda i, j: Sum(lambda k: A[i, k] * B[k, j]);
op sub(a, b) = lambda i, j: a[i, j] - b[i, j];
)";

/// A graph bound to the specs above.
struct Problem {
  explicit Problem(StringRef json) {
    g = c.read(json);
    EXPECT_TRUE(g) << (c.messages.empty() ? "" : c.messages[0]);
    EXPECT_TRUE(specs.addSource(Specs, "specs.tdl", c.diags));
    EXPECT_TRUE(specs.check(c.diags));
    EXPECT_TRUE(graph::verifyGraph(*g, specs, c.diags))
        << (c.messages.empty() ? "" : c.messages[0]);
    problem = PlanningProblem::build(*g, specs, c.diags);
    EXPECT_TRUE(problem);
  }
  graph::Collector c;
  graph::SpecLibrary specs;
  std::unique_ptr<graph::Graph> g;
  std::unique_ptr<PlanningProblem> problem;
};

/// A plan over `levels` with each op's steps (graph order) and each
/// tensor's region per worker (None: nothing).
plan::Plan makePlan(const graph::Graph &g, SmallVector<unsigned, 4> levels,
                    std::vector<std::vector<plan::Step>> opSteps,
                    std::vector<std::vector<llvm::Optional<Region>>> regions) {
  plan::Plan p;
  p.workers = plan::getNumWorkers(levels);
  p.levels = levels;
  for (unsigned i = 0, e = g.getNumOps(); i != e; ++i)
    p.ops.push_back(plan::OpPlan{
        g.getOp(i).name,
        SmallVector<plan::Step, 4>(opSteps[i].begin(), opSteps[i].end()),
        {}});
  for (unsigned t = 0, e = g.getNumTensors(); t != e; ++t)
    p.tensors.push_back(plan::TensorPlan{g.getTensor(t).name, regions[t]});
  return p;
}

// h = x[4,2] @ W[2,6], f32, on 2 workers.
const char *const MatmulGraph = R"({"format": "tofu-graph", "version": 1,
 "tensors": [
  {"name": "x", "shape": [4, 2], "dtype": "f32", "role": "input"},
  {"name": "W", "shape": [2, 6], "dtype": "f32", "role": "param"},
  {"name": "h", "shape": [4, 6], "dtype": "f32", "role": "output"}],
 "ops": [{"name": "h", "type": "mm", "inputs": ["x", "W"], "outputs": ["h"]}]})";

TEST(EvaluatePlanTest, SplitColumns) {
  // split:j, x split by rows, W and h by columns. Worker 0 reads all of x
  // (8 elements) and holds rows 0-1 (4): fetches 4; it reads W[:, 0:3],
  // which it holds, and computes h[:, 0:3], which it stores. Worker 1
  // likewise: comm = 2 x 4 elements x 4 bytes = 32. Resident per worker:
  // x 4 + W 6 + h 12 = 22 elements, 88 bytes.
  Problem pr(MatmulGraph);
  ASSERT_TRUE(pr.problem);
  plan::Plan p = makePlan(
      *pr.g, {2}, {{plan::Step::split("j")}},
      {{box({{0, 2}, {0, 2}}), box({{2, 4}, {0, 2}})},
       {box({{0, 2}, {0, 3}}), box({{0, 2}, {3, 6}})},
       {box({{0, 4}, {0, 3}}), box({{0, 4}, {3, 6}})}});
  auto report = evaluatePlan(*pr.problem, p);
  ASSERT_TRUE(bool(report)) << llvm::toString(report.takeError());
  EXPECT_EQ(report->commBytes, 32);
  EXPECT_EQ(report->ops[0].fetchBytes, 32);
  EXPECT_EQ(report->ops[0].produceBytes, 0);
  EXPECT_EQ(report->residentBytesPerWorker, (std::vector<int64_t>{88, 88}));
}

TEST(EvaluatePlanTest, ReduceIntoSplitRows) {
  // reduce:k, x split by columns and W by rows (each worker holds what it
  // reads: no fetch), h stored by rows. Each worker holds partial values of
  // all 24 elements of h; each element: (2 - 1) + 1 - 1 = 1 transfer.
  // comm = 24 x 4 = 96.
  Problem pr(MatmulGraph);
  ASSERT_TRUE(pr.problem);
  plan::Plan p = makePlan(
      *pr.g, {2}, {{plan::Step::reduce("k")}},
      {{box({{0, 4}, {0, 1}}), box({{0, 4}, {1, 2}})},
       {box({{0, 1}, {0, 6}}), box({{1, 2}, {0, 6}})},
       {box({{0, 2}, {0, 6}}), box({{2, 4}, {0, 6}})}});
  auto report = evaluatePlan(*pr.problem, p);
  ASSERT_TRUE(bool(report)) << llvm::toString(report.takeError());
  EXPECT_EQ(report->ops[0].fetchBytes, 0);
  EXPECT_EQ(report->ops[0].produceBytes, 96);
  EXPECT_EQ(report->commBytes, 96);
}

TEST(EvaluatePlanTest, ReplicatedDestinations) {
  // split:i with W and h stored whole on both workers, x by rows. Worker 0
  // reads x[0:2, :] (held) and all of W (held): no fetch. It computes rows
  // 0-1 of h; both store all 24 elements, so each element reaches the one
  // destination that did not compute it: 24 x 4 = 96. Resident: x 4 + W 12
  // + h 24 = 40 elements, 160 bytes each.
  Problem pr(MatmulGraph);
  ASSERT_TRUE(pr.problem);
  Region wholeW = box({{0, 2}, {0, 6}}), wholeH = box({{0, 4}, {0, 6}});
  plan::Plan p = makePlan(*pr.g, {2}, {{plan::Step::split("i")}},
                          {{box({{0, 2}, {0, 2}}), box({{2, 4}, {0, 2}})},
                           {wholeW, wholeW},
                           {wholeH, wholeH}});
  auto report = evaluatePlan(*pr.problem, p);
  ASSERT_TRUE(bool(report)) << llvm::toString(report.takeError());
  EXPECT_EQ(report->ops[0].fetchBytes, 0);
  EXPECT_EQ(report->ops[0].produceBytes, 96);
  EXPECT_EQ(report->residentBytesPerWorker, (std::vector<int64_t>{160, 160}));
}

TEST(EvaluatePlanTest, PartialOutputsWithOverlappingDestinationsOnThreeWorkers) {
  // h = x[4,3] @ W[3,6] on 3 workers, reduce:k (one k each): worker c holds
  // x[:, c] and W[c, :], exactly what it reads. Every worker has partial
  // values of all of h, |S| = 3; h is stored rows 0-1 on worker 0, rows 1-3
  // on worker 1, nothing on worker 2. Per element (|S| - 1) + |D| - 1 =
  // 1 + |D|: rows 0, 2, 3 (|D| = 1) 2 each, 3 x 6 x 2 = 36; row 1 (|D| = 2)
  // 3 each, 18. comm = 54 x 4 = 216.
  Problem pr(R"({"format": "tofu-graph", "version": 1,
   "tensors": [
    {"name": "x", "shape": [4, 3], "dtype": "f32", "role": "input"},
    {"name": "W", "shape": [3, 6], "dtype": "f32", "role": "param"},
    {"name": "h", "shape": [4, 6], "dtype": "f32", "role": "output"}],
   "ops": [{"name": "h", "type": "mm", "inputs": ["x", "W"], "outputs": ["h"]}]})");
  ASSERT_TRUE(pr.problem);
  plan::Plan p = makePlan(
      *pr.g, {3}, {{plan::Step::reduce("k")}},
      {{box({{0, 4}, {0, 1}}), box({{0, 4}, {1, 2}}), box({{0, 4}, {2, 3}})},
       {box({{0, 1}, {0, 6}}), box({{1, 2}, {0, 6}}), box({{2, 3}, {0, 6}})},
       {box({{0, 2}, {0, 6}}), box({{1, 4}, {0, 6}}), llvm::None}});
  auto report = evaluatePlan(*pr.problem, p);
  ASSERT_TRUE(bool(report)) << llvm::toString(report.takeError());
  EXPECT_EQ(report->ops[0].fetchBytes, 0);
  EXPECT_EQ(report->ops[0].produceBytes, 216);
  EXPECT_EQ(report->commBytes, 216);
}

// w.next = w - g, an update of parameter w[4,2] (f64, 8 bytes).
const char *const UpdateGraph = R"({"format": "tofu-graph", "version": 1,
 "tensors": [
  {"name": "w", "shape": [4, 2], "dtype": "f64", "role": "param"},
  {"name": "g", "shape": [4, 2], "dtype": "f64", "role": "input"},
  {"name": "w.next", "shape": [4, 2], "dtype": "f64", "role": "output", "updates": "w"}],
 "ops": [{"name": "w.next", "type": "sub", "inputs": ["w", "g"], "outputs": ["w.next"]}]})";

TEST(EvaluatePlanTest, NextStepReLayout) {
  // split:i, w and g stored by rows (no fetch), w.next by columns. Produce:
  // worker 0 computes rows 0-1 and stores column 0 (rows 0-3): it receives
  // rows 2-3 of column 0, 2 elements; worker 1 likewise 2: 4 x 8 = 32.
  // Next step: worker 0 holds rows 0-1 of w (4 elements), of which w.next's
  // column 0 covers 2: 2 to receive; worker 1 too: 4 x 8 = 32. comm = 64.
  Problem pr(UpdateGraph);
  ASSERT_TRUE(pr.problem);
  Region rows0 = box({{0, 2}, {0, 2}}), rows1 = box({{2, 4}, {0, 2}});
  plan::Plan p = makePlan(*pr.g, {2}, {{plan::Step::split("i")}},
                          {{rows0, rows1},
                           {rows0, rows1},
                           {box({{0, 4}, {0, 1}}), box({{0, 4}, {1, 2}})}});
  auto report = evaluatePlan(*pr.problem, p);
  ASSERT_TRUE(bool(report)) << llvm::toString(report.takeError());
  EXPECT_EQ(report->ops[0].fetchBytes, 0);
  EXPECT_EQ(report->ops[0].produceBytes, 32);
  EXPECT_EQ(report->nextStepBytes, (std::vector<int64_t>{0, 0, 32}));
  EXPECT_EQ(report->commBytes, 64);

  // w.next laid out like w: nothing moves at all.
  p.tensors[2].regions = {rows0, rows1};
  auto same = evaluatePlan(*pr.problem, p);
  ASSERT_TRUE(bool(same)) << llvm::toString(same.takeError());
  EXPECT_EQ(same->commBytes, 0);
  EXPECT_EQ(same->nextStepBytes, (std::vector<int64_t>{0, 0, 0}));
}

TEST(EvaluatePlanTest, RejectsPlansThatDoNotLineUp) {
  Problem pr(UpdateGraph);
  ASSERT_TRUE(pr.problem);
  Region rows0 = box({{0, 2}, {0, 2}}), rows1 = box({{2, 4}, {0, 2}});
  plan::Plan p = makePlan(*pr.g, {2}, {{plan::Step::split("q")}},
                          {{rows0, rows1}, {rows0, rows1}, {rows0, rows1}});
  auto report = evaluatePlan(*pr.problem, p);
  ASSERT_FALSE(bool(report));
  EXPECT_NE(llvm::toString(report.takeError()).find("'split:q'"),
            std::string::npos);
  // A region outside its tensor.
  p.ops[0].steps = {plan::Step::split("i")};
  p.tensors[1].regions[1] = box({{2, 5}, {0, 2}});
  auto outside = evaluatePlan(*pr.problem, p);
  ASSERT_FALSE(bool(outside));
  EXPECT_NE(llvm::toString(outside.takeError()).find("outside the tensor"),
            std::string::npos);
}

} // namespace
