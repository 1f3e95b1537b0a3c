//===- RecomputeTest.cpp - The recomputation rewrite on a tiny graph ------===//
//
// rewriteForRecompute, expandRecomputePlan and getLiveBytesBound
// (tofu/Planner/Recompute.h) on a six-op chain whose rewritten op order,
// inputs and live bytes are worked out by hand in the comments.
//
//===----------------------------------------------------------------------===//

#include "Graph/GraphTestUtils.h"
#include "tofu/Planner/Recompute.h"

#include "gtest/gtest.h"

using namespace tofu;
using namespace tofu::planner;

namespace {

// Forward: a = relu(x), b = relu(a), loss = sum(b); backward from the
// seed (the first gradient): gb = bwd(seed, b), ga = bwd(gb, a). The
// rewrite only links the graph, so the op types need no specs.
const char *const Chain = R"({"format": "tofu-graph", "version": 1,
 "tensors": [
  {"name": "x", "shape": [4], "dtype": "f32", "role": "input"},
  {"name": "w", "shape": [4], "dtype": "f32", "role": "param"},
  {"name": "a", "shape": [4], "dtype": "f32", "role": "activation"},
  {"name": "b", "shape": [4], "dtype": "f32", "role": "activation"},
  {"name": "loss", "shape": [], "dtype": "f32", "role": "output"},
  {"name": "seed", "shape": [], "dtype": "f32", "role": "grad"},
  {"name": "gb", "shape": [4], "dtype": "f32", "role": "grad"},
  {"name": "ga", "shape": [4], "dtype": "f32", "role": "grad"}],
 "ops": [
  {"name": "fa", "type": "mul", "inputs": ["x", "w"], "outputs": ["a"]},
  {"name": "fb", "type": "relu", "inputs": ["a"], "outputs": ["b"]},
  {"name": "fl", "type": "sum", "inputs": ["b"], "outputs": ["loss"]},
  {"name": "s", "type": "full", "inputs": [], "outputs": ["seed"]},
  {"name": "bb", "type": "relu_bwd", "inputs": ["seed", "b"], "outputs": ["gb"]},
  {"name": "ba", "type": "mul_bwd", "inputs": ["gb", "a"], "outputs": ["ga"]}]})";

struct Loaded {
  Loaded() {
    g = c.read(Chain);
    EXPECT_TRUE(g) << (c.messages.empty() ? "" : c.messages[0]);
    g->link();
  }
  graph::Collector c;
  std::unique_ptr<graph::Graph> g;
};

std::vector<std::string> opNames(const graph::Graph &g) {
  std::vector<std::string> names;
  for (const graph::Op &op : g.getOps())
    names.push_back(op.name);
  return names;
}

std::vector<std::string> inputNames(const graph::Op &op) {
  std::vector<std::string> names;
  for (const graph::TensorRef &ref : op.inputs)
    names.push_back(ref.name);
  return names;
}

TEST(RecomputeTest, BackwardStartAndCandidates) {
  Loaded l;
  ASSERT_TRUE(l.g);
  // The seed's op (index 3) is the first writing a gradient.
  EXPECT_EQ(getBackwardStart(*l.g), 3u);
  // a and b: activations of forward ops with inputs, read backward. Not x
  // (an input), w (a parameter), loss (an output).
  EXPECT_EQ(getRecomputeCandidates(*l.g), (std::vector<unsigned>{2, 3}));
}

