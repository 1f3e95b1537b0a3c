//===- VerifierTest.cpp - Unit tests of the graph verifier ----------------===//

#include "GraphTestUtils.h"

#include "gtest/gtest.h"

using namespace tofu;
using namespace tofu::graph;

namespace {

std::string graphJSON(StringRef tensors, StringRef ops) {
  return (R"({"format": "tofu-graph", "version": 1, "tensors": [)" + tensors +
          R"(], "ops": [)" + ops + "]}")
      .str();
}

const char *const Specs = R"(
op mm(A, B) = lambda i, j: Sum(lambda k: A[i, k] * B[k, j]);
op scale<alpha: real>(x) = lambda ...i: alpha * x[...i];
op pick<dim>(x) where dim == 0 = lambda j: x[0, j];
op pick<dim>(x) where dim == 1 = lambda i: x[i, 0];
op conv1d<stride>(data, w) =
    lambda co, x: Sum(lambda ci, dx: data[ci, x * stride + dx] * w[ci, co, dx]);
op halve(x) = lambda i: opaque(x[2 * i]);
op conv1d_backward_weight<stride>(g, data) =
    lambda ci, co, dx: Sum(lambda x: g[co, x] * data[ci, x * stride + dx]);
op bigstep(x, w) = lambda i: Sum(lambda k: x[i + k * 3000000000] * w[k]);
)";

struct Fixture : public ::testing::Test {
  bool verify(StringRef json) {
    auto g = c.read(json);
    if (!g)
      return false;
    if (!loaded) {
      specs.addSource(Specs, "specs.tdl", c.diags);
      EXPECT_TRUE(specs.check(c.diags));
      loaded = true;
    }
    return verifyGraph(*g, specs, c.diags);
  }
  Collector c;
  SpecLibrary specs;
  bool loaded = false;
};

TEST_F(Fixture, ValidGraphPasses) {
  EXPECT_TRUE(verify(graphJSON(
      R"({"name": "a", "shape": [4, 3], "dtype": "f32", "role": "input"},
         {"name": "b", "shape": [3, 5], "dtype": "f32", "role": "param"},
         {"name": "c", "shape": [4, 5], "dtype": "f32", "role": "activation"},
         {"name": "d", "shape": [4, 5], "dtype": "f32", "role": "output"},
         {"name": "e", "shape": [4], "dtype": "f32", "role": "output"})",
      R"({"name": "c", "type": "mm", "inputs": ["a", "b"], "outputs": ["c"]},
         {"name": "d", "type": "scale", "inputs": ["c"], "outputs": ["d"], "params": {"alpha": 0.5}},
         {"name": "e", "type": "pick", "inputs": ["c"], "outputs": ["e"], "params": {"dim": 1}})")))
      << (c.messages.empty() ? "" : c.messages[0]);
}

TEST_F(Fixture, NoOverloadNamesTheOp) {
  EXPECT_FALSE(verify(graphJSON(
      R"({"name": "a", "shape": [4, 3], "dtype": "f32", "role": "input"},
         {"name": "e", "shape": [4], "dtype": "f32", "role": "output"})",
      R"({"name": "e", "type": "pick", "inputs": ["a"], "outputs": ["e"], "params": {"dim": 2}})")));
  ASSERT_FALSE(c.messages.empty());
  EXPECT_EQ(c.messages[0].rfind("2:104: error: op 'e' (operator 'pick'): has no "
                                "overload for inputs 4x3; params dim=2; output "
                                "rank 1:\n  pick<dim>(x) where dim == 0: the "
                                "guard is false",
                                0),
            0u)
      << c.messages[0];
}