TEST(RecomputeTest, OneTensorCloneBeforeItsFirstBackwardReader) {
  Loaded l;
  ASSERT_TRUE(l.g);
  auto r = rewriteForRecompute(*l.g, {"a"});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  const graph::Graph &g = *r->graph;
  // a's first backward reader is ba: its clone goes right before it.
  EXPECT_EQ(opNames(g), (std::vector<std::string>{"fa", "fb", "fl", "s", "bb",
                                                  "fa@recompute", "ba"}));
  EXPECT_EQ(inputNames(g.getOp(5)), (std::vector<std::string>{"x", "w"}));
  EXPECT_EQ(g.getOp(5).outputs[0].name, "a@recompute");
  // The forward reader keeps a; the backward one reads the copy.
  EXPECT_EQ(inputNames(g.getOp(1)), (std::vector<std::string>{"a"}));
  EXPECT_EQ(inputNames(g.getOp(6)), (std::vector<std::string>{"gb", "a@recompute"}));
  // Every tensor keeps its index; the copy comes last.
  ASSERT_EQ(g.getNumTensors(), 9u);
  EXPECT_EQ(g.getTensor(8).name, "a@recompute");
  EXPECT_EQ(g.getTensor(8).shape, l.g->getTensor(2).shape);
  EXPECT_EQ(r->opOrigin, (std::vector<unsigned>{0, 1, 2, 3, 4, 0, 5}));
  EXPECT_EQ(r->tensorOrigin,
            (std::vector<unsigned>{0, 1, 2, 3, 4, 5, 6, 7, 2}));
  // a now dies at fb (its last reader, op 1); the copy is written at op 5.
  EXPECT_EQ(g.getUsers(2).back(), 1u);
  EXPECT_EQ(g.getProducer(8), 5);
}

TEST(RecomputeTest, ChainCloneReadsTheCopyItNeeds) {
  Loaded l;
  ASSERT_TRUE(l.g);
  auto r = rewriteForRecompute(*l.g, {"b", "a"});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  const graph::Graph &g = *r->graph;
  // bb needs b's copy, whose clone needs a's copy: fa's clone first.
  EXPECT_EQ(opNames(g),
            (std::vector<std::string>{"fa", "fb", "fl", "s", "fa@recompute",
                                      "fb@recompute", "bb", "ba"}));
  EXPECT_EQ(inputNames(g.getOp(5)), (std::vector<std::string>{"a@recompute"}));
  EXPECT_EQ(inputNames(g.getOp(6)),
            (std::vector<std::string>{"seed", "b@recompute"}));
  EXPECT_EQ(inputNames(g.getOp(7)),
            (std::vector<std::string>{"gb", "a@recompute"}));
  // Copies in tensor order, whatever the list's order.
  EXPECT_EQ(g.getTensor(8).name, "a@recompute");
  EXPECT_EQ(g.getTensor(9).name, "b@recompute");
}

TEST(RecomputeTest, BadListsAreRefused) {
  Loaded l;
  ASSERT_TRUE(l.g);
  auto message = [&](std::vector<std::string> names) {
    auto r = rewriteForRecompute(*l.g, names);
    return r ? std::string() : llvm::toString(r.takeError());
  };
  EXPECT_EQ(message({"nope"}), "recompute: no tensor 'nope' in the graph");
  EXPECT_EQ(message({"a", "a"}), "recompute: tensor 'a' is listed twice");
  for (const char *name : {"x", "w", "loss", "gb"})
    EXPECT_EQ(message({name}),
              std::string("recompute: tensor '") + name +
                  "' cannot be recomputed: only activations that a forward "
                  "op with inputs writes and a backward op reads can be "
                  "(or, in a chain, one such a listed tensor's producer "
                  "reads)");
}

// Forward: h = x * w, a = relu(h), l1 = sum(a); backward: ga = bwd(seed,
// a). No backward op reads h: it is a chain member of a.
const char *const PreActivation = R"({"format": "tofu-graph", "version": 1,
 "tensors": [
  {"name": "x", "shape": [4], "dtype": "f32", "role": "input"},
  {"name": "w", "shape": [4], "dtype": "f32", "role": "param"},
  {"name": "h", "shape": [4], "dtype": "f32", "role": "activation"},
  {"name": "a", "shape": [4], "dtype": "f32", "role": "activation"},
  {"name": "loss", "shape": [], "dtype": "f32", "role": "output"},
  {"name": "seed", "shape": [], "dtype": "f32", "role": "grad"},
  {"name": "ga", "shape": [4], "dtype": "f32", "role": "grad"}],
 "ops": [
  {"name": "fh", "type": "mul", "inputs": ["x", "w"], "outputs": ["h"]},
  {"name": "fa", "type": "relu", "inputs": ["h"], "outputs": ["a"]},
  {"name": "fl", "type": "sum", "inputs": ["a"], "outputs": ["loss"]},
  {"name": "s", "type": "full", "inputs": [], "outputs": ["seed"]},
  {"name": "ba", "type": "relu_bwd", "inputs": ["seed", "a"], "outputs": ["ga"]}]})";

TEST(RecomputeTest, ChainMembersAreRecomputedBeforeTheirCandidate) {
  graph::Collector c;
  std::unique_ptr<graph::Graph> g = c.read(PreActivation);
  ASSERT_TRUE(g);
  g->link();
  unsigned backward = getBackwardStart(*g);
  // Only a is a candidate; h is a chain member (forward-only), x and w
  // are not activations.
  EXPECT_EQ(getRecomputeCandidates(*g), (std::vector<unsigned>{3}));
  EXPECT_TRUE(isRecomputeChainMember(*g, 2, backward));
  EXPECT_FALSE(isRecomputeChainMember(*g, 3, backward));
  EXPECT_FALSE(isRecomputeChainMember(*g, 0, backward));
  EXPECT_EQ(getRecomputeChain(*g, 3, backward),
            (std::vector<unsigned>{2, 3}));
  // a is produced after everything earlier (h) was last read: a cut.
  EXPECT_EQ(getRecomputeCuts(*g), (std::vector<unsigned>{3}));
  // The chain: h's clone, then a's, which reads h's copy; h itself is
  // last read by fa.
  auto r = rewriteForRecompute(*g, {"h", "a"});
  ASSERT_TRUE(bool(r)) << llvm::toString(r.takeError());
  EXPECT_EQ(opNames(*r->graph),
            (std::vector<std::string>{"fh", "fa", "fl", "s", "fh@recompute",
                                      "fa@recompute", "ba"}));
  EXPECT_EQ(inputNames(r->graph->getOp(5)),
            (std::vector<std::string>{"h@recompute"}));
  EXPECT_EQ(r->graph->getUsers(2).back(), 1u);
  // A member alone is refused: nothing recomputed needs it.
  auto alone = rewriteForRecompute(*g, {"h"});
  ASSERT_FALSE(bool(alone));
  EXPECT_EQ(llvm::toString(alone.takeError()),
            "recompute: tensor 'h' cannot be recomputed: no backward op "
            "reads it, and no listed tensor's producer that is recomputed "
            "reads it");
}

TEST(RecomputeTest, ExpandedPlanGivesClonesTheProducersSteps) {
  Loaded l;
  ASSERT_TRUE(l.g);
  auto r = rewriteForRecompute(*l.g, {"a"});
  ASSERT_TRUE(bool(r));
  plan::Plan p;
  p.workers = 2;
  p.levels = {2};
  p.commBytes = 123;
  p.recompute = {"a"};
  for (unsigned i = 0; i != l.g->getNumOps(); ++i)
    p.ops.push_back(plan::OpPlan{
        l.g->getOp(i).name, {plan::Step::split("v" + std::to_string(i))}, {}});
  for (unsigned t = 0; t != l.g->getNumTensors(); ++t) {
    plan::TensorPlan tensor;
    tensor.name = l.g->getTensor(t).name;
    tensor.regions = {analysis::Region{{0, int64_t(t)}}, llvm::None};
    p.tensors.push_back(tensor);
  }
  plan::Plan q = expandRecomputePlan(p, *r);
  ASSERT_EQ(q.ops.size(), 7u);
  EXPECT_EQ(q.ops[5].name, "fa@recompute");
  EXPECT_EQ(q.ops[5].steps[0].var, "v0");
  EXPECT_EQ(q.ops[6].name, "ba");
  EXPECT_EQ(q.ops[6].steps[0].var, "v5");
  ASSERT_EQ(q.tensors.size(), 9u);
  EXPECT_EQ(q.tensors[8].name, "a@recompute");
  EXPECT_EQ(q.tensors[8].regions[0]->front().hi, 2); // a's region [0, 2)
  EXPECT_EQ(q.commBytes, 123);
  EXPECT_EQ(q.recompute, std::vector<std::string>{"a"});
}