TEST_F(Fixture, StridedWeightGradientMayDropTheLastPartialStride) {
  // A stride-2 convolution over 8 columns with a 1-wide filter produces 4
  // columns; its weight gradient is 1 wide, though 2 would fit the reads.
  std::string tensors =
      R"({"name": "g", "shape": [2, 4], "dtype": "f32", "role": "input"},
         {"name": "data", "shape": [3, 8], "dtype": "f32", "role": "input"},
         {"name": "dw", "shape": [3, 2, WIDTH], "dtype": "f32", "role": "grad"})";
  std::string ops =
      R"({"name": "dw", "type": "conv1d_backward_weight", "inputs": ["g", "data"],
          "outputs": ["dw"], "params": {"stride": 2}})";
  auto with = [&](StringRef width) {
    std::string t = tensors;
    t.replace(t.find("WIDTH"), 5, width.str());
    return graphJSON(t, ops);
  };
  EXPECT_TRUE(verify(with("1")));
  EXPECT_TRUE(verify(with("2")));
  EXPECT_FALSE(verify(with("3")));
}

TEST_F(Fixture, IndexArithmeticThatOverflowsIsAnError) {
  auto with = [&](StringRef extent) {
    return graphJSON(
        (R"({"name": "x", "shape": [10], "dtype": "f32", "role": "input"},
            {"name": "w", "shape": [)" + extent + R"(], "dtype": "f32", "role": "input"},
            {"name": "y", "shape": [1], "dtype": "f32", "role": "output"})")
            .str(),
        R"({"name": "y", "type": "bigstep", "inputs": ["x", "w"], "outputs": ["y"]})");
  };
  EXPECT_TRUE(verify(with("1"))) << (c.messages.empty() ? "" : c.messages[0]);
  EXPECT_FALSE(verify(with("4000000000")));
  ASSERT_FALSE(c.messages.empty());
  EXPECT_NE(c.messages.back().find(
                "error: op 'y' (operator 'bigstep'): index 0 of 'x' (i + k * "
                "3000000000) overflows 64-bit arithmetic"),
            std::string::npos)
      << c.messages.back();
}

TEST_F(Fixture, OpaqueOutputsMayBeSmallerThanTheirReadsAllow) {
  auto with = [&](StringRef width) {
    return graphJSON(
        (R"({"name": "x", "shape": [8], "dtype": "f32", "role": "input"},
            {"name": "y", "shape": [)" + width + R"(], "dtype": "f32", "role": "output"})")
            .str(),
        R"({"name": "y", "type": "halve", "inputs": ["x"], "outputs": ["y"]})");
  };
  EXPECT_TRUE(verify(with("4")));
  EXPECT_TRUE(verify(with("3")));
  EXPECT_FALSE(verify(with("5")));
}

TEST_F(Fixture, CyclesAndDanglingInputs) {
  EXPECT_FALSE(verify(graphJSON(
      R"({"name": "a", "shape": [2], "dtype": "f32", "role": "activation"},
         {"name": "b", "shape": [2], "dtype": "f32", "role": "activation"})",
      R"({"name": "a", "type": "scale", "inputs": ["b"], "outputs": ["a"], "params": {"alpha": 1}},
         {"name": "b", "type": "scale", "inputs": ["a"], "outputs": ["b"], "params": {"alpha": 1}},
         {"name": "c", "type": "scale", "inputs": ["zz"], "outputs": ["a"], "params": {"alpha": 1}})")));
  std::string all;
  for (const std::string &m : c.messages)
    all += m + "\n";
  EXPECT_NE(all.find("op 'c': input 0 'zz' is not a tensor of the graph"), std::string::npos) << all;
  EXPECT_NE(all.find("tensor 'a' is produced by op 'c' and by op 'a'"), std::string::npos) << all;
  EXPECT_NE(all.find("op 'a' is on a cycle: 'a' -> 'b' -> 'a'"), std::string::npos) << all;
}

TEST_F(Fixture, GraphsBuiltInMemoryHaveNoLocations) {
  Graph g;
  Tensor t;
  t.name = "x";
  t.shape = {-1};
  t.role = Role::Input;
  t.roleName = "input";
  g.addTensor(t);
  g.link();
  EXPECT_FALSE(verifyStructure(g, c.diags));
  ASSERT_EQ(c.messages.size(), 1u);
  EXPECT_EQ(c.messages[0], "error: tensor 'x': dimension 0 is negative (-1)");
}

} // namespace