TEST(RecomputeTest, LiveBytesBound) {
  Loaded l;
  ASSERT_TRUE(l.g);
  // Lifetimes [first op, last op], bytes: x [0,0] 16 (an input, freed
  // after its reader), w the whole step 16 (a parameter), a [0,5] 16,
  // b [1,4] 16, loss [2,end] 4 (an output), seed [3,4] 4, gb [4,5] 16,
  // ga [5,end] 16 (no reader). At op 4: w, a, b, loss, seed, gb = 72.
  EXPECT_EQ(getLiveBytesBound(*l.g, 1), 72);
  EXPECT_EQ(getLiveBytesBound(*l.g, 2), 36);
  EXPECT_EQ(getLiveBytesBound(*l.g, 5), 15); // 72 / 5 rounded up
  // Recomputing a (ops fa fb fl s bb fa@recompute ba): a dies at fb (op
  // 1), its copy lives [5,6], but the clone reads x, which now lives
  // [0,5]: at bb (op 4): x, w, b, loss, seed, gb = 72; at ba (op 6): w,
  // loss, gb, the copy, ga = 68. Nothing gained: x is as large as a.
  auto r = rewriteForRecompute(*l.g, {"a"});
  ASSERT_TRUE(bool(r));
  EXPECT_EQ(getLiveBytesBound(*r->graph, 1), 72);
  // Recomputing b instead: b dies at fl (op 2), its clone (before bb)
  // reads a, alive until ba anyway: at bb (op 5 of fa fb fl s
  // fb@recompute bb ba): w, a, loss, seed, the copy, gb = 72; at op 3
  // (s): w, a, loss, seed = 40. Still 72: gb and the copy overlap as b did.
  auto rb = rewriteForRecompute(*l.g, {"b"});
  ASSERT_TRUE(bool(rb));
  EXPECT_EQ(getLiveBytesBound(*rb->graph, 1), 72);
}

// Two parameters updated by the last two ops: y = mul(x, w), loss =
// sum(y), w2 = upd(w), v2 = upd(v, READ) with w2 and v2 their next values.
// The runtime may write w2 over w (no op after upd-w reads w), so w lives
// [0, 2] and v [0, 3]: at op 0 x, w, v, y = 64, after it at most 52
// (op 3: v, loss, w2, v2). Were w kept through the step, op 3 would hold
// 68; it is when upd-v reads w too.
TEST(RecomputeTest, LiveBytesBoundFollowsInPlaceUpdates) {
  auto bound = [](const char *read) {
    std::string text = std::string(R"({"format": "tofu-graph", "version": 1,
 "tensors": [
  {"name": "x", "shape": [4], "dtype": "f32", "role": "input"},
  {"name": "w", "shape": [4], "dtype": "f32", "role": "param"},
  {"name": "v", "shape": [4], "dtype": "f32", "role": "param"},
  {"name": "y", "shape": [4], "dtype": "f32", "role": "activation"},
  {"name": "loss", "shape": [], "dtype": "f32", "role": "output"},
  {"name": "w2", "shape": [4], "dtype": "f32", "role": "output", "updates": "w"},
  {"name": "v2", "shape": [4], "dtype": "f32", "role": "output", "updates": "v"}],
 "ops": [
  {"name": "f", "type": "mul", "inputs": ["x", "w"], "outputs": ["y"]},
  {"name": "l", "type": "sum", "inputs": ["y"], "outputs": ["loss"]},
  {"name": "upd-w", "type": "upd", "inputs": ["w"], "outputs": ["w2"]},
  {"name": "upd-v", "type": "upd", "inputs": ["v")") +
                       read + R"(], "outputs": ["v2"]}]})";
    graph::Collector c;
    std::unique_ptr<graph::Graph> g = c.read(text);
    EXPECT_TRUE(g) << (c.messages.empty() ? "" : c.messages[0]);
    if (!g)
      return int64_t(-1);
    g->link();
    return getLiveBytesBound(*g, 1);
  };
  EXPECT_EQ(bound(""), 64);
  EXPECT_EQ(bound(R"(, "w")"), 68);
}

} // namespace
